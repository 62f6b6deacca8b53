// A worker's view of its siblings: the other workers its parent (src/supervisor/parent.ts)
// started to serve the same configuration with `multisocket`. Everything goes through the parent
// over the IPC channel; workers never talk to each other directly, so a worker that dies takes
// no sibling's state with it.
//
//  - gather(topic): every live worker's answer to `topic` (this one's included), for what one
//    process would show whole: /metrics summed over the workers.
//  - publish/follow(channel): one worker (index 0) reads the cluster from the API and publishes
//    each change; the parent keeps the latest value of every key, and a worker that follows the
//    channel gets them all and then every change (src/plugins/kubernetes/relay.ts).
//
// Without a parent, or with one worker, there are no siblings: gather asks this process alone.

/** The worker's place among its siblings, from its environment. */
export const WORKER_INDEX_ENV = 'KDNS_WORKER_INDEX';
export const WORKER_COUNT_ENV = 'KDNS_WORKER_COUNT';

/**
 * Changes to a relayed channel, in order: a key set to a value (JSON text) or dropped (null);
 * and whether the publisher has reached its first complete view.
 */
export interface RelayOps {
  changes: Array<[string, string | null]>;
  synced?: boolean;
}

/** Worker → parent. */
export type SiblingRequest =
  | { type: 'gather'; id: number; topic: string }
  | { type: 'answer'; id: number; value: unknown }
  | { type: 'publish'; channel: string; ops: RelayOps }
  | { type: 'follow'; channel: string };

/** Parent → worker. */
export type SiblingMessage =
  | { type: 'ask'; id: number; topic: string }
  | { type: 'gathered'; id: number; values: unknown[] }
  | { type: 'relayed'; channel: string; ops: RelayOps };

function envInt(name: string, fallback: number): number {
  const n = Number(process.env[name]);
  return Number.isInteger(n) && n >= 0 ? n : fallback;
}

/** 0 for the first worker and for a process without a parent. */
export function workerIndex(): number {
  return envInt(WORKER_INDEX_ENV, 0);
}

/** How many workers serve this configuration (1 without a parent). */
export function workerCount(): number {
  return typeof process.send === 'function' ? Math.max(1, envInt(WORKER_COUNT_ENV, 1)) : 1;
}

const answerers = new Map<string, () => unknown>();
const waiting = new Map<number, (values: unknown[]) => void>();
const followers = new Map<string, (ops: RelayOps) => void>();
let nextId = 1;
let listening = false;

function send(m: SiblingRequest): void {
  process.send?.(m);
}

function listen(): void {
  if (listening) return;
  listening = true;
  process.on('message', (raw: unknown) => {
    const m = raw as SiblingMessage;
    if (m?.type === 'ask') void answerAsk(m.id, m.topic);
    else if (m?.type === 'gathered') {
      waiting.get(m.id)?.(m.values);
      waiting.delete(m.id);
    } else if (m?.type === 'relayed') followers.get(m.channel)?.(m.ops);
  });
  // Listening must not keep a worker alive that is otherwise done.
  process.channel?.unref();
}

async function answerAsk(id: number, topic: string): Promise<void> {
  const answer = answerers.get(topic);
  let value: unknown = null;
  try {
    value = answer ? await answer() : null;
  } catch {
    value = null;
  }
  send({ type: 'answer', id, value });
}

/** What this process answers when a sibling gathers `topic` (the last registration wins). */
export function answer(topic: string, fn: () => unknown): void {
  answerers.set(topic, fn);
  if (workerCount() > 1) listen();
}

/** Every live worker's answer to `topic`, in worker order; this process's alone without siblings. */
export async function gather(topic: string): Promise<unknown[]> {
  if (workerCount() <= 1) {
    const own = answerers.get(topic);
    return own ? [await own()] : [];
  }
  listen();
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    send({ type: 'gather', id, topic });
  });
}

/** Sends changes of `channel` to the parent, which keeps them for the workers that follow it. */
export function publish(channel: string, ops: RelayOps): void {
  for (const part of splitRelayOps(ops)) send({ type: 'publish', channel, ops: part });
}

/**
 * Changes per IPC message. A cluster's first list is one store batch (10,000 Services: about
 * 8 MB of JSON); sent whole, every process on its way (the publisher, the parent, each follower)
 * builds and parses a string of that size in V8's large-object space, which an idle process does
 * not collect: the parent held 8–10 MiB of such garbage after relaying 10,000 Services. 128
 * changes of a few hundred bytes each stay far below the 128 KiB above which V8 allocates a
 * string as a large object, and die young.
 */
export const RELAY_CHANGES_PER_MESSAGE = 128;

/**
 * `ops` as consecutive parts of at most `max` changes each, in order; `synced` on the last part
 * only, so that a follower is synced when it has every change before it. Empty changes: `ops`.
 */
export function splitRelayOps(ops: RelayOps, max: number = RELAY_CHANGES_PER_MESSAGE): RelayOps[] {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`splitRelayOps: max must be a whole number from 1, not ${max}`);
  if (ops.changes.length <= max) return [ops];
  const parts: RelayOps[] = [];
  for (let i = 0; i < ops.changes.length; i += max) parts.push({ changes: ops.changes.slice(i, i + max) });
  if (ops.synced !== undefined) (parts[parts.length - 1] as RelayOps).synced = ops.synced;
  return parts;
}

/** Receives every value of `channel` the parent holds, then each change as it is published. */
export function follow(channel: string, onOps: (ops: RelayOps) => void): () => void {
  listen();
  followers.set(channel, onOps);
  send({ type: 'follow', channel });
  return () => followers.delete(channel);
}
