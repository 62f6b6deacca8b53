// prometheus { tls WEB_CONFIG; runtime_metrics }: the web configuration file (the Prometheus
// exporter toolkit's format, as CoreDNS 1.14.3+ reads it), /metrics over HTTPS with real
// certificates from openssl, and the GC timing runtime_metrics adds.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { makeTestCerts, type TestCerts } from '../../../test/util/certs.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { freePort } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { missing } from '../../../test/util/upstream.js';
import { parsePrometheus } from './setup.js';
import { parseWebConfig } from './webconfig.js';
import { gcKindLabel } from './process.js';

describe('prometheus block options', () => {
  const valid: Array<{ corefile: string; want: { runtimeMetrics: boolean | undefined; webConfig: string | undefined } }> = [
    { corefile: 'prometheus', want: { runtimeMetrics: false, webConfig: undefined } },
    { corefile: 'prometheus {\n runtime_metrics\n}', want: { runtimeMetrics: true, webConfig: undefined } },
    { corefile: 'prometheus :9153 {\n tls web.yml\n}', want: { runtimeMetrics: false, webConfig: '/etc/coredns/web.yml' } },
    { corefile: 'prometheus {\n tls /etc/web.yml\n runtime_metrics\n}', want: { runtimeMetrics: true, webConfig: '/etc/web.yml' } },
  ];
  for (const c of valid) {
    test(`valid: ${JSON.stringify(c.corefile)}`, () => {
      const p = parsePrometheus(directiveIn(c.corefile), '/etc/coredns/Corefile');
      assert.deepEqual({ runtimeMetrics: p.runtimeMetrics, webConfig: p.webConfig }, c.want);
    });
  }
  const invalid: Array<{ corefile: string; error: string }> = [
    { corefile: 'prometheus {\n runtime_metrics all\n}', error: 'Corefile:3: wrong argument count for "runtime_metrics": expected no arguments, got 1' },
    { corefile: 'prometheus {\n tls\n}', error: 'Corefile:3: wrong argument count for "tls": expected 1, got 0' },
    { corefile: 'prometheus {\n tls cert.pem key.pem\n}', error: 'Corefile:3: wrong argument count for "tls": expected 1, got 2' },
    { corefile: 'prometheus {\n tls a.yml\n tls b.yml\n}', error: 'Corefile:4: tls block already specified in prometheus' },
    { corefile: 'prometheus {\n path /m\n}', error: 'Corefile:3: unknown property "path" in prometheus block' },
  ];
  for (const c of invalid) test(`invalid: ${JSON.stringify(c.corefile)}`, () => assert.throws(() => parsePrometheus(directiveIn(c.corefile), '/etc/coredns/Corefile'), { message: c.error }));
});

