"""Mininet topologies of the sdnmpi fabric: a 2-tier leaf-spine and a 3-tier k-ary fat-tree.

Both topologies are deterministic, so that tests and the controller can rely on names, DPIDs,
port numbers and addresses:

- Hosts are ``h1..hN`` in switch order. Host ``n`` has the fabric IP ``10.0.(n//256).(n%256)/8``
  (``10.0.0.n`` for n <= 255) and the MAC ``00:00:00:00:HH:LL`` with ``HH:LL`` = n as 16 bits.
  The host's only fabric interface is port 0 (``hN-eth0``).
- Every link is a :class:`mininet.link.TCLink` with checksum offload off (``txo=False,
  rxo=False``): TCP through the userspace Open vSwitch datapath fails otherwise.
  Bandwidths are in Mbit/s; ``None`` means unlimited.

:class:`LeafSpineTopo` -- spines ``s1..``, leaves ``l1..``:
  DPIDs spine i = 0x0100+i, leaf i = 0x0200+i. On a leaf, host ports are 1..H (H hosts per leaf)
  and the uplink to spine j is port H+j; on a spine, port i goes to leaf i.

:class:`FatTreeTopo` -- cores ``c1..``, aggregation ``a1..``, edge ``e1..``, k pods:
  DPIDs edge i = 0x0100+i, aggregation i = 0x0200+i, core i = 0x0300+i (so k <= 22).
  Pod p (1-based) holds edges and aggregations (p-1)*k/2+1 .. p*k/2. Edge switch ports 1..k/2
  go to its hosts, port k/2+m to the m-th aggregation switch of its pod. Aggregation ports
  1..k/2 go to the edges of the pod, port k/2+m to the m-th of its cores. Aggregation m of a pod
  (1-based within the pod) connects to cores (m-1)*k/2+1 .. m*k/2; on a core, port p goes to pod p.

Switch names can carry a ``prefix`` (default none): switch names become bridge and interface
names in the root network namespace, so two networks running at the same time must use different
prefixes. Host names never need one (their interfaces live in the hosts' namespaces).
"""
import ipaddress
import logging

from mininet.link import TCLink
from mininet.topo import Topo

LOG = logging.getLogger(__name__)

FABRIC_SUBNET = "10.0.0.0/8"
MAX_HOSTS = 0xFFFF
_MAX_TIER_INDEX = 0xFF
IFNAMSIZ = 15  # longest Linux interface name


def host_ip(n, with_prefix=False):
    """Fabric IP of host number ``n`` (1-based): 10.0.(n//256).(n%256), optionally with '/8'."""
    if not 1 <= n <= MAX_HOSTS:
        raise ValueError("host number out of range: %r" % (n,))
    network = ipaddress.ip_network(FABRIC_SUBNET)
    addr = str(network.network_address + n)
    return "%s/%d" % (addr, network.prefixlen) if with_prefix else addr


def host_mac(n):
    """MAC address of host number ``n``: 00:00:00:00:HH:LL."""
    if not 1 <= n <= MAX_HOSTS:
        raise ValueError("host number out of range: %r" % (n,))
    return "00:00:00:00:%02x:%02x" % (n >> 8, n & 0xFF)


def dpid_str(value):
    """A DPID as the 16-hex-digit string Mininet and Ryu's REST API use."""
    return "%016x" % value


def check_ifname(switch, port):
    """Raise ValueError if Mininet's interface name ``<switch>-eth<port>`` is too long."""
    name = "%s-eth%d" % (switch, port)
    if len(name) > IFNAMSIZ:
        raise ValueError("interface name %r longer than %d characters: use a shorter prefix"
                         % (name, IFNAMSIZ))


def tier_dpid(tier, index):
    """DPID ``tier * 0x100 + index`` (index 1-based, at most 255)."""
    if not 1 <= index <= _MAX_TIER_INDEX:
        raise ValueError("switch index %d does not fit the DPID scheme" % index)
    return dpid_str((tier << 8) + index)


class FabricTopo(Topo):
    """Common part of the sdnmpi topologies: host/switch bookkeeping and link parameters.

    Subclasses fill ``self.tiers`` (tier name -> list of switch names, top tier first) and add
    hosts and links with :meth:`add_fabric_host` and :meth:`add_fabric_link`.
    """

    def __init__(self, host_bw=40, fabric_bw=20, prefix="", **params):
        self.host_bw = host_bw
        self.fabric_bw = fabric_bw
        self.prefix = prefix
        self.tiers = {}
        self.host_names = []
        self.host_index = {}
        self.dpids = {}
        self._switch_link_count = 0
        Topo.__init__(self, **params)

    @property
    def switch_names(self):
        """All switch names, top tier first."""
        return [name for names in self.tiers.values() for name in names]

    @property
    def expected_switch_links(self):
        """Number of (undirected) switch-to-switch links."""
        return self._switch_link_count

    @property
    def expected_host_links(self):
        """Number of host-to-switch links (one per host)."""
        return len(self.host_names)

    def host_ips(self):
        """Mapping host name -> fabric IP (without prefix length)."""
        return {name: host_ip(self.host_index[name]) for name in self.host_names}

    def add_tier_switch(self, tier, base_name, tier_id, index):
        """Add switch ``<prefix><base_name><index>`` with DPID tier_id*0x100+index."""
        name = "%s%s%d" % (self.prefix, base_name, index)
        dpid = tier_dpid(tier_id, index)
        self.addSwitch(name, dpid=dpid)
        self.tiers.setdefault(tier, []).append(name)
        self.dpids[name] = dpid
        return name

    def add_fabric_host(self, switch, switch_port):
        """Add the next host ``hN`` and link its port 0 to ``switch``:``switch_port``."""
        n = len(self.host_names) + 1
        name = "h%d" % n
        check_ifname(switch, switch_port)
        self.addHost(name, ip=host_ip(n, with_prefix=True), mac=host_mac(n))
        self.host_names.append(name)
        self.host_index[name] = n
        self.addLink(name, switch, port1=0, port2=switch_port,
                     **self._link_opts(self.host_bw))
        return name

    def add_fabric_link(self, lower, lower_port, upper, upper_port):
        """Link switch ``lower``:``lower_port`` to switch ``upper``:``upper_port``."""
        check_ifname(lower, lower_port)
        check_ifname(upper, upper_port)
        self.addLink(lower, upper, port1=lower_port, port2=upper_port,
                     **self._link_opts(self.fabric_bw))
        self._switch_link_count += 1

    @staticmethod
    def _link_opts(bandwidth):
        """TCLink options: offload off (mandatory with userspace OVS), optional rate limit."""
        opts = {"cls": TCLink, "txo": False, "rxo": False}
        if bandwidth is not None:
            opts["bw"] = bandwidth
        return opts


