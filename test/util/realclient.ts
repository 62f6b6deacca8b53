// Real glibc and musl getaddrinfo() in network namespaces, for tests: the rig in ./realclient/
// (README.md there says how it works). Tests load it with loadRealClient(), which checks the
// machine and builds the two lookup clients on demand, and skip with its `skip` outside CI.

import { buildClients, namespacesUnavailable } from './realclient/build.js';
import { startRecorder, type Recorder, type RecorderOptions } from './realclient/recorder.js';
import { runClient, type ClientResult, type RunClientOptions } from './realclient/run.js';

export { LIBCS, type Libc } from './realclient/build.js';
export { nameserversOf, parseRoute } from './realclient/plan.js';
export { startRecorder, type RecordedQuery, type Recorder, type RecorderOptions, type Zone, type ZoneEntry } from './realclient/recorder.js';
export { runClient, type ClientQuery, type ClientResult, type Family, type RunClientOptions } from './realclient/run.js';

export interface RealClientHarness {
  runClient(opts: RunClientOptions): Promise<ClientResult>;
  startRecorder(opts: RecorderOptions): Promise<Recorder>;
}

export interface LoadedRealClient {
  /** Present when real clients can run here. */
  harness?: RealClientHarness;
  /** Why they cannot ('' when they can). */
  reason: string;
  /**
   * For node:test's `skip`: the reason outside CI, false when the rig runs or under CI=true
   * (where a missing piece must fail the test: use `assert.ok(loaded.harness, loaded.reason)`).
   */
  skip: string | false;
}

/** Why real clients cannot run here (not root, no namespaces, a compiler missing), or false. Builds them when needed. */
export function realClientUnavailable(): string | false {
  const missing = namespacesUnavailable();
  if (missing) return missing;
  const built = buildClients();
  return built.ok ? false : built.reason;
}

export async function loadRealClient(): Promise<LoadedRealClient> {
  const reason = realClientUnavailable();
  if (reason === false) return { harness: { runClient, startRecorder }, reason: '', skip: false };
  const skip = process.env.CI === 'true' ? false : `realclient unavailable: ${reason}`;
  return { reason, skip };
}
