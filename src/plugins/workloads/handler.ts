// workloads: counts every query against the workload of the pod that sent it, once the rest of
// the chain has answered (so the rcode is the one the client gets).

import { RCode } from '../../lib/dns/types.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import type { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { Accounting, PodIndex } from './accounting.js';

export class WorkloadsPlugin implements Plugin {
  readonly name = 'workloads';

  constructor(
    private readonly acc: Accounting,
    /** The pod index (the block's kubernetes plugin's, or the plugin's own source); absent = every client unknown. */
    private readonly pods: () => PodIndex | undefined,
    private readonly onStart?: () => Promise<void>,
    private readonly onStop?: () => Promise<void> | undefined,
  ) {}

  async start(): Promise<void> {
    await this.onStart?.();
  }

  async stop(): Promise<void> {
    await this.onStop?.();
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const result = next(req);
    if (result instanceof Promise) {
      return result.then(
        (reply) => {
          this.count(req, reply);
          return reply;
        },
        (e: unknown) => {
          this.count(req, undefined);
          throw e;
        },
      );
    }
    this.count(req, result);
    return result;
  }

  private count(req: DnsRequest, reply: Reply | undefined): void {
    try {
      const client = this.acc.client(req.client.remoteAddress, this.pods());
      this.acc.record(client, req.name, req.qtype, reply ? reply.rcode : RCode.SERVFAIL);
    } catch {
      // Accounting must never change an answer.
    }
  }
}
