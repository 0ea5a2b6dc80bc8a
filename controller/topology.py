"""The discovered topology: switches and their ports, switch links, and hosts. Plain state.

Every mutating method returns True when the change matters for routing, so the caller knows when
to recompute routes. Time is passed in (monotonic seconds), which keeps this testable.

A host in the table is *confirmed* at its (switch, port). No frame (LLDP, ARP or IPv4 learning)
moves it elsewhere, nor gives its IP to a host on another port: such a claim is refused and
counted (`refused`). A host leaves only when its port goes down, its port turns out to be a
switch link, its LLDP agent says goodbye (TTL 0, at its own port) or its LLDP hold expires; after
that it may be learned anywhere. At most MAX_HOSTS_PER_PORT hosts are learned at one edge port;
a new MAC beyond that is refused and counted (`port_full`), the port's hosts stay. So a host that
sends forged frames disturbs only its own port, and adds at most MAX_HOSTS_PER_PORT - 1 hosts.
"""
import dataclasses
import logging

from ryu.lib import dpid as dpid_lib

from sdnmpi.primitives import fabric

from . import sparselog

LOG = logging.getLogger(__name__)

SOURCE_LLDP = "lldp"
SOURCE_ARP = "arp"
SOURCE_IPV4 = "ipv4"
MAX_PHYSICAL_PORT = 0xFFFFFF00  # OFPP_MAX: ports above are reserved (LOCAL, CONTROLLER, ...)
# Hosts (MACs) learned at one edge port. A cluster node has one NIC per port; a hypervisor or a
# container host with its own MAC per guest (a few VMs, macvlan) has a handful. 16 covers that with
# room to spare, while a host forging source MACs adds at most 15 hosts, i.e. 15 routes per switch,
# instead of one per forged frame (2000 forged ARP replies made 12 000 flow-mods before the cap).
MAX_HOSTS_PER_PORT = 16


@dataclasses.dataclass
class Host:
    mac: str
    ip: str
    dpid: int
    port: int
    source: str
    name: str = None
    ip_source: str = None
    expires: float = None  # monotonic time; None = kept until its port goes down
    advertised: frozenset = frozenset()  # IPv4 management addresses its LLDP agent advertises

    def to_json(self):
        return {"mac": self.mac, "ip": self.ip, "name": self.name, "dpid": dpid_lib.dpid_to_str(self.dpid),
                "port": self.port, "source": self.source}


@dataclasses.dataclass
class LinkEnd:
    dpid: int
    port: int
    seen: float