describe('the web configuration file', { skip: missing('openssl', 'openssl') }, () => {
  let certs: TestCerts;
  before(() => {
    certs = makeTestCerts();
  });
  /** The file's text with the test certificates' folder as its own. */
  const parse = (text: string) => parseWebConfig(text, certs.dir);

  const plain: Array<{ what: string; text: string }> = [
    { what: 'an empty file', text: '' },
    { what: 'an empty tls_server_config', text: 'tls_server_config:\n' },
    { what: 'a tls_server_config with nothing in it', text: 'tls_server_config: {}\n' },
  ];
  for (const c of plain) test(`${c.what}: plain HTTP`, () => assert.equal(parse(c.text), undefined));

  const valid: Array<{ what: string; text: string; want: { clientAuth: string; ca: boolean; minVersion: string; maxVersion: string } }> = [
    { what: 'cert and key, relative to the file', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n', want: { clientAuth: 'nocert', ca: false, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3' } },
    {
      what: 'client certificates verified against a CA',
      text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n',
      want: { clientAuth: 'require_and_verify', ca: true, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3' },
    },
    { what: 'RequireAnyClientCert without a CA', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_auth_type: "RequireAnyClientCert"\n', want: { clientAuth: 'require', ca: false, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3' } },
    { what: 'VerifyClientCertIfGiven', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.pem\n', want: { clientAuth: 'verify_if_given', ca: true, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3' } },
    { what: 'TLS 1.3 only', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  min_version: TLS13\n', want: { clientAuth: 'nocert', ca: false, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' } },
  ];
  for (const c of valid) {
    test(`valid: ${c.what}`, () => {
      const id = parse(c.text);
      assert.deepEqual({ clientAuth: id?.settings.clientAuth, ca: id?.settings.ca !== undefined, minVersion: id?.minVersion, maxVersion: id?.maxVersion }, c.want);
    });
  }
  test('valid: cert and key inline', () => {
    const cert = readFileSync(certs.serverCert, 'utf8');
    const key = readFileSync(certs.serverKey, 'utf8');
    const indent = (pem: string) => pem.trim().split('\n').map((l) => `    ${l}`).join('\n');
    const id = parse(`tls_server_config:\n  cert: |\n${indent(cert)}\n  key: |\n${indent(key)}\n`);
    assert.equal(id?.settings.cert.toString().trim(), cert.trim());
  });

  const invalid: Array<{ what: string; text: string; error: RegExp }> = [
    { what: 'not YAML', text: 'tls_server_config: [\n', error: /^not YAML: / },
    { what: 'a list', text: '- a\n', error: /^expected a mapping with tls_server_config$/ },
    { what: 'an unknown top-level field', text: 'tls_config:\n  cert_file: x\n', error: /^unknown field "tls_config"$/ },
    { what: 'an unknown TLS field', text: 'tls_server_config:\n  certfile: x\n', error: /^unknown field "certfile" in tls_server_config$/ },
    { what: 'basic auth, which kdns does not check', text: 'basic_auth_users:\n  alice: $2y$10$x\n', error: /^basic_auth_users is not supported: kdns does not check passwords on \/metrics/ },
    { what: 'cipher suites', text: 'tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n', error: /^tls_server_config\.cipher_suites is not supported: / },
    { what: 'an empty cert_file (CoreDNS test data certPath_empty)', text: 'tls_server_config:\n  cert_file: ""\n  key_file: server.key\n', error: /^tls_server_config has a key but no cert_file \(or cert\)$/ },
    { what: 'an empty key_file (keyPath_empty)', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: ""\n', error: /^tls_server_config has a certificate but no key_file \(or key\)$/ },
    { what: 'a cert_file that does not exist (certPath_invalid)', text: 'tls_server_config:\n  cert_file: somefile\n  key_file: server.key\n', error: /^cannot read cert_file \/.*\/somefile: ENOENT$/ },
    { what: 'a key that is not the certificate’s', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: client.key\n', error: /^the certificate and key do not make a TLS identity: / },
    { what: 'an unknown client_auth_type', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_auth_type: Always\n', error: /^unknown client_auth_type "Always" \(use NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert\)$/ },
    { what: 'a CA without a client_auth_type', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_ca_file: ca.pem\n', error: /^client_ca_file is set but client_auth_type is NoClientCert/ },
    { what: 'an unknown version', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  min_version: SSL3\n', error: /^unknown TLS version "SSL3" in tls_server_config\.min_version \(use TLS10, TLS11, TLS12, TLS13\)$/ },
    { what: 'min above max', text: 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  min_version: TLS13\n  max_version: TLS12\n', error: /^min_version TLSv1\.3 is above max_version TLSv1\.2$/ },
  ];
  for (const c of invalid) test(`invalid: ${c.what}`, () => assert.throws(() => parse(c.text), { message: c.error }));
});

describe('GC kind labels (prom-client names)', () => {
  const cases: Array<[number | undefined, string]> = [
    [1, 'minor'],
    [4, 'major'],
    [8, 'incremental'],
    [16, 'weakcb'],
    [undefined, 'unknown'],
  ];
  for (const [kind, want] of cases) test(`${kind} → ${want}`, () => assert.equal(gcKindLabel(kind), want));
});

interface Fetched {
  status?: number;
  body?: string;
  error?: string;
}

/** GET /metrics over HTTPS trusting `ca`, with a client certificate when given: the status and body, or the client's error code. */
function fetchHttps(port: number, ca: string, client?: { cert: string; key: string }): Promise<Fetched> {
  return new Promise((resolve) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path: '/metrics', ca: readFileSync(ca), ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}), agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body }));
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end();
  });
}

