// kdns as a library: what a Kubernetes tool imports from the `kdns` package. The same functions
// the `kdns` commands and the admission webhook run, all pure (no cluster, no network, no files
// read behind the caller's back unless a Corefile imports one):
//
//   - pod DNS: the resolv.conf the kubelet writes for a pod (computePodDNS), the node's
//     resolv.conf as the kubelet parses it and a resolv.conf as text;
//   - validation of a pod-bearing object as the API server would (validatePodObject);
//   - explain: the queries glibc or musl send for a name under a pod's resolv.conf;
//   - the admission webhook's decision for a Pod (decideAdmission);
//   - the Corefile parser;
//   - the DNS wire format: encode and decode a message.
//
// Nothing here loads the Kubernetes API client: importing `kdns` costs only these modules.

// ---- pod DNS --------------------------------------------------------------------------------

export { computePodDNS, podDNSType } from './poddns/compute.js';
export type { NodeDNSSettings, PodDNSInput, PodDNSResult, PodDNSType } from './poddns/compute.js';
export { parseHostResolvConf, renderResolvConf } from './poddns/resolvconf.js';
export type { HostFileProblem, HostFileResult, ResolvConf } from './poddns/resolvconf.js';
export type { DNSPolicy, PodDNSConfig, PodDNSConfigOption, PodDNSParams, PodSpec } from './lib/cluster/types.js';

// ---- validation -----------------------------------------------------------------------------

export { validatePodObject } from './poddns/validate.js';
export type { APIServerKind, PodValidationSettings } from './poddns/validate.js';
export { formatFieldError } from './lib/cluster/field.js';
export type { ErrorReason, FieldError } from './lib/cluster/field.js';

// ---- explain: the query model ---------------------------------------------------------------

export { explainPolicy, formatPolicy } from './poddns/explain.js';
export type { ExplainRequest, PolicyExplanation } from './poddns/explain.js';
export { predictLookup } from './poddns/queries.js';
export type { Family, Libc, LookupResult, LookupStep, NameOracle, Outcome, PredictedQuery, Prediction, PredictOptions, StepOutcome } from './poddns/queries.js';

// ---- admission --------------------------------------------------------------------------------

export { decideAdmission } from './poddns/admission.js';
export type { AdmissionDecision, AdmissionInput, AdmissionSettings, AdmittedPod, JsonPatchOp } from './poddns/admission.js';
export type { KdnsPolicy } from './poddns/annotations.js';

// ---- Corefile ---------------------------------------------------------------------------------

export { CorefileError, parseCorefile } from './lib/corefile/index.js';
export type { Directive, Env, ParseOptions, Position, ServerBlock } from './lib/corefile/index.js';

// ---- DNS wire format --------------------------------------------------------------------------

export { decodeMessage, DnsFormatError, encodeMessage } from './lib/dns/codec.js';
export type { EncodeOptions } from './lib/dns/codec.js';
export { DnsClass, Opcode, RCode, RRType } from './lib/dns/types.js';
export type {
  AddressData,
  Edns,
  EdnsOption,
  HINFOData,
  Message,
  MXData,
  NameData,
  OpaqueData,
  Question,
  RData,
  ResourceRecord,
  SOAData,
  SRVData,
  TXTData,
} from './lib/dns/types.js';
export { rcodeName, rrToString, typeName } from './lib/dns/rr.js';
