// The bench's options: environment variables, one entry each in OPTIONS below. An entry names
// the variable, says what it does (printed by `--help` and in the README's table), gives its
// default and how its text becomes a value; parseOptions checks every one of them before
// anything starts, so a typo stops the run with the variable's name instead of half a bench.
//
// Adding an option is one line in OPTIONS; its parsed value appears, typed, on the object
// parseOptions returns (`opts.NAME`), for the server that uses it.

/** How one variable's text becomes a value; throws a message (without the name) when it cannot. */
export interface OptionSpec<T> {
  readonly doc: string;
  /** The default, as it reads in `--help` (the value itself comes from parse(undefined)). */
  readonly shown: string;
  parse(text: string | undefined): T;
}

function integer(doc: string, fallback: number, min: number, max: number): OptionSpec<number> {
  return {
    doc,
    shown: String(fallback),
    parse(text) {
      if (text === undefined || text === '') return fallback;
      if (!/^\d+$/.test(text)) throw new Error(`"${text}" is not a whole number`);
      const n = Number(text);
      if (n < min || n > max) throw new Error(`${n} is outside ${min}..${max}`);
      return n;
    },
  };
}

/** A count that, unset, takes another option's value (a peer's threads from PEER_THREADS). */
function integerOr(doc: string, inherits: string, min: number, max: number): OptionSpec<number | undefined> {
  const inner = integer(doc, 0, min, max);
  return { doc, shown: `$${inherits}`, parse: (text) => (text === undefined || text === '' ? undefined : inner.parse(text)) };
}

function optionalInteger(doc: string, min: number, max: number): OptionSpec<number | undefined> {
  const inner = integer(doc, 0, min, max);
  return { doc, shown: 'unset', parse: (text) => (text === undefined || text === '' ? undefined : inner.parse(text)) };
}

/** Words separated by spaces or commas, each one of `allowed`, in the order given, no repeats. */
function subset<W extends string>(doc: string, allowed: readonly W[], fallback: readonly W[], emptyAllowed = false): OptionSpec<W[]> {
  return {
    doc: `${doc} (of: ${allowed.join(' ')})`,
    shown: fallback.join(' ') || '(none)',
    parse(text) {
      if (text === undefined) return [...fallback];
      const words = text.split(/[\s,]+/).filter(Boolean);
      if (words.length === 0 && !emptyAllowed) throw new Error('is empty');
      const out: W[] = [];
      for (const w of words) {
        if (!(allowed as readonly string[]).includes(w)) throw new Error(`"${w}" is not one of: ${allowed.join(' ')}`);
        if (!out.includes(w as W)) out.push(w as W);
      }
      return out;
    },
  };
}

function text(doc: string, fallback: string, shown = fallback): OptionSpec<string> {
  return { doc, shown, parse: (t) => (t === undefined || t === '' ? fallback : t) };
}

/** A list of words (paths, flags) split on spaces; the default when unset, [] when set empty. */
function words(doc: string, fallback: readonly string[], shown: string): OptionSpec<string[]> {
  return { doc, shown, parse: (t) => (t === undefined ? [...fallback] : t.split(/\s+/).filter(Boolean)) };
}

/** A taskset CPU list: "0", "0,1", "2-3". */
function cpus(doc: string, fallback: string): OptionSpec<string> {
  return {
    doc,
    shown: fallback,
    parse(t) {
      const v = t === undefined || t === '' ? fallback : t;
      if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(v)) throw new Error(`"${v}" is not a CPU list such as 0 or 0,1 or 0-1`);
      return v;
    },
  };
}

function choice<C extends string>(doc: string, allowed: readonly C[], fallback: C): OptionSpec<C> {
  return {
    doc: `${doc} (${allowed.join(' | ')})`,
    shown: fallback,
    parse(t) {
      if (t === undefined || t === '') return fallback;
      if (!(allowed as readonly string[]).includes(t)) throw new Error(`"${t}" is not one of: ${allowed.join(' ')}`);
      return t as C;
    },
  };
}

export const WORKLOADS = ['auth', 'fwd', 'miss'] as const;
export type WorkloadName = (typeof WORKLOADS)[number];
export const PEERS = ['minimal', 'dnsmasq', 'unbound', 'kresd', 'named'] as const;
export type PeerName = (typeof PEERS)[number];
export const KDNS_COREFILES = ['plain', 'stock'] as const;
export type KdnsCorefileName = (typeof KDNS_COREFILES)[number];

