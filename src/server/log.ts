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

const defaultSink: Sink = (level, line) => {
  const out = level === 'ERROR' || level === 'WARNING' ? process.stderr : process.stdout;
  out.write(`[${level}] ${line}\n`);
};

export function createLogger(sink: Sink = defaultSink, prefix = '', debugEnabled = false): Logger {
  return {
    debug: (m) => {
      if (debugEnabled) sink('DEBUG', prefix + m);
    },
    info: (m) => sink('INFO', prefix + m),
    warn: (m) => sink('WARNING', prefix + m),
    error: (m) => sink('ERROR', prefix + m),
    plugin: (name) => createLogger(sink, `plugin/${name}: `, debugEnabled),
  };
}
