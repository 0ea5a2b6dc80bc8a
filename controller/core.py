"""The controller's logic, free of Ryu's event machinery: every method takes what happened and
returns the OpenFlow messages to send (each knows its datapath). controller/app.py feeds it Ryu
events and sends what it returns; unit tests feed it fake datapaths and read the messages."""
import collections
import logging
import math
import secrets

from ryu.lib import dpid as dpid_lib
from ryu.lib.packet import ethernet, ipv4, packet, packet_utils

from sdnmpi.primitives import DEFAULT_ROUTING

from . import arp, lldp, ofmsgs, sparselog
from . import constants as C
from .portstats import PortStats
from .routes import SwitchRoutes, desired_by_switch
from .tablestats import TableStats
from .topology import SOURCE_ARP, SOURCE_IPV4, SOURCE_LLDP, Topology

LOG = logging.getLogger(__name__)


class Core:
    def __init__(self, settings):
        self.settings = settings
        self.routing = settings.default_routing   # the policy's name; set_routing changes it
        self.policy = DEFAULT_ROUTING[self.routing]
        self.topology = Topology()
        self.datapaths = {}                # dpid -> Ryu datapath
        self.routes = {}                   # dpid -> SwitchRoutes installed there
        self.routes_dirty = False
        self.routes_confirmed = 0          # the last route pass every switch confirmed (controller/app.py)
        self.port_stats = PortStats()
        self.table_stats = TableStats()
        self.counters = collections.Counter()
        self.probes = arp.ProbeBudget()    # which unknown IPs we may probe by ARP now
        self._probe_ttl = max(1, math.ceil(settings.link_timeout))
        self.probe_key = secrets.token_bytes(16)  # signs our LLDP probes (controller/lldp.py)

    # -- switches ------------------------------------------------------------------------------
    def switch_enter(self, dp, ports):
        """``ports``: {port_no: hw_addr} of the switch's live ports."""
        LOG.info("switch %s connected with %d ports", dpid_lib.dpid_to_str(dp.id), len(ports))
        self.datapaths[dp.id] = dp
        self.routes[dp.id] = SwitchRoutes()
        self.topology.add_switch(dp.id, ports)
        self.routes_dirty = True
        return ofmsgs.base_flows(dp) + self._probes_for(dp)

    def switch_leave(self, dp):
        if self.datapaths.get(dp.id) is not dp:
            return []  # an older connection of a switch that has reconnected since
        LOG.info("switch %s disconnected", dpid_lib.dpid_to_str(dp.id))
        del self.datapaths[dp.id]
        del self.routes[dp.id]
        self.port_stats.forget_switch(dp.id)
        self.table_stats.forget_switch(dp.id)
        self.routes_dirty |= self.topology.remove_switch(dp.id)
        return []

    def port_status(self, dp, port_no, hw_addr, up):
        if up:
            self.topology.port_up(dp.id, port_no, hw_addr)
            if port_no not in self.topology.switches.get(dp.id, {}):
                return []  # a reserved port (LOCAL, ...): no switch link behind it to probe
            return self._probes_for(dp, [port_no])
        self.routes_dirty |= self.topology.port_down(dp.id, port_no)
        return []

    # -- packet-ins ----------------------------------------------------------------------------
    def packet_in(self, dp, in_port, data, now):
        self.counters["packet_in"] += 1
        try:
            pkt = packet.Packet(bytes(data))
            eth = pkt.get_protocol(ethernet.ethernet)
        except Exception as err:  # pylint: disable=broad-except  # Ryu's parsers raise many kinds
            return self._malformed(dp, in_port, "unparseable frame: %s" % err)
        if eth is None:
            return self._malformed(dp, in_port, "no Ethernet header")
        if eth.ethertype == C.ETH_TYPE_LLDP:
            self.counters["packet_in_lldp"] += 1
            return self._lldp_in(dp, in_port, data, now)
        if eth.ethertype == C.ETH_TYPE_ARP:
            self.counters["packet_in_arp"] += 1
            return self._arp_in(dp, in_port, pkt, now)
        if eth.ethertype == C.ETH_TYPE_IPV4:
            self.counters["packet_in_ipv4"] += 1
            return self._ipv4_in(dp, in_port, pkt, eth, data, now)
        self.counters["packet_in_other"] += 1
        return []

    def _malformed(self, dp, in_port, why):
        self.counters["malformed"] += 1
        LOG.debug("dropped packet from %s:%s: %s", dpid_lib.dpid_to_str(dp.id), in_port, why)
        return []

    def _lldp_in(self, dp, in_port, data, now):
        try:
            frame = lldp.parse(data, self.probe_key)
        except lldp.LldpError as err:
            return self._malformed(dp, in_port, err)
        if isinstance(frame, lldp.SwitchProbe):
            self.routes_dirty |= self.topology.saw_probe((frame.dpid, frame.port), (dp.id, in_port), now)
            return []
        host = self.topology.hosts.get(frame.mac)
        if frame.ttl == 0:
            if host is not None and (host.dpid, host.port) == (dp.id, in_port):
                self.routes_dirty |= self.topology.remove_host(frame.mac, "LLDP agent shut down")
            return []
        # A busy controller may handle frames late: hold hosts for at least host_hold seconds.
        self.routes_dirty |= self.topology.learn_host(frame.mac, frame.ip, dp.id, in_port, SOURCE_LLDP, now,
                                                      name=frame.name, ttl=max(frame.ttl, self.settings.host_hold),
                                                      advertised=frame.addresses)
        return []

    def _arp_in(self, dp, in_port, pkt, now):
        try:
            req = arp.parse(pkt)
        except (arp.ArpError, ValueError) as err:
            return self._malformed(dp, in_port, err)
        if req.src_mac == self.settings.probe_mac.lower() or self.topology.is_fabric_port(dp.id, in_port):
            return []  # our own probe, seen by a neighbour switch before the link was discovered
        if arp.usable_sender_ip(req.src_ip):
            self.routes_dirty |= self.topology.learn_host(req.src_mac, req.src_ip, dp.id, in_port, SOURCE_ARP, now)
        if not req.is_request or req.is_gratuitous:
            return []
        target = self.topology.host_by_ip(req.dst_ip)
        if target is not None:
            if target.mac == req.src_mac:
                return []
            self.counters["arp_replies"] += 1
            reply = arp.build_reply(target.mac, target.ip, req.src_mac, req.src_ip)
            return [ofmsgs.packet_out(dp, in_port, reply)]
        return self._arp_probe(req.dst_ip, (dp.id, in_port), now)

    def _arp_probe(self, ip, requester, now):
        verdict = self.probes.take(ip, requester, now)
        if verdict == arp.PROBE_LIMITED:
            self.counters["arp_probes_limited"] += 1
            sparselog.warn(LOG, self.counters["arp_probes_limited"], "ARP probes refused over the probe budget",
                           "probe for %s asked by %s:%d", ip, dpid_lib.dpid_to_str(requester[0]), requester[1])
        if verdict != arp.PROBE:
            return []
        self.counters["arp_probes"] += 1
        probe = arp.build_probe(self.settings.probe_mac, ip)
        return [ofmsgs.packet_out(self.datapaths[d], p, probe)
                for d, p in self.topology.edge_ports() if d in self.datapaths]

    def _ipv4_in(self, dp, in_port, pkt, eth, data, now):
        ip = pkt.get_protocol(ipv4.ipv4)
        if ip is None:
            return self._malformed(dp, in_port, "truncated IPv4")
        if not _ipv4_header_ok(ip, data) or int(eth.src[:2], 16) & 1 or eth.src == arp.ZERO_MAC:
            return self._malformed(dp, in_port, "bogus IPv4 header or source MAC")  # no host sends that
        if arp.usable_sender_ip(ip.src) and not self.topology.is_fabric_port(dp.id, in_port):
            self.routes_dirty |= self.topology.learn_host(eth.src.lower(), ip.src, dp.id, in_port, SOURCE_IPV4, now)
        dst = self.topology.host_by_ip(ip.dst)
        if dst is None or dst.dpid not in self.datapaths or (dst.dpid, dst.port) == (dp.id, in_port):
            return []
        # Routes are on their way; deliver this packet straight to the destination's port.
        return [ofmsgs.packet_out(self.datapaths[dst.dpid], dst.port, bytes(data))]

    # -- periodic work -------------------------------------------------------------------------
    def lldp_probes(self):
        msgs = []
        for dp in list(self.datapaths.values()):
            msgs += self._probes_for(dp)
        return msgs

    def _probes_for(self, dp, ports=None):
        ports = self.topology.ports(dp.id) if ports is None else ports
        hw = self.topology.switches.get(dp.id, {})
        return [ofmsgs.packet_out(dp, port, lldp.build_probe(dp.id, port, hw.get(port) or "00:00:00:00:00:00",
                                                             self._probe_ttl, self.probe_key))
                for port in ports]

    def expire(self, now):
        self.routes_dirty |= self.topology.expire(now, self.settings.link_timeout)
        return []

    def recompute_routes(self):
        """Messages that bring every switch's default routes up to date (none if nothing changed)."""
        if not self.routes_dirty:
            return []
        self.routes_dirty = False
        graph = self.topology.graph()
        desired = desired_by_switch(self.policy(graph), graph)
        msgs = []
        for dpid, dp in sorted(self.datapaths.items()):
            msgs += self.routes[dpid].sync(dp, desired.get(dpid, {}))
        self.counters["route_recomputes"] += 1
        LOG.info("routes recomputed (%s): %d hosts, %d switches, %d messages", self.routing,
                 len(self.topology.hosts), len(self.datapaths), len(msgs))
        return msgs

    def routes_pending(self):
        """True from a topology change until every switch confirmed the route pass it caused."""
        return self.routes_dirty or self.routes_confirmed != self.counters["route_recomputes"]

    def set_routing(self, name):
        """Makes ``name`` the default routing policy; the next route pass installs its routes
        (changing each switch's flows and groups in place). True if the policy changed; ValueError
        for an unknown name."""
        if name not in DEFAULT_ROUTING:
            raise ValueError("unknown routing policy %r (choose from %s)" % (name, ", ".join(sorted(DEFAULT_ROUTING))))
        if name == self.routing:
            return False
        LOG.info("default routing: %s -> %s", self.routing, name)
        self.routing, self.policy = name, DEFAULT_ROUTING[name]
        self.routes_dirty = True
        return True

    def stats_requests(self):
        msgs = []
        for dp in self.datapaths.values():
            msgs += [ofmsgs.port_stats_request(dp), ofmsgs.aggregate_stats_request(dp), ofmsgs.group_stats_request(dp)]
        return msgs

    def port_stats_reply(self, dpid, stats, now):
        self.port_stats.update(dpid, stats, now)

    # -- views for REST ------------------------------------------------------------------------
    def routes_json(self):
        return {dpid_lib.dpid_to_str(dpid): {ip: list(ports) for ip, ports in sorted(r.flows.items())}
                for dpid, r in sorted(self.routes.items())}

    def stats_json(self):
        c = self.counters
        return {
            "routing": self.routing,
            "packet_in": {"total": c["packet_in"], "lldp": c["packet_in_lldp"], "arp": c["packet_in_arp"],
                          "ipv4": c["packet_in_ipv4"], "other": c["packet_in_other"]},
            "malformed": c["malformed"], "arp_replies": c["arp_replies"], "arp_probes": c["arp_probes"],
            "route_recomputes": c["route_recomputes"], "routes_pending": self.routes_pending(),
            "handler_errors": c["handler_errors"],
            "host_claims_refused": self.topology.refused, "hosts_refused_port_full": self.topology.port_full,
            "arp_probes_limited": c["arp_probes_limited"],
        }


def _ipv4_header_ok(ip, data):
    """Version 4, a sane header length and a correct header checksum, as every IP stack sends.
    Ryu's parser checks none of it, so garbage would otherwise be learned as hosts."""
    size = ip.header_length * 4
    header = bytes(data[14:14 + size])
    return ip.version == 4 and size >= 20 and len(header) == size and packet_utils.checksum(header) == 0
