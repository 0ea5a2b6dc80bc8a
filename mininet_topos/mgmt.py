"""Out-of-band management network joining the root namespace and every Mininet host.

The controller's RPC listens in the root namespace; processes inside Mininet hosts reach it only
over a link built for that purpose (as Mininet's ``examples/sshd.py`` does). This module builds:

- a Linux bridge ``sdnmgmt<6 hex>`` in the root namespace, holding the root-side IP
  (default ``172.30.255.254/16``: the last usable address of the subnet);
- per host number ``n``, a veth pair: the root end ``mg<6 hex>-<n>`` is a port of the bridge,
  the host end ``<host>-mgmt`` is created directly in the host's namespace with the IP
  ``subnet + n`` (``172.30.0.n/16`` for n < 256).

TX/RX checksum offload is switched off on both ends, as for the fabric links. Each instance has a
random id, so several management networks can exist at once; they must use different subnets,
since each puts its subnet's route into the root namespace.
"""
import ipaddress
import logging
import secrets
import subprocess

LOG = logging.getLogger(__name__)

DEFAULT_SUBNET = "172.30.0.0/16"
BRIDGE_PREFIX = "sdnmgmt"


def run_cmd(args, pid=None, check=True):
    """Run a command in the root namespace, or in the namespaces of ``pid`` via mnexec.

    Returns the CompletedProcess; raises RuntimeError with the command's output if ``check``
    and it failed.
    """
    argv = [str(a) for a in args]
    if pid is not None:
        argv = ["mnexec", "-a", str(pid)] + argv
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), proc.returncode,
                                                   proc.stdout.strip()))
    return proc


def link_names():
    """Names of all network interfaces in the root namespace."""
    out = run_cmd(["ip", "-o", "link", "show"]).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.add(parts[1].strip().split("@", 1)[0])
    return names


def overlapping_addresses(network):
    """IPv4 interface addresses ('dev addr/len') of the root namespace that overlap ``network``."""
    out = run_cmd(["ip", "-o", "-4", "addr", "show"]).stdout
    clash = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "inet":
            iface = ipaddress.ip_interface(fields[3])
            if iface.network.overlaps(network):
                clash.append("%s %s" % (fields[1], fields[3]))
    return clash


class MgmtNetwork:
    """A management bridge plus one veth per host; see the module docstring.

    ``members`` is a sequence of ``(host, n)``: a Mininet host (needs ``.name`` and ``.pid``)
    and its number, the same ``n`` as in its fabric IP.
    """

    def __init__(self, members, subnet=DEFAULT_SUBNET, root_ip=None):
        self.members = list(members)
        self.network = ipaddress.ip_network(subnet)
        self.subnet = str(self.network)
        last = self.network.broadcast_address - 1
        self.root_ip = root_ip or str(last)
        self.uid = secrets.token_hex(3)
        self.bridge = BRIDGE_PREFIX + self.uid
        self.started = False

    def host_ip(self, n):
        """Management IP of host number ``n`` (without prefix length)."""
        addr = self.network.network_address + n
        if addr not in self.network or str(addr) == self.root_ip or n < 1:
            raise ValueError("host number %d does not fit subnet %s" % (n, self.subnet))
        return str(addr)

    def root_veth(self, n):
        """Name of the root-side veth of host number ``n`` (<= 15 characters)."""
        return "mg%s-%d" % (self.uid, n)

    @staticmethod
    def host_veth(host):
        """Name of the management interface inside ``host``."""
        return "%s-mgmt" % host.name

    def host_ips(self):
        """Mapping host name -> management IP."""
        return {host.name: self.host_ip(n) for host, n in self.members}

    def interfaces(self):
        """Root-namespace interfaces this network creates (bridge first)."""
        return [self.bridge] + [self.root_veth(n) for _host, n in self.members]

    def start(self):
        """Create the bridge and the veths; on failure, remove what was created and re-raise.

        Refuses (RuntimeError) a subnet that overlaps an address already in the root namespace,
        e.g. another management network's: the two would fight over the route.
        """
        clash = overlapping_addresses(self.network)
        if clash:
            raise RuntimeError("management subnet %s overlaps %s already in use in the root "
                               "namespace: choose another subnet" % (self.subnet, clash))
        try:
            self._create_bridge()
            for host, n in self.members:
                self._attach_host(host, n)
        except Exception:
            self.teardown()
            raise
        self.started = True
        LOG.info("management network %s (%s, root %s) with %d hosts",
                 self.bridge, self.subnet, self.root_ip, len(self.members))

    def _create_bridge(self):
        """Bridge with the root IP, up."""
        run_cmd(["ip", "link", "add", self.bridge, "type", "bridge"])
        run_cmd(["ip", "addr", "add", "%s/%d" % (self.root_ip, self.network.prefixlen),
                 "dev", self.bridge])
        run_cmd(["ip", "link", "set", self.bridge, "up"])

    def _attach_host(self, host, n):
        """veth pair: root end on the bridge, host end in the host's namespace with its IP."""
        root_end, host_end = self.root_veth(n), self.host_veth(host)
        run_cmd(["ip", "link", "add", root_end, "type", "veth",
                 "peer", "name", host_end, "netns", host.pid])
        run_cmd(["ip", "link", "set", root_end, "master", self.bridge])
        run_cmd(["ethtool", "-K", root_end, "tx", "off", "rx", "off"])
        run_cmd(["ip", "link", "set", root_end, "up"])
        prefix = "%s/%d" % (self.host_ip(n), self.network.prefixlen)
        run_cmd(["ip", "addr", "add", prefix, "dev", host_end], pid=host.pid)
        run_cmd(["ethtool", "-K", host_end, "tx", "off", "rx", "off"], pid=host.pid)
        run_cmd(["ip", "link", "set", host_end, "up"], pid=host.pid)

    def teardown(self):
        """Delete this network's veths and bridge (only those). Safe to call repeatedly."""
        present = link_names()
        for name in reversed(self.interfaces()):
            if name in present:
                proc = run_cmd(["ip", "link", "del", name], check=False)
                if proc.returncode != 0:
                    LOG.warning("could not delete %s: %s", name, proc.stdout.strip())
        self.started = False
