// The import rules of docs/architecture.md, checked against the code: every relative import of
// every production file under src/ (tests aside) must go where its folder may import. A rule
// broken here is either a wrong import or a design change: then change docs/architecture.md and
// this table together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** The part of the tree a file belongs to, as docs/architecture.md names them. */
function areaOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  if (parts.length === 1) return parts[0] === 'index.ts' ? 'index' : `?${parts[0]}`;
  if (parts[0] === 'lib') return `lib/${parts[1]}`;
  if (parts[0] === 'plugins') return parts.length === 2 ? `plugins/${(parts[1] as string).replace(/\.[jt]s$/, '')}` : `plugins/${parts[1]}`;
  return parts[0] as string;
}

const LIB = ['lib/dns', 'lib/native', 'lib/node', 'lib/corefile', 'lib/cluster', 'lib/dnsclient'];

/** Where each area may import from (besides itself). Every plugin folder is checked by `plugins/*`. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  'lib/dns': [],
  'lib/native': [],
  'lib/node': [],
  'lib/corefile': ['lib/dns'],
  'lib/cluster': ['lib/dns', 'lib/node'],
  'lib/dnsclient': ['lib/dns', 'lib/native'],
  server: [...LIB, 'plugins/registry'],
  'plugins/registry': ['server', 'plugins/*'],
  'plugins/pkg': [...LIB, 'server'],
  // The kubernetes plugin's public interface is its index.ts; src/plugins/imports.test.ts checks
  // that a plugin reaches no other file of another plugin.
  'plugins/*': [...LIB, 'server', 'plugins/pkg', 'plugins/kubernetes', 'poddns'],
  poddns: LIB,
  webhook: [...LIB, 'poddns'],
  operator: LIB,
  nodecache: [...LIB, 'server', 'plugins/pkg'],
  supervisor: [...LIB, 'server', 'plugins/pkg'],
  noderesolver: LIB,
  cli: ['*'],
  index: ['*'],
};

const isPlugin = (area: string): boolean => area.startsWith('plugins/') && area !== 'plugins/pkg' && area !== 'plugins/registry';

function allowed(from: string, to: string): boolean {
  if (from === to) return true;
  const rule = MAY_IMPORT[isPlugin(from) ? 'plugins/*' : from] ?? [];
  if (rule.includes('*')) return to !== 'cli';
  if (rule.includes(to)) return true;
  return isPlugin(to) && rule.includes('plugins/*');
}

function productionFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) productionFiles(p, out);
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const IMPORT = /(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

function edges(): Array<{ file: string; target: string; from: string; to: string }> {
  const out = [];
  for (const file of productionFiles(SRC)) {
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = normalize(join(dirname(file), m[1] as string));
      if (!target.startsWith(SRC)) {
        out.push({ file, target, from: areaOf(file), to: 'outside src/' });
        continue;
      }
      out.push({ file, target, from: areaOf(file), to: areaOf(target) });
    }
  }
  return out;
}

test('architecture: every import goes where docs/architecture.md allows', () => {
  const broken = edges()
    .filter((e) => !allowed(e.from, e.to))
    .map((e) => `${relative(SRC, e.file)} (${e.from}) imports ${relative(SRC, e.target)} (${e.to})`);
  assert.deepEqual(broken, []);
});

test('architecture: nothing under src/ imports the command line, tests or benchmarks', () => {
  const bad = edges()
    .filter((e) => (e.to === 'cli' && e.from !== 'cli') || e.to === 'outside src/')
    .map((e) => `${relative(SRC, e.file)} imports ${e.target}`);
  assert.deepEqual(bad, []);
});

test('architecture: every folder under src/ has a rule', () => {
  const areas = new Set(edges().map((e) => e.from));
  const unknown = [...areas].filter((a) => MAY_IMPORT[a] === undefined && !isPlugin(a));
  assert.deepEqual(unknown, []);
});

test('architecture: the rules themselves, case by case', () => {
  const cases: Array<{ from: string; to: string; allowed: boolean }> = [
    { from: 'lib/dns', to: 'server', allowed: false },
    { from: 'lib/dnsclient', to: 'lib/native', allowed: true },
    { from: 'lib/dnsclient', to: 'server', allowed: false },
    { from: 'server', to: 'plugins/registry', allowed: true },
    { from: 'server', to: 'plugins/acl', allowed: false },
    { from: 'plugins/acl', to: 'plugins/loadbalance', allowed: false },
    { from: 'plugins/autopath', to: 'plugins/kubernetes', allowed: true },
    { from: 'plugins/acl', to: 'plugins/pkg', allowed: true },
    { from: 'plugins/pkg', to: 'plugins/acl', allowed: false },
    { from: 'plugins/registry', to: 'plugins/acl', allowed: true },
    { from: 'nodecache', to: 'plugins/forward', allowed: false },
    { from: 'webhook', to: 'poddns', allowed: true },
    { from: 'poddns', to: 'webhook', allowed: false },
    { from: 'operator', to: 'server', allowed: false },
    { from: 'index', to: 'cli', allowed: false },
  ];
  assert.deepEqual(
    cases.map((c) => ({ ...c, allowed: allowed(c.from, c.to) })),
    cases,
  );
});

/** A value import of node:http (not `import type`), which on Node 26 loads undici: see src/lib/node/http.ts. */
const HTTP_VALUE_IMPORT = /^\s*import\s+(?!type\b)[^;]*?from\s+['"](?:node:)?http['"]|import\s*\(\s*['"](?:node:)?http['"]\s*\)/m;

test('architecture: node:http comes through lib/node/http.ts, never an ES module import', () => {
  const cases: Array<[string, boolean]> = [
    ["import http from 'node:http';", true],
    ["import { createServer } from 'node:http';", true],
    ["import { request as httpRequest, type ClientRequest } from 'http';", true],
    ["const m = await import('node:http');", true],
    ["import type http from 'node:http';", false],
    ["import type { IncomingMessage } from 'node:http';", false],
    ["import https from 'node:https';", false],
    ["import http2 from 'node:http2';", false],
  ];
  assert.deepEqual(
    cases.map(([line]) => [line, HTTP_VALUE_IMPORT.test(line)]),
    cases,
  );
  const offenders = productionFiles(SRC)
    .filter((f) => !f.endsWith('/lib/node/http.ts') && HTTP_VALUE_IMPORT.test(readFileSync(f, 'utf8')))
    .map((f) => relative(SRC, f));
  assert.deepEqual(offenders, []);
});
