# shellcheck shell=bash
# The Debian base every image builds FROM on a machine that reaches no image registry: Debian 12
# (bookworm) made from Debian's packages with debootstrap (--variant=minbase, ~30 s) and imported
# as $PDA_LOCAL_BASE_IMAGE. With a registry, PDA_BASE_IMAGE=debian:bookworm-slim (the official
# image) builds the very same Dockerfiles and this step is skipped.

# The configured Debian mirror (deb822 sources or a classic sources.list), else deb.debian.org.
debian_mirror() {
  local mirror
  mirror=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n 1)
  [[ -n "$mirror" ]] || mirror=$(grep -hsE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | grep -v security | head -n 1)
  printf '%s\n' "${mirror:-http://deb.debian.org/debian}"
}

ensure_base_image() {
  if [[ -n "$PDA_BASE_IMAGE" ]]; then
    BASE_IMAGE="$PDA_BASE_IMAGE"
    return 0
  fi
  BASE_IMAGE="$PDA_LOCAL_BASE_IMAGE"
  docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
  local mirror dir
  mirror=$(debian_mirror)
  dir=$(mktemp -d)
  containers_log "making the Debian base image $BASE_IMAGE with debootstrap from $mirror (~30 s, first run only)"
  mkdir -p "$PDA_CONTAINERS_LOG_DIR"
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >>"$PDA_CONTAINERS_LOG_DIR/debootstrap.log" 2>&1 ||
    containers_die "debootstrap failed; see $PDA_CONTAINERS_LOG_DIR/debootstrap.log"
  # The same sources inside as outside: apt-get in the Dockerfiles uses the mirror debootstrap used.
  local security
  security=$(grep -hsE '^URIs:.*security' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | head -n 1)
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
    "$mirror" "$mirror" "${security:-http://deb.debian.org/debian-security}" >"$dir/etc/apt/sources.list"
  rm -rf "$dir/var/cache/apt/archives"/*.deb "$dir/var/lib/apt/lists"/*
  tar -C "$dir" -c . | docker import -c 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >/dev/null ||
    containers_die "docker import of the Debian base failed"
  rm -rf "$dir"
}
