// NOTIFY (RFC 1996) to a secondary: "zone X changed, come and check its SOA". Sent over UDP,
// tried three times as CoreDNS does, each try waiting up to two seconds for the secondary's reply.

import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import { decodeMessage, encodeMessage } from '../../lib/dns/codec.js';
import { DnsClass, Opcode, RCode, RRType, type Message } from '../../lib/dns/types.js';
import { randomId } from '../../lib/dnsclient/ids.js';
import { rcodeName } from '../../lib/dns/rr.js';

export interface NotifyTarget {
  /** Canonical IP address. */
  host: string;
  port: number;
}

export const NOTIFY_TRIES = 3;
export const NOTIFY_WAIT_MS = 2_000;

/** The NOTIFY message for `zone` (RFC 1996 §3.7: opcode NOTIFY, AA set, the zone's SOA asked). */
export function notifyMessage(zone: string, id: number): Message {
  return {
    id,
    qr: false,
    opcode: Opcode.NOTIFY,
    aa: true,
    tc: false,
    rd: false,
    ra: false,
    z: false,
    ad: false,
    cd: false,
    rcode: RCode.NOERROR,
    questions: [{ name: zone, type: RRType.SOA, class: DnsClass.IN }],
    answers: [],
    authority: [],
    additional: [],
  };
}

/** One try: resolves with the reply's RCODE, rejects on timeout or a socket error. */
function exchange(wire: Buffer, id: number, target: NotifyTarget, source: string | undefined, waitMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(isIPv6(target.host) ? 'udp6' : 'udp4');
    const timer = setTimeout(() => finish(() => reject(new Error(`no reply within ${waitMs} ms`))), waitMs);
    const finish = (then: () => void): void => {
      clearTimeout(timer);
      socket.close();
      then();
    };
    socket.on('error', (e) => finish(() => reject(e)));
    socket.on('message', (msg) => {
      let reply: Message;
      try {
        reply = decodeMessage(msg);
      } catch {
        return; // not a DNS message: keep waiting for the real reply
      }
      if (reply.id !== id || !reply.qr) return;
      finish(() => resolve(reply.rcode));
    });
    socket.bind({ address: source, port: 0 }, () => socket.send(wire, target.port, target.host));
  });
}

/** Sends NOTIFY for `zone` to `target`; resolves once the secondary says NOERROR, rejects after NOTIFY_TRIES failures. */
export async function sendNotify(zone: string, target: NotifyTarget, source?: string, waitMs = NOTIFY_WAIT_MS): Promise<void> {
  const id = randomId();
  const wire = encodeMessage(notifyMessage(zone, id));
  let last = '';
  for (let i = 0; i < NOTIFY_TRIES; i++) {
    try {
      const rcode = await exchange(wire, id, target, source, waitMs);
      if (rcode === RCode.NOERROR) return;
      last = `rcode was ${rcodeName(rcode)}`;
    } catch (e) {
      last = (e as Error).message;
    }
  }
  throw new Error(`not accepted: ${last}`);
}
