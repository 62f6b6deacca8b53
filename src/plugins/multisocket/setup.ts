import type { Plugin, SetupFn } from '../../server/plugin.js';
import { parseMultisocket, usableCpus } from '../pkg/multisocket.js';

/**
 * `multisocket` answers no queries: it leaves the block's worker count in its settings. The
 * parent process has already started that many workers (src/supervisor/); each serves the block
 * on sockets of its own, and a worker past the count leaves the block to the others.
 */
class MultisocketPlugin implements Plugin {
  readonly name = 'multisocket';
}

export const setup: SetupFn = (ctx) => {
  ctx.block.settings.sockets = parseMultisocket(ctx.directive, usableCpus());
  return new MultisocketPlugin();
};
