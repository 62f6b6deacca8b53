// `root PATH`: the folder relative file names of other plugins (file, hosts, tls, …) resolve
// against. kdns resolves them against the Corefile's folder; root is accepted and checked
// (it must be a folder) so Corefiles that set it load.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { expectArgs, noBlockAllowed } from '../../lib/corefile/args.js';
import type { SetupFn } from '../../server/plugin.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import { oncePerBlock } from '../pkg/once.js';

export function parseRoot(d: Directive, corefilePath: string): string {
  noBlockAllowed(d);
  const path = expectArgs(d, 1, 1)[0] as string;
  const full = corefileRelative(path, corefilePath);
  let isDir = false;
  try {
    isDir = statSync(full).isDirectory();
  } catch (e) {
    // CoreDNS only warns when the folder does not exist yet.
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return full;
    throw CorefileError.at(d, `root ${full}: ${(e as Error).message}`);
  }
  if (!isDir) throw CorefileError.at(d, `root ${full} is not a directory`);
  return full;
}

export const setup: SetupFn = (ctx) => {
  oncePerBlock(ctx, 'root');
  parseRoot(ctx.directive, ctx.corefilePath);
  return { name: 'root' };
};
