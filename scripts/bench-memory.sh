#!/usr/bin/env bash
# bench-memory.sh — how much memory `kdns serve` holds for a cluster of a given size.
#
# Usage: scripts/bench-memory.sh [SERVICES:PODS ...]     (default: 10000:10000 100000:150000)
#        npm run bench:memory [-- SERVICES:PODS ...]
#
# For each size it
#   1. writes (once, cached under $FIXTURES) the bench's cluster at that size with
#      bench/fixture.ts: Namespaces, Services and EndpointSlices, plus PODS Pods spread over the
#      same namespaces as `kind: List` JSON files of 10,000 Pods each (what `kubectl get pods -o
#      json` writes, trimmed to the fields every real pod has);
#   2. starts an upstream (named, for `forward`) and `kdns serve` pinned to CPU $SERVER_CPU with
#      the stock Kubernetes Corefile (errors, health, ready, kubernetes with `pods insecure`,
#      prometheus, forward, cache 30, loop, reload, loadbalance) on 127.0.0.1;
#   3. reads VmRSS from /proc/PID/status when /ready first says 200 (plus 2 s) — "loaded";
#      $SETTLE s later, before any query — "settled"; right after $DURATION s of dnsperf (pinned to CPU $LOAD_CPU, the fixture's
#      queries-auth.txt) — "after load"; after $IDLE s more without queries — "idle"; and
#      VmHWM, the peak;
#   4. prints one table row per size: MiB at each point, load time, QPS and the server's CPU
#      µs per query during the load (a rough check; `npm run bench` is the QPS bench).
#
# As root it runs inside a fresh network namespace (only loopback exists), so nothing it starts
# can reach beyond the machine. Not part of `npm test`; needs dnsperf, named, curl, taskset
# (as root: bash bench/install.sh dnsperf bind9 curl) and a build (`npm run build`).
#
# Knobs (environment, defaults in brackets):
#   KDNS_NODE_FLAGS [the flags kdns ships with, see README]  DURATION [10]  IDLE [30]  SETTLE [20]
#   PORT [5300]  UPSTREAM_PORT [5399]  SERVER_CPU [0]  LOAD_CPU [1]  CLIENTS [4]  OUTSTANDING [100]
#   FIXTURES [${TMPDIR:-/tmp}/kdns-bench-memory]  READY_TIMEOUT [600]  LABEL [free text column]
#   KEEP_LOG [0; 1 prints the kdns log path instead of deleting it]
#   DROP [unset; e.g. "cache prometheus": leave these directives out, to see what each costs]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [ "$(id -u)" = 0 ] && [ -z "${KDNS_BENCH_IN_NETNS:-}" ] && command -v unshare >/dev/null && unshare --net true 2>/dev/null; then
  export KDNS_BENCH_IN_NETNS=1
  exec unshare --net -- "$0" "$@"
fi
if [ -n "${KDNS_BENCH_IN_NETNS:-}" ]; then ip link set lo up; fi

NODE_FLAGS="${KDNS_NODE_FLAGS---max-semi-space-size=1 --v8-pool-size=1}"
DURATION="${DURATION:-10}"
IDLE="${IDLE:-30}"
SETTLE="${SETTLE:-20}"
PORT="${PORT:-5300}"
UPSTREAM_PORT="${UPSTREAM_PORT:-5399}"
SERVER_CPU="${SERVER_CPU:-0}"
LOAD_CPU="${LOAD_CPU:-1}"
CLIENTS="${CLIENTS:-4}"
OUTSTANDING="${OUTSTANDING:-100}"
FIXTURES="${FIXTURES:-${TMPDIR:-/tmp}/kdns-bench-memory}"
READY_TIMEOUT="${READY_TIMEOUT:-600}"
LABEL="${LABEL:-}"

for tool in dnsperf named curl taskset node; do
  command -v "$tool" >/dev/null || { echo "bench-memory: '$tool' not found (as root: bash bench/install.sh dnsperf bind9 curl)" >&2; exit 2; }
done
[ -f "$here/dist/cli/main.js" ] || { echo "bench-memory: no build; run npm run build" >&2; exit 2; }

log() { echo "[bench-memory] $*" >&2; }

# fixture SERVICES PODS -> prints the fixture folder (cluster/, queries-auth.txt, example.test.zone)
fixture() {
  local dir="$FIXTURES/s$1-p$2"
  # bench/fixture.ts writes it once and leaves a matching one alone. The miss workload's
  # millions of names are not needed here.
  (cd "$here" && node --import tsx bench/fixture.ts --out "$dir" --services "$1" --pods "$2" --miss-names 10) >&2
  echo "$dir"
}

kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

run_dir="$(mktemp -d "${TMPDIR:-/tmp}/kdns-bench-memory.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP_LOG:-0}" = 1 ]; then log "logs in $run_dir"; else rm -rf "$run_dir"; fi
}
trap cleanup EXIT

