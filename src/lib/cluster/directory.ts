// The embedded source: a folder of Kubernetes manifests, watched. Each file is applied as a unit:
// a file that fails to parse is reported (path and line) and whatever it held before stays in
// the store; a file that parses is diffed against what it held, so editing one Service in a
// 10,000-service file changes one Service in the store.

import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fork, type ChildProcess } from 'node:child_process';
import { isManifestFile } from './manifestfiles.js';
import { scanManifests, type ManifestEntry, type ManifestScan } from './manifestscan.js';
import { formatManifestError, type ManifestError } from './manifesttext.js';
import type { ParsedFile, ParseRequest } from './manifestparser.js';
import { silentLog, type ClusterSource, type SourceLog } from './source.js';
import { objectKey } from './keys.js';
import { ClusterStore, type VersionedObject } from './store.js';
import type { ClusterObject } from './types.js';

export interface DirectorySourceOptions {
  log?: SourceLog;
  /** Wait after a file-system event before rescanning, so a burst of writes is read once. */
  debounceMs?: number;
  /** Safety-net rescan interval, for file systems where watch events do not arrive (0 = off). */
  pollMs?: number;
  /**
   * Kinds the reader has no use for (pods unless `pods verified`): skipped as they are read, so
   * 150,000 pods in the folder cost no memory when no block asks about them.
   */
  ignoreKinds?: ReadonlySet<string>;
  /** Only the Pods scheduled on this node (`spec.nodeName`) are kept; others are left out as if absent. */
  nodeName?: string;
  /**
   * A changed file is read once it has not changed for this long, so a file being written is
   * not applied half-written (a partial YAML often parses, and would drop what the rest defines).
   * Only after the first sync: at start the folder's files are taken as they are.
   */
  settleMs?: number;
  /** Files larger than this are not read: an error says so, and what they held stays. */
  maxFileBytes?: number;
  /** Files larger than this are read and parsed in a child process, off the event loop. */
  parserProcessAboveBytes?: number;
}

export const DEFAULT_MAX_FILE_BYTES = 256 * 2 ** 20;

const BYTE_UNITS: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/**
 * The size limit from KDNS_CLUSTER_MAX_FILE_BYTES: bytes, or with a Ki/Mi/Gi suffix as
 * Kubernetes quantities are written ("64Mi"); the default when unset.
 */
export function maxFileBytesFrom(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_MAX_FILE_BYTES;
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(value.trim());
  const bytes = m ? Number(m[1]) * (BYTE_UNITS[m[2] ?? ''] as number) : NaN;
  if (!(bytes > 0)) throw new Error(`KDNS_CLUSTER_MAX_FILE_BYTES: invalid size "${value}" (bytes, or a number with Ki, Mi or Gi)`);
  return bytes;
}
const DEFAULT_SETTLE_MS = 150;
// The YAML parser reads well under 1 MB/s here when cold: 16 KiB holds the loop for ~30 ms.
const DEFAULT_PARSER_PROCESS_ABOVE_BYTES = 16 * 2 ** 10;

/** The parser's module, beside this one (.ts under tsx, .js once built). */
const fromSource = import.meta.url.endsWith('.ts');
const PARSER_PATH = fileURLToPath(new URL(fromSource ? './manifestparser.ts' : './manifestparser.js', import.meta.url));

/**
 * Who defines an object and what it looked like, packed in one number: the low 21 bits are the
 * file's index, the rest 32 bits of the content hash. A number per object instead of an object
 * per object (100,000 of them); two versions of one object share 32 hash bits by chance once
 * in four billion edits.
 */
const FILE_BITS = 2 ** 21;

function pack(fileIndex: number, fp: number): number {
  return (fp % 2 ** 32) * FILE_BITS + fileIndex;
}

function fileOf(packed: number): number {
  return packed % FILE_BITS;
}

