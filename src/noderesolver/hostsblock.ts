// The block node-resolver keeps in a hosts file, between two marker comments. Everything outside
// the block is someone else's and stays byte for byte as it was; the block itself is rewritten
// whole. Pure text in, text out: the file I/O is in ./hostsfile.ts.

export const BEGIN_MARKER = '# BEGIN kdns node-resolver: entries below are managed; edits are overwritten';
export const END_MARKER = '# END kdns node-resolver';
/** OpenShift's node-resolver tagged each line it wrote; those lines are ours to replace after an upgrade. */
export const OPENSHIFT_LINE_MARKER = '# openshift-generated-node-resolver';

export interface HostEntry {
  ip: string;
  /** Host names for the address: the service name, then its name in the cluster domain. */
  names: string[];
}

export interface ParsedHosts {
  /** Entries inside our block (empty when there is no block). */
  entries: HostEntry[];
  /** Whether a block (or an OpenShift-tagged line) is present. */
  hasBlock: boolean;
}

export class HostsFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HostsFileError';
  }
}

interface Line {
  text: string;
  /** The line's terminator as found ("\n", "\r\n", or "" for a last line without one). */
  eol: string;
}

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  const re = /([^\n]*?)(\r?\n|$)/gy;
  let m: RegExpExecArray | null;
  while (re.lastIndex < text.length && (m = re.exec(text)) !== null) {
    lines.push({ text: m[1] ?? '', eol: m[2] ?? '' });
    if (m[0] === '') break;
  }
  return lines;
}

const isBegin = (l: Line): boolean => l.text.trim() === BEGIN_MARKER;
const isEnd = (l: Line): boolean => l.text.trim() === END_MARKER;
const isOpenShiftLine = (l: Line): boolean => l.text.trimEnd().endsWith(OPENSHIFT_LINE_MARKER);

/** Where our block(s) are: [start, end] line indices, inclusive. Throws on a block left open. */
function findBlocks(lines: Line[]): Array<[number, number]> {
  const blocks: Array<[number, number]> = [];
  let open = -1;
  lines.forEach((l, i) => {
    if (isBegin(l)) {
      if (open >= 0) throw new HostsFileError(`line ${open + 1}: block begins again at line ${i + 1} before it ended`);
      open = i;
    } else if (isEnd(l)) {
      if (open < 0) throw new HostsFileError(`line ${i + 1}: end marker without a begin marker`);
      blocks.push([open, i]);
      open = -1;
    }
  });
  // Guessing where an unterminated block ends could delete someone's lines: refuse instead.
  if (open >= 0) throw new HostsFileError(`line ${open + 1}: begin marker without an end marker; fix the file by hand`);
  return blocks;
}

function parseEntry(text: string): HostEntry | undefined {
  const fields = text.replace(/#.*/, '').trim().split(/\s+/).filter(Boolean);
  if (fields.length < 2) return undefined;
  return { ip: fields[0]!, names: fields.slice(1) };
}

export function parseHosts(text: string): ParsedHosts {
  const lines = splitLines(text);
  const blocks = findBlocks(lines);
  const entries: HostEntry[] = [];
  for (const [start, end] of blocks) {
    for (const l of lines.slice(start + 1, end)) {
      const e = parseEntry(l.text);
      if (e) entries.push(e);
    }
  }
  return { entries, hasBlock: blocks.length > 0 || lines.some(isOpenShiftLine) };
}

export function entryLine(e: HostEntry): string {
  return `${e.ip} ${e.names.join(' ')}`;
}

/**
 * The text with our block holding exactly `entries`: in place of the first block (others and
 * OpenShift-tagged lines removed), or appended at the end. An empty list removes the block.
 */
export function withEntries(text: string, entries: readonly HostEntry[]): string {
  const lines = splitLines(text);
  const blocks = findBlocks(lines);
  // Keep the file's own line ending style inside our block.
  const eol = lines.find((l) => l.eol !== '')?.eol ?? '\n';
  const block = entries.length === 0 ? [] : [BEGIN_MARKER, ...entries.map(entryLine), END_MARKER].map((t) => t + eol);
  const inBlock = new Set<number>();
  for (const [s, e] of blocks) for (let i = s; i <= e; i++) inBlock.add(i);

  let out = '';
  let placed = false;
  lines.forEach((l, i) => {
    if (inBlock.has(i) || isOpenShiftLine(l)) {
      if (!placed && (inBlock.has(i) || blocks.length === 0)) {
        out += block.join('');
        placed = true;
      }
      return;
    }
    out += l.text + l.eol;
  });
  if (!placed && block.length > 0) {
    // A last line without its newline gets one, or our marker would join it.
    if (out !== '' && !out.endsWith('\n')) out += eol;
    out += block.join('');
  }
  return out;
}
