#!/usr/bin/env bash
# `meson install --destdir` of this build gives a user the plugin and the
# apps and nothing else: no headers, pkg-config files or libraries of ours
# to build against (they are private static libraries, see docs/dfdec.md,
# "Installing").  Then, as a consumer of the installed tree: the installed
# plugin and apps need nothing from the build tree, gst-inspect-1.0 finds
# dfdec in the installed plugin directory, and a pipeline decodes a clip
# through it.
#
#   install_test.sh BUILD_DIR [--sanitized] [--no-plugin]
#
# --sanitized skips the GStreamer part (the plugin scanner cannot load a
# sanitized plugin) and leak checks of the apps' --help; --no-plugin: the
# build has no plugin (-Dgstreamer=disabled), so none may be installed.
# Needs DF_TEST_MEDIA for the clip.
set -uo pipefail

build=$1
shift
gst=1
want_plugin=1
for a in "$@"; do
    case "$a" in
    --sanitized)
        gst=0
        export ASAN_OPTIONS="${ASAN_OPTIONS:-} detect_leaks=0"
        ;;
    --no-plugin) gst=0 want_plugin=0 ;;
    *) echo "install_test.sh: unknown option $a" >&2; exit 2 ;;
    esac
done
fails=0
fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

dest=$(mktemp -d "${TMPDIR:-/tmp}/dfmedia-install-XXXXXX") || exit 1
trap 'rm -rf "$dest"' EXIT

if ! out=$(meson install -C "$build" --no-rebuild --destdir "$dest" 2>&1); then
    echo "$out" >&2
    echo "FAIL: meson install exited non-zero" >&2
    exit 1
fi

# The installed files, relative to the destdir.
mapfile -t files < <(cd "$dest" && find . \( -type f -o -type l \) -printf '%P\n' | sort)
printf 'installed: %s\n' "${files[@]}"

plugin=
apps=()
for f in "${files[@]}"; do
    case "$f" in
    # lib, lib64 or lib/<multiarch>: meson's default libdir for the system.
    */lib*/gstreamer-1.0/libgstdf.so | */lib/*/gstreamer-1.0/libgstdf.so) plugin=$f ;;
    */bin/*) apps+=("$f") ;;
    *) fail "unexpected installed file $f (only the plugin and the apps are installed)" ;;
    esac
done
if [ "$want_plugin" = 1 ]; then
    [ -n "$plugin" ] || fail "the dfdec plugin (lib.../gstreamer-1.0/libgstdf.so) is not installed"
else
    [ -z "$plugin" ] || fail "a plugin is installed by a build without one"
fi
for want in dfbench dfsim dfsched-viz; do
    printf '%s\n' "${apps[@]}" | grep -q "/bin/$want\$" || fail "bin/$want is not installed"
done

# Nothing installed points into the build tree or misses a library.
abs_build=$(cd "$build" && pwd)
for f in "$plugin" "${apps[@]}"; do
    [ -n "$f" ] || continue
    path="$dest/$f"
    if readelf -d "$path" 2>/dev/null | grep -E 'R(UN)?PATH' | grep -q "$abs_build"; then
        fail "$f has an rpath into the build tree"
    fi
    if ldd_out=$(env -u LD_LIBRARY_PATH ldd "$path" 2>&1); then
        if grep -q 'not found' <<<"$ldd_out"; then
            fail "$f: $(grep 'not found' <<<"$ldd_out" | tr -s ' \t\n' ' ')"
        fi
        if grep -q "$abs_build" <<<"$ldd_out"; then
            fail "$f loads a library from the build tree"
        fi
    fi
done
# The plugin exports only GStreamer's entry points and its element's types,
# none of the private libraries' df_* functions.
if [ -n "$plugin" ]; then
    leaked=$(nm -D --defined-only "$dest/$plugin" | awk '{print $3}' | grep -v '^gst_' | head -5)
    [ -z "$leaked" ] || fail "the plugin exports $(echo "$leaked" | tr '\n' ' ')"
fi
for f in "${apps[@]}"; do
    env -u LD_LIBRARY_PATH "$dest/$f" --help >/dev/null 2>&1 || fail "$f --help does not run"
done

if [ "$gst" = 1 ] && [ -n "$plugin" ]; then
    # A consumer of the installed tree: GStreamer finds dfdec there.
    plugdir=$(dirname "$dest/$plugin")
    reg="$dest/registry.bin"
    genv=(env -u LD_LIBRARY_PATH GST_PLUGIN_PATH="$plugdir" GST_REGISTRY="$reg" GST_DEBUG='*:1')
    inspect=$("${genv[@]}" gst-inspect-1.0 dfdec 2>&1) || fail "gst-inspect-1.0 dfdec: $inspect"
    grep -q "Filename.*$plugdir/libgstdf.so" <<<"$inspect" ||
        fail "gst-inspect-1.0 does not show the installed plugin: $(grep Filename <<<"$inspect")"
    clip="${DF_TEST_MEDIA:-}/h264_cabac_slices8.mkv"
    if [ -s "$clip" ]; then
        # The clip's 24 pictures of 640x360 I420 out of the installed dfdec.
        raw="$dest/out.yuv"
        if ! launch=$("${genv[@]}" gst-launch-1.0 -q filesrc location="$clip" ! parsebin ! dfdec ! \
            video/x-raw,format=I420 ! filesink location="$raw" 2>&1); then
            fail "gst-launch-1.0 through the installed dfdec: $launch"
        fi
        size=$(stat -c %s "$raw" 2>/dev/null || echo 0)
        [ "$size" -eq $((24 * 640 * 360 * 3 / 2)) ] ||
            fail "the installed dfdec gave $size bytes, want 24 pictures of 640x360 I420"
    else
        fail "no test clip at $clip (DF_TEST_MEDIA)"
    fi
fi

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
