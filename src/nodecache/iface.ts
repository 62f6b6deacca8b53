// `--setup-interface`: the dummy interface NodeLocal DNSCache creates so its link-local address
// exists on the node (169.254.20.10/32 on `nodelocaldns`). Made with iproute2's `ip`, undone on
// exit: an interface we created is deleted, an address we added to an existing one is removed.
// A kernel built without the dummy driver gets a bridge without ports instead: it holds local
// addresses the same way and, having no ports, sends nothing anywhere.

import { execFile } from 'node:child_process';
import { isIPv6 } from 'node:net';
import { promisify } from 'node:util';

/** Runs `ip ARGS...`; rejects with `ip`'s own message. */
export type IpRunner = (args: string[]) => Promise<string>;

const execFileAsync = promisify(execFile);

export const runIp: IpRunner = async (args) => {
  try {
    const { stdout } = await execFileAsync('ip', args, { timeout: 10_000 });
    return stdout;
  } catch (e) {
    const err = e as { code?: string | number; stderr?: string; message: string };
    if (err.code === 'ENOENT') throw new Error('the ip command (iproute2) is not installed');
    throw new Error((err.stderr ?? '').trim() || err.message);
  }
};

export interface InterfaceHandle {
  readonly name: string;
  /** Whether this process created the interface (and so deletes it). */
  readonly created: boolean;
  /** The link type created ('dummy', or 'bridge' where the kernel has no dummy driver); undefined when it existed. */
  readonly kind?: 'dummy' | 'bridge';
  /** Addresses this process added (removed again when the interface stays). */
  readonly added: readonly string[];
  teardown(): Promise<void>;
}

function prefix(ip: string): string {
  return isIPv6(ip) ? `${ip}/128` : `${ip}/32`;
}

/** Whether a link of that name exists. */
export async function interfaceExists(name: string, ip: IpRunner = runIp): Promise<boolean> {
  try {
    await ip(['link', 'show', 'dev', name]);
    return true;
  } catch {
    return false;
  }
}

/** Deletes the link whoever made it (node-cache's teardown: the interface is the DaemonSet's, not one pod's). */
export async function removeInterface(name: string, ip: IpRunner = runIp): Promise<void> {
  if (await interfaceExists(name, ip)) await ip(['link', 'del', 'dev', name]);
}

/** Creates the link: a dummy, else (no dummy driver in this kernel) a bridge without ports. */
async function createLink(ip: IpRunner, name: string): Promise<'dummy' | 'bridge'> {
  try {
    await ip(['link', 'add', name, 'type', 'dummy']);
    return 'dummy';
  } catch (e) {
    if (!/unknown device type|not supported/i.test((e as Error).message)) throw e;
  }
  await ip(['link', 'add', name, 'type', 'bridge']);
  return 'bridge';
}

export async function setupInterface(name: string, addresses: readonly string[], ip: IpRunner = runIp): Promise<InterfaceHandle> {
  const created = !(await interfaceExists(name, ip));
  const added: string[] = [];
  let kind: 'dummy' | 'bridge' | undefined;
  const undo = async (): Promise<void> => {
    if (created) {
      await ip(['link', 'del', 'dev', name]).catch(() => undefined);
      return;
    }
    for (const a of added) await ip(['addr', 'del', prefix(a), 'dev', name]).catch(() => undefined);
  };
  try {
    if (created) kind = await createLink(ip, name);
    for (const a of addresses) {
      try {
        // nodad: a link-local address must be usable at once, not after duplicate detection.
        await ip(isIPv6(a) ? ['addr', 'add', prefix(a), 'dev', name, 'nodad'] : ['addr', 'add', prefix(a), 'dev', name]);
        added.push(a);
      } catch (e) {
        // Already there (a restart after a crash): fine, and not ours to remove.
        if (!/exists|already assigned/i.test((e as Error).message)) throw e;
      }
    }
    await ip(['link', 'set', 'dev', name, 'up']);
  } catch (e) {
    await undo();
    throw new Error(`--setup-interface: ${name}: ${(e as Error).message}`);
  }
  let done = false;
  return {
    name,
    created,
    ...(kind ? { kind } : {}),
    added,
    teardown: async () => {
      if (done) return;
      done = true;
      await undo();
    },
  };
}
