// `kdns validate`: the API server's verdict on manifests, without a cluster. Pods and every kind
// with a pod template get the pod DNS rules (src/poddns) of the chosen API server (`--api kdns`:
// with the kdns webhook; `--api stock`: a released kube-apiserver alone); DNS resources
// (operator.openshift.io/v1) get the operator's rules. Exit 0 when everything is valid, 1 when
// anything is not.

import { Option } from 'commander';
import type { Command } from 'commander';
import { DNS_KIND } from '../lib/cluster/dnsresource.js';
import { formatFieldError } from '../lib/cluster/field.js';
import type { FieldError } from '../lib/cluster/field.js';
import { validateDNSResource } from '../operator/validate.js';
import type { FeatureGates } from '../poddns/featuregates.js';
import type { InputObject } from '../poddns/input.js';
import { kdnsFormWarnings, stockDecodingError, validatePodObject } from '../poddns/validate.js';
import type { APIServerKind } from '../poddns/validate.js';
import { kindOf, nameOf, namespaceOf, readPodSpec } from '../poddns/workload.js';
import { validatePodUpdate } from '../poddns/update.js';
import { EXIT_INVALID, EXIT_OK } from './exit.js';
import { addOutputOption, objectLabel, parseGatesFlag, processIO, readInputObjects, runAction } from './resolvconf.js';
import type { CliIO } from './resolvconf.js';

interface ValidateOptions {
  featureGates?: string;
  old?: string;
  clusterDomain: string;
  api: APIServerKind;
  output: 'text' | 'json';
}

export interface ObjectVerdict {
  file: string;
  line: number;
  kind: string;
  name: string;
  namespace: string;
  errors: FieldError[];
  /**
   * The API server's refusal before validation (`--api stock`: strict decoding of a field it
   * does not know), in its words; `errors` is empty then, as the object was never validated.
   */
  decodingError?: { fields: string[]; message: string };
  /** Advice that does not make the object invalid (`--api kdns`: the literal kdns form). */
  warnings: string[];
  /** Set when kdns has no rules for the kind: the object is not known to be valid. */
  unsupported?: true;
}

interface ValidationSettings {
  gates: FeatureGates;
  clusterDomain: string;
  /** Default `kdns`. */
  api?: APIServerKind;
}

/** Old objects are matched to new ones by kind, namespace and name, as the API server matches an update. */
function objectKey(obj: Record<string, unknown>): string {
  return `${kindOf(obj)}\u0000${namespaceOf(obj)}\u0000${nameOf(obj)}`;
}

/**
 * The single place that decides which rules a kind gets. Returns undefined for kinds kdns
 * does not validate.
 */
export function validateByKind(obj: Record<string, unknown>, old: Record<string, unknown> | undefined, settings: ValidationSettings): FieldError[] | undefined {
  if (kindOf(obj) === DNS_KIND) return validateDNSResource(obj, { clusterDomain: settings.clusterDomain });
  const errors = validatePodObject(obj, old, {
    relaxedDNSSearchGate: settings.gates.RelaxedDNSSearchValidation,
    clusterDomain: settings.clusterDomain,
    ...(settings.api !== undefined ? { api: settings.api } : {}),
  });
  // A Pod update is also held to what an update may change (a template's pod spec may change).
  return errors !== undefined && old !== undefined && kindOf(obj) === 'Pod' ? [...errors, ...validatePodUpdate(obj, old)] : errors;
}

export function verdictFor(input: InputObject, old: Record<string, unknown> | undefined, settings: ValidationSettings): ObjectVerdict {
  const obj = input.object;
  const base = { file: input.file, line: input.line, kind: kindOf(obj), name: nameOf(obj), namespace: namespaceOf(obj), warnings: [] };
  const source = readPodSpec(obj);
  if (source !== undefined && settings.api === 'stock') {
    // A stock API server's strict decoding refuses the object before any rule runs.
    const message = stockDecodingError(source);
    if (message !== undefined) return { ...base, errors: [], decodingError: { fields: source.kdnsOnlyFields, message } };
  }
  const errors = validateByKind(obj, old, settings);
  if (errors === undefined) return { ...base, errors: [], unsupported: true };
  const warnings = source !== undefined && settings.api !== 'stock' ? kdnsFormWarnings(source, { clusterDomain: settings.clusterDomain }) : [];
  return { ...base, errors, warnings };
}

