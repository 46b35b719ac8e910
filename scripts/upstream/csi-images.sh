#!/usr/bin/env bash
# The images of upstream's CSI hostpath test driver (the release's
# test/e2e/testing-manifests/storage-csi/hostpath/hostpath/csi-hostpath-plugin.yaml), built offline under
# the exact names and tags that manifest uses, each program on the same BusyBox root as images.sh's images:
#   csi-attacher, csi-provisioner, csi-resizer, csi-snapshotter
#                the kubernetes-csi sidecars at the manifest's versions, built from the Go module proxy
#   hostpathplugin, csi-node-driver-registrar, livenessprobe
#                the proxy refuses these modules (403): they come from builds of their GitHub sources cached
#                in $BUNLET_CSI_FETCHED (default /var/tmp/bunlet-fetched/bin). hostpathplugin there is
#                csi-driver-host-path v1.18.0 and goes under the manifest's v1.17.1 name. Without that
#                directory the script says so and builds nothing (CI has no such builds).
# Not built: csi-external-health-monitor-controller and csi-snapshot-metadata, which the e2e driver
# (test/e2e/storage/drivers/csi.go, hostpathCSIDriver.PrepareTest) removes from the StatefulSet.
#   scripts/upstream/csi-images.sh              # build what is missing; prints the directory (name.tar + refs.txt)
#   scripts/upstream/csi-images.sh import SOCK  # also import them into the containerd on SOCK (namespace k8s.io)
# Exits 2 (nothing built) when the cached builds are absent.
set -euo pipefail

say() { echo "csi-images: $*" >&2; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../host/image-lib.sh"
source "$HERE/module-lib.sh"
# The release's images directory keys the output; the sidecars' builds are cached by version beside it.
CACHE="${BUNLET_UPSTREAM_CACHE:-/var/tmp/bunlet-upstream}"
RELEASE="${BUNLET_UPSTREAM_RELEASE:-v1.37.2}"
FETCHED="${BUNLET_CSI_FETCHED:-/var/tmp/bunlet-fetched/bin}"

REGISTRY=registry.k8s.io/sig-storage
# image name → "module version package" (the proxy serves these) or "fetched FILE" (a cached GitHub build).
declare -A SOURCE=(
  [csi-attacher]="github.com/kubernetes-csi/external-attacher/v4 v4.12.0 ./cmd/csi-attacher"
  [csi-provisioner]="github.com/kubernetes-csi/external-provisioner/v6 v6.3.0 ./cmd/csi-provisioner"
  [csi-resizer]="github.com/kubernetes-csi/external-resizer/v2 v2.2.0 ./cmd/csi-resizer"
  [csi-snapshotter]="github.com/kubernetes-csi/external-snapshotter/v8 v8.6.0 ./cmd/csi-snapshotter"
  [hostpathplugin]="fetched hostpathplugin"
  [csi-node-driver-registrar]="fetched csi-node-driver-registrar"
  [livenessprobe]="fetched livenessprobe"
)
# The manifest's tag of each image.
declare -A TAG=(
  [csi-attacher]=v4.12.0 [csi-provisioner]=v6.3.0 [csi-resizer]=v2.2.0 [csi-snapshotter]=v8.6.0
  [hostpathplugin]=v1.17.1 [csi-node-driver-registrar]=v2.17.0 [livenessprobe]=v2.19.0
)
ORDER=(hostpathplugin csi-node-driver-registrar livenessprobe csi-attacher csi-provisioner csi-resizer csi-snapshotter)

for f in hostpathplugin csi-node-driver-registrar livenessprobe; do
  if [ ! -x "$FETCHED/$f" ]; then
    say "$FETCHED/$f is absent: the module proxy refuses csi-driver-host-path, node-driver-registrar and livenessprobe,"
    say "so these images need builds of their GitHub sources there (see docs/upstream.md); nothing built"
    exit 2
  fi
done

# A sidecar from the module proxy, built once into $CACHE/csi/<name>-<version>/<name>; prints its path.
module_binary() {
  local name="$1" m v p out
  read -r m v p <<<"${SOURCE[$name]}"
  out="$CACHE/csi/$name-$v/$name"
  if [ ! -x "$out" ]; then
    command -v go >/dev/null || { say "go is not installed: building $name needs Go >= 1.26"; exit 1; }
    say "building $name ($m $v)"
    build_go_module "$m" "$v" "$p" "$out" || exit 1
  fi
  echo "$out"
}

declare -A PROGRAM=()
for name in "${ORDER[@]}"; do
  read -r kind file _ <<<"${SOURCE[$name]}"
  if [ "$kind" = fetched ]; then PROGRAM[$name]="$FETCHED/$file"; else PROGRAM[$name]="$(module_binary "$name")"; fi
done
BUSYBOX="$(bash "$HERE/busybox.sh")"
export BUSYBOX

# Keyed by the contents alone (not the paths sha256sum prints: the script is run by relative and absolute paths).
key="$( { echo 1; sha256sum "$BUSYBOX" "$HERE/../host/image-lib.sh" "${BASH_SOURCE[0]}"; for n in "${ORDER[@]}"; do sha256sum "${PROGRAM[$n]}"; done; } | cut -d' ' -f1 | sha256sum | cut -c1-16)"
OUT="$CACHE/$RELEASE/csi-images/$key"
if [ ! -f "$OUT/refs.txt" ]; then
  say "building the CSI hostpath images into $OUT"
  mkdir -p "$OUT"
  : >"$OUT/refs.txt.tmp"
  for name in "${ORDER[@]}"; do
    # Each program at /<name>, its entrypoint, as in upstream's images (FROM gcr.io/distroless/static; COPY; ENTRYPOINT).
    fn="${name//-/_}"
    eval "populate_$fn() { populate_busybox \"\$1\"; cp \"${PROGRAM[$name]}\" \"\$1/$name\"; }"
    build_image "$fn" "${TAG[$name]}" "$OUT/$name.tar" \
      --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --config.workingdir / --config.entrypoint "/$name"
    echo "$name.tar $REGISTRY/$name" >>"$OUT/refs.txt.tmp"
  done
  mv "$OUT/refs.txt.tmp" "$OUT/refs.txt"
fi

if [ "${1:-}" = import ]; then
  sock="${2:?usage: csi-images.sh import SOCKET}"
  while read -r tar base; do
    ctr --address "$sock" -n k8s.io images import --base-name "$base" "$OUT/$tar" >/dev/null
  done <"$OUT/refs.txt"
fi
echo "$OUT"
