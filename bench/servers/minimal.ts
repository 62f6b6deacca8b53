// The minimal Node.js responder (minimal.mjs): the floor of what a Node.js DNS server spends.
import { fileURLToPath } from 'node:url';
import type { ServerSpec } from './server.js';

const SCRIPT = fileURLToPath(new URL('./minimal.mjs', import.meta.url));

export function minimal(node: { path: string; version: string; labelled: boolean }): ServerSpec {
  return {
    id: `minimal${node.labelled ? `@${node.version}` : ''}`,
    label: node.labelled ? `minimal Node responder on node ${node.version}` : 'minimal Node responder',
    kind: 'peer',
    needs: [],
    threads: 1,
    answersChecks: false,
    stopSignal: 'SIGTERM',
    supports: () => true,
    prepare: (ctx) => [{ argv: [node.path, SCRIPT, '--port', String(ctx.port)] }],
  };
}
