#!/usr/bin/env bash
# Installs what the test suites start themselves from Debian packages, when missing: MariaDB and
# Redis (servers), Chromium (browser tests of the API docs and the console, driven by playwright-core)
# and nginx (the reference cluster), Galera and rsync (the Galera fault tests: galera-4's provider
# library and the rsync its state transfers use). No service manager is used: tests run them as
# plain processes on loopback.
set -euo pipefail

need=()
command -v mariadbd >/dev/null 2>&1 || need+=(mariadb-server)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
[ -e /usr/lib/galera/libgalera_smm.so ] || need+=(galera-4)
command -v rsync >/dev/null 2>&1 || need+=(rsync)
if [ ${#need[@]} -eq 0 ]; then
  echo "setup-services: mariadbd, redis-server, chromium, nginx, galera-4 and rsync already installed"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup-services: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
# Package scripts may try to start the services; forbid that, tests start their own.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
command -v mariadbd >/dev/null && command -v redis-server >/dev/null && command -v chromium >/dev/null
echo "setup-services: done"
