// `bind` answers no queries: its whole effect is the list of addresses it leaves in the block's
// settings for the listeners (src/plugins/pkg/bindaddresses.ts works them out).

import type { Plugin } from '../../server/plugin.js';

export class BindPlugin implements Plugin {
  readonly name = 'bind';

  constructor(readonly addresses: readonly string[]) {}
}
