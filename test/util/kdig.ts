// Runs the real `kdig` (knot-dnsutils), the client that speaks DNS over TLS and DNS over HTTPS
// (GET and POST, HTTP/2), and reads what it prints: one result per query it sent.
import { execFile } from 'node:child_process';

export interface KdigAnswer {
  /** "NOERROR", "REFUSED", … */
  status: string;
  /** Records of the answer and additional sections as "name TYPE data" (TTL and class left out). */
  answer: string[];
  additional: string[];
  /** "127.0.0.1@853(TCP)" from the ";; From" line. */
  from: string;
}

export interface KdigResult {
  code: number;
  answers: KdigAnswer[];
  /** stdout and stderr, for failure messages and error lines. */
  output: string;
}

function record(line: string): string {
  const [name, , , type, ...data] = line.trim().split(/\s+/);
  return `${name as string} ${type as string} ${data.join(' ')}`;
}

/** Splits kdig's output into one answer per ";; ->>HEADER<<-" block. */
export function parseKdig(out: string): KdigAnswer[] {
  const answers: KdigAnswer[] = [];
  let current: KdigAnswer | undefined;
  let section = '';
  for (const line of out.split('\n')) {
    const header = /^;; ->>HEADER<<- .*status: (\w+);/.exec(line);
    if (header) {
      current = { status: header[1] as string, answer: [], additional: [], from: '' };
      answers.push(current);
      section = '';
      continue;
    }
    if (!current) continue;
    const sectionName = /^;; (\w+) SECTION:/.exec(line);
    if (sectionName) {
      section = sectionName[1] as string;
      continue;
    }
    const from = /^;; From (\S+)/.exec(line);
    if (from) current.from = from[1] as string;
    if (line.trim() === '' || line.startsWith(';')) continue;
    if (section === 'ANSWER') current.answer.push(record(line));
    if (section === 'ADDITIONAL') current.additional.push(record(line));
  }
  return answers;
}

/** `kdig @127.0.0.1 -p PORT args…`, with a short timeout and one try. */
export function kdig(port: number, args: readonly string[], server = '127.0.0.1'): Promise<KdigResult> {
  return new Promise((resolve) => {
    execFile('kdig', [`@${server}`, '-p', String(port), '+timeout=3', '+retry=0', ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, answers: parseKdig(stdout), output: stdout + stderr });
    });
  });
}
