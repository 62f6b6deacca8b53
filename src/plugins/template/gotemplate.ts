// The part of Go's text/template that CoreDNS template answers use: text with `{{ pipeline }}`
// actions (`{{-`/`-}}` trim blanks, `{{/* */}}` comments), field chains on the data (`.Name`,
// `.Group.b`, `.Question.Name`), method calls (`.Meta "key"`), function calls (`index`, `len`,
// `print`, `printf`, `slice`, and CoreDNS's `parseInt`), parentheses and `|` pipes. Control
// structures (if/range/with/define) are refused when the template is compiled, so a Corefile
// never loads a template that would mean something else than in CoreDNS.
//
// Values: strings, numbers, bigints, booleans, arrays, Maps (Go maps: a missing key prints
// "<no value>"), plain objects (Go structs: a missing field is an error) and functions (methods).

export type TemplateValue = string | number | bigint | boolean | undefined | TemplateValue[] | ReadonlyMap<string, TemplateValue> | TemplateStruct | TemplateMethod;
export type TemplateMethod = (...args: TemplateValue[]) => TemplateValue;
/** A Go struct: its fields, and optionally how it prints (Go's String method). */
export interface TemplateStruct {
  readonly [field: string]: TemplateValue | (() => string);
}

export class TemplateError extends Error {}

type Node =
  | { kind: 'field'; path: string[] }
  | { kind: 'dot' }
  | { kind: 'literal'; value: TemplateValue }
  | { kind: 'ident'; name: string }
  | { kind: 'pipeline'; commands: Node[][] };

type Part = string | { kind: 'action'; pipe: Node[][]; text: string };

export interface CompiledTemplate {
  readonly source: string;
  execute(data: TemplateValue): string;
}

const FUNCTIONS = new Set(['index', 'len', 'print', 'printf', 'slice', 'parseInt']);
const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue', 'nil']);
const NO_VALUE = '<no value>';

/** Parses `source`; throws TemplateError for syntax it does not take. */
export function compileTemplate(source: string): CompiledTemplate {
  const parts = parseParts(source);
  return { source, execute: (data) => parts.map((p) => (typeof p === 'string' ? p : printValue(runPipeline(p.pipe, data, p.text)))).join('') };
}

function parseParts(source: string): Part[] {
  const parts: Part[] = [];
  let at = 0;
  for (;;) {
    const open = source.indexOf('{{', at);
    if (open < 0) {
      parts.push(source.slice(at));
      break;
    }
    let text = source.slice(at, open);
    let start = open + 2;
    if (source.startsWith('- ', start) || source.startsWith('-\t', start)) {
      text = text.replace(/\s+$/, '');
      start += 1;
    }
    parts.push(text);
    const close = findClose(source, start);
    if (close < 0) throw new TemplateError(`unclosed action in ${JSON.stringify(source)}`);
    let end = close;
    let after = close + 2;
    if (source[close - 1] === '-' && /\s/.test(source[close - 2] ?? '')) end = close - 1;
    const inner = source.slice(start, end).trim();
    if (end !== close) {
      const rest = /^\s*/.exec(source.slice(after)) as RegExpExecArray;
      after += rest[0].length;
    }
    at = after;
    if (inner.startsWith('/*')) {
      if (!inner.endsWith('*/')) throw new TemplateError(`unclosed comment in ${JSON.stringify(source)}`);
      continue;
    }
    if (inner === '') throw new TemplateError(`missing value for command in ${JSON.stringify(source)}`);
    parts.push({ kind: 'action', pipe: parsePipeline(tokenize(inner), inner), text: inner });
  }
  return parts.filter((p) => p !== '');
}

/** Index of the `}}` closing an action, skipping quoted strings. */
function findClose(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === '"' || c === '`') {
      const q = c;
      for (i++; i < s.length && s[i] !== q; i++) if (q === '"' && s[i] === '\\') i++;
      continue;
    }
    if (c === '}' && s[i + 1] === '}') return i;
  }
  return -1;
}

