#!/bin/sh
# Keeps the node cache's DNS traffic out of connection tracking, as NodeLocal DNSCache does, for
# `kdns nodecache` (which installs no firewall rules itself; the node-cache form does, see the
# README). Run as root on the node: `notrack.sh add [IP]`, and `notrack.sh remove [IP]` when
# the cache leaves the node. IP defaults to 169.254.20.10; use ip6tables for an IPv6 address.
set -eu
action=${1:?usage: notrack.sh add|remove [IP]}
ip=${2:-169.254.20.10}
case $action in
  add) op=-I ;;
  remove) op=-D ;;
  *) echo "usage: notrack.sh add|remove [IP]" >&2; exit 2 ;;
esac
for proto in udp tcp; do
  # Queries to the cache, from pods (PREROUTING) and from the node itself (OUTPUT), and its answers.
  iptables -w -t raw $op PREROUTING -d "$ip" -p $proto --dport 53 -j NOTRACK
  iptables -w -t raw $op OUTPUT -d "$ip" -p $proto --dport 53 -j NOTRACK
  iptables -w -t raw $op OUTPUT -s "$ip" -p $proto --sport 53 -j NOTRACK
  # Untracked packets are not ESTABLISHED: let them through the filter table explicitly.
  iptables -w -t filter $op INPUT -d "$ip" -p $proto --dport 53 -j ACCEPT
  iptables -w -t filter $op OUTPUT -s "$ip" -p $proto --sport 53 -j ACCEPT
done
# The kubelet's liveness probe to /health on port 8080.
iptables -w -t raw $op OUTPUT -d "$ip" -p tcp --dport 8080 -j NOTRACK
iptables -w -t raw $op OUTPUT -s "$ip" -p tcp --sport 8080 -j NOTRACK
