#!/usr/bin/env bash
# Measures what well-behaved clients get while a DNS server is abused over TCP: UDP latency and
# the time a new TCP client waits for its answer, with idle, half-frame and non-reading
# pipelining connections open (test/util/tcpabuse.ts). Needs `npm run build` first.
#   scripts/tcp-abuse.sh [IDLE HALF PIPELINERS SECONDS]   (default 2000 200 50 15)
# 15 s covers kdns's 10 s idle timeout closing the connections the storm opened.
# SERVER=kdns (default) or SERVER=unbound: which server is abused, each answering a.example.org
#   from a local zone; unbound runs one thread with room for 1,000 TCP connections, as kdns.
# KDNS_BIN=path/to/bin/kdns measures another build (e.g. a worktree of an older commit).
# KDNS_TASKSET / LOAD_TASKSET prefix the server / the load (e.g. "taskset -c 0" and "taskset -c 1").
# KDNS_NODE_FLAGS replaces the node flags kdns ships with (e.g. add --trace-gc or --cpu-prof);
# KDNS_LOG keeps the server's output in that file. TIMELINE=MS adds the slowest probe of every MS.
# Prints the result as one JSON line, then one summary line per phase (stderr): "storm" counts
# the probes sent while the abusers were connecting, "steady" those sent once all were open,
# "expiry" those sent while the server closed the idle ones after the storm (part of steady),
# "whole" all of them; latencies in ms.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
idle="${1:-2000}" half="${2:-200}" pipe="${3:-50}" seconds="${4:-15}"
server="${SERVER:-kdns}"
ulimit -n $((idle + half + pipe + 4096))
dir="$(mktemp -d)"
port="${PORT:-$((20000 + RANDOM % 20000))}"
log="${KDNS_LOG:-$dir/log}"
case "$server" in
  kdns)
    cat > "$dir/Corefile" <<CONF
example.org:$port {
    bind 127.0.0.1
    hosts {
        10.0.0.1 a.example.org
    }
}
CONF
    ${KDNS_TASKSET:-} node ${KDNS_NODE_FLAGS:---max-semi-space-size=1 --v8-pool-size=1} "${KDNS_BIN:-$here/bin/kdns}" serve --conf "$dir/Corefile" > "$log" 2>&1 &
    ready() { grep -q listening "$log"; }
    ;;
  unbound)
    cat > "$dir/unbound.conf" <<CONF
server:
  interface: 127.0.0.1
  port: $port
  do-ip6: no
  num-threads: 1
  incoming-num-tcp: 1000
  do-daemonize: no
  chroot: ""
  username: ""
  directory: "$dir"
  pidfile: ""
  use-syslog: no
  logfile: ""
  verbosity: 0
  module-config: "iterator"
  access-control: 127.0.0.0/8 allow
  local-zone: "example.org." static
  local-data: "a.example.org. 3600 IN A 10.0.0.1"
remote-control:
  control-enable: no
CONF
    ${KDNS_TASKSET:-} unbound -d -c "$dir/unbound.conf" > "$log" 2>&1 &
    ready() { dig +short +time=1 +tries=1 -p "$port" @127.0.0.1 a.example.org 2>/dev/null | grep -q 10.0.0.1; }
    ;;
  *)
    echo "SERVER must be kdns or unbound, not \"$server\"" >&2
    exit 2
    ;;
esac
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do ready && break; sleep 0.1; done
ready || { echo "$server did not start:" >&2; cat "$log" >&2; exit 1; }
out="$(${LOAD_TASKSET:-} node --import tsx "$here/test/util/tcpabuse.ts" --port "$port" --idle "$idle" --half "$half" --pipeliners "$pipe" --seconds "$seconds" --tcp-every 50 --timeline "${TIMELINE:-0}")"
echo "$out"
node -e '
const r = JSON.parse(process.argv[1]);
const row = (name, p) => `${name.padEnd(6)} UDP ${p.udp.answered}/${p.udp.sent} p50 ${p.udp.p50} p99 ${p.udp.p99} max ${p.udp.max} | new TCP ${p.newTcp.answered}/${p.newTcp.sent} p50 ${p.newTcp.p50} p99 ${p.newTcp.p99} max ${p.newTcp.max} (connect p99 ${p.newTcp.connectP99})`;
console.error(`'"$server"' storm ${r.stormMs} ms (accept backlog ${r.acceptBacklogMs} ms after the last abuser connected), refused at connect ${r.refusedAtConnect}, idle closed ${r.idleClosed}, pipeliners closed ${r.pipelinersClosed}`);
if (r.expiry) console.error(`expiry ${r.expiry.fromMs}-${r.expiry.toMs} ms: ${r.expiry.closed} idle connections closed by the server in the wave`);
for (const [n, p] of [["storm", r.storm], ["steady", r.steady], ["expiry", r.expiry], ["whole", r]]) if (p) console.error(row(n, p));
' "$out"