type Token = { t: 'field'; path: string[] } | { t: 'dot' } | { t: 'str'; v: string } | { t: 'num'; v: number } | { t: 'ident'; v: string } | { t: '(' } | { t: ')' } | { t: '|' } | { t: 'bool'; v: boolean };

function tokenize(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '(' || c === ')' || c === '|') {
      out.push({ t: c });
      i++;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < s.length && s[j] !== '"'; j++) if (s[j] === '\\') j++;
      if (j >= s.length) throw new TemplateError(`unterminated quoted string in ${JSON.stringify(s)}`);
      out.push({ t: 'str', v: JSON.parse(s.slice(i, j + 1)) as string });
      i = j + 1;
      continue;
    }
    if (c === '`') {
      const j = s.indexOf('`', i + 1);
      if (j < 0) throw new TemplateError(`unterminated raw string in ${JSON.stringify(s)}`);
      out.push({ t: 'str', v: s.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    const word = /^(?:\.[A-Za-z_][A-Za-z0-9_]*)+|^\.|^\$[A-Za-z0-9_]*|^[+-]?(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]+)?)|^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i));
    if (!word) throw new TemplateError(`unexpected ${JSON.stringify(c)} in ${JSON.stringify(s)}`);
    const w = word[0];
    i += w.length;
    if (w === '.') out.push({ t: 'dot' });
    else if (w.startsWith('.')) out.push({ t: 'field', path: w.slice(1).split('.') });
    else if (w.startsWith('$')) {
      if (w !== '$') throw new TemplateError(`variables are not supported: ${w}`);
      out.push({ t: 'dot' });
    } else if (/^[+-]?[0-9]/.test(w) || /^[+-]?0x/.test(w)) out.push({ t: 'num', v: Number(w) });
    else if (w === 'true' || w === 'false') out.push({ t: 'bool', v: w === 'true' });
    else if (KEYWORDS.has(w)) throw new TemplateError(`"${w}" is not supported in kdns templates`);
    else if (!FUNCTIONS.has(w)) throw new TemplateError(`function "${w}" not defined`);
    else out.push({ t: 'ident', v: w });
  }
  return out;
}

function parsePipeline(tokens: Token[], text: string): Node[][] {
  let i = 0;
  const pipeline = (): Node[][] => {
    const commands: Node[][] = [[]];
    while (i < tokens.length) {
      const tk = tokens[i] as Token;
      if (tk.t === ')') break;
      i++;
      if (tk.t === '|') {
        if ((commands[commands.length - 1] as Node[]).length === 0) throw new TemplateError(`missing command before "|" in ${JSON.stringify(text)}`);
        commands.push([]);
        continue;
      }
      const cmd = commands[commands.length - 1] as Node[];
      switch (tk.t) {
        case 'field':
          cmd.push({ kind: 'field', path: tk.path });
          break;
        case 'dot':
          cmd.push({ kind: 'dot' });
          break;
        case 'str':
        case 'num':
        case 'bool':
          cmd.push({ kind: 'literal', value: tk.v });
          break;
        case 'ident':
          cmd.push({ kind: 'ident', name: tk.v });
          break;
        case '(': {
          const inner = pipeline();
          if (tokens[i]?.t !== ')') throw new TemplateError(`unclosed left paren in ${JSON.stringify(text)}`);
          i++;
          cmd.push({ kind: 'pipeline', commands: inner });
          break;
        }
      }
    }
    if ((commands[commands.length - 1] as Node[]).length === 0) throw new TemplateError(`missing command in ${JSON.stringify(text)}`);
    return commands;
  };
  const out = pipeline();
  if (i < tokens.length) throw new TemplateError(`unexpected ")" in ${JSON.stringify(text)}`);
  return out;
}

// ---- execution ------------------------------------------------------------------------------

