// What iptables-save shows of node-cache's rules: the expected lines, written out, and the
// NodeLocal lines picked from real iptables-save output.

/** The rules iptables-save (ip6tables-save for an IPv6 address) prints for one local address (DNS on 53, health on 8080), in a chain's order after ensure(). */
export function savedRules(address: string): string[] {
  const ip = address.includes(':') ? `${address}/128` : `${address}/32`;
  const skipCt = '-m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK';
  const allow = '-m comment --comment "NodeLocal DNS Cache: allow DNS traffic" -j ACCEPT';
  return [
    `-A PREROUTING -d ${ip} -p udp -m udp --dport 53 ${skipCt}`,
    `-A PREROUTING -d ${ip} -p tcp -m tcp --dport 53 ${skipCt}`,
    `-A OUTPUT -s ${ip} -p tcp -m tcp --sport 8080 ${skipCt}`,
    `-A OUTPUT -d ${ip} -p tcp -m tcp --dport 8080 ${skipCt}`,
    `-A OUTPUT -d ${ip} -p udp -m udp --dport 53 ${skipCt}`,
    `-A OUTPUT -d ${ip} -p tcp -m tcp --dport 53 ${skipCt}`,
    `-A OUTPUT -s ${ip} -p udp -m udp --sport 53 ${skipCt}`,
    `-A OUTPUT -s ${ip} -p tcp -m tcp --sport 53 ${skipCt}`,
    `-A INPUT -d ${ip} -p udp -m udp --dport 53 ${allow}`,
    `-A INPUT -d ${ip} -p tcp -m tcp --dport 53 ${allow}`,
    `-A OUTPUT -s ${ip} -p udp -m udp --sport 53 ${allow}`,
    `-A OUTPUT -s ${ip} -p tcp -m tcp --sport 53 ${allow}`,
  ];
}

/** The NodeLocal rules of iptables-save's output, table by table ("*raw" / "*filter" lines kept). */
export function nodeLocalRules(save: string): string[] {
  return save.split('\n').filter((l) => l === '*raw' || l === '*filter' || l.includes('NodeLocal DNS Cache'));
}

/** savedRules of each address, grouped by table as iptables-save prints them (later addresses first: each is prepended). */
export function expectedSave(ips: readonly string[]): string[] {
  const all = [...ips].reverse().map(savedRules);
  const raw = all.flatMap((r) => r.slice(0, 2)).concat(all.flatMap((r) => r.slice(2, 8)));
  const filter = all.flatMap((r) => r.slice(8, 10)).concat(all.flatMap((r) => r.slice(10, 12)));
  return ['*raw', ...raw, '*filter', ...filter];
}
