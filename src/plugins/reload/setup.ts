import { readFileSync } from 'node:fs';
import { argPosition, expectArgs, noBlockAllowed, parseDuration } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { BlockInfo, Plugin, SetupFn } from '../../server/plugin.js';
import { ReloadPlugin, type ReloadConfig } from './handler.js';

export const DEFAULT_INTERVAL_MS = 30_000;
export const DEFAULT_JITTER_MS = 15_000;
export const MIN_INTERVAL_MS = 2_000;

/**
 * `reload [INTERVAL] [JITTER]`: INTERVAL at least 2s (default 30s); JITTER default 15s, 0s turns
 * it off, and more than half the interval is cut to half, as CoreDNS does.
 */
export function parseReload(d: Directive): ReloadConfig {
  noBlockAllowed(d);
  const [interval, jitter] = expectArgs(d, 0, 2);
  const intervalMs = interval === undefined ? DEFAULT_INTERVAL_MS : parseDuration(interval, argPosition(d, 0), 'reload interval', { minMs: MIN_INTERVAL_MS });
  const jitterMs = jitter === undefined ? DEFAULT_JITTER_MS : parseDuration(jitter, argPosition(d, 1), 'reload jitter');
  return { intervalMs, jitterMs: Math.min(jitterMs, intervalMs / 2) };
}

/** CoreDNS allows one `reload` per server block. */
function claimBlock(instance: Map<string, unknown>, block: BlockInfo, d: Directive): void {
  const seen = (instance.get('reload|blocks') as Set<BlockInfo> | undefined) ?? new Set<BlockInfo>();
  instance.set('reload|blocks', seen);
  if (seen.has(block)) throw CorefileError.at(d, 'reload can only be used once per server block');
  seen.add(block);
}

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Reload is about the whole Corefile, not a block: the first block that asks for it watches,
 * and the others only take part in the once-per-block check.
 */
export const setup: SetupFn = (ctx) => {
  const config = parseReload(ctx.directive);
  claimBlock(ctx.instance, ctx.block, ctx.directive);
  if (ctx.instance.has('reload|watcher')) {
    const inert: Plugin = { name: 'reload' };
    return inert;
  }
  const plugin = new ReloadPlugin(config, {
    server: ctx.server,
    corefilePath: ctx.corefilePath,
    loadedText: readIfPresent(ctx.corefilePath),
    metrics: ctx.shared.metrics,
    serverLog: ctx.shared.log,
    log: ctx.shared.log.plugin('reload'),
  });
  ctx.instance.set('reload|watcher', plugin);
  return plugin;
};
