// Command lines in the syntax of Go's `flag` package, which the CoreDNS and node-cache binaries
// use, so that kdns accepts the `args:` of their stock manifests unchanged: `-name value`,
// `-name=value`, `--name` works as `-name`, a boolean is set by `-name` alone or `-name=false`
// (never `-name false`), and parsing stops at `--` or at the first argument that is not a flag.

export type GoFlagKind = 'string' | 'bool';

export interface GoFlagSpec {
  kind: GoFlagKind;
  /** What `-h` prints for it. */
  usage: string;
  /** The default: a string, or 'true'/'false' for a boolean (absent: empty, false). */
  default?: string;
}

export type GoFlagSet = Readonly<Record<string, GoFlagSpec>>;

export interface GoFlagsParsed {
  /** Flags given, by name (booleans as true/false); the last of a repeated flag wins, as in Go. */
  values: Map<string, string | boolean>;
  /** Arguments after the flags. */
  rest: string[];
  /** -h / -help / --help was given. */
  help: boolean;
}

/** A command line Go's flag package would refuse; `message` is Go's own wording. */
export class GoFlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GoFlagError';
  }
}

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

export function parseGoFlags(args: readonly string[], set: GoFlagSet): GoFlagsParsed {
  const values = new Map<string, string | boolean>();
  let help = false;
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg.length < 2 || arg[0] !== '-') break;
    if (arg === '--') {
      i++;
      break;
    }
    const body = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
    if (body === '' || body[0] === '-' || body[0] === '=') throw new GoFlagError(`bad flag syntax: ${arg}`);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const inline = eq < 0 ? undefined : body.slice(eq + 1);
    const spec = set[name];
    if (!spec) {
      if (name === 'h' || name === 'help') {
        help = true;
        continue;
      }
      throw new GoFlagError(`flag provided but not defined: -${name}`);
    }
    if (spec.kind === 'bool') {
      if (inline === undefined) values.set(name, true);
      else if (TRUE.has(inline)) values.set(name, true);
      else if (FALSE.has(inline)) values.set(name, false);
      else throw new GoFlagError(`invalid boolean value "${inline}" for -${name}: parse error`);
      continue;
    }
    if (inline !== undefined) {
      values.set(name, inline);
      continue;
    }
    const next = args[i + 1];
    if (next === undefined) throw new GoFlagError(`flag needs an argument: -${name}`);
    values.set(name, next);
    i++;
  }
  return { values, rest: args.slice(i), help };
}

/** Go's usage text for a flag set: `  -name value` then the usage, indented. */
export function goFlagUsage(set: GoFlagSet): string {
  return Object.entries(set)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, spec]) => {
      const head = spec.kind === 'bool' ? `  -${name}` : `  -${name} string`;
      const shown = spec.kind === 'bool' ? spec.default === 'true' && ' (default true)' : spec.default && ` (default "${spec.default}")`;
      const dflt = shown || '';
      return `${head}\n    \t${spec.usage}${dflt}\n`;
    })
    .join('');
}

/** A string flag's value, else its default. */
export function stringFlag(p: GoFlagsParsed, set: GoFlagSet, name: string): string {
  const v = p.values.get(name);
  return typeof v === 'string' ? v : (set[name]?.default ?? '');
}

/** A boolean flag's value, else its default. */
export function boolFlag(p: GoFlagsParsed, set: GoFlagSet, name: string): boolean {
  const v = p.values.get(name);
  return typeof v === 'boolean' ? v : set[name]?.default === 'true';
}
