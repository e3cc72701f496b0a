# shellcheck shell=bash
# Debian bases made without a registry, for docker/build.sh and docker/mpi-test.sh
# (sourced, not run). Needs root (debootstrap) and docker.

# The Debian mirror this machine's apt uses (deb822 or one-line sources), else Debian's.
debian_mirror() {
    local mirror
    mirror=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
    if [ -z "$mirror" ]; then
        mirror=$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
    fi
    echo "${mirror:-http://deb.debian.org/debian}"
}

# debian_base IMAGE [PACKAGE…]: makes IMAGE, a minimal Debian bookworm with PACKAGEs
# (and what they depend on), with debootstrap and `docker import`, unless it exists:
# it is kept between runs. A subshell, so that its folder goes whatever happens.
debian_base() (
    image=$1
    shift
    docker image inspect "$image" >/dev/null 2>&1 && exit 0
    mirror=$(debian_mirror)
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    include=()
    if [ $# -gt 0 ]; then
        include=("--include=$(IFS=,; echo "$*")")
    fi
    echo "${0##*/}: debootstrap bookworm${*:+ with $*} from $mirror"
    debootstrap --variant=minbase "${include[@]}" bookworm "$root" "$mirror" >/dev/null
    # What a runtime never reads: package lists and caches, documentation, locales.
    rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/var/log/* \
        "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
    tar -C "$root" -c . | docker import - "$image" >/dev/null
    echo "${0##*/}: made $image"
)
