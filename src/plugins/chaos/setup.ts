import { readFileSync } from 'node:fs';
import { noBlockAllowed } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { ChaosPlugin, type ChaosConfig } from './handler.js';

export const DEFAULT_AUTHORS: readonly string[] = ['The kdns authors'];

/** "kdns-<version>", like CoreDNS's "CoreDNS-<version>". Same relative path from src/ and dist/. */
export function defaultVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? `kdns-${pkg.version}` : 'kdns';
  } catch {
    return 'kdns';
  }
}

/** `chaos [VERSION] [AUTHORS...]`: authors are de-duplicated and sorted, as CoreDNS does. */
export function parseChaos(d: Directive, fallbackVersion: string = defaultVersion()): ChaosConfig {
  noBlockAllowed(d);
  const [version, ...authors] = d.args;
  return {
    version: version ?? fallbackVersion,
    authors: authors.length > 0 ? [...new Set(authors)].sort() : [...DEFAULT_AUTHORS],
  };
}

export const setup: SetupFn = (ctx) => new ChaosPlugin(parseChaos(ctx.directive));
