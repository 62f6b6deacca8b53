// cluster-proportional-autoscaler's linear mode, written from its README and its controller's
// behaviour, so the tests can say how many DNS replicas deploy/components/proportional-autoscaler
// gives a cluster and check the figures the README states. Test code only: kdns does not run it.

/** The JSON under the `linear` key of the autoscaler's ConfigMap. */
export interface LinearParams {
  coresPerReplica: number;
  nodesPerReplica: number;
  min: number;
  /** 0: no upper bound. */
  max: number;
  preventSinglePointFailure: boolean;
  includeUnschedulableNodes: boolean;
}

/** What the autoscaler counts: every node, and the nodes that are Ready and not cordoned. */
export interface ClusterCount {
  totalNodes: number;
  totalCores: number;
  schedulableNodes: number;
  schedulableCores: number;
}

/** A cluster of `nodes` Ready, uncordoned nodes of `cores` cores each. */
export const uniformCluster = (nodes: number, cores: number): ClusterCount => ({
  totalNodes: nodes,
  totalCores: nodes * cores,
  schedulableNodes: nodes,
  schedulableCores: nodes * cores,
});

const KEYS = ['coresPerReplica', 'nodesPerReplica', 'min', 'max', 'preventSinglePointFailure', 'includeUnschedulableNodes'];

function numberField(o: Record<string, unknown>, key: string): number {
  const v = o[key] ?? 0;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`linear: ${key} must be a number, not ${JSON.stringify(v)}`);
  if (v < 0) throw new Error(`linear: ${key} must not be negative (${v})`);
  return v;
}

function booleanField(o: Record<string, unknown>, key: string): boolean {
  const v = o[key] ?? false;
  if (typeof v !== 'boolean') throw new Error(`linear: ${key} must be true or false, not ${JSON.stringify(v)}`);
  return v;
}

/**
 * The `linear` JSON as the autoscaler reads it: absent fields are 0 or false, `min` below 1
 * becomes 1, and it refuses negative numbers, `max` below `min` and a ConfigMap that sets
 * neither per-replica figure. Unlike the autoscaler (Go's JSON decoder skips them), an unknown
 * key is an error here, so a misspelt parameter in a shipped ConfigMap fails the tests.
 */
export function parseLinearParams(json: string): LinearParams {
  let o: unknown;
  try {
    o = JSON.parse(json);
  } catch (e) {
    throw new Error(`linear: not JSON: ${(e as Error).message}`);
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new Error('linear: must be a JSON object');
  const fields = o as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => !KEYS.includes(k));
  if (unknown.length > 0) throw new Error(`linear: unknown parameter ${unknown.join(', ')}`);
  const p: LinearParams = {
    coresPerReplica: numberField(fields, 'coresPerReplica'),
    nodesPerReplica: numberField(fields, 'nodesPerReplica'),
    min: Math.max(1, numberField(fields, 'min')),
    max: numberField(fields, 'max'),
    preventSinglePointFailure: booleanField(fields, 'preventSinglePointFailure'),
    includeUnschedulableNodes: booleanField(fields, 'includeUnschedulableNodes'),
  };
  if (!Number.isInteger(p.min) || !Number.isInteger(p.max)) throw new Error('linear: min and max must be whole numbers');
  if (p.max !== 0 && p.max < p.min) throw new Error(`linear: max (${p.max}) is below min (${p.min})`);
  if (p.coresPerReplica === 0 && p.nodesPerReplica === 0) throw new Error('linear: set coresPerReplica or nodesPerReplica (above 0)');
  return p;
}

/**
 * Replicas from one count: ceil(count / perReplica) clamped to [min, max]; 1 when the
 * parameter is unset (the other one then decides).
 */
function replicasFor(count: number, perReplica: number, p: LinearParams): number {
  if (perReplica === 0) return 1;
  let r = Math.ceil(count / perReplica);
  if (p.max !== 0) r = Math.min(p.max, r);
  return Math.max(p.min, r);
}

/**
 * The replicas the autoscaler sets: the larger of the counts from cores and from nodes, each
 * clamped to [min, max]; with preventSinglePointFailure, at least 2 when there is more than one
 * node (applied after the clamp, as the autoscaler does: it wins over a max of 1). Cordoned and
 * NotReady nodes count only with includeUnschedulableNodes.
 */
export function linearReplicas(p: LinearParams, c: ClusterCount): number {
  const nodes = p.includeUnschedulableNodes ? c.totalNodes : c.schedulableNodes;
  const cores = p.includeUnschedulableNodes ? c.totalCores : c.schedulableCores;
  const fromCores = replicasFor(cores, p.coresPerReplica, p);
  let fromNodes = replicasFor(nodes, p.nodesPerReplica, p);
  if (p.preventSinglePointFailure && nodes > 1 && fromNodes < 2) fromNodes = 2;
  return Math.max(fromCores, fromNodes);
}
