#!/usr/bin/env bash
# Generate test clips with the ffmpeg CLI from lavfi testsrc2 — never
# downloaded, cached: a clip that already exists is not made again.
#
#   gen.sh OUTDIR NAME...     make OUTDIR/NAME for each NAME
#   gen.sh --list [SET]       names of a set: test (default), bench, demo, scale, sweep
#
# NAME is a clip below plus its extension (.mkv, or .h264/.m2v/.ts for raw
# elementary streams or MPEG-TS remuxed from the .mkv of the same base
# name).  Other
# scripts may source this file and call df_media_make OUTDIR NAME.
set -euo pipefail

DF_MEDIA_TEST=(
    h264_cabac_slices8.mkv h264_cavlc_slices4.mkv h264_mbaff.mkv h264_422.mkv h264_odd.mkv
    h264_single.mkv hevc_wpp8.mkv hevc_wpp10.mkv hevc_wpp_slices.mkv hevc_nowpp.mkv
    mpeg2_prog.mkv mpeg2_int.mkv h264_cabac_slices8.h264 mpeg2_prog.m2v h264_sizes.h264
    play_h264_10s.mkv h264_crop.mkv hevc_crop.mkv mpeg2_odd.mkv mpeg2_sizes.m2v
    mpeg2_opengop.mkv h264_size_c.mkv h264_cabac_slices8.ts h264_joined.ts h264_late.mkv
    h264_rot90.mp4
)
DF_MEDIA_BENCH=(bench_h264_1080p_slices8.mkv bench_h264_1080p_single.mkv bench_hevc_1080p_wpp.mkv
                bench_mpeg2_1080p.mkv)
DF_MEDIA_DEMO=(demo_h264_1080p_10s.mkv)
# dfsim's projections beyond this machine (a 4K HEVC WPP trace).
DF_MEDIA_SCALE=(bench_hevc_2160p_wpp.mkv)
# Capacity over stream structures (docs/benchmarking.md): 1080p H.264 at
# several rate controls, GOPs, B-frames and slice counts, 300 frames each.
DF_MEDIA_SWEEP=(sweep_h264_vbv10m_bf3_slices8.mkv sweep_h264_crf18_gop250_slices4.mkv
                sweep_h264_vbv4m_bf0_slices2.mkv sweep_h264_crf28_bf3_single.mkv)