function runPipeline(commands: Node[][], dot: TemplateValue, text: string): TemplateValue {
  let piped: TemplateValue[] = [];
  for (const cmd of commands) piped = [runCommand(cmd, dot, piped, text)];
  return piped[0];
}

function runCommand(cmd: Node[], dot: TemplateValue, piped: TemplateValue[], text: string): TemplateValue {
  const [head, ...rest] = cmd as [Node, ...Node[]];
  const args = (): TemplateValue[] => [...rest.map((n) => evalOperand(n, dot, text)), ...piped];
  if (head.kind === 'ident') return callFunction(head.name, args(), text);
  if (head.kind === 'field') return evalField(dot, head.path, args(), text);
  if (rest.length > 0 || piped.length > 0) throw new TemplateError(`can't give argument to non-function in ${JSON.stringify(text)}`);
  return evalOperand(head, dot, text);
}

function evalOperand(n: Node, dot: TemplateValue, text: string): TemplateValue {
  switch (n.kind) {
    case 'dot':
      return dot;
    case 'literal':
      return n.value;
    case 'field':
      return evalField(dot, n.path, [], text);
    case 'pipeline':
      return runPipeline(n.commands, dot, text);
    case 'ident':
      return callFunction(n.name, [], text);
  }
}

function isStruct(v: TemplateValue): v is TemplateStruct {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map);
}

function evalField(dot: TemplateValue, path: readonly string[], args: TemplateValue[], text: string): TemplateValue {
  let v: TemplateValue = dot;
  for (let i = 0; i < path.length; i++) {
    const name = path[i] as string;
    const last = i === path.length - 1;
    if (v instanceof Map) {
      v = v.has(name) ? (v.get(name) as TemplateValue) : undefined;
    } else if (isStruct(v) && Object.hasOwn(v, name)) {
      const f = v[name];
      if (typeof f === 'function') {
        v = (f as TemplateMethod)(...(last ? args : []));
        continue;
      }
      v = f;
    } else if (v === undefined) {
      throw new TemplateError(`executing ${JSON.stringify(text)}: nil pointer evaluating .${name}`);
    } else {
      throw new TemplateError(`executing ${JSON.stringify(text)}: can't evaluate field ${name}`);
    }
    if (last && args.length > 0) throw new TemplateError(`executing ${JSON.stringify(text)}: ${name} is not a method but has arguments`);
  }
  return v;
}

function callFunction(name: string, args: TemplateValue[], text: string): TemplateValue {
  const fail = (why: string): never => {
    throw new TemplateError(`executing ${JSON.stringify(text)}: error calling ${name}: ${why}`);
  };
  switch (name) {
    case 'index': {
      let v = args[0];
      for (const k of args.slice(1)) {
        if (Array.isArray(v) || typeof v === 'string') {
          const n = Number(k);
          if (!Number.isInteger(n)) fail(`cannot index slice with ${printValue(k)}`);
          if (n < 0 || n >= v.length) fail(`index out of range: ${n}`);
          v = Array.isArray(v) ? v[n] : v.charCodeAt(n);
        } else if (v instanceof Map) {
          v = v.get(String(k));
        } else {
          fail(`can't index item of type ${typeof v}`);
        }
      }
      return v;
    }
    case 'len': {
      const v = args[0];
      if (typeof v === 'string' || Array.isArray(v)) return v.length;
      if (v instanceof Map) return v.size;
      return fail(`len of ${typeof v}`);
    }
    case 'slice': {
      const [v, from, to] = args;
      if (typeof v !== 'string' && !Array.isArray(v)) return fail(`can't slice item of type ${typeof v}`);
      const a = from === undefined ? 0 : Number(from);
      const b = to === undefined ? v.length : Number(to);
      if (!(a >= 0 && a <= b && b <= v.length)) fail(`index out of range: ${a}:${b}`);
      return v.slice(a, b);
    }
    case 'print':
      return goPrint(args);
    case 'printf':
      return sprintf(String(args[0] ?? ''), args.slice(1));
    case 'parseInt':
      return parseUint(args, fail);
    default:
      return fail('not defined');
  }
}

