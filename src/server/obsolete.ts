// Directives and plugin options that CoreDNS once had and has since removed. CoreDNS refuses
// them ("Unknown directive", "unknown property"); kdns refuses them too, and says what to
// write instead, since these lines mostly come from Corefiles written for older releases.

/** Removed directive → why and what to use instead. */
const REMOVED_DIRECTIVES: ReadonlyMap<string, string> = new Map([
  ['proxy', 'proxy was removed in CoreDNS 1.5.0; use forward (e.g. "forward . /etc/resolv.conf")'],
  ['federation', 'federation was removed in CoreDNS 1.6.3 (it became an external plugin kdns does not include); serve the federated names with forward or file'],
  ['reverse', 'reverse was removed in CoreDNS 1.1.4; use template to synthesize PTR answers'],
]);

/** `plugin → option → advice` for options a plugin's block no longer takes. */
const REMOVED_OPTIONS: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map([
  [
    'kubernetes',
    new Map([
      ['upstream', 'upstream was removed from kubernetes in CoreDNS 1.7.0; delete the line (external names are resolved through the server itself)'],
      ['resyncperiod', 'resyncperiod was removed from kubernetes in CoreDNS 1.7.0; delete the line'],
    ]),
  ],
]);

/** Advice for a directive CoreDNS removed, or undefined when `name` is not one. */
export function removedDirective(name: string): string | undefined {
  return REMOVED_DIRECTIVES.get(name);
}

/** Advice for an option `plugin` no longer takes, or undefined. */
export function removedOption(plugin: string, option: string): string | undefined {
  return REMOVED_OPTIONS.get(plugin)?.get(option);
}
