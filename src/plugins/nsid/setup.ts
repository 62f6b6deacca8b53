import { hostname } from 'node:os';
import { noBlockAllowed } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { oncePerBlock } from '../pkg/once.js';
import { NsidPlugin } from './handler.js';

/** `nsid [DATA...]`: the identifier is the words of DATA joined by spaces, or the host name. */
export function parseNsid(d: Directive, host: string = hostname()): string {
  noBlockAllowed(d);
  return d.args.length > 0 ? d.args.join(' ') : host;
}

export const setup: SetupFn = (ctx) => {
  oncePerBlock(ctx, 'nsid');
  return new NsidPlugin(parseNsid(ctx.directive));
};
