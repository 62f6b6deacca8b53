#!/usr/bin/env bash
# Starts kdns for ../shared/bench/run.sh (its server contract: read BENCH_* from the
# environment, listen on 127.0.0.1:$BENCH_PORT only, exec the server in the foreground).
#   KDNS_MODE=kubernetes (default for auth): the kubernetes plugin over $BENCH_DATA/cluster/
#   KDNS_MODE=hosts      (auth): the hosts plugin over a 10,000-name hosts file made from the fixture
#   fwd/miss workloads:  forward to 127.0.0.1:$BENCH_UPSTREAM_PORT with cache
#   KDNS_MODE=k8s        (fwd/miss): the stock Kubernetes Corefile (errors, kubernetes, prometheus,
#                        forward with max_concurrent, cache, loop, loadbalance)
# KDNS_NODE_FLAGS: node flags kdns is run with (default: the ones kdns ships with, see README).
# KDNS_PLUGINS adds directives (e.g. "prometheus 127.0.0.1:19153") to measure their cost;
# KDNS_K8S_OPTS adds lines to the auth workload's kubernetes block (e.g. "pods verified", which
# the workloads plugin needs).
set -euo pipefail
: "${BENCH_DATA:?}" "${BENCH_RUN_DIR:?}" "${BENCH_PORT:?}" "${BENCH_WORKLOAD:?}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${KDNS_MODE:-kubernetes}"
conf="$BENCH_RUN_DIR/Corefile"
extra="${KDNS_PLUGINS:-}"
k8s_opts="${KDNS_K8S_OPTS:-}"

case "$BENCH_WORKLOAD" in
  auth)
    if [ "$mode" = hosts ]; then
      # One line per A record of the fixture zone: the same names dnsperf asks for.
      awk '$4 == "A" { print $5, $1 }' "$BENCH_DATA/cluster.local.zone" | sed 's/\.$//' > "$BENCH_RUN_DIR/hosts"
      cat > "$conf" <<CONF
cluster.local:$BENCH_PORT {
    bind 127.0.0.1
    $extra
    hosts $BENCH_RUN_DIR/hosts cluster.local {
        reload 0
    }
}
CONF
    else
      cat > "$conf" <<CONF
cluster.local:$BENCH_PORT {
    bind 127.0.0.1
    $extra
    kubernetes cluster.local {
        manifests $BENCH_DATA/cluster
        $k8s_opts
    }
}
CONF
    fi
    ;;
  fwd)
    if [ "$mode" = k8s ]; then
      # The stock Kubernetes Corefile (kubeadm's coredns ConfigMap), its upstream the bench's.
      cat > "$conf" <<CONF
.:$BENCH_PORT {
    bind 127.0.0.1
    errors
    $extra
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        manifests $BENCH_DATA/cluster
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    prometheus 127.0.0.1:$((BENCH_PORT + 1000))
    forward . 127.0.0.1:${BENCH_UPSTREAM_PORT:?} {
        max_concurrent 1000
    }
    cache 30
    loop
    loadbalance
}
CONF
    else
    cat > "$conf" <<CONF
.:$BENCH_PORT {
    bind 127.0.0.1
    $extra
    forward . 127.0.0.1:${BENCH_UPSTREAM_PORT:?}
    cache 30
}
CONF
    fi
    ;;
  *) exit 3 ;;
esac
exec node ${KDNS_NODE_FLAGS---max-semi-space-size=1 --v8-pool-size=1} "$here/bin/kdns" serve --conf "$conf"
