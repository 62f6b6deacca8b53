// Test helper: an upstream on loopback (UDP and TCP, one port) that notes every query it gets,
// EDNS options included, and answers NXDOMAIN. It shows what kdns sends upstream: which names,
// with which options, over which transport.

import dgram from 'node:dgram';
import net from 'node:net';
import { decodeMessage, encodeMessage } from '../../src/lib/dns/codec.js';
import { RCode, type Message } from '../../src/lib/dns/types.js';

export interface CapturedQuery {
  transport: 'udp' | 'tcp';
  name: string;
  type: number;
  /** EDNS options as [code, text of the data]. */
  options: Array<[number, string]>;
}

export interface CaptureServer {
  port: number;
  queries: CapturedQuery[];
  close(): Promise<void>;
}

function answer(query: Buffer, transport: 'udp' | 'tcp', into: CapturedQuery[]): Buffer | undefined {
  let msg: Message;
  try {
    msg = decodeMessage(query);
  } catch {
    return undefined;
  }
  const q = msg.questions[0];
  if (!q) return undefined;
  into.push({ transport, name: q.name, type: q.type, options: (msg.edns?.options ?? []).map((o) => [o.code, Buffer.from(o.data).toString('latin1')]) });
  return encodeMessage({ ...msg, qr: true, aa: true, rcode: RCode.NXDOMAIN, answers: [], authority: [], additional: [], edns: undefined });
}

export async function startCapture(host = '127.0.0.1'): Promise<CaptureServer> {
  const queries: CapturedQuery[] = [];
  const udp = dgram.createSocket('udp4');
  udp.on('message', (b, rinfo) => {
    const out = answer(b, 'udp', queries);
    if (out) udp.send(out, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(0, host, () => resolve());
  });
  const port = udp.address().port;
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const len = buf.readUInt16BE(0);
        const out = answer(buf.subarray(2, 2 + len), 'tcp', queries);
        buf = buf.subarray(2 + len);
        if (out) {
          const frame = Buffer.alloc(2);
          frame.writeUInt16BE(out.length);
          s.write(Buffer.concat([frame, out]));
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, host, () => resolve());
  });
  return {
    port,
    queries,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
}
