// Writing the hosts file safely. The normal path is atomic: a temp file beside it, fsync, rename,
// so a reader sees the old file or the new one, never half of each. In a pod the hosts file is a
// single-file bind mount, where rename fails (EBUSY) and the directory may be read-only: then the
// file is rewritten in place, and read back to prove the write landed. Both paths run under a
// lock file, so two writers (a rolling update's old and new pod) never interleave.

import { randomBytes } from 'node:crypto';
import { chmod, chown, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export type WriteMethod = 'rename' | 'in-place';

export class LockTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LockTimeoutError';
  }
}

export interface LockOptions {
  /** Give up after this long. Default 10 s. */
  timeoutMs?: number;
  /** A lock older than this was left by a writer that died; take it over. Default 30 s. */
  staleMs?: number;
}

/** Runs `fn` while holding `lockPath` (created exclusively; removed after). */
export async function withLock<T>(lockPath: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  const staleMs = opts.staleMs ?? 30_000;
  const token = `${process.pid} ${randomBytes(6).toString('hex')}\n`;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      await writeFile(lockPath, token, { flag: 'wx', mode: 0o600 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    await removeIfStale(lockPath, staleMs);
    if (Date.now() > deadline) throw new LockTimeoutError(`${lockPath}: still locked after ${opts.timeoutMs ?? 10_000} ms`);
    await sleep(wait + Math.random() * wait);
  }
  try {
    return await fn();
  } finally {
    // Only remove the lock if it is still ours (a stale-lock takeover may have replaced it).
    const now = await readFile(lockPath, 'utf8').catch(() => '');
    if (now === token) await unlink(lockPath).catch(() => undefined);
  }
}

async function removeIfStale(lockPath: string, staleMs: number): Promise<void> {
  try {
    const st = await stat(lockPath);
    if (Date.now() - st.mtimeMs > staleMs) await unlink(lockPath);
  } catch {
    // Gone already, or not ours to remove: the next attempt will tell.
  }
}

/** Replaces the file's content with `content`; returns how. Throws when the content cannot be made to stick. */
export async function writeHostsFile(path: string, content: string): Promise<WriteMethod> {
  if (await renameInto(path, content)) return 'rename';
  await rewriteInPlace(path, content);
  return 'in-place';
}

/** The atomic path; false when it cannot be used here (read-only directory, bind-mounted file). */
async function renameInto(path: string, content: string): Promise<boolean> {
  const temp = join(dirname(path), `.${basename(path)}.kdns-${process.pid}-${randomBytes(4).toString('hex')}`);
  let created = false;
  try {
    const st = await stat(path);
    const fh = await open(temp, 'wx', st.mode & 0o7777);
    created = true;
    try {
      await fh.writeFile(content);
      await fh.sync();
    } finally {
      await fh.close();
    }
    // open() applied the umask; the hosts file must stay readable by everyone as before.
    await chmod(temp, st.mode & 0o7777);
    await chown(temp, st.uid, st.gid).catch(() => undefined);
    await rename(temp, path);
    return true;
  } catch {
    if (created) await unlink(temp).catch(() => undefined);
    return false;
  }
}

async function rewriteInPlace(path: string, content: string): Promise<void> {
  const bytes = Buffer.from(content);
  const fh = await open(path, 'r+');
  try {
    await fh.write(bytes, 0, bytes.length, 0);
    await fh.truncate(bytes.length);
    await fh.sync();
  } finally {
    await fh.close();
  }
  const back = await readFile(path);
  if (!back.equals(bytes)) throw new Error(`${path}: read back after an in-place write differs from what was written`);
}
