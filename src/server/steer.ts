// Handing a TCP listener's new connections to a successor before it closes. A node cache
// replaced by a rolling update with maxSurge leaves while its successor listens on the same
// address (SO_REUSEPORT): the kernel spreads new connections over both pods' listeners, and a
// listener that closes resets the connections waiting in it (its accept queue, and the
// handshakes under way) unless the node has net.ipv4.tcp_migrate_req=1. So the leaving listener
// first has the kernel send every new connection to the successor's sockets, then accepts and
// serves what it already holds until nothing has come for a while, and only then closes.
//
// How the kernel picks (net/core/sock_reuseport.c): the group of an address:port holds its
// listening sockets in an array, in the order they began to listen; a socket that stops
// listening (its last descriptor closed) leaves its slot to the group's last socket. A program
// set on any member (SO_ATTACH_REUSEPORT_CBPF) is the group's and returns an index for each new
// connection; an index past the end makes the kernel pick by its hash, as with no program. When
// the leaving pod's `own` sockets (its own and its sibling workers') were the group before its
// successor came, they hold indexes 0..own-1 and the successor's `others` the rest: a program
// returning own + (random mod others) reaches only the successor. As the pod's sockets close one
// by one, each hole is filled by the successor's last socket, so the successor's range shrinks
// from the top; stepsBeforeClose keeps the program inside it.

/** The listening sockets of one address's SO_REUSEPORT group: this pod's (this process's and its sibling workers'), and another process's (a successor's). */
export interface GroupShare {
  own: number;
  others: number;
}

/** Counts a listener's group, by its bound address and port; undefined when that cannot be told. */
export type GroupShareOf = (address: string, port: number) => GroupShare | undefined;

/** A program for the group: new connections to the socket at index skip + (random mod spread). */
export interface Steering {
  skip: number;
  spread: number;
}

/** The program while a leaving listener drains: every new connection to the successor's sockets; undefined when there is no successor (or nothing of ours) in the group. */
export function steerAway(start: GroupShare): Steering | undefined {
  if (start.own < 1 || start.others < 1) return undefined;
  return { skip: start.own, spread: start.others };
}

/**
 * The program to set just before a leaving listener closes, so that it holds both before and
 * after the close. `start` is the group when the hand-over began, `ownNow` this pod's sockets
 * still listening (this one included). Each of ours that closed moved the successor's last socket
 * into its slot: the successor's sockets at indexes start.own.. now end `closed` earlier, and
 * with this close one more. The last of ours leaves a program whose one index is the successor's
 * now and past the group's end afterwards, so from then on the kernel picks by its hash as if
 * no program were set (and a leftover program skews nothing). undefined: keep the current one
 * (no index is the successor's both before and after: the successor has fewer sockets than
 * this pod had).
 */
export function steerBeforeClose(start: GroupShare, ownNow: number): Steering | undefined {
  if (steerAway(start) === undefined || ownNow < 1) return undefined;
  const closed = start.own - ownNow;
  if (ownNow === 1) return start.others >= start.own ? { skip: start.others, spread: 1 } : undefined;
  const spread = start.others - closed - 1;
  return spread >= 1 ? { skip: start.own, spread } : undefined;
}

/** What the hand-over needs of a listening socket: the native calls on its descriptor, and when it last accepted. */
export interface SteeredListener {
  readonly fd: number;
  readonly address: string;
  readonly port: number;
  steer(fd: number, skip: number, spread: number): number;
  acceptQueue(fd: number): number;
  /** performance.now() of the last connection accepted. */
  lastAccept(): number;
}

/** A leaving listener stops waiting for connections once none has come, and none waits, for this long: longer than a handshake on the node takes. */
export const HANDOVER_QUIET_MS = 200;
/** ... and after this in any case. */
export const HANDOVER_LIMIT_MS = 2_000;
const POLL_MS = 10;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Steers the group's new connections to the successor, then waits while the listener still
 * takes connections (those queued before the program was set, handshakes under way); sets the
 * program for its close last. Returns at once when there is no successor to steer to, or the
 * program cannot be set: the listener then closes as before.
 */
export async function handOverConnections(l: SteeredListener, shareOf: GroupShareOf): Promise<void> {
  const start = shareOf(l.address, l.port);
  const away = start && steerAway(start);
  if (!start || !away || l.steer(l.fd, away.skip, away.spread) !== 0) return;
  const steeredAt = performance.now();
  const limit = steeredAt + HANDOVER_LIMIT_MS;
  for (;;) {
    const now = performance.now();
    const quiet = now - Math.max(steeredAt, l.lastAccept()) >= HANDOVER_QUIET_MS && l.acceptQueue(l.fd) <= 0;
    if (quiet || now >= limit) break;
    await sleep(POLL_MS);
  }
  const own = shareOf(l.address, l.port)?.own;
  const last = own === undefined ? undefined : steerBeforeClose(start, own);
  if (last) l.steer(l.fd, last.skip, last.spread);
}
