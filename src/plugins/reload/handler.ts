// reload: every interval (± jitter, so that replicas sharing a ConfigMap do not all reload at
// once) compares the SHA-512 of the Corefile on disk with the one running, and asks the server
// to reload when they differ. A Corefile that fails is not retried until it changes again; the
// server keeps the running config, logs why and counts coredns_reload_failed_total.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Registry } from 'prom-client';
import type { Logger } from '../../server/log.js';
import { counter, gauge } from '../../server/metrics.js';
import type { Plugin, ServerControl } from '../../server/plugin.js';

export interface ReloadConfig {
  intervalMs: number;
  jitterMs: number;
}

export function sha512(text: string): string {
  return createHash('sha512').update(text).digest('hex');
}

/** interval + a uniform draw in [-jitter, +jitter], fixed for the life of one config (as CoreDNS). */
export function checkPeriod(config: ReloadConfig, random: () => number = Math.random): number {
  return Math.round(config.intervalMs + (random() * 2 - 1) * config.jitterMs);
}

export interface ReloadDeps {
  server: ServerControl;
  corefilePath: string;
  /** The Corefile text this config was loaded from, when it could be read at setup. */
  loadedText: string | undefined;
  metrics: Registry;
  /** Unprefixed server log ("[INFO] Reloading") and the plugin's ("plugin/reload: ..."). */
  serverLog: Logger;
  log: Logger;
}

/** Registered here too so the counter is exported (at 0) before the first failure; the server counts. */
function ensureFailedCounter(metrics: Registry): void {
  counter(metrics, 'coredns_reload_failed_total', 'Reload attempts whose new Corefile failed, leaving the running config in place.');
}

function setVersionInfo(metrics: Registry, hash: string): void {
  const info = gauge(metrics, 'coredns_reload_version_info', 'Always 1; the value label is the SHA-512 of the running Corefile.', ['hash', 'value']);
  info.reset();
  info.set({ hash: 'sha512', value: hash }, 1);
}

export class ReloadPlugin implements Plugin {
  readonly name = 'reload';
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The last on-disk hash we tried and that failed: not retried until the file changes again. */
  private failedHash: string | undefined;
  readonly periodMs: number;

  constructor(
    readonly config: ReloadConfig,
    private readonly deps: ReloadDeps,
    random: () => number = Math.random,
  ) {
    this.periodMs = checkPeriod(config, random);
  }

  start(): void {
    ensureFailedCounter(this.deps.metrics);
    if (this.deps.loadedText !== undefined) {
      const hash = sha512(this.deps.loadedText);
      this.deps.log.info(`Running configuration SHA512 = ${hash}`);
      setVersionInfo(this.deps.metrics, hash);
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule());
    }, this.periodMs);
    // The listeners keep the process alive; this timer alone should not.
    this.timer.unref();
  }

  /**
   * One check. Resolves to what happened, for logs and tests: unchanged, unreadable, skipped
   * (the same broken file as last time), reloaded or failed.
   */
  async check(): Promise<'unchanged' | 'unreadable' | 'skipped' | 'reloaded' | 'failed'> {
    let onDisk: string;
    try {
      onDisk = await readFile(this.deps.corefilePath, 'utf8');
    } catch {
      return 'unreadable'; // mid-update ConfigMap symlink swap, or removed: try again next time
    }
    if (this.stopped) return 'unchanged';
    const diskHash = sha512(onDisk);
    // Compare with what runs now (a SIGUSR1 reload may have changed it since we started).
    const runningHash = sha512(this.deps.server.corefileText());
    if (diskHash === runningHash) return 'unchanged';
    if (diskHash === this.failedHash) return 'skipped';
    this.deps.serverLog.info('Reloading');
    const ok = await this.deps.server.reload();
    if (ok) {
      this.deps.serverLog.info('Reloading complete');
      return 'reloaded';
    }
    this.failedHash = diskHash;
    this.deps.log.error('Corefile changed but reload failed; the previous configuration keeps serving');
    return 'failed';
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