/** Every option. Keep the doc short: it is one line of `--help` and of the README's table. */
export const OPTIONS = {
  DURATION: integer('seconds of measured load per run', 15, 1, 3600),
  REPS: integer('repetitions of the whole matrix, interleaved (median reported)', 1, 1, 100),
  WORKLOADS: subset('workloads to run', WORKLOADS, WORKLOADS),
  PEERS: subset('peers to run beside kdns', PEERS, PEERS, true),
  KDNS_COREFILES: subset('kdns configurations: plain = only the plugins the workload needs, stock = kubeadm\'s Corefile', KDNS_COREFILES, KDNS_COREFILES, true),
  // Not NODE: `npm run` sets NODE to its own node, over the caller's value.
  NODES: words('node binaries kdns and the minimal responder run on, space-separated (one row each)', [], 'the node running the bench'),
  KDNS_REV: text('git revision to bench (exported and built under .bench/kdns/); unset: the working tree as built in dist/', '', 'unset'),
  KDNS_NODE_FLAGS: words('node flags kdns runs with', ['--max-semi-space-size=1', '--v8-pool-size=1'], '--max-semi-space-size=1 --v8-pool-size=1'),
  KDNS_WORKERS: integer('kdns worker processes: above 1, `multisocket N` in every kdns Corefile (a parent and N workers)', 1, 1, 64),
  PEER_THREADS: integer('threads (or processes) of each peer that has them: unbound num-threads, named -n, kresd instances', 1, 1, 64),
  UNBOUND_THREADS: integerOr('unbound num-threads', 'PEER_THREADS', 1, 64),
  NAMED_THREADS: integerOr('named -n (worker threads)', 'PEER_THREADS', 1, 64),
  KRESD_INSTANCES: integerOr('kresd processes (SO_REUSEPORT on one address)', 'PEER_THREADS', 1, 64),
  SERVER_CPUS: cpus('CPUs the server under test is pinned to (taskset -c)', '0'),
  LOAD_CPUS: cpus('CPUs dnsperf and the forwarding upstream are pinned to', '1'),
  CLIENTS: integer('dnsperf -c: client sockets', 4, 1, 256),
  OUTSTANDING: integer('dnsperf -q: queries in flight', 100, 1, 100000),
  DNSPERF_THREADS: integer('dnsperf -T: threads', 1, 1, 64),
  RATE: optionalInteger('dnsperf -Q: queries per second (unset: as fast as the server answers)', 1, 10000000),
  TIMEOUT: integer('dnsperf -t: seconds before a query counts as lost', 2, 1, 60),
  WARMUP: integer('seconds of load before the measured run (auth, and fwd/miss after their first pass)', 3, 0, 600),
  READY_TIMEOUT: integer('seconds a server may take to answer its first probe', 120, 1, 3600),
  PORT: integer('port the server under test listens on (127.0.0.1)', 5300, 1, 65535),
  UPSTREAM_PORT: integer('port of the forwarding upstream (127.0.0.1)', 5399, 1, 65535),
  FIXTURE: text('folder of the generated fixture (made when missing)', '.bench/fixture'),
  SERVICES: integer('Services in the generated cluster', 10000, 2, 500000),
  RESULTS: text('file the raw results are appended to, one JSON object per run', '', '.bench/results-<UTC time>.jsonl'),
  NETNS: choice('run inside a network namespace of its own: auto = when root', ['auto', 'on', 'off'], 'auto'),
  INSTALL: choice('install missing tools with apt-get (root): auto = when root', ['auto', 'off'], 'auto'),
  KEEP_RUN_DIRS: choice('keep each run\'s configs and logs (paths printed)', ['0', '1'], '0'),
} satisfies Record<string, OptionSpec<unknown>>;

export type Options = { -readonly [K in keyof typeof OPTIONS]: ReturnType<(typeof OPTIONS)[K]['parse']> };

/** Every option from `env`; all problems at once, each naming its variable. */
export function parseOptions(env: Readonly<Record<string, string | undefined>>): Options {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(OPTIONS) as Array<[string, OptionSpec<unknown>]>) {
    try {
      out[name] = spec.parse(env[name]);
    } catch (e) {
      problems.push(`${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return out as Options;
}

/** `--help`: one line per option, its default in brackets. */
export function optionsHelp(): string {
  const width = Math.max(...Object.keys(OPTIONS).map((k) => k.length));
  return Object.entries(OPTIONS)
    .map(([name, spec]) => `  ${name.padEnd(width)}  ${spec.doc} [${spec.shown}]`)
    .join('\n');
}