function verdictLines(v: ObjectVerdict): string[] {
  const label = objectLabel(v.kind, v.name);
  if (v.unsupported) return [`${label}: kind not supported by kdns validate`];
  if (v.decodingError !== undefined) return [`${label}: ${v.decodingError.message}`];
  return v.errors.map((e) => `${label}: ${formatFieldError(e)}`);
}

function isValid(v: ObjectVerdict): boolean {
  return !v.unsupported && v.decodingError === undefined && v.errors.length === 0;
}

/** One entry of `-o json`'s errors: a field error with its printed line, or the decoding refusal. */
interface JSONError {
  field: string;
  reason: string;
  value?: unknown;
  detail: string;
  message: string;
}

function jsonErrors(v: ObjectVerdict): JSONError[] {
  if (v.decodingError !== undefined) {
    const { message } = v.decodingError;
    return v.decodingError.fields.map((field) => ({ field, reason: 'Unknown field', detail: 'strict decoding error', message }));
  }
  return v.errors.map((e) => ({ ...e, message: formatFieldError(e) }));
}

async function validate(files: string[], opts: ValidateOptions, io: CliIO): Promise<number> {
  const settings: ValidationSettings = { gates: parseGatesFlag(opts.featureGates), clusterDomain: opts.clusterDomain, api: opts.api };
  const olds = new Map<string, Record<string, unknown>>();
  if (opts.old !== undefined) {
    for (const o of await readInputObjects(opts.old, io)) olds.set(objectKey(o.object), o.object);
  }
  const verdicts: ObjectVerdict[] = [];
  for (const file of files) {
    for (const input of await readInputObjects(file, io)) verdicts.push(verdictFor(input, olds.get(objectKey(input.object)), settings));
  }
  const valid = verdicts.every(isValid);
  if (opts.output === 'json') {
    const objects = verdicts.map((v) => ({
      file: v.file,
      line: v.line,
      kind: v.kind,
      name: v.name,
      namespace: v.namespace,
      ...(v.unsupported ? { unsupported: true } : {}),
      errors: jsonErrors(v),
      warnings: v.warnings,
      valid: isValid(v),
    }));
    io.out(`${JSON.stringify({ valid, api: opts.api, objects }, null, 2)}\n`);
  } else {
    for (const v of verdicts) {
      for (const line of verdictLines(v)) io.out(`${line}\n`);
      for (const w of v.warnings) io.err(`warning: ${objectLabel(v.kind, v.name)}: ${w}\n`);
    }
  }
  return valid ? EXIT_OK : EXIT_INVALID;
}

export function register(program: Command, io: CliIO = processIO): void {
  const cmd = program
    .command('validate')
    .description('check Pods, pod templates (Deployment, Job, CronJob, …) and DNS resources as the API server would')
    .argument('<FILE...>', 'manifest files (YAML or JSON, several documents, kind: List); - reads stdin')
    .option('--feature-gates <K=V,...>', 'feature gates: RelaxedDNSSearchValidation (default false)')
    .option('--old <OLDFILE>', 'the objects as stored: FILE is then an update of the objects with the same kind, namespace and name')
    .option('--cluster-domain <DOMAIN>', 'the cluster domain $(CLUSTER) stands for in Custom search entries', 'cluster.local')
    .addOption(
      new Option('--api <SERVER>', 'kdns: an API server with the kdns admission webhook; stock: a released kube-apiserver alone (strict field validation, as kubectl)')
        .choices(['kdns', 'stock'])
        .default('kdns'),
    )
    .addHelpText(
      'after',
      `
Each error is one line: <Kind>/<name>: <field.path>: <Reason>: <detail>. Exit 0 when all
objects are valid, 1 otherwise. With --api kdns, a pod asking for a kdns policy in the literal
spec (dnsPolicy, dnsParams) gets a "warning:" line on stderr showing the annotation form.

Examples:
  kdns validate deploy.yaml
  kdns validate --api stock deploy.yaml
  kdns validate --feature-gates RelaxedDNSSearchValidation=true pod.yaml
  kdns validate --old stored.yaml changed.yaml -o json`,
    );
  addOutputOption(cmd).action(async (files: string[], opts: ValidateOptions) => runAction(io, 'validate', () => validate(files, opts, io)));
}
