#!/usr/bin/env bash
# bench-memory.sh — how much memory kdns holds, as `kdns serve` for a cluster of a given size and
# as the node cache.
#
# Usage: scripts/bench-memory.sh [SIZE ...]     (default: 10000:10000 100000:150000)
#        npm run bench:memory [-- SIZE ...]
#
#   SERVICES:PODS   `kdns serve` with the stock Kubernetes Corefile (errors, health, ready,
#                   kubernetes with `pods insecure`, prometheus, forward, cache 30, loop, reload,
#                   loadbalance) over a cluster of that size, queried with the auth query set
#                   (~25,000 different names of the cluster)
#   nodecache:PODS  kdns as deploy/nodecache runs it: node-cache's command line and its
#                   ConfigMap's Corefile, workloads included, watching the PODS pods of its node
#                   among 10,000 in the API; queried with the fwd query set (1,000 outside
#                   names, each 20 times: misses to the upstream, then cache hits)
#
# For each size it
#   1. writes (once, cached under $FIXTURES) the bench's cluster at that size with
#      bench/fixture.ts: Namespaces, Services and EndpointSlices, plus PODS Pods spread over the
#      same namespaces as `kind: List` JSON files of 10,000 Pods each (what `kubectl get pods -o
#      json` writes, trimmed to the fields every real pod has);
#   2. starts an upstream (named, for `forward`), with SOURCE=api or for the node cache a
#      Kubernetes API server (test/util/fakeapi.ts behind TLS, seeded with the fixture's objects,
#      pinned to CPU $LOAD_CPU), and kdns pinned to CPU $SERVER_CPU on 127.0.0.1;
#   3. reads the resident memory of kdns when it is ready (/ready says 200; the node cache:
#      /health says 200 and it has logged its node's pods) plus 2 s — "loaded"; $SETTLE s
#      later, before any query — "settled"; right after $DURATION s of dnsperf (pinned to CPU
#      $LOAD_CPU) — "after load"; after $IDLE s more without queries — "idle", split into
#      anonymous memory (RssAnon) and pages of files (RssFile: the node binary's, shared and
#      reclaimable); and VmHWM, the peak. Of one process that is VmRSS. The node cache is two
#      (a parent holding the sockets and the worker serving them, src/supervisor/): their
#      anonymous memory is summed and their file pages counted once (the larger RssFile: both
#      map the same node binary), what the pod holds; "parent" is the parent's own VmRSS;
#   4. prints one table row per size: MiB at each point, load time, QPS and kdns's CPU µs
#      per query during the load (a rough check; `npm run bench` is the QPS bench).
#
# As root it runs inside a fresh network namespace (only loopback exists), so nothing it starts
# can reach beyond the machine. Not part of `npm test`; needs dnsperf, named, curl, taskset,
# openssl (as root: bash bench/install.sh dnsperf bind9 curl) and a build (`npm run build`).
#
# Knobs (environment, defaults in brackets):
#   KDNS_NODE_FLAGS [the flags kdns ships with, see README]  DURATION [10]  IDLE [30]  SETTLE [20]
#   PORT [5300]  UPSTREAM_PORT [5399]  SERVER_CPU [0]  LOAD_CPU [1]  CLIENTS [4]  OUTSTANDING [100]
#   FIXTURES [${TMPDIR:-/tmp}/kdns-bench-memory]  READY_TIMEOUT [600]  LABEL [free text column]
#   SOURCE [manifests; api: `kdns serve` reads the cluster from the API server (endpoint with
#     tls), as in a cluster, instead of the fixture's files]
#   KEEP_LOG [0; 1 prints the kdns log path instead of deleting it]
#   DROP [unset; e.g. "cache prometheus": leave these directives out, to see what each costs]
#   PROBE [unset; a folder: kdns runs with scripts/memory-probe.mjs preloaded, and at each
#     measuring point writes where its memory is (V8's heap spaces, code, the binary's pages,
#     malloc) into PROBE/<size>[-LABEL].jsonl, printed as a table after the row (stderr)]
#   SNAPSHOT [0; 1 with PROBE: after "idle", a heap snapshot into PROBE/<size>[-LABEL].heapsnapshot,
#     its summary by constructor printed (stderr), and the figures after its full collection;
#     of the first worker when there are several; SNAPSHOT=parent: of their parent]
#   WORKERS [1; N > 1 adds `multisocket N` to `kdns serve`'s Corefile: a parent and N workers.
#     The MiB columns are then the pod's (anonymous memory summed over the processes, file pages
#     once, as for the node cache), "parent" is the parent's VmRSS, and a line under the row gives
#     each process's RSS (anonymous part in brackets) after the load and idle. With PROBE every
#     process writes its record, the table shows one block per process]
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
API_PORT="${API_PORT:-5443}"
SERVER_CPU="${SERVER_CPU:-0}"
LOAD_CPU="${LOAD_CPU:-1}"
CLIENTS="${CLIENTS:-4}"
OUTSTANDING="${OUTSTANDING:-100}"
FIXTURES="${FIXTURES:-${TMPDIR:-/tmp}/kdns-bench-memory}"
READY_TIMEOUT="${READY_TIMEOUT:-600}"
LABEL="${LABEL:-}"
SOURCE="${SOURCE:-manifests}"
WORKERS="${WORKERS:-1}"
[[ "$WORKERS" =~ ^[1-9][0-9]*$ ]] || { echo "bench-memory: WORKERS must be a whole number from 1, not '$WORKERS'" >&2; exit 2; }
case "$SOURCE" in manifests | api) ;; *) echo "bench-memory: SOURCE must be manifests or api, not '$SOURCE'" >&2; exit 2 ;; esac

