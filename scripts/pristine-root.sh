# Sourced by the scripts that prove set-up on a fresh machine (test-fresh.sh,
# test-deb.sh): a pristine Debian 12 root file system made with debootstrap,
# commands run inside it as root or as an ordinary user, and its removal.
# Needs root on the host (debootstrap, mount, chroot).
#
#   pristine_make DIR      debootstrap --variant=minbase bookworm, then only
#                          git, make, ca-certificates and sudo, and a user
#                          'builder' who may sudo (no password: there is no
#                          terminal to type one)
#   pristine_run DIR root|builder CMD   CMD in a login-like shell inside DIR
#   pristine_destroy DIR   stop what still runs inside, unmount, remove
#
# The mirror is the one the host's apt already uses (MIRROR overrides it).
# What the host needs to reach the registries at all, and nothing else, goes
# in: apt's Acquire:: settings, certificate authorities the host added
# (/usr/local/share/ca-certificates) and proxy variables. The project's own
# dependencies are left for its `make run` and `make test` to install.

pristine_mirror() {
    if [ -n "${MIRROR:-}" ]; then echo "$MIRROR"; return; fi
    local m
    m=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null)
    [ -n "$m" ] || m=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ { print $2; exit }' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null)
    echo "${m:-http://deb.debian.org/debian}"
}

pristine_mount() {
    local d=$1
    mountpoint -q "$d/proc" || mount -t proc proc "$d/proc"
    mountpoint -q "$d/sys" || mount -t sysfs sysfs "$d/sys"
    mountpoint -q "$d/dev" || mount --bind /dev "$d/dev"
    mountpoint -q "$d/dev/pts" || mount --bind /dev/pts "$d/dev/pts"
    mountpoint -q "$d/dev/shm" || mount -t tmpfs -o mode=1777 shm "$d/dev/shm"
}

pristine_umount() {
    local d=$1 m
    # Deepest first; lazily, so that a process still starting cannot pin one.
    for m in $(awk -v d="$(readlink -f "$d")" 'index($2, d "/") == 1 { print $2 }' /proc/mounts |
        sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m"
    done
}

# Every process whose root directory is DIR (an httpd, a browser) is killed.
pristine_kill() {
    local d pid
    d=$(readlink -f "$1")
    for pid in $(ls /proc | grep -E '^[0-9]+$'); do
        [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$d" ] && kill -KILL "$pid" 2>/dev/null
    done
    return 0
}

pristine_make() {
    local d=$1 mirror
    mirror=$(pristine_mirror)
    echo "pristine: debootstrap --variant=minbase bookworm $d $mirror"
    debootstrap --variant=minbase bookworm "$d" "$mirror" >"$d.debootstrap.log" 2>&1 || {
        tail -n 20 "$d.debootstrap.log" >&2
        return 1
    }
    rm -f "$d.debootstrap.log"
    grep -hs '^Acquire::' /etc/apt/apt.conf.d/* >"$d/etc/apt/apt.conf.d/99host-acquire" || true
    if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
        mkdir -p "$d/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt "$d/usr/local/share/ca-certificates/"
    fi
    cp /etc/resolv.conf "$d/etc/resolv.conf"
    pristine_mount "$d"
    pristine_run "$d" root 'apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git make ca-certificates sudo >/dev/null &&
        useradd -m -s /bin/bash builder &&
        echo "builder ALL=(ALL) NOPASSWD: ALL" >/etc/sudoers.d/builder &&
        chmod 0440 /etc/sudoers.d/builder' || return 1
}

pristine_run() {
    local d=$1 who=$2 home=/root spec=""
    shift 2
    if [ "$who" != root ]; then
        home=/home/$who
        spec="--userspec=$who:$who"
    fi
    # shellcheck disable=SC2086
    chroot $spec "$d" /usr/bin/env -i HOME="$home" USER="$who" LOGNAME="$who" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
        ${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy} \
        ${no_proxy:+no_proxy=$no_proxy} \
        /bin/bash -c 'cd "$HOME" && '"$*"
}

pristine_destroy() {
    local d=$1
    [ -n "$d" ] && [ -d "$d" ] || return 0
    pristine_kill "$d"
    pristine_umount "$d"
    if awk -v d="$(readlink -f "$d")" 'index($2, d "/") == 1 { f = 1 } END { exit !f }' /proc/mounts; then
        echo "pristine: $d still has mounts; not removing it" >&2
        return 1
    fi
    rm -rf --one-file-system "$d"
}
