// Reads and scans one large manifest file on a worker thread, so the DNS server's event loop
// keeps answering while tens of MB of YAML are parsed: the text, the YAML trees and the
// garbage they leave live and die in the worker's heap. Posts back a ParsedFile: per object its
// identity, content hash and JSON text (parsed on the main thread only when the object changed).

import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { scanManifests, type ManifestError } from './manifests.js';

export interface ParseRequest {
  file: string;
  skipKinds: string[];
}

/** One object: kind, namespace ('' for none), name, fingerprint, the object as JSON. */
export type ParsedEntry = [kind: string, namespace: string, name: string, fingerprint: number, json: string];

export type ParsedFile = { entries: ParsedEntry[]; errors: ManifestError[] } | { readError: string };

async function parse(req: ParseRequest): Promise<ParsedFile> {
  let text: string;
  try {
    text = await readFile(req.file, 'utf8');
  } catch (err) {
    return { readError: (err as Error).message };
  }
  const scan = scanManifests(text, req.file, new Set(req.skipKinds));
  if (scan.errors.length > 0) return { entries: [], errors: scan.errors };
  const entries = scan.entries
    .filter((e) => !req.skipKinds.includes(e.kind))
    .map((e): ParsedEntry => [e.kind, e.namespace ?? '', e.name, e.fingerprint, JSON.stringify(e.load())]);
  return { entries, errors: [] };
}

if (parentPort) parentPort.postMessage(await parse(workerData as ParseRequest));
