// The kubernetes plugin's public interface: everything other plugins may use of it, and the only
// file of this folder they import (src/plugins/imports.test.ts checks). What is not here is the
// plugin's own business and may change without looking outside the folder.
//
//  - workloads reads the same cluster as the kubernetes plugin through the shared sources
//    (SourceRegistry: one watch per cluster for the whole config) and its source properties
//    (`endpoint`, `kubeconfig`, `manifests`, ...);
//  - autopath and k8s_external find the kubernetes plugin of their server block (instanceKey);
//  - k8s_external answers from that plugin's store, naming endpoints as it does
//    (endpointHostname);
//  - other plugins' tests build a kubernetes plugin (parseKubernetes, KubernetesPlugin) and check
//    its limits (MAX_KEPT_NAME_ERRORS).

export { apiSource, namedSource, parseKubernetes, readSourceProperty, type KubernetesConfig, type SourceProperties, type SourceSpec } from './config.js';
export { KubernetesPlugin, MAX_KEPT_NAME_ERRORS } from './handler.js';
export { endpointHostname } from './resolve.js';
export { checkManifestsDirectory, instanceKey } from './setup.js';
export { SourceRegistry, type SourceHandle, type SourceNeeds } from './sources.js';
