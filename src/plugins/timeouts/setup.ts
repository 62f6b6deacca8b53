// `timeouts { read DURATION  write DURATION  idle DURATION  maxtcpqueries MAXIMUM }`: the
// server's TCP/DoT/DoH read, write and idle timeouts, each between 1s and 24h, and the queries it
// serves on one TCP/TLS connection, as in CoreDNS 1.14. The block's settings carry them to its
// listeners (config.ts: the smallest of the blocks sharing one). The client-side counterparts
// that spread a node's queries over a Service's endpoints are forward's `max_age` and
// `maxtcpqueries`.
import { argPosition, blockProperties, expectArgs, parseDuration, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { oncePerBlock } from '../pkg/once.js';
import { parseMaxTcpQueries } from '../pkg/maxtcpqueries.js';

export interface Timeouts {
  readMs?: number;
  writeMs?: number;
  idleMs?: number;
  /** Queries served on one TCP/TLS connection; 0 for `-1` (no limit). */
  maxTcpQueries?: number;
}

const DURATION_KEYS = { read: 'readMs', write: 'writeMs', idle: 'idleMs' } as const;

export function parseTimeouts(d: Directive): Timeouts {
  expectArgs(d, 0, 0);
  if (!d.block || d.block.length === 0) throw CorefileError.at(d, 'timeouts needs a block with at least one of read, write, idle or maxtcpqueries');
  const out: Timeouts = {};
  for (const p of blockProperties(d, 'timeouts')) {
    if (p.name === 'maxtcpqueries') {
      out.maxTcpQueries = parseMaxTcpQueries(p, 'timeouts maxtcpqueries');
      continue;
    }
    if (!(p.name in DURATION_KEYS)) unknownProperty(p, 'timeouts');
    const key = DURATION_KEYS[p.name as keyof typeof DURATION_KEYS];
    out[key] = parseDuration(expectArgs(p, 1, 1)[0] as string, argPosition(p, 0), `timeouts ${p.name}`, { minMs: 1000, maxMs: 86_400_000 });
  }
  return out;
}

export const setup: SetupFn = (ctx) => {
  oncePerBlock(ctx, 'timeouts');
  const t = parseTimeouts(ctx.directive);
  // Queries per client connection (0 or absent: no cap), and the connection timeouts.
  if (t.maxTcpQueries) ctx.block.settings.maxTcpQueries = t.maxTcpQueries;
  if (t.readMs !== undefined || t.writeMs !== undefined || t.idleMs !== undefined) {
    ctx.block.settings.connectionTimeouts = { readMs: t.readMs, writeMs: t.writeMs, idleMs: t.idleMs };
  }
  return { name: 'timeouts' };
};