/** strconv.ParseUint(s, base, bitSize) as CoreDNS exposes it. */
function parseUint(args: TemplateValue[], fail: (why: string) => never): bigint {
  if (args.length !== 3) fail(`wrong number of args: want 3 got ${args.length}`);
  const [s, baseArg, bitsArg] = args;
  if (typeof s !== 'string') return fail(`parseInt needs a string, got ${printValue(s)}`);
  const base = Number(baseArg);
  const bits = Number(bitsArg) === 0 ? 64 : Number(bitsArg);
  const quoted = JSON.stringify(s);
  if (!(base === 0 || (base >= 2 && base <= 36))) fail(`strconv.ParseUint: parsing ${quoted}: invalid base ${base}`);
  if (!(bits >= 1 && bits <= 64)) fail(`strconv.ParseUint: parsing ${quoted}: invalid bit size ${bits}`);
  let digits = s;
  let b = base;
  if (b === 0) {
    b = 10;
    const prefix = /^0([xob])/i.exec(s);
    if (prefix) {
      b = { x: 16, o: 8, b: 2 }[(prefix[1] as string).toLowerCase() as 'x' | 'o' | 'b'];
      digits = s.slice(2);
    } else if (s.length > 1 && s.startsWith('0')) {
      b = 8;
      digits = s.slice(1);
    }
    digits = digits.replaceAll('_', '');
  }
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz'.slice(0, b);
  if (digits === '' || [...digits.toLowerCase()].some((c) => !alphabet.includes(c))) fail(`strconv.ParseUint: parsing ${quoted}: invalid syntax`);
  let n = 0n;
  for (const c of digits.toLowerCase()) n = n * BigInt(b) + BigInt(alphabet.indexOf(c));
  if (n > (1n << BigInt(bits)) - 1n) fail(`strconv.ParseUint: parsing ${quoted}: value out of range`);
  return n;
}

/** fmt.Sprint: spaces between operands when neither is a string. */
function goPrint(args: TemplateValue[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += printValue(a);
  });
  return out;
}

/** fmt.Sprintf for the verbs templates use: %s %v %d %x %X %q %%, with width and zero padding. */
function sprintf(format: string, args: TemplateValue[]): string {
  let k = 0;
  return format.replace(/%([-0]?)(\d*)([svdxXq%])/g, (_m, flag: string, width: string, verb: string) => {
    if (verb === '%') return '%';
    const a = args[k++];
    let s: string;
    if (verb === 'd') s = typeof a === 'bigint' || typeof a === 'number' ? a.toString() : `%!d(${printValue(a)})`;
    else if (verb === 'x' || verb === 'X') {
      s = typeof a === 'bigint' || typeof a === 'number' ? a.toString(16) : Buffer.from(printValue(a)).toString('hex');
      if (verb === 'X') s = s.toUpperCase();
    } else if (verb === 'q') s = JSON.stringify(printValue(a));
    else s = printValue(a);
    const w = Number(width || 0);
    if (s.length < w) s = flag === '-' ? s.padEnd(w) : s.padStart(w, flag === '0' ? '0' : ' ');
    return s;
  });
}

/** A value as Go's fmt prints it with %v. */
export function printValue(v: TemplateValue): string {
  if (v === undefined) return NO_VALUE;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(printValue).join(' ')}]`;
  if (v instanceof Map) {
    const keys = [...v.keys()].sort();
    return `map[${keys.map((k) => `${k}:${printValue(v.get(k) as TemplateValue)}`).join(' ')}]`;
  }
  if (typeof v === 'function') return '<method>';
  const custom = (v as { String?: unknown }).String;
  if (typeof custom === 'function') return (custom as () => string)();
  return `{${Object.values(v)
    .filter((x) => typeof x !== 'function')
    .map((x) => printValue(x as TemplateValue))
    .join(' ')}}`;
}
