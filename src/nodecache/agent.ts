// The node-local cache: a kdns server (same core, plugins and metrics as `kdns serve`) running
// either the shipped configuration rendered from settings, or a Corefile of the user's.

import { resolve } from 'node:path';
import type { Logger } from '../server/log.js';
import { startServer, type KdnsServer } from '../server/server.js';
import { renderNodeCacheCorefile, type NodeCacheSettings } from './corefile.js';

/** Name the rendered configuration goes by in error messages ("kdns-nodecache.Corefile:7: ..."). */
export const RENDERED_COREFILE_NAME = 'kdns-nodecache.Corefile';

export type NodeCacheConfig =
  | { kind: 'rendered'; settings: NodeCacheSettings }
  | { kind: 'file'; path: string };

export interface NodeCache {
  readonly server: KdnsServer;
  /** The Corefile text it runs. */
  readonly corefileText: string;
  /** Graceful stop (lameduck if the Corefile asks for it). */
  shutdown(): Promise<void>;
  /** Immediate stop. */
  stop(): Promise<void>;
}

export async function startNodeCache(config: NodeCacheConfig, log?: Logger): Promise<NodeCache> {
  const server =
    config.kind === 'file'
      ? await startServer({ corefilePath: config.path, ...(log ? { log } : {}) })
      : await startServer({
          corefilePath: resolve(RENDERED_COREFILE_NAME),
          corefileText: renderNodeCacheCorefile(config.settings),
          options: { defaultPort: config.settings.port },
          ...(log ? { log } : {}),
        });
  return {
    server,
    corefileText: server.corefileText(),
    shutdown: () => server.shutdown(),
    stop: () => server.stop(),
  };
}
