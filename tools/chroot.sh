#!/usr/bin/env bash
# tools/chroot.sh DIR SUITE CMD [ARGS...]: run CMD (relative to the source
# tree) as root in a clean Debian SUITE chroot.  The chroot is debootstrapped
# once into DIR/chroot (DIR relative to the source tree, or absolute; from
# $DF_MIRROR, default http://deb.debian.org/debian) and reused; the source
# tree is bind-mounted at /src, with /proc, /sys, /dev,
# /dev/pts and a fresh /dev/shm, all unmounted on exit.  Build directories
# inside get the prefix DIR/ (DF_BUILD_PREFIX), so they never mix with this
# system's.  DF_CHROOT_SRC binds another source tree at /src instead (e.g. a
# `git archive` snapshot, to keep editing this one during a long run).
# Needs root (as apt-get does) and debootstrap (installed if missing).
# `tools/test --debian13` runs the whole suite in trixie this way.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
[ $# -ge 3 ] || { echo "usage: $0 DIR SUITE CMD [ARGS...]" >&2; exit 2; }
dir=$1 suite=$2
shift 2
. tools/deps.sh

if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: a chroot needs root (or sudo)" >&2; exit 1; }
    exec sudo --preserve-env=DF_MIRROR,DF_CHROOT_SRC,DF_JOBS "$0" "$dir" "$suite" "$@"
fi
# DIR is relative to the source tree (cd above) unless absolute.
case $dir in
/*) root=$dir/chroot ;;
*) root=$PWD/$dir/chroot ;;
esac
mirror=${DF_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$dir" || exit 1
# One run at a time per chroot: with the lock held, mounts left in it are
# stale (a killed run) and are replaced.
exec 9>"$dir/chroot.lock"
flock -n 9 || { echo "error: another run is using $root" >&2; exit 1; }

if [ ! -f "$root/.df-debootstrap" ]; then
    if ! command -v debootstrap >/dev/null; then
        df_log "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
            exit 1
    fi
    df_log "debootstrapping $suite into $root"
    rm -rf "$root.partial"
    debootstrap --variant=minbase "$suite" "$root.partial" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
        { tail -20 "$dir/debootstrap.log"; echo "error: debootstrap failed (log: $dir/debootstrap.log)" >&2; exit 1; }
    # No daemon starts inside the chroot.
    printf '#!/bin/sh\nexit 101\n' >"$root.partial/usr/sbin/policy-rc.d"
    chmod +x "$root.partial/usr/sbin/policy-rc.d"
    touch "$root.partial/.df-debootstrap"
    rm -rf "$root" && mv "$root.partial" "$root" || exit 1
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null

mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}"
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mnt() { # mnt TARGET MOUNT-ARGS...: mount unless a stale run left it mounted
    local t=$root/$1; shift
    mkdir -p "$t"
    mountpoint -q "$t" && umount "$t"
    mount "$@" "$t" || { echo "error: cannot mount $t" >&2; exit 1; }
    mounted+=("$t")
}
mnt proc -t proc proc
mnt sys -t sysfs sys
mnt dev --bind /dev
mnt dev/pts --bind /dev/pts
mnt dev/shm -t tmpfs -o mode=1777 shm
mnt src --bind "${DF_CHROOT_SRC:-$PWD}"

df_log "running $* in $suite ($root)"
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DF_BUILD_PREFIX="$dir/" ${DF_JOBS:+DF_JOBS=$DF_JOBS} \
    /bin/bash -c 'cd /src && exec "$@"' bash "$@"
