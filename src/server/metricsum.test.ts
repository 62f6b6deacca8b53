// sumExpositions: the /metrics bodies of N workers merged into the body one process would show.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Gauge, Histogram, Registry } from './promclient.js';
import { sumExpositions } from './metricsum.js';

describe('sumExpositions', () => {
  const cases: Array<{ what: string; texts: string[]; want: string }> = [
    { what: 'no workers: an empty body', texts: [], want: '' },
    {
      what: 'coredns_hosts_entries: every worker reads the same file, so one copy (the maximum)',
      texts: ['# TYPE coredns_hosts_entries gauge\ncoredns_hosts_entries 4\n', '# TYPE coredns_hosts_entries gauge\ncoredns_hosts_entries 4\n'],
      want: '# TYPE coredns_hosts_entries gauge\ncoredns_hosts_entries 4\n',
    },
    {
      what: 'event-loop lag gauges: the latest worker',
      texts: ['# TYPE nodejs_eventloop_lag_p99_seconds gauge\nnodejs_eventloop_lag_p99_seconds 0.01\n', '# TYPE nodejs_eventloop_lag_p99_seconds gauge\nnodejs_eventloop_lag_p99_seconds 0.03\n'],
      want: '# TYPE nodejs_eventloop_lag_p99_seconds gauge\nnodejs_eventloop_lag_p99_seconds 0.03\n',
    },
    {
      what: 'kdns_workload_amplification: the mean of the workers\' ratios',
      texts: ['# TYPE kdns_workload_amplification gauge\nkdns_workload_amplification{workload="web"} 2\n', '# TYPE kdns_workload_amplification gauge\nkdns_workload_amplification{workload="web"} 4\n'],
      want: '# TYPE kdns_workload_amplification gauge\nkdns_workload_amplification{workload="web"} 3\n',
    },
    {
      what: 'counters sum; HELP and TYPE are written once',
      texts: [
        '# HELP coredns_dns_requests_total Counter of DNS requests made per zone, protocol and family.\n# TYPE coredns_dns_requests_total counter\ncoredns_dns_requests_total{server="dns://:53",zone="."} 3\n',
        '# HELP coredns_dns_requests_total Counter of DNS requests made per zone, protocol and family.\n# TYPE coredns_dns_requests_total counter\ncoredns_dns_requests_total{server="dns://:53",zone="."} 4\n',
      ],
      want: '# HELP coredns_dns_requests_total Counter of DNS requests made per zone, protocol and family.\n# TYPE coredns_dns_requests_total counter\ncoredns_dns_requests_total{server="dns://:53",zone="."} 7\n',
    },
    {
      what: 'one series whatever the label order, written in the order first seen',
      texts: ['# TYPE c counter\nc{b="2",a="1"} 1\n', '# TYPE c counter\nc{a="1",b="2"} 2\n'],
      want: '# TYPE c counter\nc{b="2",a="1"} 3\n',
    },
    {
      what: 'series of another label value stay apart, later ones after the first seen',
      texts: ['# TYPE c counter\nc{rcode="NOERROR"} 1\n', '# TYPE c counter\nc{rcode="NXDOMAIN"} 5\nc{rcode="NOERROR"} 2\n'],
      want: '# TYPE c counter\nc{rcode="NOERROR"} 3\nc{rcode="NXDOMAIN"} 5\n',
    },
    {
      what: 'families in the order of the first text, then those only later texts have',
      texts: [
        '# TYPE b counter\nb 1\n\n# TYPE a counter\na 1\n',
        '# TYPE z counter\nz 1\n\n# TYPE a counter\na 1\n\n# TYPE y counter\ny 1\n',
      ],
      want: '# TYPE b counter\nb 1\n\n# TYPE a counter\na 2\n\n# TYPE z counter\nz 1\n\n# TYPE y counter\ny 1\n',
    },
    {
      what: 'the HELP of the first text that has one is kept',
      texts: ['# TYPE c counter\nc 1\n', '# HELP c second\n# TYPE c counter\nc 1\n', '# HELP c third\nc 1\n'],
      want: '# HELP c second\n# TYPE c counter\nc 3\n',
    },
    {
      what: 'histogram buckets, sum and count sum',
      texts: [
        '# HELP h Time.\n# TYPE h histogram\nh_bucket{le="0.5",zone="."} 1\nh_bucket{le="+Inf",zone="."} 2\nh_sum{zone="."} 1.25\nh_count{zone="."} 2\n',
        '# HELP h Time.\n# TYPE h histogram\nh_bucket{le="0.5",zone="."} 3\nh_bucket{le="+Inf",zone="."} 3\nh_sum{zone="."} 0.5\nh_count{zone="."} 3\n',
      ],
      want: '# HELP h Time.\n# TYPE h histogram\nh_bucket{le="0.5",zone="."} 4\nh_bucket{le="+Inf",zone="."} 5\nh_sum{zone="."} 1.75\nh_count{zone="."} 5\n',
    },
    {
      what: 'summary quantiles take the largest; its sum and count sum',
      texts: [
        '# TYPE s summary\ns{quantile="0.5"} 0.25\ns{quantile="0.99"} 0.75\ns_sum 10\ns_count 20\n',
        '# TYPE s summary\ns{quantile="0.5"} 0.5\ns{quantile="0.99"} 0.5\ns_sum 5\ns_count 10\n',
      ],
      want: '# TYPE s summary\ns{quantile="0.5"} 0.5\ns{quantile="0.99"} 0.75\ns_sum 15\ns_count 30\n',
    },
    {
      what: 'a quantile label outside a summary sums like any other label',
      texts: ['# TYPE g gauge\ng{quantile="x"} 1\n', '# TYPE g gauge\ng{quantile="x"} 2\n'],
      want: '# TYPE g gauge\ng{quantile="x"} 3\n',
    },
    {
      what: 'gauges sum',
      texts: ['# TYPE coredns_cache_entries gauge\ncoredns_cache_entries{type="success"} 10\n', '# TYPE coredns_cache_entries gauge\ncoredns_cache_entries{type="success"} 32\n'],
      want: '# TYPE coredns_cache_entries gauge\ncoredns_cache_entries{type="success"} 42\n',
    },
    {
      what: 'a _start_time_seconds gauge takes the earliest',
      texts: ['# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1764000002\n', '# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1764000001\n'],
      want: '# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1764000001\n',
    },
    {
      what: 'a _timestamp_seconds gauge takes the latest',
      texts: ['# TYPE coredns_hosts_reload_timestamp_seconds gauge\ncoredns_hosts_reload_timestamp_seconds 1764000005\n', '# TYPE coredns_hosts_reload_timestamp_seconds gauge\ncoredns_hosts_reload_timestamp_seconds 1764000009\n'],
      want: '# TYPE coredns_hosts_reload_timestamp_seconds gauge\ncoredns_hosts_reload_timestamp_seconds 1764000009\n',
    },
    {
      what: 'a _time_seconds gauge takes the latest',
      texts: ['# TYPE last_seen_time_seconds gauge\nlast_seen_time_seconds 7\n', '# TYPE last_seen_time_seconds gauge\nlast_seen_time_seconds 3\n'],
      want: '# TYPE last_seen_time_seconds gauge\nlast_seen_time_seconds 7\n',
    },
    {
      what: 'an _info gauge stays 1',
      texts: ['# TYPE coredns_build_info gauge\ncoredns_build_info{version="1.14.7"} 1\n', '# TYPE coredns_build_info gauge\ncoredns_build_info{version="1.14.7"} 1\n'],
      want: '# TYPE coredns_build_info gauge\ncoredns_build_info{version="1.14.7"} 1\n',
    },
    {
      what: 'coredns_plugin_enabled stays 1',
      texts: ['# TYPE coredns_plugin_enabled gauge\ncoredns_plugin_enabled{name="cache"} 1\n', '# TYPE coredns_plugin_enabled gauge\ncoredns_plugin_enabled{name="cache"} 1\n'],
      want: '# TYPE coredns_plugin_enabled gauge\ncoredns_plugin_enabled{name="cache"} 1\n',
    },
    {
      what: 'coredns_reload_failed_total counts the one failed reload once',
      texts: ['# TYPE coredns_reload_failed_total counter\ncoredns_reload_failed_total 2\n', '# TYPE coredns_reload_failed_total counter\ncoredns_reload_failed_total 2\n'],
      want: '# TYPE coredns_reload_failed_total counter\ncoredns_reload_failed_total 2\n',
    },
    {
      what: 'coredns_panics_total sums',
      texts: ['# TYPE coredns_panics_total counter\ncoredns_panics_total 1\n', '# TYPE coredns_panics_total counter\ncoredns_panics_total 2\n'],
      want: '# TYPE coredns_panics_total counter\ncoredns_panics_total 3\n',
    },
    {
      what: 'untyped samples sum, with and without a TYPE line',
      texts: ['# TYPE u untyped\nu 1\nbare 1\n', '# TYPE u untyped\nu 2\nbare 2\n'],
      want: '# TYPE u untyped\nu 3\n\nbare 3\n',
    },
    {
      what: 'a sample that is not its header\'s family is a family of its own',
      texts: ['# TYPE h histogram\nh_count 1\nother 1\n', 'other 2\n'],
      want: '# TYPE h histogram\nh_count 1\n\nother 3\n',
    },
    {
      what: 'infinities and NaN are read in any spelling and written +Inf, -Inf, NaN',
      texts: ['g{a="1"} +Inf\ng{a="2"} -inf\ng{a="3"} Nan\ng{a="4"} Inf\n', 'g{a="1"} 1\ng{a="2"} 1\ng{a="3"} 1\ng{a="4"} -Inf\n'],
      want: 'g{a="1"} +Inf\ng{a="2"} -Inf\ng{a="3"} NaN\ng{a="4"} NaN\n',
    },
    {
      what: 'floats are written as JavaScript writes numbers',
      texts: ['f{a="1"} 0.1\nf{a="2"} 1e21\nf{a="3"} 1.5E-7\nf{a="4"} -0\n', 'f{a="1"} 0.2\nf{a="2"} 0\nf{a="3"} 0\nf{a="4"} 0\n'],
      want: 'f{a="1"} 0.30000000000000004\nf{a="2"} 1e+21\nf{a="3"} 1.5e-7\nf{a="4"} 0\n',
    },
    {
      what: 'escaped quotes, backslashes, newlines, commas and braces inside label values',
      texts: ['c{path="a\\"b,c}d",x="\\\\n\\n"} 1\n', 'c{x="\\\\n\\n",path="a\\"b,c}d"} 2\n'],
      want: 'c{path="a\\"b,c}d",x="\\\\n\\n"} 3\n',
    },
    {
      what: 'timestamps are dropped',
      texts: ['c{a="1"} 1 1764000000000\n', 'c{a="1"} 2 -5\n'],
      want: 'c{a="1"} 3\n',
    },
    {
      what: 'blanks around labels, a trailing comma and empty braces are the same series',
      texts: ['c { a = "1" , } 1\nd{} 1\n', 'c{a="1"} 2\nd 2\n'],
      want: 'c{a="1"} 3\n\nd 3\n',
    },
    {
      what: 'other comments are dropped',
      texts: ['# a comment\n# TYPE c counter\n#HELP c not a header\nc 1\n'],
      want: '# TYPE c counter\nc 1\n',
    },
    {
      what: 'a body cut short in a sample: the sample is dropped, the rest kept',
      texts: ['# TYPE c counter\nc{a="1"} 1\nc{a="2', '# TYPE c counter\nc{a="1"} 2\nc{a="2"} 5\n'],
      want: '# TYPE c counter\nc{a="1"} 3\nc{a="2"} 5\n',
    },
    {
      what: 'lines that do not parse are dropped',
      texts: [
        [
          '# TYPE c counter',
          '# TYPE d frequency', // unknown type
          'c{a="1"}', // no value
          'c{a="1"} ', // no value
          'c{a="1"} many', // not a number
          'c{a="1"} 0x10', // hex is not a sample value
          'c{a="1"} 1 2 3', // too many fields
          'c{a="1"} 1 1.5', // timestamp not an integer
          'c{a="\\t"} 1', // escape the format does not have
          'c{a="1",a="2"} 1', // label twice
          'c{a="1" b="2"} 1', // no comma
          'c{1a="1"} 1', // bad label name
          'c{a=1} 1', // unquoted value
          'c1x', // name run into value
          '{a="1"} 1', // no name
          'c{a="1"} 4',
        ].join('\n'),
      ],
      want: '# TYPE c counter\nc{a="1"} 4\n',
    },
  ];
  for (const c of cases) {
    test(c.what, () => {
      assert.equal(sumExpositions(c.texts), c.want);
    });
  }

  test('one prom-client body comes back unchanged', async () => {
    const registry = new Registry();
    const requests = new Counter({ name: 'kdns_test_requests_total', help: 'Requests, with a \\ and a\nnewline.', labelNames: ['server', 'path'], registers: [registry] });
    requests.inc({ server: 'dns://:53', path: 'a"b,c}d\\e\nf' }, 3);
    requests.inc({ server: 'dns://:53', path: '/' }, 0.1);
    const entries = new Gauge({ name: 'kdns_test_entries', help: 'Entries.', registers: [registry] });
    entries.set(-2.5);
    const duration = new Histogram({ name: 'kdns_test_duration_seconds', help: 'Duration.', labelNames: ['zone'], buckets: [0.001, 0.5], registers: [registry] });
    duration.observe({ zone: '.' }, 0.0002);
    duration.observe({ zone: '.' }, 2);
    duration.observe({ zone: 'cluster.local.' }, 0.25);
    new Gauge({ name: 'kdns_test_unset', help: 'Never set.', labelNames: ['x'], registers: [registry] });
    const body = await registry.metrics();
    // What the registry wrote, so that a change of prom-client's layout shows here first.
    assert.equal(
      body,
      [
        '# HELP kdns_test_requests_total Requests, with a \\\\ and a\\nnewline.',
        '# TYPE kdns_test_requests_total counter',
        'kdns_test_requests_total{server="dns://:53",path="a\\"b,c}d\\\\e\\nf"} 3',
        'kdns_test_requests_total{server="dns://:53",path="/"} 0.1',
        '',
        '# HELP kdns_test_entries Entries.',
        '# TYPE kdns_test_entries gauge',
        'kdns_test_entries -2.5',
        '',
        '# HELP kdns_test_duration_seconds Duration.',
        '# TYPE kdns_test_duration_seconds histogram',
        'kdns_test_duration_seconds_bucket{le="0.001",zone="."} 1',
        'kdns_test_duration_seconds_bucket{le="0.5",zone="."} 1',
        'kdns_test_duration_seconds_bucket{le="+Inf",zone="."} 2',
        'kdns_test_duration_seconds_sum{zone="."} 2.0002',
        'kdns_test_duration_seconds_count{zone="."} 2',
        'kdns_test_duration_seconds_bucket{le="0.001",zone="cluster.local."} 0',
        'kdns_test_duration_seconds_bucket{le="0.5",zone="cluster.local."} 1',
        'kdns_test_duration_seconds_bucket{le="+Inf",zone="cluster.local."} 1',
        'kdns_test_duration_seconds_sum{zone="cluster.local."} 0.25',
        'kdns_test_duration_seconds_count{zone="cluster.local."} 1',
        '',
        '# HELP kdns_test_unset Never set.',
        '# TYPE kdns_test_unset gauge',
        '',
      ].join('\n'),
    );
    assert.equal(sumExpositions([body]), body);
  });
});
