// The plugins this build has: directive name → its setup module. A setup module is imported only
// when a Corefile names its directive, so a process holds the code of the plugins it runs and no
// other, and starts without loading the rest (docs/notes/2026-11-28-memory.md says where kdns's
// memory goes).
// The imports are written out so the compiler checks that every module exports a setup and a
// build tool sees every plugin; nothing is found by looking at the file system.
// Used by the server's configuration loader (src/server/config.ts) and by `-plugins`
// (src/cli/coredns.ts). A new plugin is a folder with setup.ts and a line here.

import type { SetupFn } from '../server/plugin.js';

/** What a plugin's setup.ts exports. */
export interface PluginModule {
  setup: SetupFn;
}

/** Directive name → the import of its plugin's setup module. */
export const PLUGINS: ReadonlyMap<string, () => Promise<PluginModule>> = new Map<string, () => Promise<PluginModule>>([
  ['acl', () => import('./acl/setup.js')],
  ['any', () => import('./any/setup.js')],
  ['auto', () => import('./auto/setup.js')],
  ['autopath', () => import('./autopath/setup.js')],
  ['bind', () => import('./bind/setup.js')],
  ['bufsize', () => import('./bufsize/setup.js')],
  ['cache', () => import('./cache/setup.js')],
  ['cancel', () => import('./cancel/setup.js')],
  ['chaos', () => import('./chaos/setup.js')],
  ['debug', () => import('./debug/setup.js')],
  ['dns64', () => import('./dns64/setup.js')],
  ['dnstap', () => import('./dnstap/setup.js')],
  ['errors', () => import('./errors/setup.js')],
  ['etcd', () => import('./etcd/setup.js')],
  ['file', () => import('./file/setup.js')],
  ['forward', () => import('./forward/setup.js')],
  ['header', () => import('./header/setup.js')],
  ['health', () => import('./health/setup.js')],
  ['hosts', () => import('./hosts/setup.js')],
  ['k8s_external', () => import('./k8s_external/setup.js')],
  ['kubernetes', () => import('./kubernetes/setup.js')],
  ['loadbalance', () => import('./loadbalance/setup.js')],
  ['local', () => import('./local/setup.js')],
  ['log', () => import('./log/setup.js')],
  ['loop', () => import('./loop/setup.js')],
  ['metadata', () => import('./metadata/setup.js')],
  ['minimal', () => import('./minimal/setup.js')],
  ['multisocket', () => import('./multisocket/setup.js')],
  ['nsid', () => import('./nsid/setup.js')],
  ['pprof', () => import('./pprof/setup.js')],
  ['prometheus', () => import('./prometheus/setup.js')],
  ['ready', () => import('./ready/setup.js')],
  ['reload', () => import('./reload/setup.js')],
  ['rewrite', () => import('./rewrite/setup.js')],
  ['root', () => import('./root/setup.js')],
  ['searchpath', () => import('./searchpath/setup.js')],
  ['template', () => import('./template/setup.js')],
  ['timeouts', () => import('./timeouts/setup.js')],
  ['tls', () => import('./tls/setup.js')],
  ['transfer', () => import('./transfer/setup.js')],
  ['view', () => import('./view/setup.js')],
  ['whoami', () => import('./whoami/setup.js')],
  ['workloads', () => import('./workloads/setup.js')],
]);
