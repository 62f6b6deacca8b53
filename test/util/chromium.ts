// Headless Chromium (Debian's `chromium`) for page tests: load a URL, let its scripts run for a
// while of virtual time, and return the DOM as it is then.

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';

export function hasChromium(): boolean {
  return existsSync(CHROMIUM);
}

/** The DOM of `url` after `budgetMs` of virtual time (timers run, fetches complete). */
export function dumpDom(url: string, budgetMs: number): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), 'kdns-chromium-'));
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    `--virtual-time-budget=${budgetMs}`,
    '--dump-dom',
    url,
  ];
  return new Promise((resolve, reject) => {
    execFile(CHROMIUM, args, { timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      rmSync(profile, { recursive: true, force: true });
      if (err) reject(new Error(`chromium ${url}: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}