# df_media_args BASE: source and encoder arguments of a clip.
df_media_args() {
    local x264='-c:v libx264 -preset veryfast -x264-params'
    local x265='-c:v libx265 -preset ultrafast -x265-params log-level=error:keyint=8:min-keyint=8:open-gop=0:scenecut=0'
    local gop='keyint=8:min-keyint=8:scenecut=0'
    case "$1" in
    h264_cabac_slices8) echo "640x360 24 $x264 $gop:slices=8" ;;
    h264_cavlc_slices4) echo "640x360 24 $x264 $gop:slices=4:cabac=0" ;;
    h264_mbaff) echo "704x576 16 -flags +ildct+ilme $x264 $gop:slices=4:interlaced=1:tff=1" ;;
    h264_422) echo "640x360 16 -pix_fmt yuv422p -profile:v high422 $x264 $gop:slices=4" ;;
    h264_odd) echo "718x398 16 $x264 $gop:slices=4" ;;
    h264_single) echo "640x360 24 $x264 $gop:slices=1" ;;
    h264_size_a) echo "640x360 8 $x264 keyint=4:slices=4" ;;
    h264_size_b) echo "352x288 8 $x264 keyint=4:slices=4" ;;
    h264_size_c) echo "640x368 8 $x264 keyint=4:slices=4" ;; # h264_size_a's coded size
    mpeg2_size_a) echo "640x360 8 -c:v mpeg2video -g 4 -bf 0 -b:v 2M" ;;
    mpeg2_size_b) echo "352x576 8 -c:v mpeg2video -g 4 -bf 0 -b:v 2M" ;;
    hevc_wpp8) echo "640x360 16 $x265:wpp=1" ;;
    hevc_wpp10) echo "640x360 16 -pix_fmt yuv420p10le $x265:wpp=1" ;;
    hevc_wpp_slices) echo "640x360 16 $x265:wpp=1:slices=4" ;;
    hevc_nowpp) echo "640x360 16 $x265:wpp=0" ;;
    mpeg2_prog) echo "640x360 24 -c:v mpeg2video -g 8 -bf 2 -flags +cgop -sc_threshold 1000000000 -b:v 3M" ;;
    mpeg2_int) echo "720x576 16 -c:v mpeg2video -g 8 -bf 2 -flags +cgop+ildct+ilme -sc_threshold 1000000000 -top 1 -b:v 4M" ;;
    # Crop windows with a left offset that keeps no alignment (26 luma
    # samples): libavcodec gives the exact window only with -flags unaligned.
    # H.264: 352x208 coded, frame_cropping 26,6,0,10 -> 326x192.
    h264_crop) echo "352x200 16 $x264 $gop:slices=4:crop-rect=26,6,0,2" ;;
    # HEVC: x265 pads 350x202 to 352x208 (a right/bottom conformance
    # window), hevc_metadata then rewrites the window to 26,6,2,6 -> 324x196.
    hevc_crop) echo "350x202 16 $x265:wpp=1 -bsf:v hevc_metadata=crop_left=26:crop_right=2:crop_top=6:crop_bottom=6" ;;
    # MPEG-2: horizontal_size x vertical_size 718x398 in a 720x400 macroblock grid.
    mpeg2_odd) echo "718x398 12 -c:v mpeg2video -g 6 -bf 2 -flags +cgop -sc_threshold 1000000000 -b:v 2M" ;;
    # Open GOPs (no +cgop), as bench_mpeg2_1080p: the B-frames after each
    # I-frame in decode order are shown before it.
    mpeg2_opengop) echo "352x288 24 -c:v mpeg2video -g 12 -bf 2 -sc_threshold 1000000000 -b:v 2M" ;;
    play_h264_10s) echo "320x240 250 $x264 keyint=25:slices=4" ;;
    bench_h264_1080p_slices8) echo "1920x1080 240 $x264 keyint=50:slices=8" ;;
    bench_h264_1080p_single) echo "1920x1080 240 $x264 keyint=50:slices=1" ;;
    bench_hevc_1080p_wpp) echo "1920x1080 120 $x265:wpp=1" ;;
    bench_mpeg2_1080p) echo "1920x1080 240 -c:v mpeg2video -g 12 -bf 2 -b:v 12M" ;;
    bench_hevc_2160p_wpp) echo "3840x2160 48 $x265:wpp=1" ;;
    demo_h264_1080p_10s) echo "1920x1080 250 $x264 keyint=50:slices=8" ;;
    # Mild noise so that rate control has something to spend bits on; VBV
    # caps make I-frames of every stream expensive at the same positions.
    sweep_h264_vbv10m_bf3_slices8) echo "1920x1080 300 -vf noise=alls=6:allf=t -maxrate 10M -bufsize 10M -b:v 10M $x264 keyint=60:bframes=3:slices=8" ;;
    sweep_h264_crf18_gop250_slices4) echo "1920x1080 300 -vf noise=alls=6:allf=t -crf 18 $x264 keyint=250:bframes=2:slices=4" ;;
    sweep_h264_vbv4m_bf0_slices2) echo "1920x1080 300 -vf noise=alls=6:allf=t -maxrate 4M -bufsize 2M -b:v 4M $x264 keyint=30:bframes=0:slices=2" ;;
    sweep_h264_crf28_bf3_single) echo "1920x1080 300 -vf noise=alls=6:allf=t -crf 28 $x264 keyint=120:bframes=3:slices=1" ;;
    *) return 1 ;;
    esac
}

