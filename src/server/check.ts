// `kdns serve --check`: load and set up every server block of a Corefile as a start would, but
// open no socket and start no plugin (no watches, probes or HTTP endpoints), so a ConfigMap can
// be tested before it is rolled out. The first problem is thrown as a CorefileError (file:line).

import { loadConfig, stopPlugins, type ListenSpec } from './config.js';
import type { Logger } from './log.js';
import type { ServeOptions, ServerControl } from './plugin.js';
import { createShared } from './server.js';

/** A server that is never running: setup code may keep a reference to it, but nothing calls it during a check. */
const NOT_RUNNING: ServerControl = {
  reload: () => Promise.resolve(false),
  corefileText: () => '',
  readiness: () => [],
  shuttingDown: () => false,
};

export interface CheckResult {
  blocks: number;
  listens: ListenSpec[];
}

/** Sets up every block of `text` (the Corefile at corefilePath); throws the first error. */
export async function checkCorefile(corefilePath: string, text: string, options: ServeOptions, log: Logger): Promise<CheckResult> {
  const instance = await loadConfig(corefilePath, text, { shared: createShared(log), options, server: NOT_RUNNING });
  await stopPlugins(instance.plugins, () => undefined);
  return { blocks: instance.blocks.length, listens: instance.listens };
}

/** "dns://:53 (2 zones), tls://127.0.0.1:853 (1 zone)": what a start would listen on. */
export function describeListens(listens: readonly ListenSpec[]): string {
  return listens
    .map((l) => {
      const n = l.zones.size;
      return `${l.transport}://${l.address === '' ? '' : l.address.includes(':') ? `[${l.address}]` : l.address}:${l.port} (${n} zone${n === 1 ? '' : 's'})`;
    })
    .join(', ');
}
