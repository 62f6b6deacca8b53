// searchpath: on the node-local cache, tells the cluster server a pod's search list. For a name
// `NAME.search.<ns>.<zone>.ap.k8s.io` it attaches the EDNS0 option listing `<ns>.svc.<zone>`,
// `svc.<zone>`, `<zone>` and the node's search paths, the list the kubelet would have written
// into a ClusterFirst pod's resolv.conf, and passes the query on (to forward). An option of the
// same code that a client sent itself is replaced, or, on other names, removed.

import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import type { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { DnsClass } from '../../lib/dns/types.js';
import { clusterSearchPaths, isApName, parseApName } from '../pkg/apnames.js';
import { encodeSearchPaths, findOption, withOption, withoutOption } from '../pkg/searchoption.js';
import type { SearchpathConfig } from './config.js';

export class SearchpathPlugin implements Plugin {
  readonly name = 'searchpath';

  constructor(readonly config: SearchpathConfig) {}

  /** The option's bytes for a pod of `namespace` in cluster `zone`. */
  optionFor(namespace: string, zone: string): Uint8Array {
    const paths = [...clusterSearchPaths(namespace, zone)];
    for (const p of this.config.hostSearch) if (!paths.includes(p)) paths.push(p);
    return encodeSearchPaths(paths);
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const code = this.config.optionCode;
    if (req.qclass === DnsClass.IN && isApName(req.name)) {
      const ap = parseApName(req.qname);
      if (ap) return next(req.derive(req.qname, req.qtype, withOption(req.edns, code, this.optionFor(ap.namespace, ap.zone))));
    }
    if (findOption(req.edns, code)) return next(req.derive(req.qname, req.qtype, withoutOption(req.edns, code)));
    return next(req);
  }
}
