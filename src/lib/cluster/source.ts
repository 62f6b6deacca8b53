// What every source of cluster state offers: it fills a ClusterStore and keeps it current.

import type { ClusterStore } from './store.js';

/** The part of the server's Logger sources use (cluster/ does not import server/). */
export interface SourceLog {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export const silentLog: SourceLog = { info: () => {}, warn: () => {}, error: () => {} };

export interface ClusterSource {
  readonly store: ClusterStore;
  /** For logs: "directory /etc/kdns/cluster", "Kubernetes API https://10.96.0.1:443". */
  readonly description: string;
  /**
   * Starts loading and watching. Resolves once the store holds a complete first view
   * (store.synced); problems after that are retried and logged, never thrown.
   */
  start(): Promise<void>;
  /** Stops watching; the store keeps what it has. */
  stop(): Promise<void>;
}
