// Reads and scans one large manifest file in a child process, so the DNS server's event loop
// keeps answering while tens of MB of YAML are parsed: the text, the YAML trees and the
// garbage they leave live and die with the child. (A worker thread's heap pages outlive it: V8
// pools them process-wide, and Node 26 held 80 MiB of them for good after a 16 MiB file.) Posts back a ParsedFile: per object its
// identity, content hash and JSON text (parsed on the main thread only when the object changed).

import { readFile } from 'node:fs/promises';
import { scanManifests } from './manifestscan.js';
import type { ManifestError } from './manifesttext.js';

export interface ParseRequest {
  file: string;
  skipKinds: string[];
}

/**
 * The objects of a file, flat so that handing them to the main thread costs a copy of two
 * strings and a buffer rather than an object graph to rebuild there: line i of `ids` is
 * `kind\tnamespace\tname` of object i (namespace '' when it has none), `fingerprints[i]` its
 * content hash, and its JSON is `json` from `ends[i - 1]` (0 for the first) to `ends[i]`.
 */
export interface ParsedObjects {
  ids: string;
  fingerprints: Float64Array;
  json: string;
  ends: Float64Array;
}

export type ParsedFile = { objects: ParsedObjects; errors: ManifestError[] } | { readError: string };

async function parse(req: ParseRequest): Promise<ParsedFile> {
  let text: string;
  try {
    text = await readFile(req.file, 'utf8');
  } catch (err) {
    return { readError: (err as Error).message };
  }
  const scan = scanManifests(text, req.file, new Set(req.skipKinds));
  const entries = scan.errors.length > 0 ? [] : scan.entries.filter((e) => !req.skipKinds.includes(e.kind));
  const ids: string[] = [];
  const json: string[] = [];
  const fingerprints = new Float64Array(entries.length);
  const ends = new Float64Array(entries.length);
  let end = 0;
  for (const [i, e] of entries.entries()) {
    ids.push(`${e.kind}\t${e.namespace ?? ''}\t${e.name}`);
    const text = JSON.stringify(e.load());
    json.push(text);
    fingerprints[i] = e.fingerprint;
    ends[i] = end += text.length;
  }
  return { objects: { ids: ids.join('\n'), fingerprints, json: json.join(''), ends }, errors: scan.errors };
}

// The request comes as the one argument, the answer goes back over the IPC channel (advanced
// serialization: typed arrays pass as they are).
if (process.send) {
  // kdns went away: nobody wants the answer.
  process.on('disconnect', () => process.exit(0));
  const parsed = await parse(JSON.parse(process.argv[2] ?? '{}') as ParseRequest);
  process.send(parsed, () => process.disconnect());
}