# The upstream `forward` points at (the load never reaches it: every query is under cluster.local):
# named, authoritative for the fixture's example.test.
[ $# -gt 0 ] || set -- 10000:10000 100000:150000
upstream_fixture="$(fixture "${1%%:*}" "${1##*:}")"
mkdir -p "$run_dir/upstream"
cat >"$run_dir/upstream/named.conf" <<CONF
controls { };
options {
  directory "$run_dir/upstream";
  pid-file "$run_dir/upstream/named.pid";
  listen-on port $UPSTREAM_PORT { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
};
zone "example.test" { type primary; file "$upstream_fixture/example.test.zone"; };
CONF
taskset -c "$LOAD_CPU" named -g -4 -n 1 -c "$run_dir/upstream/named.conf" >"$run_dir/upstream.log" 2>&1 &
pids+=($!)

measure() { # SERVICES PODS -> one table row on stdout
  local services="$1" pods="$2" dir conf pid t0 t1 loaded after idle hwm p0 p1 out qps completed us
  dir="$(fixture "$services" "$pods")"
  conf="$run_dir/Corefile"
  # The stock Kubernetes Corefile (kubeadm's coredns ConfigMap), on loopback ports.
  cat >"$conf" <<CONF
.:$PORT {
    bind 127.0.0.1
    errors
    health 127.0.0.1:18080 {
        lameduck 5s
    }
    ready 127.0.0.1:18181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        manifests $dir/cluster
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    prometheus 127.0.0.1:19153
    forward . 127.0.0.1:$UPSTREAM_PORT
    cache 30
    loop
    reload
    loadbalance
}
CONF
  local d
  for d in ${DROP:-}; do
    # A directive and its { } block, if it has one.
    awk -v d="$d" '$1 == d { skip = ($NF == "{") ? 2 : 1 } skip == 2 && $1 == "}" { skip = 0; next } skip == 1 { skip = 0; next } skip == 0 { print }' "$conf" >"$conf.new"
    mv "$conf.new" "$conf"
  done
  t0="$(date +%s.%N)"
  # shellcheck disable=SC2086 # NODE_FLAGS is a list of flags
  taskset -c "$SERVER_CPU" node $NODE_FLAGS "$here/bin/kdns" serve --conf "$conf" >"$run_dir/kdns-$services-$pods.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  local deadline=$((SECONDS + READY_TIMEOUT))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18181/ready 2>/dev/null)" = 200 ]; do
    kill -0 "$pid" 2>/dev/null || { log "kdns exited:"; tail -n 20 "$run_dir/kdns-$services-$pods.log" >&2; exit 1; }
    [ "$SECONDS" -lt "$deadline" ] || { log "kdns not ready after ${READY_TIMEOUT}s"; exit 1; }
    sleep 0.2
  done
  t1="$(date +%s.%N)"
  sleep 2
  loaded="$(kib "$pid" VmRSS)"
  # V8's memory reducer returns the loading garbage some seconds after the last allocation.
  sleep "$SETTLE"
  settled="$(kib "$pid" VmRSS)"
  p0="$(ticks "$pid")"
  out="$(taskset -c "$LOAD_CPU" dnsperf -s 127.0.0.1 -p "$PORT" -d "$dir/queries-auth.txt" -l "$DURATION" \
    -c "$CLIENTS" -q "$OUTSTANDING" -O suppress=timeouts,unexpected,congestion,sockready 2>&1)"
  after="$(kib "$pid" VmRSS)"
  p1="$(ticks "$pid")"
  sleep "$IDLE"
  idle="$(kib "$pid" VmRSS)"
  hwm="$(kib "$pid" VmHWM)"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  qps="$(awk -F': *' '/Queries per second:/ { printf "%.0f", $2 }' <<<"$out")"
  completed="$(awk -F': *' '/Queries completed:/ { split($2, a, " "); print a[1] }' <<<"$out")"
  us="$(awk -v t=$((p1 - p0)) -v hz="$(getconf CLK_TCK)" -v n="${completed:-0}" 'BEGIN { printf "%.1f", (n > 0 ? 1e6 * t / hz / n : 0) }')"
  printf '%-16s %9s %9s %10s %8s %8s %7.1f %8s %8s  %s\n' "$services+$pods" "$(mib "$loaded")" "$(mib "$settled")" "$(mib "$after")" \
    "$(mib "$idle")" "$(mib "$hwm")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
    "${qps:-?}" "$us" "$LABEL"
}

printf '%-16s %9s %9s %10s %8s %8s %7s %8s %8s  %s\n' "svc+pods" "loaded" "settled" "after-load" "idle" "HWM" "load_s" "qps" "cpu_us/q" "label"
printf '%-16s %9s %9s %10s %8s %8s %7s %8s %8s\n' "" "MiB" "MiB" "MiB" "MiB" "MiB" "s" "" ""
for size in "$@"; do
  measure "${size%%:*}" "${size##*:}"
done
log "node flags: ${NODE_FLAGS:-(none)}"
