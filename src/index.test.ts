// The package as a user gets it: packed from this repository (its `files`, a fresh dist/),
// installed from the tarball into a new project (the install script builds the native socket),
// imported as `kdns` from plain ESM, and type-checked with TypeScript against its declarations.
// The README's Library example is compiled and run as written, and must print what it says.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

const hasNpm = spawnSync('npm', ['--version'], { stdio: 'ignore' }).status === 0;
const skip = !hasNpm && process.env['CI'] !== 'true' ? 'needs npm on PATH' : false;

/** The environment of a user's shell: none of the npm_* variables of an `npm test` around us. */
function userEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));
}

function run(cmd: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env: userEnv(), encoding: 'utf8', timeout: 120_000 });
}

function mustRun(cmd: string, args: string[], cwd: string): string {
  const r = run(cmd, args, cwd);
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} in ${cwd} exited ${String(r.status)}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The ```LANG block that follows `after` in the README's Library section. */
function readmeBlock(lang: string, afterText = ''): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Library'));
  const from = section.indexOf(afterText);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section.slice(from));
  assert.ok(m?.[1], `README's Library section has a \`\`\`${lang} block`);
  return m[1];
}

describe('the packed package, installed into a new project', { skip }, () => {
  let work: string;
  let app: string;
  let packedFiles: string[] = [];

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'kdns-package-'));
    const pkg = join(work, 'pkg');
    // What `npm pack` takes from the repository, but dist/, which is built here from the sources
    // (as the `prepare` script would) so the test needs no build beforehand.
    const listing = JSON.parse(mustRun('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT)) as Array<{ files: Array<{ path: string }> }>;
    for (const { path } of listing[0]?.files ?? []) {
      if (path.startsWith('dist/')) continue;
      mkdirSync(dirname(join(pkg, path)), { recursive: true });
      cpSync(join(ROOT, path), join(pkg, path));
    }
    mustRun(process.execPath, [TSC, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(pkg, 'dist')], ROOT);
    const packed = JSON.parse(mustRun('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], pkg)) as Array<{ filename: string; files: Array<{ path: string }> }>;
    packedFiles = (packed[0]?.files ?? []).map((f) => f.path);
    const tarball = join(work, packed[0]?.filename ?? '');

    app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    // Its dependencies come from npm's cache when they are there.
    mustRun('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], app);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          // The package's own declarations are checked too.
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
          outDir: 'out',
        },
        files: ['example.ts'],
      }),
    );
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the package carries no test code: no tests, test helpers, test data or benchmarks', () => {
    const testCode = packedFiles.filter((f) => /(^|\/)(test|testutil|testdata|bench)(\/|$)|\.test\.|fakeapi|testkit|(^|\/)bench\.[jt]s/.test(f));
    assert.deepEqual(testCode, []);
    // And it does carry the production build: the command's entry point and the library's.
    assert.deepEqual(['dist/cli/main.js', 'dist/index.js', 'dist/index.d.ts'].filter((f) => !packedFiles.includes(f)), []);
  });

  test('plain ESM imports `kdns` and computes with it', () => {
    writeFileSync(
      join(app, 'check.mjs'),
      `import * as kdns from 'kdns';
const host = kdns.parseHostResolvConf('nameserver 10.0.0.2\\nsearch corp.example\\n');
const pod = kdns.computePodDNS({ spec: { dnsPolicy: 'Default' }, namespace: 'ns' }, { host: host.config, clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', nodeIPs: [] });
const errors = kdns.validatePodObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { dnsPolicy: 'Sometimes', containers: [{ name: 'c', image: 'i' }] } }, undefined, { relaxedDNSSearchGate: true, clusterDomain: 'cluster.local' });
const blocks = kdns.parseCorefile('.:53 {\\n    whoami\\n}\\n', { file: 'Corefile' });
const wire = kdns.encodeMessage({ id: 7, qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, z: false, ad: false, cd: false, rcode: 0, questions: [{ name: 'a.example.', type: kdns.RRType.AAAA, class: 1 }], answers: [], authority: [], additional: [] });
let deep;
try { await import('kdns/dist/cli/main.js'); deep = 'imported'; } catch (e) { deep = e.code; }
console.log(JSON.stringify({
  resolvConf: kdns.renderResolvConf(pod.config),
  validation: errors.map(kdns.formatFieldError),
  corefile: blocks.map((b) => [b.keys, b.directives.map((d) => d.name)]),
  query: kdns.decodeMessage(wire).questions,
  deepImport: deep,
}));
`,
    );
    const out = JSON.parse(mustRun(process.execPath, ['check.mjs'], app)) as unknown;
    assert.deepEqual(out, {
      resolvConf: 'search corp.example\nnameserver 10.0.0.2\n',
      validation: ['spec.dnsPolicy: Unsupported value: "Sometimes": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom", "ClusterFirstWithAutopath"'],
      corefile: [[['.:53'], ['whoami']]],
      query: [{ name: 'a.example.', type: 28, class: 1 }],
      deepImport: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    });
  });

  test("README's Library example type-checks against the package and prints what the README says", () => {
    writeFileSync(join(app, 'example.ts'), readmeBlock('ts'));
    mustRun(process.execPath, [TSC, '-p', 'tsconfig.json'], app);
    assert.equal(mustRun(process.execPath, ['out/example.js'], app), readmeBlock('text', 'prints'));
  });

  test('the declarations are strict: a wrong argument type is a compile error', () => {
    writeFileSync(
      join(app, 'example.ts'),
      `import { computePodDNS } from 'kdns';
computePodDNS({ spec: {}, namespace: 42 }, { host: null, clusterDNS: [], clusterDomain: '', nodeIPs: [] });
`,
    );
    const r = run(process.execPath, [TSC, '-p', 'tsconfig.json', '--noEmit'], app);
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /example\.ts\(2,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
  });
});
