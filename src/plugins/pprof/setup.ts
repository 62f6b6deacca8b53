// `pprof [ADDRESS] { block [RATE] }`: Go's runtime profiler over HTTP. kdns runs on Node.js and
// has no Go profile to serve: the directive is checked, accepted with a warning, and opens no
// port (profile kdns with `node --cpu-prof` or `--inspect` instead).
import { argPosition, blockProperties, expectArgs, parseIntArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { oncePerBlock } from '../pkg/once.js';

export function parsePprof(d: Directive): string {
  const [address = 'localhost:6053'] = expectArgs(d, 0, 1);
  if (!/^(\[[0-9a-fA-F:.]+\]|[^:\s]*):\d{1,5}$/.test(address)) {
    throw CorefileError.at(argPosition(d, 0), `invalid pprof address "${address}" (expected HOST:PORT)`);
  }
  for (const p of blockProperties(d, 'pprof')) {
    if (p.name !== 'block') unknownProperty(p, 'pprof');
    const [rate] = expectArgs(p, 0, 1);
    if (rate !== undefined) parseIntArg(rate, argPosition(p, 0), { what: 'block rate', min: 1 });
  }
  return address;
}

export const setup: SetupFn = (ctx) => {
  oncePerBlock(ctx, 'pprof');
  const address = parsePprof(ctx.directive);
  ctx.shared.log.plugin('pprof').warn(`kdns has no Go profiler: ${address} is not opened (use node --cpu-prof or --inspect to profile)`);
  return { name: 'pprof' };
};
