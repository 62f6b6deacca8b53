// What the startup log and --help say about how UDP is served (kept apart from the listeners,
// so a command's help and a parent process load no socket code).

/** The startup log's note on how UDP is served; says how to get the faster socket when missing. */
export function udpNote(via: 'native' | 'dgram' | undefined): string {
  if (via !== 'dgram') return '';
  return process.env.KDNS_UDP === 'dgram' ? '; udp via node:dgram, as KDNS_UDP=dgram asks' : '; udp via node:dgram: the native socket is not built (npm run build:native)';
}

/** The `--help` text on KDNS_UDP and KDNS_SUPERVISE, shared by the commands that serve DNS (serve, nodecache). */
export const UDP_ENV_HELP =
  "\nEnvironment:\n  KDNS_UDP=dgram  serve UDP through node:dgram instead of kdns's batched native socket\n                  (the fallback when the socket is not built; see npm run build:native)\n" +
  '  KDNS_SUPERVISE=1|0\n                  run as a parent holding the DNS sockets and a worker serving them, restarted\n                  on a crash (default: on for the node cache, off for serve; a Corefile\'s multisocket N\n                  always starts N workers; 0 serves from one process)\n';
