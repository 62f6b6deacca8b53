// Text of stock manifests' ConfigMaps, transcribed for the tests that run kdns in their place.

/**
 * The node-local-dns ConfigMap's Corefile of nodelocaldns.yaml (kubernetes/kubernetes
 * cluster/addons/dns/nodelocaldns) as an administrator installs it: the install-time sed has
 * put cluster.local, 169.254.20.10 and 10.96.0.10 in place of __PILLAR__DNS__DOMAIN__,
 * __PILLAR__LOCAL__DNS__ and __PILLAR__DNS__SERVER__; the run-time placeholders remain.
 */
export const STOCK_TEMPLATE = `cluster.local:53 {
    errors
    cache {
            success 9984 30
            denial 9984 5
    }
    reload
    loop
    bind 169.254.20.10 10.96.0.10
    forward . __PILLAR__CLUSTER__DNS__ {
            force_tcp
    }
    prometheus :9253
    health 169.254.20.10:8080
    }
in-addr.arpa:53 {
    errors
    cache 30
    reload
    loop
    bind 169.254.20.10 10.96.0.10
    forward . __PILLAR__CLUSTER__DNS__ {
            force_tcp
    }
    prometheus :9253
    }
ip6.arpa:53 {
    errors
    cache 30
    reload
    loop
    bind 169.254.20.10 10.96.0.10
    forward . __PILLAR__CLUSTER__DNS__ {
            force_tcp
    }
    prometheus :9253
    }
.:53 {
    errors
    cache 30
    reload
    loop
    bind 169.254.20.10 10.96.0.10
    forward . __PILLAR__UPSTREAM__SERVERS__
    prometheus :9253
    }
`;
