// The reconcile loop's backend for a manifest directory (the embedded cluster of `kdns serve
// --cluster DIR`): the DNS resource and the Nodes are read from the directory's manifests, and
// the owned objects are written under DIR/generated/, one file each, plus generated/Corefile
// (the ConfigMap's key, as the DaemonSet would see it mounted) and the status.

import { watch } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { stringify } from 'yaml';
import { DNS_DEFAULT_NAME, DNS_KIND } from '../lib/cluster/dnsresource.js';
import type { DNSResource, DNSStatus } from '../lib/cluster/dnsresource.js';
import { isManifestFile } from '../lib/cluster/manifestfiles.js';
import { parseManifests } from '../lib/cluster/manifesttext.js';
import type { Node } from '../lib/cluster/types.js';
import { InputError, parseDocuments, readCurrentDir } from './io.js';
import type { OwnedObject } from './objects.js';
import type { ApplyResult, Backend, Inputs } from './reconcile.js';
import type { CurrentObjects } from './render.js';
import { isRecord } from './schema.js';

export const GENERATED_DIR = 'generated';
export const STATUS_FILE = 'dns-default-status.yaml';
export const COREFILE_FILE = 'Corefile';

const HEADER = '# Written by `kdns operator run`; edits are overwritten.\n';

/** The file an owned object is written to: "configmap-dns-default.yaml". */
export function objectFile(o: OwnedObject): string {
  return `${o.kind.toLowerCase()}-${o.metadata.name}.yaml`;
}

export function toYaml(value: unknown): string {
  return HEADER + stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** Manifest files under `dir`, skipping generated/ and hidden entries. */
async function manifestFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true });
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (d === dir && e.name === GENERATED_DIR) continue;
        await visit(p);
      } else if (isManifestFile(e.name)) out.push(p);
    }
  };
  await visit(dir);
  return out;
}

/** Writes `text` to `path` through a temp file and rename, so a reader never sees half of it. */
async function writeAtomic(path: string, text: string): Promise<void> {
  const temp = `${path}.tmp-${process.pid}`;
  await writeFile(temp, text);
  await rename(temp, path);
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export class DirectoryBackend implements Backend {
  readonly name: string;
  private readonly generated: string;

  constructor(private readonly dir: string) {
    this.name = `directory ${dir}`;
    this.generated = join(dir, GENERATED_DIR);
  }

  async read(): Promise<Inputs> {
    const problems: string[] = [];
    let dns: unknown;
    const nodes: Node[] = [];
    for (const file of await manifestFiles(this.dir)) {
      const text = await readFile(file, 'utf8');
      const shown = relative(this.dir, file);
      let docs;
      try {
        docs = parseDocuments(text, shown);
      } catch (e) {
        // A file that does not parse may be the DNS resource mid-edit: keep what is applied.
        problems.push(`${(e as Error).message}; the file is skipped`);
        continue;
      }
      for (const doc of docs) {
        if (!isRecord(doc.value) || doc.value['kind'] !== DNS_KIND) continue;
        const name = isRecord(doc.value['metadata']) ? doc.value['metadata']['name'] : undefined;
        if (name !== DNS_DEFAULT_NAME) problems.push(`${shown}:${doc.line}: DNS ${JSON.stringify(name)} ignored: the operator manages only "default"`);
        else if (dns !== undefined) problems.push(`${shown}:${doc.line}: a second DNS "default" ignored`);
        else dns = doc.value;
      }
      nodes.push(...parseManifests(text, shown).objects.filter((o): o is Node => o.kind === 'Node'));
    }
    let current: CurrentObjects = {};
    try {
      current = await readCurrentDir(this.generated);
    } catch (e) {
      if (!(e instanceof InputError) || !/ENOENT|no such file/.test(e.message)) throw e;
    }
    // The status lives beside the objects; reading it back keeps transition times stable.
    if (isRecord(dns)) dns = { ...dns, status: await this.readStatus() };
    // No Node manifests at all means the directory does not model nodes: skip the placement check.
    return { ...(dns === undefined ? {} : { dns }), ...(nodes.length > 0 ? { nodes } : {}), current, problems };
  }

  private async readStatus(): Promise<DNSStatus | undefined> {
    const text = await readIfExists(join(this.generated, STATUS_FILE));
    if (text === undefined) return undefined;
    try {
      const doc = parseDocuments(text, STATUS_FILE)[0]?.value;
      return isRecord(doc) && isRecord(doc['status']) ? (doc['status'] as unknown as DNSStatus) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Writes each object whose file differs (a hand edit of a generated file is put back). */
  async apply(objects: readonly OwnedObject[]): Promise<ApplyResult> {
    await mkdir(this.generated, { recursive: true });
    const written: string[] = [];
    for (const o of objects) {
      if (await this.writeIfChanged(objectFile(o), toYaml(o))) written.push(`${o.kind}/${o.metadata.name}`);
      if (o.kind === 'ConfigMap' && o.data['Corefile'] !== undefined) await this.writeIfChanged(COREFILE_FILE, o.data['Corefile']);
    }
    return { written, failed: [] };
  }

  async writeStatus(dns: DNSResource, status: DNSStatus): Promise<boolean> {
    await mkdir(this.generated, { recursive: true });
    const doc = { apiVersion: dns.apiVersion, kind: dns.kind, metadata: { name: dns.metadata.name }, status };
    return this.writeIfChanged(STATUS_FILE, toYaml(doc));
  }

  private async writeIfChanged(name: string, text: string): Promise<boolean> {
    const path = join(this.generated, name);
    if ((await readIfExists(path)) === text) return false;
    await writeAtomic(path, text);
    return true;
  }
}

/**
 * Wake-ups for changes under `dir` (generated/ excluded: those are our own writes), debounced so
 * an editor's burst of writes is one pass.
 */
export async function* watchDirectory(dir: string, signal: AbortSignal, debounceMs = 150): AsyncGenerator<void> {
  let wake: (() => void) | undefined;
  let dirty = false;
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dir, { recursive: true, signal }, (_event, filename) => {
    const f = filename?.toString() ?? '';
    if (f === GENERATED_DIR || f.startsWith(`${GENERATED_DIR}${sep}`)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      dirty = true;
      wake?.();
    }, debounceMs);
  });
  watcher.on('error', () => undefined);
  const onAbort = (): void => wake?.();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    while (!signal.aborted) {
      if (!dirty) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      if (signal.aborted) return;
      dirty = false;
      yield;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    clearTimeout(timer);
    watcher.close();
  }
}
