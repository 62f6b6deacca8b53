// Plugins share a kit, not each other: a file in one plugin's folder may import its own folder,
// the kit (src/plugins/pkg/) and the kubernetes plugin's public interface
// (src/plugins/kubernetes/index.ts), and nothing else under src/plugins/. The kit itself
// imports no plugin. Tests count too: a plugin's tests that need another plugin's internals
// are in the wrong folder.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const PLUGINS_DIR = fileURLToPath(new URL('./', import.meta.url));

/** The files every plugin may import, besides its own folder's. */
const SHARED = { kit: 'pkg', kubernetesInterface: 'kubernetes/index' } as const;

/** Module specifiers of a TypeScript text: static imports, re-exports, side-effect and dynamic imports. */
function importedSpecifiers(text: string): string[] {
  // Comments that start a line (a string may hold `/*` or `//`, a line of code never starts with them).
  const code = text.replace(/^\s*\/\*[\s\S]*?\*\//gm, '').replace(/^\s*\/\/.*$/gm, '');
  const clause = String.raw`(?:type\s+)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+[\w$]+))?)`;
  const patterns = [
    new RegExp(String.raw`^\s*(?:import|export)\s+${clause}\s+from\s*(['"])([^'"]+)\1`, 'gm'),
    /^\s*import\s*(['"])([^'"]+)\1/gm,
    /\bimport\(\s*(['"])([^'"]+)\1\s*\)/g,
  ];
  return patterns.flatMap((p) => [...code.matchAll(p)].map((m) => m[2] as string));
}

/**
 * Why `specifier`, imported by `file` (a path relative to src/plugins/), breaks the rule, or
 * undefined when it keeps it. Only relative specifiers can reach another plugin.
 */
function forbiddenImport(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const from = file.split('/')[0] as string;
  const target = posix.normalize(posix.join(posix.dirname(file), specifier));
  if (target.startsWith('../')) return undefined; // outside src/plugins/: server, dns, cluster, ...
  const [folder, ...rest] = target.split('/');
  if (rest.length === 0 || folder === from) return undefined; // a top-level file, or its own folder
  const module = target.replace(/\.(js|ts)$/, '');
  if (folder === SHARED.kit) return undefined;
  if (from === SHARED.kit) return `the kit imports plugin file ${target}`;
  if (module === SHARED.kubernetesInterface) return undefined;
  return `imports ${target}, a file of plugin ${folder} (use src/plugins/pkg/, or kubernetes/index.ts)`;
}

/** Every .ts file inside a plugin folder (or the kit), relative to src/plugins/. */
function pluginFiles(): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(PLUGINS_DIR, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const rel = posix.relative(PLUGINS_DIR, posix.join(entry.parentPath, entry.name));
    if (rel.includes('/')) out.push(rel);
  }
  return out.sort();
}

describe('plugin imports', () => {
  test('every import line of every plugin file keeps to its folder, the kit and kubernetes/index.ts', () => {
    const files = pluginFiles();
    assert.ok(files.length > 100, `only ${files.length} plugin files found under ${PLUGINS_DIR}`);
    const broken = files.flatMap((file) =>
      importedSpecifiers(readFileSync(posix.join(PLUGINS_DIR, file), 'utf8')).flatMap((s) => {
        const why = forbiddenImport(file, s);
        return why === undefined ? [] : [`${file}: ${why}`];
      }),
    );
    assert.deepEqual(broken, []);
  });

  test('import lines are found in every form', () => {
    const cases: Array<{ name: string; text: string; want: string[] }> = [
      { name: 'named', text: "import { a, b } from '../x/y.js';", want: ['../x/y.js'] },
      { name: 'type only, over several lines', text: "import type {\n  A,\n  B,\n} from '../x/y.js';", want: ['../x/y.js'] },
      { name: 'default and namespace', text: "import d from './d.js';\nimport * as rr from '../../dns/rr.js';", want: ['./d.js', '../../dns/rr.js'] },
      { name: 'default with named', text: "import d, { e } from './d.js';", want: ['./d.js'] },
      { name: 're-exports', text: "export { a } from './a.js';\nexport * from './b.js';\nexport type { C } from './c.js';", want: ['./a.js', './b.js', './c.js'] },
      { name: 'side effect', text: "import '../x/setup.js';", want: ['../x/setup.js'] },
      { name: 'dynamic', text: "const m = await import('../x/setup.js');", want: ['../x/setup.js'] },
      { name: 'commented out', text: "// import { a } from '../x/y.js';\n/* import { b } from '../x/z.js'; */", want: [] },
      { name: 'a Corefile import line in a string', text: "const corefile = `.:53 {\\n  import other.conf\\n}`;", want: [] },
      { name: 'code that is no import statement', text: "export const from = 'x';\nexport function f(): void {}", want: [] },
    ];
    for (const c of cases) assert.deepEqual(importedSpecifiers(c.text), c.want, c.name);
  });

  test('which targets are allowed', () => {
    const cases: Array<{ file: string; specifier: string; allowed: boolean }> = [
      { file: 'acl/setup.ts', specifier: './handler.js', allowed: true },
      { file: 'acl/setup.ts', specifier: '../pkg/zones.js', allowed: true },
      { file: 'acl/setup.ts', specifier: '../../corefile/args.js', allowed: true },
      { file: 'acl/setup.ts', specifier: 'node:fs', allowed: true },
      { file: 'acl/setup.ts', specifier: '../kubernetes/index.js', allowed: true },
      { file: 'acl/setup.ts', specifier: '../kubernetes/config.js', allowed: false },
      { file: 'acl/setup.ts', specifier: '../loadbalance/prefer.js', allowed: false },
      { file: 'acl/acl.test.ts', specifier: '../hosts/setup.js', allowed: false },
      { file: 'kubernetes/testdata/x.ts', specifier: '../config.js', allowed: true },
      { file: 'pkg/zones.ts', specifier: './fallthrough.js', allowed: true },
      { file: 'pkg/zones.ts', specifier: '../../dns/name.js', allowed: true },
      { file: 'pkg/zones.ts', specifier: '../hosts/table.js', allowed: false },
      { file: 'pkg/zones.ts', specifier: '../kubernetes/index.js', allowed: false },
    ];
    for (const c of cases) assert.equal(forbiddenImport(c.file, c.specifier) === undefined, c.allowed, `${c.file} → ${c.specifier}`);
  });
});
