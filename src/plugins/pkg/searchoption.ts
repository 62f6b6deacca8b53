// The EDNS0 option that carries a pod's search paths from the node-local cache to the cluster
// server: the paths as one comma-separated ASCII list. Its code comes from the range RFC 6891
// reserves for local and experimental use (65001-65534); the code once proposed for it, 15, is
// now Extended DNS Errors (RFC 8914). searchpath (node cache) attaches it, autopath (cluster
// DNS) reads it; both set its code with `edns_option`, and `kdns nodecache` checks the range.

import { argPosition, expectArgs, parseIntArg } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import type { Edns, EdnsOption } from '../../lib/dns/types.js';
import { ADVERTISED_UDP_SIZE } from '../../server/finalize.js';
import { MAX_SEARCH_PATHS, normalizeSearchPath } from './apnames.js';

export const DEFAULT_OPTION_CODE = 65534;
export const LOCAL_OPTION_CODE_MIN = 65001;
export const LOCAL_OPTION_CODE_MAX = 65534;

/** `edns_option CODE`: a code of the local/experimental range, so it can clash with no standard option. */
export function parseOptionCode(p: Directive): number {
  const [text] = expectArgs(p, 1, 1) as [string];
  return parseIntArg(text, argPosition(p, 0), { what: 'edns_option', min: LOCAL_OPTION_CODE_MIN, max: LOCAL_OPTION_CODE_MAX });
}

/** Bytes of the option for these paths (sent without trailing dots, as a resolv.conf lists them). */
export function encodeSearchPaths(paths: readonly string[]): Uint8Array {
  const text = paths.map((p) => (p.endsWith('.') ? p.slice(0, -1) : p)).join(',');
  return new Uint8Array(Buffer.from(text, 'latin1'));
}

/**
 * The paths an option carries, trimmed and absolute, or why it cannot be used. An empty list
 * is valid (the pod has no search paths). A bad option is ignored by the caller, never an error
 * to the client: the name itself still says enough to expand it.
 */
export function decodeSearchPaths(data: Uint8Array): string[] | { error: string } {
  for (const b of data) {
    if (b < 0x20 || b > 0x7e) return { error: `byte 0x${b.toString(16).padStart(2, '0')} is not printable ASCII` };
  }
  const text = Buffer.from(data).toString('latin1');
  const out: string[] = [];
  for (const part of text.split(',')) {
    if (part.trim() === '' || part.trim() === '.') continue;
    const p = normalizeSearchPath(part);
    if (p === undefined) return { error: `"${part.trim()}" is not a domain name` };
    if (!out.includes(p)) out.push(p);
  }
  if (out.length > MAX_SEARCH_PATHS) return { error: `${out.length} search paths (at most ${MAX_SEARCH_PATHS})` };
  return out;
}

export function findOption(edns: Edns | undefined, code: number): EdnsOption | undefined {
  return edns?.options.find((o) => o.code === code);
}

/** The same EDNS without any option of `code` (undefined stays undefined). */
export function withoutOption(edns: Edns | undefined, code: number): Edns | undefined {
  if (!edns) return undefined;
  return { ...edns, options: edns.options.filter((o) => o.code !== code) };
}

/** The EDNS to send on: the client's (or a fresh OPT when it had none) with exactly one option of `code`. */
export function withOption(edns: Edns | undefined, code: number, data: Uint8Array): Edns {
  const base: Edns = edns ?? { udpSize: ADVERTISED_UDP_SIZE, version: 0, do: false, zFlags: 0, options: [] };
  return { ...base, options: [...base.options.filter((o) => o.code !== code), { code, data }] };
}
