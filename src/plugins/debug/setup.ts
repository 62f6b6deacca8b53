// `debug`: errors thrown by plugins are no longer turned into SERVFAIL but end the process with
// their stack (so a crash is seen, not hidden), and debug log lines are printed. The listener
// and the logger read the block setting; the plugin itself takes no part in answering.

import { expectArgs, noBlockAllowed } from '../../lib/corefile/args.js';
import type { Plugin, SetupFn } from '../../server/plugin.js';

export const setup: SetupFn = (ctx) => {
  expectArgs(ctx.directive, 0, 0);
  noBlockAllowed(ctx.directive);
  ctx.block.settings.debug = true;
  const plugin: Plugin = { name: 'debug' };
  return plugin;
};
