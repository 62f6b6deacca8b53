// Logging in CoreDNS's format: `[INFO] plugin/reload: Running configuration SHA512 = ...`.
// Plain lines on stdout/stderr, so `kubectl logs` reads the same as for CoreDNS.

export type Level = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';

export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
  /** A logger whose lines are prefixed `plugin/<name>: `. */
  plugin(name: string): Logger;
}

export type Sink = (level: Level, line: string) => void;

// Lines are gathered and written once per event-loop turn: a query log line then costs a string
// append instead of a write system call (the log plugin may write one per query).
const pending: { out: string; err: string } = { out: '', err: '' };
let flushScheduled = false;

function flush(): void {
  flushScheduled = false;
  if (pending.out) process.stdout.write(pending.out);
  if (pending.err) process.stderr.write(pending.err);
  pending.out = '';
  pending.err = '';
}

process.on('exit', flush);

const defaultSink: Sink = (level, line) => {
  const text = `[${level}] ${line}\n`;
  if (level === 'ERROR' || level === 'WARNING') pending.err += text;
  else pending.out += text;
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flush);
  }
};

/**
 * Debug lines are printed by every logger while a running config has the `debug` plugin
 * (process-wide, as CoreDNS's log.D): the server sets it on each start and reload.
 */
let debugPlugin = false;

export function setDebugLogging(on: boolean): void {
  debugPlugin = on;
}

export function createLogger(sink: Sink = defaultSink, prefix = '', debugEnabled = false): Logger {
  return {
    debug: (m) => {
      if (debugEnabled || debugPlugin) sink('DEBUG', prefix + m);
    },
    info: (m) => sink('INFO', prefix + m),
    warn: (m) => sink('WARNING', prefix + m),
    error: (m) => sink('ERROR', prefix + m),
    plugin: (name) => createLogger(sink, `plugin/${name}: `, debugEnabled),
  };
}
