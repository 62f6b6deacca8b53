// The messages between the rig's two halves: the runner (run.ts, in the test's own network
// namespace, where the servers under test listen on loopback) and the agent (agent.ts, inside a
// fresh network namespace, where the lookup client runs). They talk over the agent's stdin and
// stdout, one JSON object a line; DNS messages travel base64-encoded. A pipe is the one channel
// that crosses network namespaces without any address, and its end-of-file is how the agent
// learns that the runner is gone.

/** What the agent sets up and starts, sent once as the first line. */
export interface AgentConfig {
  /** Nameserver addresses to put on `lo` first (those that are not loopback already). */
  addresses: string[];
  /** Port 53 listeners (UDP and TCP) to open; a `refuse` nameserver has none on purpose. */
  listeners: Array<{ address: string; route: 'relay' | 'drop' }>;
  /** The client: command, arguments and the whole environment it starts with. */
  client: { command: string; args: string[]; env: Record<string, string> };
}

export type ToAgent =
  | { kind: 'start'; config: AgentConfig }
  /** The answer to UDP query `seq`, to send back to the client from the nameserver address. */
  | { kind: 'udp-answer'; seq: number; data: string }
  /** One answer message on TCP connection `conn` (the agent adds the length prefix). */
  | { kind: 'tcp-answer'; conn: number; data: string }
  /** The server closed its side of connection `conn`: close the client's too. */
  | { kind: 'tcp-reset'; conn: number };

export type FromAgent =
  /** Listeners are open; the client is about to start. */
  | { kind: 'listening' }
  | { kind: 'started'; pid: number }
  /** A DNS message the client sent; `at` is preciseNow() when it arrived. */
  | { kind: 'query'; seq: number; transport: 'udp' | 'tcp'; server: string; conn: number | null; route: 'relay' | 'drop'; at: number; data: string }
  | { kind: 'tcp-closed'; conn: number }
  /** The client ended; sent once the queries it sent before ending have all been reported. */
  | { kind: 'exit'; code: number | null; signal: string | null; stdout: string; stderr: string }
  | { kind: 'fatal'; message: string };

/**
 * The machine's monotonic clock in ms, with sub-millisecond precision: the same in every process.
 * (performance.timeOrigin + performance.now() is not: each process fixes its time origin from the
 * wall clock at start, and two processes' origins differed by more than the half millisecond a
 * relayed answer takes, so an answer seemed to come before its query.)
 */
export function preciseNow(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * Splits a TCP DNS byte stream into its messages (each preceded by a 2-byte length). Returns
 * the complete messages and the bytes of an incomplete one still to come.
 */
export function splitFrames(pending: Buffer): { messages: Buffer[]; rest: Buffer } {
  const messages: Buffer[] = [];
  let offset = 0;
  while (pending.length - offset >= 2) {
    const length = pending.readUInt16BE(offset);
    if (pending.length - offset - 2 < length) break;
    messages.push(pending.subarray(offset + 2, offset + 2 + length));
    offset += 2 + length;
  }
  return { messages, rest: pending.subarray(offset) };
}

/** One message with its 2-byte length prefix, for TCP. */
export function frame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(message.length);
  return Buffer.concat([prefix, message]);
}
