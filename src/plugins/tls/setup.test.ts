// tls setup: syntax, file loading, and that every bad value is an error naming its line.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { join } from 'node:path';
import { assertCorefileError, directiveIn } from '../../../test/util/corefile.js';
import { makeTestCerts, type TestCerts } from '../../../test/util/certs.js';
import { loadTls, parseTls, setup } from './setup.js';
import type { BlockInfo, SetupContext } from '../../server/plugin.js';
import { createLogger } from '../../server/log.js';
import { CorefileError } from '../../lib/corefile/ast.js';

const COREFILE = '/etc/kdns/Corefile';

describe('tls: parse', () => {
  const ok: Array<{ body: string; want: ReturnType<typeof parseTls> }> = [
    { body: 'tls cert.pem key.pem', want: { cert: '/etc/kdns/cert.pem', key: '/etc/kdns/key.pem', clientAuth: 'nocert' } },
    { body: 'tls /tls/tls.crt /tls/tls.key /tls/ca.crt', want: { cert: '/tls/tls.crt', key: '/tls/tls.key', ca: '/tls/ca.crt', clientAuth: 'nocert' } },
    ...(['nocert', 'request', 'require', 'verify_if_given', 'require_and_verify'] as const).map((mode) => ({
      body: `tls c k ca {\n  client_auth ${mode}\n}`,
      want: { cert: '/etc/kdns/c', key: '/etc/kdns/k', ca: '/etc/kdns/ca', clientAuth: mode },
    })),
    { body: 'tls c k {\n  keylog /tmp/keys.log\n}', want: { cert: '/etc/kdns/c', key: '/etc/kdns/k', clientAuth: 'nocert', keylog: '/tmp/keys.log' } },
  ];
  for (const c of ok) {
    test(c.body.replace(/\n\s*/g, ' '), () => assert.deepEqual(parseTls(directiveIn(c.body), COREFILE), c.want));
  }

  const errors: Array<{ body: string; error: string }> = [
    { body: 'tls', error: 'Corefile:2: tls without CERT and KEY asks for ACME certificates, which kdns does not obtain; write "tls CERT KEY [CA]" (e.g. from a cert-manager Secret)' },
    { body: 'tls cert.pem', error: 'Corefile:2: wrong argument count for "tls": expected at least 2, got 1' },
    { body: 'tls a b c d', error: 'Corefile:2: wrong argument count for "tls": expected at most 3, got 4' },
    {
      body: 'tls c k ca {\n  client_auth require_any\n}',
      error: 'Corefile:3: unknown authentication type "require_any" for client_auth (use nocert, request, require, verify_if_given, require_and_verify)',
    },
    { body: 'tls c k {\n  client_auth\n}', error: 'Corefile:3: wrong argument count for "client_auth": expected 1, got 0' },
    { body: 'tls c k {\n  client_auth request require\n}', error: 'Corefile:3: wrong argument count for "client_auth": expected 1, got 2' },
    { body: 'tls c k {\n  client_auth request\n  client_auth nocert\n}', error: 'Corefile:4: duplicate property "client_auth" in tls block' },
    { body: 'tls c k {\n  keylog\n}', error: 'Corefile:3: wrong argument count for "keylog": expected 1, got 0' },
    { body: 'tls c k {\n  min_version 1.3\n}', error: 'Corefile:3: unknown property "min_version" in tls block' },
  ];
  for (const c of errors) {
    test(`refuses ${c.body.replace(/\n\s*/g, ' ')}`, () => assertCorefileError(() => parseTls(directiveIn(c.body), COREFILE), c.error));
  }
});

describe('tls: load', () => {
  let certs: TestCerts;
  before(() => {
    certs = makeTestCerts();
  });

  function info(): BlockInfo {
    return { keys: [], zones: ['.'], port: 853, settings: { listenAddresses: [] }, plugins: [], file: 'Corefile', line: 1 };
  }

  function runSetup(body: string, block: BlockInfo): unknown {
    const ctx = { directive: directiveIn(body), block, corefilePath: join(certs.dir, 'Corefile'), shared: { log: createLogger(() => undefined) } };
    return setup(ctx as unknown as SetupContext);
  }

  test('a matching certificate and key, with a CA, become the block setting', () => {
    const block = info();
    runSetup('tls server.pem server.key ca.pem {\n  client_auth require_and_verify\n}', block);
    assert.equal(block.settings.tls?.clientAuth, 'require_and_verify');
    assert.match(block.settings.tls?.cert.toString() ?? '', /^-----BEGIN CERTIFICATE-----/);
    assert.match(block.settings.tls?.ca?.toString() ?? '', /^-----BEGIN CERTIFICATE-----/);
  });

  test('a missing file names the argument line and the path', () => {
    assertCorefileError(() => runSetup('tls server.pem missing.key', info()), `Corefile:2: tls: cannot read key ${join(certs.dir, 'missing.key')}: ENOENT`);
  });

  test('a key that does not belong to the certificate is refused', () => {
    assert.throws(
      () => loadTls(directiveIn(`tls ${certs.serverCert} ${certs.clientKey}`), { cert: certs.serverCert, key: certs.clientKey, clientAuth: 'nocert' }),
      (e: unknown) => e instanceof CorefileError && e.message.startsWith(`Corefile:2: tls: ${certs.serverCert} and ${certs.clientKey} do not make a TLS identity: `) && /key values mismatch/.test(e.message),
    );
  });

  test('a file that is not PEM is refused', () => {
    const junk = join(certs.dir, 'junk.pem');
    writeFileSync(junk, 'not a certificate\n');
    assert.throws(
      () => loadTls(directiveIn(`tls ${junk} ${certs.serverKey}`), { cert: junk, key: certs.serverKey, clientAuth: 'nocert' }),
      (e: unknown) => e instanceof CorefileError && e.message.startsWith(`Corefile:2: tls: ${junk} and ${certs.serverKey} do not make a TLS identity: `),
    );
  });

  test('a second tls directive in one block is refused at its line', () => {
    const block = info();
    runSetup('tls server.pem server.key', block);
    assertCorefileError(() => runSetup('tls server.pem server.key', block), 'Corefile:2: TLS already configured for this server block (one tls directive per block)');
  });
});

test('tls: the README examples parse', () => {
  const readme = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
  const examples = [...readme.matchAll(/~~~ corefile\n([\s\S]*?)~~~/g)].map((m) => m[1] as string);
  const parsed = examples.flatMap((text) =>
    parseCorefile(text, { file: 'Corefile', baseDir: '/etc/kdns' }).flatMap((b) => b.directives.filter((d) => d.name === 'tls').map((d) => parseTls(d, COREFILE).clientAuth)),
  );
  assert.deepEqual(parsed, ['nocert', 'require_and_verify']);
});
