// `autopath` setup: read the directive (and the resolv.conf it names), then build the handler.
// The block's kubernetes plugin sets up after autopath (plugin order), so it is looked up at start.

import { CorefileError } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { instanceKey } from '../kubernetes/index.js';
import { readOrUndefined } from '../pkg/hostsearch.js';
import { serverLabel } from '../pkg/metrics.js';
import { parseAutopath } from './config.js';
import { AutopathPlugin, type KubernetesView } from './handler.js';
import { autopathMetrics } from './metrics.js';

export const setup: SetupFn = (ctx) => {
  const d = ctx.directive;
  const once = `autopath@${ctx.block.file}:${ctx.block.line}`;
  if (ctx.instance.has(once)) throw CorefileError.at(d, 'autopath can only be used once per server block');
  ctx.instance.set(once, true);
  const config = parseAutopath(d, ctx.block.zones, ctx.corefilePath, readOrUndefined);
  const server = serverLabel(ctx.block.settings.listenAddresses[0] ?? '', ctx.block.port);
  const kubernetesKey = instanceKey(ctx.block.file, ctx.block.line);
  return new AutopathPlugin(config, {
    metrics: autopathMetrics(ctx.shared.metrics, server),
    log: ctx.shared.log.plugin('autopath'),
    findKubernetes: () => ctx.instance.get(kubernetesKey) as KubernetesView | undefined,
    configError: (message) => CorefileError.at(d, message),
  });
};