for tool in dnsperf named curl taskset node openssl; do
  command -v "$tool" >/dev/null || { echo "bench-memory: '$tool' not found (as root: bash bench/install.sh dnsperf bind9 curl)" >&2; exit 2; }
done
[ -f "$here/dist/cli/main.js" ] || { echo "bench-memory: no build; run npm run build" >&2; exit 2; }

log() { echo "[bench-memory] $*" >&2; }

probe_flags=""
if [ -n "${PROBE:-}" ]; then
  mkdir -p "$PROBE"
  probe_flags="--import $here/scripts/memory-probe.mjs"
fi
# probe PID FILE LABEL: the preloaded probe appends where the memory is now to FILE: every
# process's record (each names its pid and role), or with LABEL "snapshot" only the serving
# process's (the first worker when there is a parent; with SNAPSHOT=parent the parent), which
# writes the one heap snapshot.
probe() {
  [ -n "$2" ] || return 0
  local p procs
  echo "$3" >"$2.label"
  procs="$(tree "$1")"
  if [ "$3" = snapshot ] && [ "${SNAPSHOT:-0}" = parent ]; then procs="$1"
  elif [ "$3" = snapshot ]; then set -- $procs; procs="${2:-$1}"; fi
  for p in $procs; do kill -WINCH "$p"; done
  sleep 1
}

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
# kdns PID and its children: the node cache (and `kdns serve` with KDNS_SUPERVISE=1) is a parent
# holding the sockets and a worker serving them.
tree() { echo "$1" $(cat "/proc/$1/task/$1/children" 2>/dev/null); }
ticks() { local p t=0; for p in $(tree "$1"); do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo "$t"; }
# pod_kib PID: what the processes hold together: their anonymous memory summed, and file
# pages once (the worker maps the same node binary as its parent; its pages are a superset).
pod_kib() {
  local p anon=0 file=0 f
  for p in $(tree "$1"); do
    anon=$((anon + $(kib "$p" RssAnon) + $(kib "$p" RssShmem)))
    f="$(kib "$p" RssFile)"
    [ "$f" -le "$file" ] || file="$f"
  done
  echo "$anon $file"
}
pod_total() { pod_kib "$1" | awk '{ print $1 + $2 }'; }
# role PID: parent, worker N (its KDNS_WORKER_INDEX) or single.
role() {
  local i
  i="$(tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | awk -F= '$1 == "KDNS_WORKER_INDEX" { print $2 }')"
  if [ -n "$i" ]; then echo "worker$i"
  elif [ "$(tree "$1" | wc -w)" -gt 1 ]; then echo parent
  else echo single; fi
}
# each_rss PID: every process's VmRSS and, in brackets, its anonymous part (MiB), by role.
each_rss() {
  local p out=""
  for p in $(tree "$1"); do
    out+="$(role "$p") $(mib "$(kib "$p" VmRSS)") ($(mib "$(($(kib "$p" RssAnon) + $(kib "$p" RssShmem)))"))  "
  done
  echo "$out"
}
peak_kib() { local p m=0 h; for p in $(tree "$1"); do h="$(kib "$p" VmHWM)"; [ "$h" -le "$m" ] || m="$h"; done; echo "$m"; }

