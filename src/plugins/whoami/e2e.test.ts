// whoami inside a running kdns, asked with the real dig over UDP and TCP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

describe('whoami end to end', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer('example.org:{PORT} {\n    bind 127.0.0.1\n    whoami\n}\n');
  });
  after(() => s.stop());

  test('client address and transport', async () => {
    const cases: Array<{ transport: 'UDP' | 'TCP'; args: string[]; srvOwner: string }> = [
      { transport: 'UDP', args: [], srvOwner: '_udp.example.org.' },
      { transport: 'TCP', args: ['+tcp'], srvOwner: '_tcp.example.org.' },
    ];
    for (const c of cases) {
      const r = await dig('example.org', 'A', { port: s.port, args: c.args });
      assert.equal(r.transport, c.transport);
      assert.equal(r.status, 'NOERROR');
      assert.deepEqual(r.answer, [], `${c.transport}: empty answer section`);
      const [addr, srv] = r.additional;
      assert.deepEqual(addr && { name: addr.name, type: addr.type, data: addr.data, ttl: addr.ttl }, { name: 'example.org.', type: 'A', data: '127.0.0.1', ttl: 0 });
      assert.equal(srv?.name, c.srvOwner);
      assert.equal(srv?.type, 'SRV');
      const [prio, weight, port, target] = (srv?.data ?? '').split(' ');
      assert.deepEqual([prio, weight, target], ['0', '0', '.']);
      assert.ok(Number(port) > 0 && Number(port) < 65536, `client port ${port}`);
    }
  });
});
