# Image-building helpers shared by scripts/host/setup.sh and scripts/upstream/images.sh: an OCI
# image layout built with umoci from a rootfs that a populate_NAME function fills, as a tarball.

# build_image NAME TAG OUT.tar CONFIG_ARGS... ; the rootfs is filled by the function named populate_NAME.
build_image() {
  local name="$1" tag="$2" out="$3"; shift 3
  local work; work="$(mktemp -d /tmp/bunlet-image-XXXXXX)"
  local layout="$work/layout" bundle="$work/bundle"
  umoci init --layout "$layout"
  umoci new --image "$layout:$tag"
  umoci unpack --image "$layout:$tag" "$bundle" >/dev/null
  "populate_$name" "$bundle/rootfs"
  umoci repack --image "$layout:$tag" "$bundle"
  umoci config --image "$layout:$tag" --author bunlet "$@"
  umoci gc --layout "$layout"
  tar -C "$layout" -cf "$out.tmp" .
  mv "$out.tmp" "$out"
  rm -rf "$work"
}

# populate_busybox ROOT: BusyBox at /bin/busybox with every applet linked; $BUSYBOX names another build
# (default: the host's, Debian's busybox-static).
populate_busybox() {
  local root="$1" busybox="${BUSYBOX:-/bin/busybox}"
  mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" "$root/etc" "$root/tmp" "$root/root"
  chmod 1777 "$root/tmp"
  cp "$busybox" "$root/bin/busybox"
  local applet
  for applet in $("$busybox" --list-full); do
    [ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
}

# Copies executables and the shared libraries they load (ldd) into a rootfs, at the same paths.
copy_with_libs() {
  local root="$1"; shift
  local f
  for f in "$@"; do
    cp -L --parents "$f" "$root/"
    copy_libs_of "$root" "$f"
  done
}

# copy_libs_of ROOT FILE: the shared libraries FILE loads (ldd), into ROOT at the host's paths.
copy_libs_of() {
  local root="$1" f="$2" lib
  for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true); do
    [ -e "$root$lib" ] || cp -L --parents "$lib" "$root/"
  done
}
