#!/usr/bin/env bash
# Installs the Debian packages the bench needs (named, unbound, kresd, dnsmasq, dnsperf) without
# leaving a system DNS daemon running: the bench starts its own instances on loopback, and a
# packaged daemon would hold port 53 and a CPU on a machine meant for measuring.
#
#   bash bench/install.sh PACKAGE...      (as root; npm run bench calls it for what is missing)
#
# While apt-get runs, /usr/sbin/policy-rc.d answers 101 ("action forbidden"), so the packages'
# maintainer scripts do not start their services (invoke-rc.d and deb-systemd-invoke both ask
# it); it is removed again unless it was there before. Any daemon that starts anyway is stopped
# by its PID, and units the install enabled are disabled, so a reboot does not start them either.
set -euo pipefail
[ $# -gt 0 ] || exit 0
[ "$(id -u)" = 0 ] || { echo "install.sh: apt-get needs root" >&2; exit 1; }

daemons="named unbound kresd kres-cache-gc dnsmasq"
units="named.service bind9.service unbound.service unbound-resolvconf.service kresd@1.service kres-cache-gc.service dnsmasq.service"

daemon_pids() { for d in $daemons; do pgrep -x "$d" || true; done | sort -n; }
enabled_units() {
  command -v systemctl >/dev/null || return 0
  for u in $units; do
    [ "$(systemctl is-enabled "$u" 2>/dev/null || true)" = enabled ] && echo "$u"
  done
  return 0
}

pids_before="$(daemon_pids)"
units_before="$(enabled_units)"

if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "$@"

for pid in $(daemon_pids); do
  grep -qx "$pid" <<<"$pids_before" && continue
  echo "install.sh: stopping $(cat "/proc/$pid/comm" 2>/dev/null || echo '?') (PID $pid), started by the install" >&2
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
done
for u in $(enabled_units); do
  grep -qx "$u" <<<"$units_before" && continue
  echo "install.sh: disabling $u (enabled by the install)" >&2
  systemctl disable "$u" >/dev/null 2>&1 || true
done
