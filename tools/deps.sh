# Shared by tools/demo and tools/test: install missing Debian packages and
# configure/build a meson build directory.  Sourced, not run.

DF_PACKAGES=(
    gcc g++ pkg-config meson ninja-build python3
    libhwloc-dev libglib2.0-dev libjson-glib-dev libcairo2-dev
    libgtest-dev libtbb-dev
    libavcodec-dev libavformat-dev libavfilter-dev libavutil-dev libswscale-dev ffmpeg
    libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools
    gstreamer1.0-plugins-base gstreamer1.0-x gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav
    libsdl2-dev xvfb graphviz strace
)

df_log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Install the packages in DF_PACKAGES that are missing (no-op when all present).
df_ensure_packages() {
    local missing=() p
    for p in "${DF_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "error: missing packages (${missing[*]}) and no sudo to install them" >&2; return 1; }
        sudo=(sudo)
    fi
    df_log "installing ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# df_build DIR [meson options...]: configure DIR once (reconfigure if the
# options changed), then build it.
df_build() {
    local dir=$1; shift
    local stamp="$dir/.df-options"
    local want="$*"
    if [ ! -f "$dir/build.ninja" ]; then
        df_log "configuring $dir $want"
        meson setup "$dir" "$@" >/dev/null || { meson setup "$dir" "$@"; return 1; }
        echo "$want" > "$stamp"
    elif [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        df_log "reconfiguring $dir $want"
        meson setup --reconfigure "$dir" "$@" >/dev/null
        echo "$want" > "$stamp"
    fi
    df_log "building $dir"
    # DF_JOBS: ninja -j (default: ninja's own)
    ninja -C "$dir" ${DF_JOBS:+-j"$DF_JOBS"} >/dev/null || ninja -C "$dir" ${DF_JOBS:+-j"$DF_JOBS"}
}