class Topology:
    """Switches ({dpid: {port: hw_addr}}), directed links ({(dpid, port): LinkEnd}) and hosts
    ({mac: Host}, changed only by the methods below, which keep its two indexes in step)."""

    def __init__(self):
        self.switches = {}
        self.links = {}
        self.hosts = {}
        self._at = {}      # (dpid, port) -> the MACs of its hosts: hosts_at and port_down without a scan
        self._by_ip = {}   # ip -> the host that has it (one at most): host_by_ip without a scan
        self.refused = 0   # host moves and IP takeovers refused (see the module docstring)
        self.port_full = 0  # new hosts refused at a port that has MAX_HOSTS_PER_PORT already

    # -- switches and ports ------------------------------------------------------------------
    def add_switch(self, dpid, ports):
        self.remove_switch(dpid)
        self.switches[dpid] = {p: hw for p, hw in ports.items() if p <= MAX_PHYSICAL_PORT}
        return True

    def remove_switch(self, dpid):
        if dpid not in self.switches:
            return False
        for port in list(self.switches[dpid]):
            self.port_down(dpid, port)
        del self.switches[dpid]
        return True

    def port_up(self, dpid, port, hw_addr):
        if dpid not in self.switches or port > MAX_PHYSICAL_PORT:
            return False
        self.switches[dpid][port] = hw_addr
        return False  # a new port carries nothing until LLDP or a host shows up on it

    def port_down(self, dpid, port):
        """The port went down or was deleted: forget its links and hosts."""
        changed = False
        for src in [src for src, dst in self.links.items() if (dpid, port) in (src, (dst.dpid, dst.port))]:
            LOG.info("link %s down (port %s:%d)", _link_name(src, self.links[src]), _dpid(dpid), port)
            del self.links[src]
            changed = True
        for mac in sorted(self._at.get((dpid, port), ())):
            changed |= self.remove_host(mac, "port %s:%d down" % (_dpid(dpid), port))
        self.switches.get(dpid, {}).pop(port, None)
        return changed

    def ports(self, dpid):
        return sorted(self.switches.get(dpid, {}))

    # -- links ---------------------------------------------------------------------------------
    def saw_probe(self, src, dst, now):
        """Our LLDP probe sent from ``src`` (dpid, port) arrived at ``dst``: a link src -> dst."""
        if src[0] not in self.switches or dst[0] not in self.switches or src == dst:
            return False  # a port's own probe back at it: a host replaying it, not a link
        old = self.links.get(src)
        self.links[src] = LinkEnd(dst[0], dst[1], now)
        if old is not None and (old.dpid, old.port) == dst:
            return False
        LOG.info("link %s up", _link_name(src, self.links[src]))
        changed = True
        for end in (src, dst):  # a port with a switch behind it has no hosts
            for mac in sorted(self._at.get(end, ())):
                self.remove_host(mac, "port %s:%d is a switch link" % (_dpid(end[0]), end[1]))
        return changed

    def fabric_ports(self):
        ends = set(self.links)
        ends.update((end.dpid, end.port) for end in self.links.values())
        return ends

    def is_fabric_port(self, dpid, port):
        return (dpid, port) in self.fabric_ports()

    def edge_ports(self):
        fabric_ports = self.fabric_ports()
        return [(d, p) for d in sorted(self.switches) for p in self.ports(d) if (d, p) not in fabric_ports]

    def expire(self, now, link_timeout):
        changed = False
        for src in [s for s, e in self.links.items() if now - e.seen > link_timeout]:
            LOG.info("link %s timed out", _link_name(src, self.links[src]))
            del self.links[src]
            changed = True
        for mac in [m for m, h in self.hosts.items() if h.expires is not None and h.expires < now]:
            changed |= self.remove_host(mac, "LLDP TTL expired")
        return changed

    # -- hosts -----------------------------------------------------------------------------------
    def learn_host(self, mac, ip, dpid, port, source, now, name=None, ttl=None, advertised=None):
        """A host showed up at (dpid, port). Returns True if routing must change. A claim that
        would move a confirmed host (its MAC, or its IP) away from its port is refused."""
        if dpid not in self.switches or self.is_fabric_port(dpid, port):
            return False
        host = self.hosts.get(mac)
        if host is not None and (host.dpid, host.port) != (dpid, port):
            return self._refuse("host %s is at %s:%d, not at %s:%d (%s)",
                                mac, _dpid(host.dpid), host.port, _dpid(dpid), port, source)
        owner = self.host_by_ip(ip) if ip else None
        if owner is not None and owner is not host and (owner.dpid, owner.port) != (dpid, port):
            return self._refuse("IP %s belongs to %s at %s:%d, not to %s at %s:%d (%s)",
                                ip, owner.mac, _dpid(owner.dpid), owner.port, mac, _dpid(dpid), port, source)
        if host is None and self.hosts_at(dpid, port) >= MAX_HOSTS_PER_PORT:
            self.port_full += 1
            sparselog.warn(LOG, self.port_full, "new hosts refused at full ports",
                           "host %s at %s:%d: the port has %d hosts already (%s)",
                           mac, _dpid(dpid), port, MAX_HOSTS_PER_PORT, source)
            return False
        changed = False
        if host is None:
            host = self.hosts[mac] = Host(mac=mac, ip=None, dpid=dpid, port=port, source=source)
            self._at.setdefault((dpid, port), set()).add(mac)
            LOG.info("host %s at %s:%d (%s)", mac, _dpid(dpid), port, source)
            changed = True
        if name:
            host.name = name
        if source == SOURCE_LLDP:
            host.source = SOURCE_LLDP
            host.expires = now + ttl if ttl else None
            if advertised is not None:
                host.advertised = frozenset(advertised)
        if ip and ip != host.ip and (host.ip is None or source != SOURCE_LLDP or host.ip_source == SOURCE_LLDP):
            if owner is not None and owner is not host:  # on the same port: the newest claim wins
                LOG.warning("IP %s moved from %s to %s on %s:%d", ip, owner.mac, mac, _dpid(dpid), port)
                self._set_ip(owner, None)
            self._set_ip(host, ip)
            host.ip_source = source
            changed = True
        return changed

    def _refuse(self, why, *args):
        self.refused += 1
        sparselog.warn(LOG, self.refused, "refused", why, *args)
        return False

    def _set_ip(self, host, ip):
        self._forget_ip(host)
        host.ip = ip
        if ip is not None:
            self._by_ip[ip] = host

    def hosts_at(self, dpid, port):
        """The number of hosts at (dpid, port), without a scan: a forged-MAC flood costs O(1) a frame."""
        return len(self._at.get((dpid, port), ()))

    def remove_host(self, mac, why):
        host = self.hosts.pop(mac, None)
        if host is None:
            return False
        self._forget_ip(host)   # the Host keeps its fields for whoever still holds it
        at = self._at[host.dpid, host.port]
        at.discard(mac)
        if not at:
            del self._at[host.dpid, host.port]
        LOG.info("host %s removed: %s", mac, why)
        return True

    def _forget_ip(self, host):
        if host.ip is not None and self._by_ip.get(host.ip) is host:
            del self._by_ip[host.ip]

    def host_by_ip(self, ip):
        """The host that has ``ip`` (None if none), without a scan (the RPC's locate and planning,
        ARP answers and IPv4 delivery look hosts up by IP)."""
        return None if ip is None else self._by_ip.get(ip)

    # -- views -----------------------------------------------------------------------------------
    def graph(self):
        """A networkx graph in the convention of primitives/fabric.py."""
        g = fabric.new_graph()
        for dpid in self.switches:
            fabric.add_switch(g, dpid)
        for src, dst in self.links.items():
            fabric.add_link(g, src[0], src[1], dst.dpid, dst.port)
        for h in self.hosts.values():
            fabric.add_host(g, h.mac, h.ip, h.dpid, h.port, h.name)
        return g

    def undirected_links(self):
        """Each switch link once, as ((dpid, port), (dpid, port)) with the smaller end first."""
        return sorted({tuple(sorted((src, (dst.dpid, dst.port)))) for src, dst in self.links.items()})

    def to_json(self):
        return {
            "switches": [{"dpid": _dpid(d), "ports": self.ports(d)} for d in sorted(self.switches)],
            "links": [{"src": {"dpid": _dpid(a[0]), "port": a[1]}, "dst": {"dpid": _dpid(b[0]), "port": b[1]}}
                      for a, b in self.undirected_links()],
            "hosts": [h.to_json() for h in sorted(self.hosts.values(), key=lambda h: (h.dpid, h.port, h.mac))],
        }


def _dpid(dpid):
    return dpid_lib.dpid_to_str(dpid)


def _link_name(src, dst):
    return "%s:%d->%s:%d" % (_dpid(src[0]), src[1], _dpid(dst.dpid), dst.port)
