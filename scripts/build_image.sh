#!/usr/bin/env bash
# Builds the attnscan container image (Containerfile) with podman and writes the archive Apptainer or
# Singularity converts into a SIF without root (docs/cluster.md):
#
#   scripts/build_image.sh [ARCHIVE]     default build/attnscan-image.tar (docker-archive)
#
# Run as root on Debian 12 (installs podman, buildah and debootstrap where missing). The base image is
# $ATTNSCAN_IMAGE_BASE when set (e.g. docker.io/library/debian:bookworm-slim where a registry is
# reachable), else a local `debootstrap --variant=minbase bookworm` from this machine's Debian mirror.
# The image holds the committed source (git HEAD) and the default model from the cache.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
archive=$(realpath -m "${1:-build/attnscan-image.tar}")
cache=${ATTNSCAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscan}
model="$cache/models/all-MiniLM-L6-v2"
tag=localhost/attnscan:$(git rev-parse --short HEAD)  # the image holds HEAD, whatever the work tree has
started=$(date +%s)
say() { printf '== %s   [%ds]\n' "$*" $(($(date +%s) - started)); }

missing=()
for p in podman buildah debootstrap uidmap runc; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ -f "$model/model.safetensors" ] || { echo "error: $model missing: run scripts/setup.sh run first" >&2; exit 1; }

# Hosts with hybrid cgroups need runc (crun refuses them); explicit limits where the defaults are unset.
if [ -z "${CONTAINERS_CONF:-}" ] && [ -d /sys/fs/cgroup/unified ] && command -v runc >/dev/null; then
  conf="$root/build/containers.conf"
  mkdir -p "$(dirname "$conf")"
  printf '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' >"$conf"
  export CONTAINERS_CONF="$conf"
fi

base=${ATTNSCAN_IMAGE_BASE:-localhost/attnscan-base:bookworm}
if [ -z "${ATTNSCAN_IMAGE_BASE:-}" ] && ! podman image exists "$base"; then
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
  mirror=${mirror:-http://deb.debian.org/debian}
  say "debootstrap --variant=minbase bookworm from $mirror"
  rootfs=$(mktemp -d)
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null
  tar -C "$rootfs" -c . | podman import --quiet - "$base" >/dev/null
fi

context=$(mktemp -d)
trap 'rm -rf "$context" ${rootfs:+"$rootfs"}' EXIT
mkdir -p "$context/src"
git archive HEAD | tar -x -C "$context/src"
cp -r "$model" "$context/model"
say "podman build $tag (base $base)"
podman build --quiet --build-arg BASE="$base" --build-arg IMAGE_LABEL="attnscan $tag, Debian 12" \
  -f "$root/Containerfile" -t "$tag" -t localhost/attnscan:latest "$context" >/dev/null
say "image $tag: $(podman image inspect --format '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1 / 1e6}')"
mkdir -p "$(dirname "$archive")"
rm -f "$archive"
podman save --quiet --format docker-archive -o "$archive" "$tag"
say "wrote $archive ($(du -h "$archive" | cut -f1)); convert it: apptainer build attnscan.sif docker-archive://$archive"
