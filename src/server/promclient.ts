// The Prometheus client classes every part of kdns registers its metrics with, from prom-client's
// public entry point. kdns's own parts of the exposition (the batched DNS series, the process
// metrics) are in src/plugins/prometheus/.
//
// The entry point also loads prom-client's push gateway, cluster aggregation and default-metric
// modules (with @opentelemetry/api), which kdns does not use: about 1 MiB of RSS in `kdns serve`,
// the price of depending on nothing but the package's public API.
export { Counter, Gauge, Histogram, Registry } from 'prom-client';
