// Reading the operator's inputs from files: the DNS resource, the node list, and the objects
// applied now. Nodes go through the cluster manifest loader (one model of the cluster); the DNS
// resource and the owned apps/v1 and core/v1 objects are kinds that loader does not keep, so
// they are read here with the same YAML reader (src/lib/cluster/yaml.ts) and the same file:line
// error form.

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isManifestFile } from '../lib/cluster/manifestfiles.js';
import { formatManifestError, parseManifests } from '../lib/cluster/manifesttext.js';
import type { Node, Service } from '../lib/cluster/types.js';
import { DNS_KIND } from '../lib/cluster/dnsresource.js';
import { yamlDocuments, yamlValue } from '../lib/cluster/yaml.js';
import { DNS_NAME, NODE_RESOLVER_NAME, WEBHOOK_CONFIG_NAME } from './objects.js';
import type { ConfigMap, DaemonSet } from './objects.js';
import type { CurrentObjects } from './render.js';
import { isRecord } from './schema.js';

export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}

export interface Document {
  value: unknown;
  line: number;
}

/** Every document of a YAML or JSON text, lists unwrapped; throws InputError naming file:line. */
export function parseDocuments(text: string, file: string): Document[] {
  const out: Document[] = [];
  for (const document of yamlDocuments(text)) {
    if (document.error) throw new InputError(`${file}:${document.error.line}: ${document.error.message}`);
    const value = yamlValue(document);
    const line = document.line;
    if (value === null || value === undefined) continue;
    if (isRecord(value) && typeof value['kind'] === 'string' && value['kind'].endsWith('List') && Array.isArray(value['items'])) {
      for (const item of value['items']) out.push({ value: item, line });
    } else out.push({ value, line });
  }
  return out;
}

/** The one DNS object of a file (any other kinds in it are ignored). */
export function dnsFromText(text: string, file: string): unknown {
  const found = parseDocuments(text, file).filter((d) => isRecord(d.value) && d.value['kind'] === DNS_KIND);
  if (found.length === 0) throw new InputError(`${file}: no object of kind ${DNS_KIND}`);
  if (found.length > 1) throw new InputError(`${file}:${found[1]!.line}: more than one ${DNS_KIND} object; the operator manages one`);
  return found[0]!.value;
}

export async function readDNSFile(file: string): Promise<unknown> {
  return dnsFromText(await readText(file), file);
}

export function nodesFromText(text: string, file: string): Node[] {
  const result = parseManifests(text, file);
  if (result.errors.length > 0) throw new InputError(result.errors.map(formatManifestError).join('\n'));
  return result.objects.filter((o): o is Node => o.kind === 'Node');
}

export async function readNodesFile(file: string): Promise<Node[]> {
  return nodesFromText(await readText(file), file);
}

/** The owned objects among a directory's manifests (by kind and name; other files are not ours). */
export async function readCurrentDir(dir: string): Promise<CurrentObjects> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter(isManifestFile).sort();
  } catch (e) {
    throw new InputError(`${dir}: ${(e as Error).message}`);
  }
  const current: CurrentObjects = {};
  for (const name of names) {
    const file = join(dir, name);
    for (const doc of parseDocuments(await readText(file), file)) collectCurrent(doc.value, current);
  }
  return current;
}

export function collectCurrent(value: unknown, into: CurrentObjects): void {
  if (!isRecord(value) || !isRecord(value['metadata'])) return;
  const kind = value['kind'];
  const name = value['metadata']['name'];
  if (kind === 'ConfigMap' && name === DNS_NAME) into.configMap = value as unknown as ConfigMap;
  else if (kind === 'ConfigMap' && name === WEBHOOK_CONFIG_NAME) into.webhookConfigMap = value as unknown as ConfigMap;
  else if (kind === 'Service' && name === DNS_NAME) into.service = value as unknown as Service;
  else if (kind === 'DaemonSet' && name === DNS_NAME && hasPodSpec(value)) into.dnsDaemonSet = value as unknown as DaemonSet;
  else if (kind === 'DaemonSet' && name === NODE_RESOLVER_NAME && hasPodSpec(value)) into.nodeResolverDaemonSet = value as unknown as DaemonSet;
}

/** A DaemonSet whose template the status and placement code can read without crashing. */
function hasPodSpec(v: Record<string, unknown>): boolean {
  const spec = v['spec'];
  const template = isRecord(spec) ? spec['template'] : undefined;
  return isRecord(template) && isRecord(template['spec']);
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw new InputError(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
}