run_dir="$(mktemp -d "${TMPDIR:-/tmp}/kdns-bench-memory.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP_LOG:-0}" = 1 ]; then log "logs in $run_dir"; else rm -rf "$run_dir"; fi
}
trap cleanup EXIT

[ $# -gt 0 ] || set -- 10000:10000 100000:150000

# The upstream `forward` points at: named, authoritative for the fixture's example.test (the
# serve load never reaches it, every query being under cluster.local; the node cache's does).
first="$1"
[ "${first%%:*}" != nodecache ] || first=10000:10000
upstream_fixture="$(fixture "${first%%:*}" "${first##*:}")"
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

# Certificates for the API server (127.0.0.1) and a client, made once per run.
certs() {
  local c="$run_dir/certs"
  [ -f "$c/ca.crt" ] && return 0
  mkdir -p "$c"
  (
    cd "$c"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=bench-ca
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1
    printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile server.ext
    openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=kdns
    openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 2
  ) >/dev/null 2>&1
}

api_pid=""
# start_api FIXTURE_DIR NODE_PODS: the API server with the fixture's objects; the first
# NODE_PODS pods (0: none) moved to node bench-node. Waits until it accepts connections.
start_api() {
  certs
  local seed="$run_dir/api.json"
  node - "$1/cluster" "$2" "$run_dir/certs" "$API_PORT" >"$seed" <<'JS'
const { readdirSync, readFileSync } = require('node:fs');
const [dir, nodePods, certs, port] = process.argv.slice(2);
const paths = { Namespace: '/api/v1/namespaces', Service: '/api/v1/services', EndpointSlice: '/apis/discovery.k8s.io/v1/endpointslices', Pod: '/api/v1/pods' };
const seed = {};
let moved = 0;
for (const f of readdirSync(dir).sort()) {
  for (const o of JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')).items) {
    if (o.kind === 'Pod' && moved < Number(nodePods)) { o.spec.nodeName = 'bench-node'; moved++; }
    (seed[paths[o.kind]] ??= []).push(o);
  }
}
process.stdout.write(JSON.stringify({ host: '127.0.0.1', port: Number(port), certFile: `${certs}/server.crt`, keyFile: `${certs}/server.key`, seed }));
JS
  if [ -n "$api_pid" ]; then kill "$api_pid" 2>/dev/null || true; wait "$api_pid" 2>/dev/null || true; fi
  (cd "$here" && exec taskset -c "$LOAD_CPU" node --import tsx test/util/apiserver-main.ts "$seed") >"$run_dir/api.log" 2>&1 &
  api_pid=$!
  pids+=("$api_pid")
  local deadline=$((SECONDS + 120))
  until grep -q listening "$run_dir/api.log"; do
    kill -0 "$api_pid" 2>/dev/null || { log "API server exited:"; cat "$run_dir/api.log" >&2; exit 1; }
    [ "$SECONDS" -lt "$deadline" ] || { log "API server not listening after 120 s"; exit 1; }
    sleep 0.2
  done
}

# The kubernetes plugin's (or workloads') source lines: the fixture's folder, or the API server.
source_lines() { # FIXTURE_DIR INDENT
  if [ "$SOURCE" = api ]; then
    printf '%sendpoint https://127.0.0.1:%s\n%stls %s %s %s\n' "$2" "$API_PORT" "$2" "$run_dir/certs/client.crt" "$run_dir/certs/client.key" "$run_dir/certs/ca.crt"
  else
    printf '%smanifests %s\n' "$2" "$1/cluster"
  fi
}

# serve_corefile FIXTURE_DIR > Corefile: the stock Kubernetes Corefile (kubeadm's coredns
# ConfigMap), on loopback ports, without the DROP directives; with WORKERS > 1 `multisocket`.
serve_corefile() {
  local conf multisocket=""
  [ "$WORKERS" = 1 ] || multisocket="
    multisocket $WORKERS"
  conf="$(cat <<CONF
.:$PORT {
    bind 127.0.0.1$multisocket
    errors
    health 127.0.0.1:18080 {
        lameduck 5s
    }
    ready 127.0.0.1:18181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
$(source_lines "$1" '        ')
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
)"
  local d
  for d in ${DROP:-}; do
    # A directive and its { } block, if it has one.
    conf="$(awk -v d="$d" '$1 == d { skip = ($NF == "{") ? 2 : 1 } skip == 2 && $1 == "}" { skip = 0; next } skip == 1 { skip = 0; next } skip == 0 { print }' <<<"$conf")"
  done
  printf '%s\n' "$conf"
}

# nodecache_template > Corefile.base: deploy/nodecache's ConfigMap template on loopback: the
# addresses and ports moved to 127.0.0.1 and the bench's, the upstreams to named, `incluster`
# to the API server with a client certificate (the same TLS client, without a service account).
nodecache_template() {
  node - "$here/deploy/nodecache/corefile.yaml" <<'JS' |
const { readFileSync } = require('node:fs');
const text = readFileSync(process.argv[2], 'utf8');
// The block scalar under `Corefile: |`, de-indented (the ConfigMap has one key).
const lines = text.slice(text.indexOf('  Corefile: |') + '  Corefile: |'.length + 1).split('\n');
process.stdout.write(lines.map((l) => l.replace(/^ {4}/, '')).join('\n'));
JS
    sed -e "s/:53 {/:$PORT {/" -e "s/169\.254\.20\.10:8080/127.0.0.1:18080/" -e "s/prometheus :9253/prometheus 127.0.0.1:19253/" \
      -e "s/__PILLAR__CLUSTER__DNS__/127.0.0.1:$UPSTREAM_PORT/" -e "s/__PILLAR__UPSTREAM__SERVERS__/127.0.0.1:$UPSTREAM_PORT/" \
      -e "s|^\( *\)incluster\$|\1endpoint https://127.0.0.1:$API_PORT\n\1tls $run_dir/certs/client.crt $run_dir/certs/client.key $run_dir/certs/ca.crt|"
}

# wait_ready PID LOG WHAT: until kdns is ready (serve: /ready; nodecache: /health and its pods).
# With WORKERS > 1 each connection reaches one worker (SO_REUSEPORT spreads them): /ready must
# answer 200 to 4 × WORKERS - 3 connections in a row (5 for two workers), so that every worker
# has most likely answered.
wait_ready() {
  local deadline=$((SECONDS + READY_TIMEOUT)) ok=0
  while :; do
    if [ "$3" = serve ]; then
      if [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18181/ready 2>/dev/null)" = 200 ]; then
        ok=$((ok + 1))
        [ "$ok" -lt $((4 * WORKERS - 3)) ] || return 0
        continue
      fi
      ok=0
    else
      [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18080/health 2>/dev/null)" = 200 ] && grep -q 'pods on node bench-node from' "$2" && return 0
    fi
    kill -0 "$1" 2>/dev/null || { log "kdns exited:"; tail -n 20 "$2" >&2; exit 1; }
    [ "$SECONDS" -lt "$deadline" ] || { log "kdns not ready after ${READY_TIMEOUT}s"; tail -n 20 "$2" >&2; exit 1; }
    sleep 0.2
  done
}

measure() { # SIZE -> one table row on stdout
  local size="$1" what services pods dir queries pid t0 t1 loaded settled after idle anon file hwm p0 p1 out qps completed us
  local klog="$run_dir/kdns-$size.log"
  if [ "${size%%:*}" = nodecache ]; then
    what=nodecache
    dir="$(fixture 10000 10000)"
    queries="$dir/queries-fwd.txt"
    start_api "$dir" "${size##*:}"
  else
    what=serve
    services="${size%%:*}" pods="${size##*:}"
    dir="$(fixture "$services" "$pods")"
    queries="$dir/queries-auth.txt"
    if [ "$SOURCE" = api ]; then start_api "$dir" 0; fi
  fi
  local probe_file=""
  if [ -n "${PROBE:-}" ]; then
    probe_file="$PROBE/${size/:/-}${LABEL:+-$LABEL}.jsonl"
    rm -f "$probe_file"
  fi
  local args
  if [ "$what" = serve ]; then
    serve_corefile "$dir" >"$run_dir/Corefile"
    args=(serve --conf "$run_dir/Corefile")
  else
    nodecache_template >"$run_dir/Corefile.base"
    # node-cache's command line as deploy/nodecache passes it, without the interface and the
    # iptables rules (they need the host's network; the memory is the server's).
    args=(node-cache -localip 127.0.0.1 -conf "$run_dir/Corefile" -basecorefile "$run_dir/Corefile.base" -upstreamsvc kube-dns-upstream
      -setupinterface=false -setupiptables=false -health-port 18080 -metrics-listen-address 127.0.0.1:19353)
  fi
  t0="$(date +%s.%N)"
  # shellcheck disable=SC2086 # NODE_FLAGS is a list of flags
  NODE_NAME=bench-node KUBE_DNS_UPSTREAM_SERVICE_HOST=127.0.0.1 KDNS_MEMORY_PROBE="$probe_file" KDNS_MEMORY_PROBE_SNAPSHOT="${probe_file%.jsonl}.heapsnapshot" \
    taskset -c "$SERVER_CPU" node $probe_flags $NODE_FLAGS "$here/bin/kdns" "${args[@]}" >"$klog" 2>&1 &
  pid=$!
  pids+=("$pid")
  wait_ready "$pid" "$klog" "$what"
  t1="$(date +%s.%N)"
  sleep 2
  loaded="$(pod_total "$pid")"
  probe "$pid" "$probe_file" loaded
  # V8's memory reducer returns the loading garbage some seconds after the last allocation.
  sleep "$SETTLE"
  settled="$(pod_total "$pid")"
  probe "$pid" "$probe_file" settled
  p0="$(ticks "$pid")"
  out="$(taskset -c "$LOAD_CPU" dnsperf -s 127.0.0.1 -p "$PORT" -d "$queries" -l "$DURATION" \
    -c "$CLIENTS" -q "$OUTSTANDING" -O suppress=timeouts,unexpected,congestion,sockready 2>&1)"
  after="$(pod_total "$pid")"
  p1="$(ticks "$pid")"
  local each_after each_idle
  each_after="$(each_rss "$pid")"
  probe "$pid" "$probe_file" after-load
  sleep "$IDLE"
  read -r anon file < <(pod_kib "$pid")
  idle=$((anon + file))
  each_idle="$(each_rss "$pid")"
  local procs parent_rss=-
  procs="$(tree "$pid" | wc -w)"
  [ "$procs" = 1 ] || parent_rss="$(mib "$(kib "$pid" VmRSS)")"
  hwm="$(peak_kib "$pid")"
  probe "$pid" "$probe_file" idle
  if [ "${SNAPSHOT:-0}" != 0 ] && [ -n "$probe_file" ]; then
    probe "$pid" "$probe_file" snapshot
    # Written synchronously in the signal's turn; the record follows it.
    local waited=0
    until [ "$(grep -c '"label":"snapshot"' "$probe_file" 2>/dev/null)" = 1 ] || [ "$waited" -ge 120 ]; do sleep 1; waited=$((waited + 1)); done
  fi
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  qps="$(awk -F': *' '/Queries per second:/ { printf "%.0f", $2 }' <<<"$out")"
  completed="$(awk -F': *' '/Queries completed:/ { split($2, a, " "); print a[1] }' <<<"$out")"
  us="$(awk -v t=$((p1 - p0)) -v hz="$(getconf CLK_TCK)" -v n="${completed:-0}" 'BEGIN { printf "%.1f", (n > 0 ? 1e6 * t / hz / n : 0) }')"
  if [ -n "$probe_file" ] && [ -s "$probe_file" ]; then
    node "$here/scripts/memory-probe.mjs" "$probe_file" >&2
    if [ -f "${probe_file%.jsonl}.heapsnapshot" ]; then node "$here/scripts/heap-summary.mjs" "${probe_file%.jsonl}.heapsnapshot" 40 >&2; fi
  fi
  printf '%-16s %9s %9s %10s %8s %6s %6s %8s %7s %7.1f %8s %8s  %s\n' "$size" "$(mib "$loaded")" "$(mib "$settled")" "$(mib "$after")" \
    "$(mib "$idle")" "$(mib "$anon")" "$(mib "$file")" "$(mib "$hwm")" "$parent_rss" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
    "${qps:-?}" "$us" "$LABEL"
  if [ "$procs" != 1 ]; then
    printf '%-16s after-load: %s\n' "" "$each_after"
    printf '%-16s idle:       %s\n' "" "$each_idle"
  fi
}

printf '%-16s %9s %9s %10s %8s %6s %6s %8s %7s %7s %8s %8s  %s\n' "size" "loaded" "settled" "after-load" "idle" "anon" "file" "HWM" "parent" "load_s" "qps" "cpu_us/q" "label"
printf '%-16s %9s %9s %10s %8s %6s %6s %8s %7s %7s %8s %8s\n' "" "MiB" "MiB" "MiB" "MiB" "MiB" "MiB" "MiB" "MiB" "s" "" ""
for size in "$@"; do
  measure "$size"
done
log "node $(node -v), flags: ${NODE_FLAGS:-(none)}; source: $SOURCE; workers: $WORKERS; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
