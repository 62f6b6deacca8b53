// `maxtcpqueries N` as CoreDNS's timeouts plugin writes it: forward's cap on the queries of one
// upstream connection and timeouts' cap on a client's connection read it the same way.
import { argPosition, expectArgs, parseIntArg } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';

/** `maxtcpqueries N`: N ≥ 1, or -1 for no limit (CoreDNS's timeouts syntax); 0 stands for no limit here. */
export function parseMaxTcpQueries(prop: Directive, what: string): number {
  const [text] = expectArgs(prop, 1, 1) as [string];
  const n = parseIntArg(text, argPosition(prop, 0), { what });
  if (n === 0 || n < -1) throw CorefileError.at(argPosition(prop, 0), `${what} must be -1 (no limit) or a positive integer, got ${n}`);
  return n === -1 ? 0 : n;
}
