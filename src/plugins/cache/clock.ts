// A millisecond clock for the hit path that does not ask the OS on every query: Date.now()
// costs tens of nanoseconds, a good share of a whole cache hit. A timer refreshes the value
// every few milliseconds; TTLs count in whole seconds, so the error does not show.
const TICK_MS = 5;
let now = Date.now();
let timer: NodeJS.Timeout | undefined;

/** Milliseconds since the epoch, at most a few milliseconds behind. */
export function coarseNow(): number {
  if (timer === undefined) {
    timer = setInterval(() => {
      now = Date.now();
    }, TICK_MS);
    // Never keeps the process alive: an idle server has no hits to time.
    timer.unref();
    now = Date.now();
  }
  return now;
}
