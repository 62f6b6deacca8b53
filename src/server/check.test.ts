// `kdns serve --check` and `kdns corefile check`: every block set up, nothing listened on, exit 0
// or 1 with the file:line of the problem. Also the Corefile-level refusals of directives and
// options CoreDNS removed, each with what to write instead.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runKdns } from '../../test/util/kdns.js';
import { freePort } from '../../test/util/net.js';
import { createLogger } from './log.js';
import { checkCorefile } from './check.js';
import { CorefileError } from '../lib/corefile/ast.js';

function writeCorefile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-check-'));
  const path = join(dir, 'Corefile');
  writeFileSync(path, text);
  return path;
}

/** The error checkCorefile gives for `text` (read as "Corefile"), or "OK". */
async function verdict(text: string): Promise<string> {
  try {
    await checkCorefile('Corefile', text, { defaultPort: 53 }, createLogger(() => undefined));
    return 'OK';
  } catch (e) {
    assert.ok(e instanceof CorefileError, String(e));
    return e.message;
  }
}

describe('removed and obsolete directives', () => {
  const cases: Array<{ what: string; corefile: string; want: string }> = [
    {
      what: 'proxy is refused with forward as the replacement',
      corefile: '. {\n    errors\n    proxy . /etc/resolv.conf\n}\n',
      want: 'Corefile:3: unknown directive "proxy": proxy was removed in CoreDNS 1.5.0; use forward (e.g. "forward . /etc/resolv.conf")',
    },
    {
      what: 'federation is refused',
      corefile: 'cluster.local {\n    federation cluster.local {\n        prod prod.example.org\n    }\n}\n',
      want: 'Corefile:2: unknown directive "federation": federation was removed in CoreDNS 1.6.3 (it became an external plugin kdns does not include); serve the federated names with forward or file',
    },
    {
      what: 'reverse is refused with template as the replacement',
      corefile: '10.0.0.0/8 {\n    reverse 10.0.0.0/8 {\n        hostname ip-{ip}.example.org\n    }\n}\n',
      want: 'Corefile:2: unknown directive "reverse": reverse was removed in CoreDNS 1.1.4; use template to synthesize PTR answers',
    },
    {
      what: 'kubernetes upstream is refused, naming its line',
      corefile: 'cluster.local {\n    kubernetes cluster.local {\n        pods insecure\n        upstream\n    }\n}\n',
      want: 'Corefile:4: unknown property "upstream" in kubernetes block: upstream was removed from kubernetes in CoreDNS 1.7.0; delete the line (external names are resolved through the server itself)',
    },
    {
      what: 'kubernetes upstream with an address is refused the same way',
      corefile: 'cluster.local {\n    kubernetes cluster.local {\n        upstream 10.0.0.10:53\n    }\n}\n',
      want: 'Corefile:3: unknown property "upstream" in kubernetes block: upstream was removed from kubernetes in CoreDNS 1.7.0; delete the line (external names are resolved through the server itself)',
    },
    {
      what: 'kubernetes resyncperiod is refused',
      corefile: 'cluster.local {\n    kubernetes cluster.local {\n        resyncperiod 30s\n    }\n}\n',
      want: 'Corefile:3: unknown property "resyncperiod" in kubernetes block: resyncperiod was removed from kubernetes in CoreDNS 1.7.0; delete the line',
    },
    {
      what: 'a directive CoreDNS never had stays a plain unknown directive',
      corefile: '. {\n    frobnicate\n}\n',
      want: 'Corefile:2: unknown directive "frobnicate"',
    },
    {
      what: 'an unknown kubernetes property stays plain',
      corefile: 'cluster.local {\n    kubernetes {\n        resync 30s\n    }\n}\n',
      want: 'Corefile:3: unknown property "resync" in kubernetes block',
    },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      assert.equal(await verdict(c.corefile), c.want);
    });
  }
});

describe('checkCorefile', () => {
  const cases: Array<{ what: string; corefile: string; want: string }> = [
    { what: 'a valid Corefile', corefile: '.:1053 {\n    whoami\n}\n', want: 'OK' },
    { what: 'a bad option value names its line', corefile: '. {\n    cache {\n        success 0\n    }\n}\n', want: 'Corefile:3: success capacity must be at least 1, got 0' },
    { what: 'transports other than dns, tls and https are refused', corefile: 'grpc://. {\n    whoami\n}\n', want: 'Corefile:1: transport grpc:// is not supported by kdns (key "grpc://."); use dns://, tls:// or https://' },
    { what: 'one block with two transports is refused', corefile: 'tls://a.example:853 https://b.example:853 {\n    whoami\n}\n', want: 'Corefile:1: keys of one server block must share a transport (got tls://, https://)' },
    { what: 'the same zone twice on one tls port', corefile: 'tls://.:853 {\n    whoami\n}\ntls://.:853 {\n    whoami\n}\n', want: 'Corefile:4: cannot serve tls://.:853 - it is already defined (first at Corefile:1)' },
    { what: 'the same zone on dns and tls is fine', corefile: '.:53 {\n    whoami\n}\ntls://.:853 {\n    whoami\n}\n', want: 'OK' },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      assert.equal(await verdict(c.corefile), c.want);
    });
  }
});

describe('kdns serve --check', () => {
  let port: number;
  let udp: dgram.Socket;
  let tcp: net.Server;
  before(async () => {
    // The port the Corefile names is taken: a check that tried to listen would fail.
    port = await freePort();
    udp = dgram.createSocket('udp4');
    await new Promise<void>((r) => udp.bind(port, '127.0.0.1', () => r()));
    tcp = net.createServer();
    await new Promise<void>((r) => tcp.listen(port, '127.0.0.1', () => r()));
  });
  after(async () => {
    udp.close();
    await new Promise<void>((r) => tcp.close(() => r()));
  });

  test('a valid Corefile exits 0 without listening, even with its port taken', async () => {
    const path = writeCorefile(`.:${port} {\n    bind 127.0.0.1\n    health 127.0.0.1:${port}\n    whoami\n}\n`);
    const r = await runKdns(['serve', '--check', '--conf', path]);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, `${path}: OK, 1 server block; would listen on dns://127.0.0.1:${port} (1 zone)\n`);
    assert.equal(r.code, 0);
  });

  test('an error exits 1 with file:line', async () => {
    const path = writeCorefile('. {\n    forward . 127.0.0.1 {\n        polcy random\n    }\n}\n');
    const r = await runKdns(['serve', '--check', '--conf', path]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `${path}:3: unknown property "polcy" in forward block\n`);
    assert.equal(r.stdout, '');
  });

  test('kdns corefile check FILE gives the same verdicts', async () => {
    const bad = writeCorefile('. {\n    proxy . 127.0.0.1\n}\n');
    const r = await runKdns(['corefile', 'check', bad]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `${bad}:2: unknown directive "proxy": proxy was removed in CoreDNS 1.5.0; use forward (e.g. "forward . /etc/resolv.conf")\n`);
    const good = writeCorefile('.:1053 {\n    whoami\n}\n');
    const ok = await runKdns(['corefile', 'check', '--conf', good]);
    assert.equal(ok.code, 0);
    assert.equal(ok.stdout, `${good}: OK, 1 server block; would listen on dns://:1053 (1 zone)\n`);
  });

  test('a missing Corefile exits 1', async () => {
    const r = await runKdns(['corefile', 'check', '/nonexistent/Corefile']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'kdns: /nonexistent/Corefile: no such file\n');
  });
});
