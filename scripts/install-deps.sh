#!/usr/bin/env bash
# Installs everything sdnmpi needs on Debian 12, as root. Idempotent: safe to run again.
#   apt packages (Open vSwitch, Mininet, Open MPI, msgpack-c, tools), the project venv (.venv)
#   with Ryu 4.34 and its Python 3.11 fixes, and the sdnmpi package in editable mode.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

APT_PACKAGES=(
  build-essential pkg-config python3-venv python3-dev
  openvswitch-switch mininet
  openmpi-bin libopenmpi-dev libmsgpack-dev
  iputils-ping iperf3 ethtool nftables iproute2 procps lldpd
  zlib1g-dev mpich libmpich-dev hpcc
  prometheus chromium chromium-driver
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian's lldpd package would start its own agent where an init system exists; we only use its
# binary in tests, so keep the service stopped if it was started.
if command -v service >/dev/null 2>&1; then service lldpd stop >/dev/null 2>&1 || true; fi

VENV="$here/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  # System site-packages: Mininet is installed by apt into /usr/bin/python3's dist-packages.
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
stamp="$VENV/.sdnmpi-deps"
if [ ! -f "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ setup.py -nt "$stamp" ] \
   || ! "$VENV/bin/python" -c 'import sdnmpi.controller' 2>/dev/null; then
  # Ryu 4.34's setup.py needs pbr and a setuptools that still has easy_install's script helpers,
  # and it fails in pip's isolated build environment: build it in the venv itself.
  "$VENV/bin/pip" install -q --upgrade 'pip>=23.1'
  "$VENV/bin/pip" install -q 'setuptools>=64,<68' wheel pbr
  "$VENV/bin/pip" install -q --no-build-isolation -r requirements.txt
  "$VENV/bin/pip" install -q --no-build-isolation -e .
  touch "$stamp"
fi
# Ryu 4.34 on Python 3.11: see sdnmpi/ryu_compat.py. A .pth file applies the fix in every
# interpreter of the venv, so the stock `ryu-manager` works.
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "import sdnmpi.ryu_compat" > "$site/sdnmpi-ryu-compat.pth"
"$VENV/bin/python" -c 'import ryu.cmd.manager, ryu.app.wsgi'

make -C "$here" build

echo "install-deps: ok ($VENV)"