describe('prometheus tls end to end: real certificates, real HTTPS clients', { skip: missing('openssl', 'openssl') }, () => {
  let certs: TestCerts;
  let s: TestServer;
  let open: number;
  let mutual: number;

  before(async () => {
    certs = makeTestCerts();
    open = await freePort();
    mutual = await freePort();
    writeFileSync(join(certs.dir, 'web.yml'), 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n');
    writeFileSync(join(certs.dir, 'mutual.yml'), 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n');
    s = await startTestServer(`
example.org:{PORT} {
    bind 127.0.0.1
    prometheus 127.0.0.1:${open} {
        tls ${join(certs.dir, 'web.yml')}
        runtime_metrics
    }
    whoami
}
example.net:{PORT} {
    bind 127.0.0.1
    prometheus 127.0.0.1:${mutual} {
        tls ${join(certs.dir, 'mutual.yml')}
    }
    whoami
}
`);
  });
  after(() => s.stop());

  const client = () => ({ cert: certs.clientCert, key: certs.clientKey });
  const stranger = () => ({ cert: certs.strangerCert, key: certs.strangerKey });
  const cases: Array<{ what: string; port: () => number; client?: () => { cert: string; key: string }; want: 'metrics' | 'refused' }> = [
    { what: 'HTTPS with the CA: the metrics', port: () => open, want: 'metrics' },
    { what: 'client certificates required: a client with one the CA signed gets the metrics', port: () => mutual, client, want: 'metrics' },
    { what: 'client certificates required: a client without one is refused', port: () => mutual, want: 'refused' },
    { what: 'client certificates required: a certificate from another CA is refused', port: () => mutual, client: stranger, want: 'refused' },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const r = await fetchHttps(c.port(), certs.ca, c.client?.());
      if (c.want === 'metrics') {
        assert.equal(r.status, 200, r.error);
        assert.match(r.body ?? '', /^coredns_build_info\{/m);
      } else {
        assert.equal(r.status, undefined, `got HTTP ${r.status}`);
        assert.match(r.error ?? '', /^(ECONNRESET|EPIPE|ERR_SSL_\w+)$/);
      }
    });
  }

  test('plain HTTP to the TLS port gets no metrics', async () => {
    const res = await fetch(`http://127.0.0.1:${open}/metrics`).then(
      (r) => r.status,
      () => 'failed',
    );
    assert.notEqual(res, 200);
  });

  test('runtime_metrics: GC durations by kind, in prom-client names', async () => {
    // Allocate until V8 has collected at least once since the server started.
    let junk: unknown[] = [];
    for (let i = 0; i < 200_000; i++) junk.push({ i });
    junk = [];
    await new Promise((r) => setTimeout(r, 50));
    const r = await fetchHttps(open, certs.ca);
    assert.match(r.body ?? '', /^# TYPE nodejs_gc_duration_seconds histogram$/m);
    assert.match(r.body ?? '', /^nodejs_gc_duration_seconds_count\{kind="minor"\} [1-9]\d*$/m);
    assert.equal(junk.length, 0);
  });
});

test('plain HTTP and HTTPS on one address is refused, naming both', { skip: missing('openssl', 'openssl') }, async () => {
  const certs = makeTestCerts();
  const port = await freePort();
  writeFileSync(join(certs.dir, 'web.yml'), 'tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n');
  await assert.rejects(startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    health 127.0.0.1:${port}\n    prometheus 127.0.0.1:${port} {\n        tls ${join(certs.dir, 'web.yml')}\n    }\n    whoami\n}\n`), {
    message: `plugin/prometheus: 127.0.0.1:${port} already serves plain HTTP (/health); it cannot serve /metrics over HTTPS too: use another address, or restart kdns to switch`,
  });
});
