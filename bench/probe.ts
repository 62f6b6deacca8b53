// One DNS question over UDP, for the bench's readiness probes and sanity checks. Written out
// here rather than taken from kdns's own code, so that a bug in kdns's wire format cannot make
// the bench agree with it.
import dgram from 'node:dgram';

export const TYPE_CODES = { A: 1, SRV: 33, AAAA: 28 } as const;
export type QueryType = keyof typeof TYPE_CODES;
export const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'] as const;

export interface Answer {
  rcode: string;
  /** Records in the answer section. */
  answers: number;
  /** The addresses of its A records, in order. */
  addresses: string[];
  /** Its A and SRV records as a zone file writes their type and data ("A 10.0.0.1", "SRV 0 100 80 x.example."). */
  records: string[];
}

/** A query with recursion desired, no EDNS. */
export function encodeQuery(id: number, name: string, type: QueryType): Buffer {
  const labels = name.replace(/\.$/, '').split('.');
  const parts: Buffer[] = [Buffer.from([id >> 8, id & 255, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0])];
  for (const label of labels) {
    const bytes = Buffer.from(label, 'ascii');
    if (bytes.length === 0 || bytes.length > 63) throw new Error(`${name}: label "${label}" is empty or longer than 63 bytes`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  const code = TYPE_CODES[type];
  parts.push(Buffer.from([0, code >> 8, code & 255, 0, 1]));
  return Buffer.concat(parts);
}

/** The name at `offset` (following compression pointers) and where the bytes after it start. */
export function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  let end = -1;
  for (let hops = 0; ; ) {
    if (at >= msg.length) throw new Error('name runs past the end of the message');
    const len = msg[at] as number;
    if (len === 0) {
      if (end < 0) end = at + 1;
      break;
    }
    if ((len & 0xc0) === 0xc0) {
      if (at + 1 >= msg.length) throw new Error('compression pointer runs past the end of the message');
      if (end < 0) end = at + 2;
      if (++hops > 64) throw new Error('compression pointers loop');
      at = ((len & 0x3f) << 8) | (msg[at + 1] as number);
      continue;
    }
    labels.push(msg.toString('latin1', at + 1, at + 1 + len));
    at += 1 + len;
  }
  return { name: `${labels.join('.')}.`, end };
}

/** RCODE, answer count and the A addresses of a response; throws on a message too short to be one. */
export function decodeAnswer(msg: Buffer): Answer {
  if (msg.length < 12) throw new Error(`response of ${msg.length} bytes is shorter than a DNS header`);
  const rcodeNumber = (msg[3] as number) & 0x0f;
  const questions = msg.readUInt16BE(4);
  const answers = msg.readUInt16BE(6);
  let at = 12;
  for (let i = 0; i < questions; i++) at = readName(msg, at).end + 4;
  const addresses: string[] = [];
  const records: string[] = [];
  for (let i = 0; i < answers; i++) {
    at = readName(msg, at).end;
    if (at + 10 > msg.length) throw new Error('answer record runs past the end of the message');
    const type = msg.readUInt16BE(at);
    const length = msg.readUInt16BE(at + 8);
    at += 10;
    if (at + length > msg.length) throw new Error('record data runs past the end of the message');
    if (type === TYPE_CODES.A && length === 4) {
      const address = `${msg[at]}.${msg[at + 1]}.${msg[at + 2]}.${msg[at + 3]}`;
      addresses.push(address);
      records.push(`A ${address}`);
    } else if (type === TYPE_CODES.SRV && length >= 7) {
      records.push(`SRV ${msg.readUInt16BE(at)} ${msg.readUInt16BE(at + 2)} ${msg.readUInt16BE(at + 4)} ${readName(msg, at + 6).name}`);
    }
    at += length;
  }
  return { rcode: RCODE_NAMES[rcodeNumber] ?? `RCODE${rcodeNumber}`, answers, addresses, records };
}

/** Asks 127.0.0.1:port once; undefined when nothing (valid) comes back within timeoutMs. */
export async function ask(port: number, name: string, type: QueryType, timeoutMs = 1000): Promise<Answer | undefined> {
  const socket = dgram.createSocket('udp4');
  const id = Math.floor(Math.random() * 65536);
  try {
    return await new Promise<Answer | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      socket.on('error', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      socket.on('message', (msg) => {
        if (msg.length < 12 || msg.readUInt16BE(0) !== id) return;
        clearTimeout(timer);
        try {
          resolve(decodeAnswer(msg));
        } catch {
          resolve(undefined);
        }
      });
      socket.send(encodeQuery(id, name, type), port, '127.0.0.1');
    });
  } finally {
    socket.close();
  }
}
