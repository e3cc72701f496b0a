#!/usr/bin/env bash
# Builds the vesper image, tagged vesper:latest and vesper:VERSION.
#
#   docker/build.sh             offline unless a registry answers
#   docker/build.sh --offline   never pull: a Debian base made with debootstrap
#                               (vesper-base:bookworm, made once and kept), vesper
#                               built by cargo on the host (Debian bookworm, the
#                               same glibc), and the Dockerfile's `prebuilt` stage
#   docker/build.sh --registry  the Dockerfile's multi-stage build
#
# Offline, the only downloads are Debian's packages for debootstrap, from the mirror
# this machine's apt uses. Needs root (debootstrap), docker, cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=auto
case "${1:-}" in
    --offline) mode=offline ;;
    --registry) mode=registry ;;
    "") ;;
    *) echo "usage: docker/build.sh [--offline|--registry]" >&2; exit 2 ;;
esac

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
base=vesper-base:bookworm

if [ "$mode" = auto ]; then
    if timeout 20 docker pull -q debian:bookworm-slim >/dev/null 2>&1; then
        mode=registry
    else
        mode=offline
    fi
fi
echo "build.sh: $mode build of vesper $version"

# The stack's default data folder, writable by the containers' user (uid 10000).
mkdir -p docker/data
chmod 0777 docker/data

if [ "$mode" = registry ]; then
    docker build -f docker/Dockerfile --target runtime -t vesper:latest -t "vesper:$version" .
    exit 0
fi

# The runtime's base: plain Debian (docker/debian.sh), made once and kept.
# shellcheck source=docker/debian.sh
source docker/debian.sh
debian_base "$base"

cargo build --release --locked --bin vesper
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp docker/Dockerfile "$context/Dockerfile"
strip -o "$context/vesper" target/release/vesper
docker build -q --target prebuilt --build-arg RUNTIME_IMAGE="$base" \
    -t vesper:latest -t "vesper:$version" "$context" >/dev/null
size=$(docker image inspect vesper:latest --format '{{.Size}}')
echo "build.sh: vesper:latest and vesper:$version, $((size / 1000000)) MB"