class LeafSpineTopo(FabricTopo):
    """2-tier leaf-spine fat-tree: every leaf connects to every spine (see module docstring)."""

    def __init__(self, spines=2, leaves=4, hosts_per_leaf=2, host_bw=40, fabric_bw=20,
                 prefix="", **params):
        if spines < 1 or leaves < 1 or hosts_per_leaf < 0:
            raise ValueError("need spines >= 1, leaves >= 1, hosts_per_leaf >= 0")
        self.spines = spines
        self.leaves = leaves
        self.hosts_per_leaf = hosts_per_leaf
        FabricTopo.__init__(self, host_bw=host_bw, fabric_bw=fabric_bw, prefix=prefix, **params)

    @property
    def spine_names(self):
        """Spine switch names s1..sS (with prefix)."""
        return self.tiers["spine"]

    @property
    def leaf_names(self):
        """Leaf switch names l1..lL (with prefix)."""
        return self.tiers["leaf"]

    def build(self, *args, **params):
        """Create spines, leaves, hosts and links in a deterministic order."""
        spines = [self.add_tier_switch("spine", "s", 1, i) for i in range(1, self.spines + 1)]
        leaves = [self.add_tier_switch("leaf", "l", 2, i) for i in range(1, self.leaves + 1)]
        for leaf in leaves:
            for port in range(1, self.hosts_per_leaf + 1):
                self.add_fabric_host(leaf, port)
        for leaf_no, leaf in enumerate(leaves, start=1):
            for spine_no, spine in enumerate(spines, start=1):
                self.add_fabric_link(leaf, self.hosts_per_leaf + spine_no, spine, leaf_no)
        LOG.debug("leaf-spine: %d spines, %d leaves, %d hosts",
                  self.spines, self.leaves, len(self.host_names))


class FatTreeTopo(FabricTopo):
    """3-tier k-ary fat-tree: k pods, (k/2)^2 cores, k^3/4 hosts (see module docstring)."""

    def __init__(self, k=4, host_bw=40, fabric_bw=20, prefix="", **params):
        if k < 2 or k % 2 or k * k // 2 > _MAX_TIER_INDEX:
            raise ValueError("k must be even, 2 <= k <= 22, got %r" % (k,))
        self.k = k
        FabricTopo.__init__(self, host_bw=host_bw, fabric_bw=fabric_bw, prefix=prefix, **params)

    @property
    def core_names(self):
        """Core switch names c1.. (with prefix)."""
        return self.tiers["core"]

    @property
    def agg_names(self):
        """Aggregation switch names a1.. (with prefix)."""
        return self.tiers["agg"]

    @property
    def edge_names(self):
        """Edge switch names e1.. (with prefix)."""
        return self.tiers["edge"]

    def build(self, *args, **params):
        """Create cores, aggregation and edge switches, hosts and links."""
        half = self.k // 2
        cores = [self.add_tier_switch("core", "c", 3, i) for i in range(1, half * half + 1)]
        aggs = [self.add_tier_switch("agg", "a", 2, i) for i in range(1, self.k * half + 1)]
        edges = [self.add_tier_switch("edge", "e", 1, i) for i in range(1, self.k * half + 1)]
        for edge in edges:
            for port in range(1, half + 1):
                self.add_fabric_host(edge, port)
        for pod in range(self.k):
            pod_aggs = aggs[pod * half:(pod + 1) * half]
            pod_edges = edges[pod * half:(pod + 1) * half]
            self._link_pod(pod_edges, pod_aggs)
            self._link_cores(pod + 1, pod_aggs, cores)
        LOG.debug("fat-tree k=%d: %d switches, %d hosts",
                  self.k, len(self.switch_names), len(self.host_names))

    def _link_pod(self, pod_edges, pod_aggs):
        """Full bipartite edge-aggregation mesh inside one pod."""
        half = self.k // 2
        for edge_no, edge in enumerate(pod_edges, start=1):
            for agg_no, agg in enumerate(pod_aggs, start=1):
                self.add_fabric_link(edge, half + agg_no, agg, edge_no)

    def _link_cores(self, pod, pod_aggs, cores):
        """Aggregation m of the pod goes to cores (m-1)*k/2+1 .. m*k/2, on core port ``pod``."""
        half = self.k // 2
        for agg_no, agg in enumerate(pod_aggs):
            for up in range(half):
                core = cores[agg_no * half + up]
                self.add_fabric_link(agg, half + up + 1, core, pod)
