// What the parent carries between its workers (the worker's side is src/server/siblings.ts):
//  - gathers: a worker asks, every serving worker answers, the asker gets the answers in worker
//    order (one /metrics for the pod, summed over the workers);
//  - relayed channels: the worker that reads the cluster publishes each change; the hub keeps
//    the latest value of every key (JSON text, as published) so that a worker that starts or
//    restarts gets the whole state at once, then every change, without reading the API itself.
// The hub never parses a value: the parent stays free of the plugins' code.

import type { ChildProcess } from 'node:child_process';
import { RELAY_CHANGES_PER_MESSAGE, type RelayOps, type SiblingMessage } from '../server/siblings.js';

const GATHER_TIMEOUT_MS = 2_000;

interface PendingGather {
  asker: ChildProcess;
  askerId: number;
  askedOf: ChildProcess[];
  values: Map<ChildProcess, unknown>;
  timer: NodeJS.Timeout;
}

interface Channel {
  values: Map<string, string>;
  synced: boolean;
  followers: Set<ChildProcess>;
}

function tell(child: ChildProcess, m: SiblingMessage): void {
  if (child.connected) child.send(m);
}

export class RelayHub {
  private readonly gathers = new Map<number, PendingGather>();
  private readonly channels = new Map<string, Channel>();
  private nextId = 1;

  /** `asker` wants every one of `serving`'s answer to `topic`. */
  gather(asker: ChildProcess, askerId: number, topic: string, serving: readonly ChildProcess[]): void {
    const id = this.nextId++;
    const askedOf = serving.includes(asker) ? [...serving] : [asker, ...serving];
    const pending: PendingGather = { asker, askerId, askedOf, values: new Map(), timer: setTimeout(() => this.finish(id), GATHER_TIMEOUT_MS) };
    this.gathers.set(id, pending);
    for (const c of askedOf) tell(c, { type: 'ask', id, topic });
  }

  answered(from: ChildProcess, id: number, value: unknown): void {
    const pending = this.gathers.get(id);
    if (!pending) return;
    pending.values.set(from, value);
    if (pending.values.size === pending.askedOf.length) this.finish(id);
  }

  private finish(id: number): void {
    const pending = this.gathers.get(id);
    if (!pending) return;
    this.gathers.delete(id);
    clearTimeout(pending.timer);
    const values = pending.askedOf.filter((c) => pending.values.has(c)).map((c) => pending.values.get(c));
    tell(pending.asker, { type: 'gathered', id: pending.askerId, values });
  }

  publish(from: ChildProcess, name: string, ops: RelayOps): void {
    const channel = this.channel(name);
    for (const [key, value] of ops.changes) {
      if (value === null) channel.values.delete(key);
      else channel.values.set(key, value);
    }
    if (ops.synced) channel.synced = true;
    for (const f of channel.followers) if (f !== from) tell(f, { type: 'relayed', channel: name, ops });
  }

  /** `child` gets the channel's whole state, in parts the size a publisher sends, then every change. */
  follow(child: ChildProcess, name: string): void {
    const channel = this.channel(name);
    channel.followers.add(child);
    let changes: RelayOps['changes'] = [];
    for (const entry of channel.values) {
      changes.push(entry);
      if (changes.length < RELAY_CHANGES_PER_MESSAGE) continue;
      tell(child, { type: 'relayed', channel: name, ops: { changes } });
      changes = [];
    }
    tell(child, { type: 'relayed', channel: name, ops: { changes, synced: channel.synced } });
  }

  /** A worker ended: it follows nothing, and gathers stop waiting for it. */
  gone(child: ChildProcess): void {
    for (const c of this.channels.values()) c.followers.delete(child);
    for (const [id, p] of this.gathers) {
      p.askedOf = p.askedOf.filter((c) => c !== child || p.values.has(c));
      if (p.asker === child) {
        clearTimeout(p.timer);
        this.gathers.delete(id);
      } else if (p.values.size === p.askedOf.length) this.finish(id);
    }
  }

  private channel(name: string): Channel {
    let c = this.channels.get(name);
    if (!c) {
      c = { values: new Map(), synced: false, followers: new Set() };
      this.channels.set(name, c);
    }
    return c;
  }
}