# df_media_make OUTDIR NAME
df_media_make() {
    local dir=$1 name=$2 base ext args size frames
    base=${name%.*}
    ext=${name##*.}
    [ -s "$dir/$name" ] && return 0
    mkdir -p "$dir"
    if [ "$name" = h264_sizes.h264 ] || [ "$name" = mpeg2_sizes.m2v ]; then
        # Resolution changes mid-stream: a, b, a of the same codec (H.264
        # 640x360, 352x288; MPEG-2 640x360, 352x576: 23 then 36 macroblock
        # rows, so libavcodec sizes its slice contexts again).
        local c=${name%%_*}
        df_media_make "$dir" "${c}_size_a.$ext"
        df_media_make "$dir" "${c}_size_b.$ext"
        cat "$dir/${c}_size_a.$ext" "$dir/${c}_size_b.$ext" "$dir/${c}_size_a.$ext" >"$dir/$name.tmp"
        mv "$dir/$name.tmp" "$dir/$name"
        return 0
    fi
    if [ "$name" = h264_joined.ts ]; then
        # Two recordings joined: the timestamps jump 50 s forward.
        df_media_make "$dir" h264_cabac_slices8.mkv
        ffmpeg -nostdin -hide_banner -loglevel error -y -i "$dir/h264_cabac_slices8.mkv" -c copy \
            -output_ts_offset 50 -f mpegts "$dir/$name.b"
        df_media_make "$dir" h264_cabac_slices8.ts
        cat "$dir/h264_cabac_slices8.ts" "$dir/$name.b" >"$dir/$name.tmp"
        rm -f "$dir/$name.b"
        mv "$dir/$name.tmp" "$dir/$name"
        return 0
    fi
    if [ "$name" = h264_rot90.mp4 ]; then
        # A phone's portrait video: a display matrix turning it 90 degrees
        # (FFmpeg 6.0 on: -display_rotation; before, the rotate tag).
        df_media_make "$dir" h264_cabac_slices8.mkv
        local rot=(-metadata:s:v:0 rotate=90)
        local pre=()
        if ffmpeg -hide_banner -h full 2>/dev/null | grep -q display_rotation; then
            pre=(-display_rotation:v:0 -90)
            rot=()
        fi
        ffmpeg -nostdin -hide_banner -loglevel error -y "${pre[@]}" \
            -i "$dir/h264_cabac_slices8.mkv" -c copy "${rot[@]}" -f mp4 "$dir/$name.tmp"
        mv "$dir/$name.tmp" "$dir/$name"
        return 0
    fi
    if [ "$name" = h264_late.mkv ]; then
        # Audio from 0, video from 0.5 s: the input starts before the video.
        ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi -i sine=d=2 -itsoffset 0.5 \
            -f lavfi -i testsrc2=size=320x240:rate=25:d=1.6 -map 0:a -map 1:v \
            -c:a aac -c:v libx264 -preset veryfast -x264-params keyint=8:scenecut=0 \
            -f matroska "$dir/$name.tmp"
        mv "$dir/$name.tmp" "$dir/$name"
        return 0
    fi
    if [ "$ext" != mkv ]; then
        df_media_make "$dir" "$base.mkv"
        local fmt=$ext
        [ "$ext" = m2v ] && fmt=mpeg2video
        [ "$ext" = ts ] && fmt=mpegts
        ffmpeg -nostdin -hide_banner -loglevel error -y -i "$dir/$base.mkv" -c copy \
            -f "$fmt" "$dir/$name.tmp"
        mv "$dir/$name.tmp" "$dir/$name"
        return 0
    fi
    args=$(df_media_args "$base") || { echo "gen.sh: unknown clip $name" >&2; return 1; }
    read -r size frames rest <<<"$args"
    # shellcheck disable=SC2086
    ffmpeg -nostdin -hide_banner -loglevel error -y \
        -f lavfi -i "testsrc2=size=$size:rate=25" -frames:v "$frames" $rest \
        -f matroska "$dir/$name.tmp"
    mv "$dir/$name.tmp" "$dir/$name"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    if [ "${1:-}" = --list ]; then
        case "${2:-test}" in
        test) printf '%s\n' "${DF_MEDIA_TEST[@]}" ;;
        bench) printf '%s\n' "${DF_MEDIA_BENCH[@]}" ;;
        demo) printf '%s\n' "${DF_MEDIA_DEMO[@]}" ;;
        scale) printf '%s\n' "${DF_MEDIA_SCALE[@]}" ;;
        sweep) printf '%s\n' "${DF_MEDIA_SWEEP[@]}" ;;
        *) echo "gen.sh: unknown set $2" >&2; exit 1 ;;
        esac
        exit 0
    fi
    [ $# -ge 2 ] || { echo "usage: gen.sh OUTDIR NAME... | gen.sh --list [test|bench|demo|scale|sweep]" >&2; exit 2; }
    out=$1
    shift
    for n in "$@"; do df_media_make "$out" "$n"; done
fi
