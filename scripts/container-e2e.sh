#!/usr/bin/env bash
# Builds the CPU image of the repository's Dockerfile with podman, runs it, and
# drives the container with the end-to-end tests' gRPC client
# (tests/e2e/tandem_client.js) and over its HTTP port. No image registry is
# reachable from this project's machines, so the Debian 12 base is made here
# with debootstrap (a minbase root filesystem, cleaned as Debian's images are,
# standing in for both debian:12 and debian:12-slim) and imported as
# localhost/tandem-debian:12 and :12-slim;
# the build reads it through the Dockerfile's DEBIAN_REPO argument.
#
# As root on Debian 12, from anywhere in the repository. It installs podman,
# buildah, runc and debootstrap, and needs the Debian mirror and the npm
# registry during the build (scripts/install-deps.sh runs in the image). The
# image's C++ build takes both cores of a 2-core machine for a long time.
#
#   scripts/container-e2e.sh           build, run, check, remove the container
#   KEEP=1 scripts/container-e2e.sh    leave the container running
#
# Two settings this machine needs (README, "Container engine"): runc instead
# of crun, which refuses the hybrid cgroup v1/v2 layout ("cgroups in hybrid
# mode not supported"), and nofile/nproc limits within the hard limits the VM
# grants (podman's defaults are higher, and without CAP_SYS_RESOURCE they
# cannot be raised: "setrlimit RLIMIT_NOFILE: Operation not permitted").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${WORK:-/var/tmp/tandem-container-e2e}"
mirror="${MIRROR:-http://deb.debian.org/debian}"
base=localhost/tandem-debian
image=localhost/tandem:cpu
name=tandem-container-e2e
grpc_port="${GRPC_PORT:-50651}"
http_port="${HTTP_PORT:-9651}"
nofile="$(ulimit -Hn)"
podman=(podman --runtime runc)
limits=(--ulimit "nofile=${nofile}:${nofile}" --ulimit nproc=8192:8192)
log() { echo "container-e2e: $*"; }

# 1. The tools.
missing=()
for p in podman buildah runc debootstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q && apt-get install -y -q "${missing[@]}"
fi

# 2. The base image: Debian 12 (bookworm), minbase, from the mirror.
mkdir -p "$work"
if ! podman image exists "$base:12"; then
  log "debootstrap bookworm from $mirror"
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
  # As Debian's own images: no package lists or cached .debs, and apt
  # removes the packages it downloads (their /etc/apt/apt.conf.d/docker-clean).
  rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin \
    "$work/rootfs/var/cache/apt/archives/"*.deb
  cat > "$work/rootfs/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
  tar -C "$work/rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$base:12"
  podman tag "$base:12" "$base:12-slim"
  rm -rf "$work/rootfs"
fi

# 3. The CPU image (the build-cpu and cpu stages only; the CUDA ones are skipped).
log "building $image (log: $work/build.log)"
# The host's CA bundle goes in too: this machine reaches the npm registry
# through a TLS-intercepting egress proxy whose CA only the host trusts.
"${podman[@]}" build --format docker --pull=never --network=host "${limits[@]}" \
  -v /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro \
  --build-arg NODE_EXTRA_CA_CERTS=/run/host-ca.crt \
  --build-arg DEBIAN_REPO="$base" --target cpu -t "$image" "$root" > "$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; exit 1; }
log "image size: $(podman image inspect --format '{{.Size}}' "$image") bytes"

# 4. Run it with the image's own command (ports 50051 and 9400 in the
# container, published on loopback).
"${podman[@]}" rm -f "$name" >/dev/null 2>&1 || true
"${podman[@]}" run -d --name "$name" "${limits[@]}" \
  -p "127.0.0.1:$grpc_port:50051" -p "127.0.0.1:$http_port:9400" "$image" >/dev/null
cleanup() {
  if [ "${KEEP:-0}" != 1 ]; then "${podman[@]}" rm -f "$name" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# 5. The image's HEALTHCHECK (tandem-cli health on the gRPC port) passes once
# the model is loaded. Without systemd podman does not schedule it: run it.
log "waiting for the HEALTHCHECK"
for _ in $(seq 1 300); do
  if "${podman[@]}" healthcheck run "$name" >/dev/null 2>&1; then ready=1; break; fi
  if [ "$("${podman[@]}" inspect -f '{{.State.Running}}' "$name")" != true ]; then break; fi
  sleep 1
done
if [ "${ready:-0}" != 1 ]; then "${podman[@]}" logs "$name" | tail -30; log "FAIL: not healthy"; exit 1; fi

# 6. Inside: non-root, only the two binaries added.
uid="$("${podman[@]}" exec "$name" id -u)"
[ "$uid" != 0 ] || { log "FAIL: runs as root"; exit 1; }
log "runs as uid $uid; /usr/local/bin: $("${podman[@]}" exec "$name" ls /usr/local/bin | tr '\n' ' ')"

# 7. The e2e client against the container: gRPC health, model info, a stream;
# HTTP /readyz, /metrics (the endpoint picker's gauges), /v1/completions.
(cd "$root/tests/e2e" && GRPC_ADDR="127.0.0.1:$grpc_port" HTTP_ADDR="127.0.0.1:$http_port" node - <<'JS'
const assert = require('node:assert/strict');
const { clients, unary, generate, httpGet } = require('./tandem_client');
(async () => {
  const { generation, health } = clients(process.env.GRPC_ADDR);
  const http = `http://${process.env.HTTP_ADDR}`;
  assert.equal((await unary(health, 'Check', { service: '' })).status, 'SERVING');
  const info = await unary(generation, 'GetModelInfo', {});
  const r = await generate(generation, { prompt: 'Hello, my name is', stopping: { max_tokens: 16, ignore_eos: true } });
  assert.equal(r.error, null, String(r.error));
  assert.equal(r.ids.length, 16);
  assert.equal((await httpGet(`${http}/readyz`)).status, 200);
  const metrics = (await httpGet(`${http}/metrics`)).body;
  for (const m of ['tandem_requests_waiting', 'tandem_requests_running', 'tandem_kv_cache_usage_ratio']) {
    assert.match(metrics, new RegExp(`^${m} `, 'm'), `${m} exported`);
  }
  const model = (await (await fetch(`${http}/v1/models`)).json()).data[0].id;
  const completion = await (await fetch(`${http}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, prompt: 'The capital of France is', max_tokens: 8, ignore_eos: true }),
  })).json();
  assert.equal(completion.usage.completion_tokens, 8);
  console.log(`container-e2e: ${info.architecture}, gRPC stream ${JSON.stringify(r.text)}, ` +
    `/v1/completions ${JSON.stringify(completion.choices[0].text)}`);
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
JS
)

# 8. The drain: SIGTERM, exit 0 within the grace period.
if [ "${KEEP:-0}" != 1 ]; then
  "${podman[@]}" stop -t 70 "$name" >/dev/null
  code="$("${podman[@]}" inspect -f '{{.State.ExitCode}}' "$name")"
  [ "$code" = 0 ] || { "${podman[@]}" logs "$name" | tail -20; log "FAIL: exit code $code after SIGTERM"; exit 1; }
fi
log "PASS"