interface FileState {
  /** Identity of the version we last read: mtime, size, inode, ctime. */
  stamp: string;
  /** How many objects the file contributes (from the last version that parsed). */
  count: number;
  errors: ManifestError[];
}

interface Tree {
  dirs: string[];
  files: string[];
}

async function walk(root: string): Promise<Tree> {
  const tree: Tree = { dirs: [], files: [] };
  const visit = async (dir: string, top: boolean): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (top) throw err;
      return; // removed while we walked
    }
    tree.dirs.push(dir);
    for (const e of entries) {
      if (e.name.startsWith('.')) continue; // editor swap files, ..data symlink farms of ConfigMap mounts
      const p = join(dir, e.name);
      if (e.isDirectory()) await visit(p, false);
      else if (isManifestFile(e.name)) tree.files.push(p);
    }
  };
  await visit(root, true);
  tree.files.sort();
  return tree;
}

/** A file as log lines name it: relative to the working directory, as the user gave it. */
function shownPath(file: string): string {
  return relative(process.cwd(), file) || file;
}

/**
 * Runs manifestparser on one file in a child process; `track` holds the child while it runs
 * (stop() ends it). The child exits when it has answered, and all its memory with it.
 */
function scanInChild(req: ParseRequest, track: Set<ChildProcess>): Promise<ManifestScan | { readError: string }> {
  return new Promise((resolve) => {
    // Only tsx (when running from source) is passed on: the parser needs none of kdns's flags.
    const child = fork(PARSER_PATH, [JSON.stringify(req)], { serialization: 'advanced', execArgv: fromSource ? ['--import', 'tsx'] : [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    track.add(child);
    let answer: ManifestScan | { readError: string } | undefined;
    child.once('message', (parsed) => (answer = scanOf(parsed as ParsedFile)));
    child.once('error', (err) => (answer ??= { readError: `parser process failed: ${err.message}` }));
    child.once('exit', (code, signal) => {
      track.delete(child);
      resolve(answer ?? { readError: `parser process ended (${signal ?? `exit code ${code}`}) without an answer` });
    });
  });
}

/** The parser's answer as the scan kdns applies; objects are parsed only if asked for. */
function scanOf(parsed: ParsedFile): ManifestScan | { readError: string } {
  if ('readError' in parsed) return parsed;
  const { ids, fingerprints, json, ends } = parsed.objects;
  const entries: ManifestEntry[] = [];
  let i = 0;
  for (const id of ids === '' ? [] : ids.split('\n')) {
    const [kind, namespace, name] = id.split('\t') as [ClusterObject['kind'], string, string];
    const start = i === 0 ? 0 : (ends[i - 1] as number);
    const end = ends[i] as number;
    entries.push({
      kind,
      namespace: namespace === '' ? undefined : namespace,
      name,
      fingerprint: fingerprints[i] as number,
      load: () => JSON.parse(json.slice(start, end)) as ClusterObject,
    });
    i++;
  }
  return { errors: parsed.errors, entries };
}

/**
 * How long the apply of a file may hold the event loop before it lets queries in: a file of
 * 100,000 Services takes seconds to apply, and answers must not wait for it.
 */
const APPLY_SLICE_MS = 10;

/** Resolves after the I/O that is waiting (queries) has been handled. */
const yieldToIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Calls `each` on every item, yielding to I/O whenever a slice of APPLY_SLICE_MS is used up. */
async function inSlices<T>(items: Iterable<T>, each: (item: T) => void): Promise<void> {
  let sliceStart = performance.now();
  let n = 0;
  for (const item of items) {
    each(item);
    if (++n % 64 === 0 && performance.now() - sliceStart > APPLY_SLICE_MS) {
      await yieldToIo();
      sliceStart = performance.now();
    }
  }
}

export class DirectorySource implements ClusterSource {
  readonly description: string;
  private readonly log: SourceLog;
  private readonly debounceMs: number;
  private readonly pollMs: number;
  private readonly ignoreKinds: ReadonlySet<string>;
  private readonly nodeName: string | undefined;
  private readonly files = new Map<string, FileState>();
  // Which file holds each object, and its content hash, is the object's version in the store
  // (pack()): no second map of 100,000 keys here, and removing a duplicate from one file does
  // not drop the copy another file defines.
  /** File paths by index (see pack()); indexes are never reused. */
  private readonly fileIndex = new Map<string, number>();
  private readonly filePaths: string[] = [];
  private readonly watchers = new Map<string, FSWatcher>();
  private debounceTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private rerun = false;
  private stopped = false;
  private scans = 0;
  private readonly scanWaiters: Array<() => void> = [];
  private readonly settleMs: number;
  private readonly maxFileBytes: number;
  private readonly parserProcessAboveBytes: number;
  private readonly parsers = new Set<ChildProcess>();
  /** Changed files not read yet because they were still changing: the stamp seen and since when. */
  private readonly unsettled = new Map<string, { stamp: string; since: number }>();

  constructor(
    readonly dir: string,
    readonly store: ClusterStore = new ClusterStore(),
    opts: DirectorySourceOptions = {},
  ) {
    this.description = `directory ${dir}`;
    this.log = opts.log ?? silentLog;
    this.debounceMs = opts.debounceMs ?? 30;
    this.pollMs = opts.pollMs ?? 2000;
    this.ignoreKinds = opts.ignoreKinds ?? new Set();
    this.nodeName = opts.nodeName;
    this.settleMs = opts.settleMs ?? DEFAULT_SETTLE_MS;
    this.maxFileBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.parserProcessAboveBytes = opts.parserProcessAboveBytes ?? DEFAULT_PARSER_PROCESS_ABOVE_BYTES;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.rescan();
    this.store.markSynced();
    const c = this.store.counts();
    this.log.info(`${this.description}: loaded ${c.services} services, ${c.endpointGroups} endpoint groups, ${c.pods} pods, ${c.namespaces} namespaces from ${this.files.size} files`);
    if (this.pollMs > 0 && !this.stopped) {
      this.pollTimer = setInterval(() => this.schedule(0), this.pollMs);
      this.pollTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.debounceTimer = undefined;
    this.pollTimer = undefined;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    for (const p of this.parsers) p.kill();
    await this.running;
  }

  /** Errors of files whose latest version did not parse (their previous objects are still served). */
  currentErrors(): ManifestError[] {
    return [...this.files.values()].flatMap((f) => f.errors);
  }

  /** Resolves after the next complete rescan (tests; `kdns` status). */
  nextScan(): Promise<void> {
    return new Promise((resolve) => this.scanWaiters.push(resolve));
  }

  /** Rescans now (or right after the scan in progress). */
  rescan(): Promise<void> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.rerun = false;
          await this.scanOnce();
        } while (this.rerun && !this.stopped);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private schedule(delay: number = this.debounceMs): void {
    if (this.stopped) return;
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      void this.rescan();
    }, delay);
  }

  private async scanOnce(): Promise<void> {
    let tree: Tree;
    try {
      tree = await walk(this.dir);
    } catch (err) {
      // The folder itself is gone or unreadable: keep serving what we have, say why once per scan.
      this.log.error(`${this.description}: cannot read: ${(err as Error).message}`);
      this.finishScan();
      return;
    }
    this.watchDirs(tree.dirs);
    // Until the first sync nothing relies on a whole view (names not found are SERVFAIL), so each
    // file is applied as soon as it is read and its text let go. Reading every file first held
    // them all at once: 110 MB of text for 100,000 Services and 150,000 Pods.
    const applyAsRead = !this.store.synced;
    const loaded: Array<{ file: string; stamp: string; scan: ManifestScan }> = [];
    let recheckIn = Infinity;
    for (const file of tree.files) {
      let stamp: string;
      let size: number;
      let mtimeMs: number;
      try {
        const s = await stat(file);
        stamp = `${s.mtimeMs}:${s.size}:${s.ino}:${s.ctimeMs}`;
        size = s.size;
        mtimeMs = s.mtimeMs;
      } catch {
        continue; // vanished between readdir and stat: handled as removed below
      }
      if (this.files.get(file)?.stamp === stamp) continue;
      const wait = this.settleWait(file, stamp, mtimeMs);
      if (wait > 0) {
        recheckIn = Math.min(recheckIn, wait);
        continue;
      }
      if (size > this.maxFileBytes) {
        this.reportErrors(file, stamp, [{ file, line: 0, message: `not read: ${size} bytes, over the limit of ${this.maxFileBytes} (KDNS_CLUSTER_MAX_FILE_BYTES)` }]);
        continue;
      }
      const scan = await this.read(file, size);
      if (this.stopped) break;
      if ('readError' in scan) {
        this.reportErrors(file, stamp, [{ file, line: 0, message: `cannot read: ${scan.readError}` }]);
        continue;
      }
      // Written to while we read it: what we have may be half of it; the settle wait starts over.
      if (this.store.synced && (await this.stampOf(file)) !== stamp) {
        recheckIn = Math.min(recheckIn, this.settleMs);
        continue;
      }
      if (applyAsRead) await this.store.batchAsync(() => this.applyFile(file, stamp, scan));
      else loaded.push({ file, stamp, scan });
    }
    const present = new Set(tree.files);
    for (const file of this.unsettled.keys()) if (!present.has(file)) this.unsettled.delete(file);
    // Apply synchronously so the store changes in one step per scan (one delta for caches).
    await this.store.batchAsync(async () => {
      for (const { file, stamp, scan } of loaded) await this.applyFile(file, stamp, scan);
      for (const file of [...this.files.keys()]) {
        if (!present.has(file)) await this.forgetFile(file);
      }
    });
    if (recheckIn !== Infinity) this.schedule(recheckIn);
    this.finishScan();
  }

  /** 0 when a changed file may be read now; else how long until it may have settled. */
  private settleWait(file: string, stamp: string, mtimeMs: number): number {
    if (!this.store.synced || this.settleMs <= 0) return 0;
    const now = Date.now();
    // Last written long enough ago (a finished file moved in, a ConfigMap's atomic swap).
    if (mtimeMs <= now - this.settleMs) {
      this.unsettled.delete(file);
      return 0;
    }
    const seen = this.unsettled.get(file);
    if (seen?.stamp === stamp) {
      // Unchanged since we first saw it, whatever its mtime says (a clock ahead of ours).
      const left = seen.since + this.settleMs - now;
      if (left <= 0) this.unsettled.delete(file);
      return Math.max(0, left);
    }
    this.unsettled.set(file, { stamp, since: now });
    return Math.min(this.settleMs, mtimeMs + this.settleMs - now);
  }

  private async stampOf(file: string): Promise<string | undefined> {
    try {
      const s = await stat(file);
      return `${s.mtimeMs}:${s.size}:${s.ino}:${s.ctimeMs}`;
    } catch {
      return undefined;
    }
  }

  /** Reads and scans one file: here when small, in a child process when large. */
  private async read(file: string, size: number): Promise<ManifestScan | { readError: string }> {
    if (size > this.parserProcessAboveBytes) return scanInChild({ file, skipKinds: [...this.ignoreKinds] }, this.parsers);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      return { readError: (err as Error).message };
    }
    return scanManifests(text, file, this.ignoreKinds);
  }

  private finishScan(): void {
    this.scans++;
    const waiters = this.scanWaiters.splice(0);
    for (const w of waiters) w();
  }

  private watchDirs(dirs: string[]): void {
    if (this.stopped) return;
    const wanted = new Set(dirs);
    for (const [d, w] of this.watchers) {
      if (!wanted.has(d)) {
        w.close();
        this.watchers.delete(d);
      }
    }
    for (const d of dirs) {
      if (this.watchers.has(d)) continue;
      try {
        const w = watch(d, { persistent: false }, () => this.schedule());
        w.on('error', () => {
          w.close();
          this.watchers.delete(d);
          this.schedule();
        });
        this.watchers.set(d, w);
      } catch {
        // No watch support here (some network file systems): the poll timer still sees changes.
      }
    }
  }

  private reportErrors(file: string, stamp: string, errors: ManifestError[]): void {
    const state = this.files.get(file);
    const shown = shownPath(file);
    for (const e of errors) this.log.error(formatManifestError({ ...e, file: shown }));
    if (state) {
      state.stamp = stamp;
      state.errors = errors;
      if (state.count > 0) this.log.warn(`${shown}: keeping the ${state.count} objects from its last good version`);
    } else {
      this.files.set(file, { stamp, count: 0, errors });
    }
  }

  /**
   * Applies one file's objects: the store's subscribers get one delta for the scan (batchAsync),
   * though queries answered between two slices may already see part of a large file.
   */
  private async applyFile(file: string, stamp: string, result: ManifestScan): Promise<void> {
    if (result.errors.length > 0) {
      this.reportErrors(file, stamp, result.errors);
      return;
    }
    const before = this.files.get(file);
    const index = this.indexOf(file);
    const seen = new Set<string>();
    const counts = { added: 0, changed: 0, removed: 0 };
    await inSlices(result.entries, (entry) => {
      if (this.ignoreKinds.has(entry.kind)) return;
      const key = objectKey(entry.kind, entry.namespace, entry.name);
      const value = pack(index, entry.fingerprint);
      const h = this.store.versionOf(key);
      if (h === value) {
        seen.add(key);
        return;
      }
      const obj = entry.load();
      // A pod of another node is left out; one that moved there is removed below (not seen).
      if (this.nodeName !== undefined && obj.kind === 'Pod' && obj.spec?.nodeName !== this.nodeName) return;
      seen.add(key);
      if (typeof h === 'number' && fileOf(h) !== index && this.files.has(this.filePaths[fileOf(h)] as string)) {
        this.log.warn(`${file}: ${key} is also defined in ${this.filePaths[fileOf(h)]}; using the one from ${file}`);
      }
      this.store.upsert(obj, value);
      counts[h === undefined ? 'added' : 'changed']++;
    });
    if (before && before.count > 0) {
      await inSlices(this.fileObjects(index), (o) => {
        if (!seen.has(objectKey(o.kind, o.namespace, o.name))) {
          this.store.remove(o.kind, o.namespace, o.name);
          counts.removed++;
        }
      });
    }
    this.files.set(file, { stamp, count: seen.size, errors: [] });
    // Every change after the first load is logged (the first load logs its totals).
    if (this.store.synced) {
      const again = before?.errors.length ? 'parses again, ' : '';
      this.log.info(`${shownPath(file)}: ${again}applied: ${counts.added} added, ${counts.changed} changed, ${counts.removed} removed`);
    }
  }

  private indexOf(file: string): number {
    let i = this.fileIndex.get(file);
    if (i === undefined) {
      i = this.filePaths.length;
      if (i >= FILE_BITS) throw new Error(`${this.description}: more than ${FILE_BITS} files seen`);
      this.filePaths.push(file);
      this.fileIndex.set(file, i);
    }
    return i;
  }

  private async forgetFile(file: string): Promise<void> {
    const state = this.files.get(file);
    if (!state) return;
    this.files.delete(file);
    const objects = state.count === 0 ? [] : this.fileObjects(this.indexOf(file));
    await inSlices(objects, (o) => this.store.remove(o.kind, o.namespace, o.name));
    this.log.info(`${shownPath(file)}: removed: ${objects.length} objects dropped`);
  }

  /** The objects the file with this index defined (collected first: removing them changes the store). */
  private fileObjects(index: number): VersionedObject[] {
    return [...this.store.versioned((v) => typeof v === 'number' && fileOf(v) === index)];
  }
}
