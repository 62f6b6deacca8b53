// Directives of CoreDNS's current plugin.cfg that kdns has no plugin for: a Corefile using one
// fails to load with its line, what the directive does in CoreDNS and, where kdns has one,
// what to do instead. Loaded as `kdns corefile check` loads it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CorefileError } from '../lib/corefile/ast.js';
import { PLUGINS } from '../plugins/registry.js';
import { createLogger } from './log.js';
import { checkCorefile } from './check.js';
import { PLUGIN_ORDER } from './order.js';
import { unavailableDirective } from './obsolete.js';

/** The error `kdns corefile check` gives for a block holding `errors` and then `line`. */
async function verdict(line: string): Promise<string> {
  try {
    await checkCorefile('Corefile', `.:53 {\n    errors\n    ${line}\n}\n`, { defaultPort: 53 }, createLogger(() => undefined));
    return 'OK';
  } catch (e) {
    assert.ok(e instanceof CorefileError, String(e));
    return e.message;
  }
}

describe('directives CoreDNS has and kdns does not', () => {
  const cases: Array<{ line: string; want: string }> = [
    { line: 'proxyproto {\n        allow 10.0.0.0/8\n    }', want: 'Corefile:3: plugin "proxyproto" is not available in kdns: in CoreDNS it takes the client\'s address from the PROXY protocol header a load balancer sends ahead of each query; turn the PROXY protocol off on the load balancer (kdns would read the header as a malformed query)' },
    { line: 'quic {\n        max_streams 256\n    }', want: 'Corefile:3: plugin "quic" is not available in kdns: in CoreDNS it sets the stream limits of a quic:// (DNS over QUIC) server block; kdns serves no quic://: serve DNS over TLS (tls://) or over HTTPS (https://)' },
    { line: 'grpc_server {\n        max_connections 100\n    }', want: 'Corefile:3: plugin "grpc_server" is not available in kdns: in CoreDNS it sets the stream and connection limits of a grpc:// (DNS over gRPC) server block; kdns serves no grpc://: serve DNS over TLS (tls://) or over HTTPS (https://)' },
    { line: 'https {\n        max_connections 100\n    }', want: 'Corefile:3: plugin "https" is not available in kdns: in CoreDNS it sets the connection limit of an https:// (DNS over HTTPS) server block; kdns\'s https:// listeners have fixed limits (1000 connections, idle ones closed after 10 s): remove the line' },
    { line: 'https3 {\n        max_streams 256\n    }', want: 'Corefile:3: plugin "https3" is not available in kdns: in CoreDNS it sets the stream and connection limits of an https3:// (DNS over HTTP/3) server block; kdns serves no https3://: serve DNS over HTTPS (https://)' },
    { line: 'shed', want: 'Corefile:3: plugin "shed" is not available in kdns: in CoreDNS it drops UDP queries while a listener\'s replies back up faster than its socket can send them; kdns sends each socket\'s replies from one thread and leaves the excess to the kernel\'s socket buffer: remove the line' },
    { line: 'nomad', want: 'Corefile:3: plugin "nomad" is not available in kdns: in CoreDNS it serves HashiCorp Nomad\'s service catalogue as SERVICE.NAMESPACE.service.nomad' },
    { line: 'geoip /etc/GeoLite2-City.mmdb', want: 'Corefile:3: plugin "geoip" is not available in kdns: in CoreDNS it adds the client\'s location, looked up in a MaxMind database, to the request metadata' },
    { line: 'trace zipkin localhost:9411', want: 'Corefile:3: plugin "trace" is not available in kdns: in CoreDNS it sends a trace of each query to Zipkin or Datadog' },
    { line: 'tsig {\n        secret key. NoTCJU+DMqFWywaPyxSijrDEA/eC3nK0xi3AMEZuPVk=\n    }', want: 'Corefile:3: plugin "tsig" is not available in kdns: in CoreDNS it checks and signs TSIG-authenticated queries and zone transfers' },
    { line: 'dnssec', want: 'Corefile:3: plugin "dnssec" is not available in kdns: in CoreDNS it signs answers with DNSSEC as they are made' },
    { line: 'route53 example.org.:Z1Z2Z3', want: 'Corefile:3: plugin "route53" is not available in kdns: in CoreDNS it serves zones held in AWS Route 53' },
    { line: 'azure rg:example.org', want: 'Corefile:3: plugin "azure" is not available in kdns: in CoreDNS it serves zones held in Azure DNS' },
    { line: 'clouddns example.org.:project:zone', want: 'Corefile:3: plugin "clouddns" is not available in kdns: in CoreDNS it serves zones held in Google Cloud DNS' },
    { line: 'secondary {\n        transfer from 10.0.0.1\n    }', want: 'Corefile:3: plugin "secondary" is not available in kdns: in CoreDNS it serves a zone it transfers (AXFR) from a primary server' },
    { line: 'grpc . 10.0.0.1:443', want: 'Corefile:3: plugin "grpc" is not available in kdns: in CoreDNS it forwards queries to upstreams over gRPC; forward over DNS or DNS over TLS with forward' },
    { line: 'erratic', want: 'Corefile:3: plugin "erratic" is not available in kdns: in CoreDNS it answers with fixed records, delayed, dropped or truncated on purpose, to test clients' },
    { line: 'on startup echo started', want: 'Corefile:3: plugin "on" is not available in kdns: in CoreDNS it runs a command when the server starts up, restarts or shuts down' },
    { line: 'sign db.example.org', want: 'Corefile:3: plugin "sign" is not available in kdns: in CoreDNS it signs zone files with DNSSEC for file and auto to serve' },
    // Not CoreDNS's either: unknown, as CoreDNS says.
    { line: 'shedd', want: 'Corefile:3: unknown directive "shedd"' },
  ];
  for (const c of cases) test(c.line.split('\n')[0] as string, async () => assert.equal(await verdict(c.line), c.want));

  test('every directive of the order kdns has no plugin for says what it does in CoreDNS', () => {
    const missing = PLUGIN_ORDER.filter((name) => !PLUGINS.has(name));
    const unexplained = missing.filter((name) => !unavailableDirective(name).includes(': in CoreDNS it '));
    assert.deepEqual(unexplained, []);
    assert.equal(missing.length, 19);
  });
});
