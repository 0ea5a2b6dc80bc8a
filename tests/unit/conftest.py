"""Shared fixtures for the unit tests: fake datapaths, simulated OpenFlow 1.3 switches, a simulated
fabric, and frame builders.

Nothing here talks to a switch. `FakeDatapath` records what is sent to it (and proves every message
encodes). `SwitchSim` applies flow-mods and group-mods to a per-switch table with OpenFlow 1.3
semantics (ADD overwrites an identical match+priority, DELETE_STRICT, DELETE by cookie/mask, group
ADD/MODIFY/DELETE, deleting a group deletes the flows pointing at it) and rejects what a real switch
would reject (duplicate group, flow pointing at a missing group, unknown port, missing match
prerequisites). `FabricSim` wires `SwitchSim`s and hosts together like a synthetic fat-tree from
primitives/fattree.py, hands packet-outs to the peer switch or host, runs packets through the tables
and gives the controller its packet-ins -- exactly what a real fabric does with the controller's
LLDP probes. Time is a plain number (`FabricSim.now`); there is no sleeping anywhere.

For the libsdnmpi tests (test_libsdnmpi*.py): `built` (make -C libsdnmpi all check, once) and
`stub_factory` (stub controllers from libsdnmpi_harness.py, closed after the test).
"""
import collections
import ipaddress
import struct
import subprocess
import zlib

import pytest
from ryu.lib.packet import arp as ryu_arp
from ryu.lib.packet import ethernet, ipv4, packet, udp
from ryu.ofproto import ofproto_v1_3 as OFP
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from libsdnmpi_harness import LIB, StubController
from sdnmpi.controller import constants as C
from sdnmpi.controller import options
from sdnmpi.controller.core import Core
from sdnmpi.primitives import fabric

LLDP_DST = bytes.fromhex("0180c200000e")
MAX_HOPS = 64


# ---------------------------------------------------------------------------------------------
# addresses
def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def mac_text(raw):
    return ":".join("%02x" % b for b in raw)


def mac_int(mac):
    return int.from_bytes(mac_bytes(mac), "big")


def ip_int(ip):
    return int(ipaddress.IPv4Address(ip))


def port_hw_addr(dpid, port):
    """The MAC of switch port (dpid, port) in the simulated fabric (unique, locally administered)."""
    return "0a:%02x:%02x:%02x:%02x:%02x" % ((dpid >> 16) & 0xFF, (dpid >> 8) & 0xFF, dpid & 0xFF,
                                            (port >> 8) & 0xFF, port & 0xFF)


# ---------------------------------------------------------------------------------------------
# frames
def tlv(tlv_type, payload=b"", length=None):
    """One raw LLDP TLV; ``length`` overrides the header's length field (for malformed frames)."""
    length = len(payload) if length is None else length
    return struct.pack("!H", (tlv_type << 9) | length) + payload


def mgmt_ipv4_tlv(ip, ifindex=2):
    return tlv(8, bytes([5, 1]) + ipaddress.IPv4Address(ip).packed + bytes([2]) + struct.pack("!I", ifindex)
               + bytes([0]))


def lldp_host_frame(mac, ip, name, ifname="eth0", ttl=120, ifindex=2, pad=True):
    """An LLDPDU exactly as sdnmpi's lldpd/ sends it (lldpd/lldp_frame.c): chassis = MAC (subtype 4),
    port = interface name (subtype 5), TTL, system name (may be empty), IPv4 management address
    with ifIndex numbering, End, zero padding to 60 bytes."""
    body = (tlv(1, bytes([4]) + mac_bytes(mac)) + tlv(2, bytes([5]) + ifname.encode()) + tlv(3, struct.pack("!H", ttl))
            + tlv(5, (name or "").encode()))
    if ip is not None:
        body += mgmt_ipv4_tlv(ip, ifindex)
    frame = LLDP_DST + mac_bytes(mac) + struct.pack("!H", C.ETH_TYPE_LLDP) + body + tlv(0)
    if pad and len(frame) < 60:
        frame += bytes(60 - len(frame))
    return frame


def arp_frame(opcode, src_mac, src_ip, dst_mac, dst_ip, eth_src=None, eth_dst=None, hlen=6, plen=4,
              hwtype=1, proto=C.ETH_TYPE_IPV4):
    eth_src = eth_src or src_mac
    eth_dst = eth_dst or (C.BROADCAST_MAC if opcode == 1 else dst_mac)
    body = struct.pack("!HHBBH6s4s6s4s", hwtype, proto, hlen, plen, opcode, mac_bytes(src_mac),
                       ipaddress.IPv4Address(src_ip).packed, mac_bytes(dst_mac), ipaddress.IPv4Address(dst_ip).packed)
    frame = mac_bytes(eth_dst) + mac_bytes(eth_src) + struct.pack("!H", C.ETH_TYPE_ARP) + body
    return frame + bytes(max(0, 60 - len(frame)))


def ipv4_frame(src_mac, dst_mac, src_ip, dst_ip, payload=b"sdnmpi test payload"):
    """A UDP/IPv4 frame with correct checksums (built with Ryu's packet library)."""
    pkt = packet.Packet()
    pkt.add_protocol(ethernet.ethernet(dst=dst_mac, src=src_mac, ethertype=C.ETH_TYPE_IPV4))
    pkt.add_protocol(ipv4.ipv4(src=src_ip, dst=dst_ip, proto=17))
    pkt.add_protocol(udp.udp(src_port=4242, dst_port=4343))
    pkt.add_protocol(payload)
    pkt.serialize()
    return bytes(pkt.data)


def parse_arp(data):
    """(eth_dst, eth_src, arp) of an ARP frame, decoded with Ryu."""
    pkt = packet.Packet(bytes(data))
    eth = pkt.get_protocol(ethernet.ethernet)
    return eth.dst, eth.src, pkt.get_protocol(ryu_arp.arp)


def packet_fields(data, in_port):
    """The OpenFlow match fields of a frame, decoded by hand (independently of Ryu)."""
    data = bytes(data)
    fields = {"in_port": in_port}
    if len(data) < 14:
        return fields
    fields["eth_dst"] = int.from_bytes(data[0:6], "big")
    fields["eth_src"] = int.from_bytes(data[6:12], "big")
    eth_type, off = struct.unpack("!H", data[12:14])[0], 14
    if eth_type == 0x8100 and len(data) >= 18:
        fields["vlan_vid"] = (struct.unpack("!H", data[14:16])[0] & 0xFFF) | OFP.OFPVID_PRESENT
        eth_type, off = struct.unpack("!H", data[16:18])[0], 18
    fields["eth_type"] = eth_type
    if eth_type == C.ETH_TYPE_IPV4 and len(data) >= off + 20:
        fields["ip_proto"] = data[off + 9]
        fields["ipv4_src"] = int.from_bytes(data[off + 12:off + 16], "big")
        fields["ipv4_dst"] = int.from_bytes(data[off + 16:off + 20], "big")
    if eth_type == C.ETH_TYPE_ARP and len(data) >= off + 28:
        fields["arp_op"] = struct.unpack("!H", data[off + 6:off + 8])[0]
        fields["arp_sha"] = int.from_bytes(data[off + 8:off + 14], "big")
        fields["arp_spa"] = int.from_bytes(data[off + 14:off + 18], "big")
        fields["arp_tha"] = int.from_bytes(data[off + 18:off + 24], "big")
        fields["arp_tpa"] = int.from_bytes(data[off + 24:off + 28], "big")
    return fields


# ---------------------------------------------------------------------------------------------
# fake datapath and simulated switch
class FakeDatapath:
    """What core.py needs of a Ryu datapath. `send_msg` encodes the message (as Ryu would) and
    records it; no switch is involved."""

    def __init__(self, dpid):
        self.id = dpid
        self.ofproto = OFP
        self.ofproto_parser = PARSER
        self.sent = []

    def send_msg(self, msg):
        msg.serialize()
        self.sent.append(msg)

    def __repr__(self):
        return "FakeDatapath(%#x)" % self.id


class SwitchError(AssertionError):
    """What a real switch would answer with an OFPT_ERROR."""


_MAC_FIELDS = {"eth_dst", "eth_src", "arp_sha", "arp_tha"}
_IP_FIELDS = {"ipv4_src", "ipv4_dst", "arp_spa", "arp_tpa"}
_FULL = {**{f: (1 << 48) - 1 for f in _MAC_FIELDS}, **{f: (1 << 32) - 1 for f in _IP_FIELDS}}
_PREREQ = {"ipv4_src": C.ETH_TYPE_IPV4, "ipv4_dst": C.ETH_TYPE_IPV4, "ip_proto": C.ETH_TYPE_IPV4,
           "arp_op": C.ETH_TYPE_ARP, "arp_sha": C.ETH_TYPE_ARP, "arp_spa": C.ETH_TYPE_ARP,
           "arp_tha": C.ETH_TYPE_ARP, "arp_tpa": C.ETH_TYPE_ARP}


def _field_value(name, value):
    if name in _MAC_FIELDS:
        return mac_int(value)
    if name in _IP_FIELDS:
        return ip_int(value)
    return int(value)


def match_key(match):
    """A hashable, normalised form of an OFPMatch: sorted (field, value, mask) triples."""
    key = []
    for name, value in match.items():
        if isinstance(value, tuple):
            val, mask = _field_value(name, value[0]), _field_value(name, value[1])
            if mask == _FULL.get(name, -1):
                mask = None
            else:
                val &= mask
        else:
            val, mask = _field_value(name, value), None
        key.append((name, val, mask))
    return tuple(sorted(key))


def key_matches(key, fields):
    for name, val, mask in key:
        if name not in fields:
            return False
        if (fields[name] & mask if mask is not None else fields[name]) != val:
            return False
    return True


Flow = collections.namedtuple("Flow", "priority key cookie actions")


def _actions(dp, actions):
    out = []
    for act in actions:
        if isinstance(act, PARSER.OFPActionOutput):
            out.append(("output", act.port))
        elif isinstance(act, PARSER.OFPActionGroup):
            out.append(("group", act.group_id))
        else:
            raise SwitchError("switch %#x: unsupported action %r" % (dp, act))
    return tuple(out)


class SwitchSim:
    """One switch's routing table (C.TABLE), counting table (C.TABLE_COUNT: entries that only
    count and go on to routing, so packets are looked up in the routing table alone) and group
    table, changed by the flow-mods and group-mods sent to it."""

    def __init__(self, dpid, ports):
        self.dpid = dpid
        self.ports = set(ports)
        self.flows = {}     # (priority, key) -> Flow, routing table
        self.counting = {}  # (priority, key) -> Flow (no actions), counting table
        self.groups = {}    # group id -> (type, (bucket actions, ...))

    # -- messages ----------------------------------------------------------------------------
    def apply(self, msg):
        if isinstance(msg, PARSER.OFPFlowMod):
            self._flow_mod(msg)
        elif isinstance(msg, PARSER.OFPGroupMod):
            self._group_mod(msg)
        elif isinstance(msg, (PARSER.OFPBarrierRequest, PARSER.OFPPortStatsRequest, PARSER.OFPAggregateStatsRequest,
                              PARSER.OFPGroupStatsRequest, PARSER.OFPFlowStatsRequest)):
            pass
        else:
            raise SwitchError("switch %#x: unexpected message %r" % (self.dpid, msg))

    def _check_output(self, actions):
        for kind, arg in actions:
            if kind == "output" and arg not in self.ports and arg not in (OFP.OFPP_CONTROLLER, OFP.OFPP_IN_PORT):
                raise SwitchError("switch %#x: output to unknown port %s" % (self.dpid, arg))
            if kind == "group" and arg not in self.groups:
                raise SwitchError("switch %#x: OFPBAC_BAD_OUT_GROUP (group %#x does not exist)" % (self.dpid, arg))

    def _flow_mod(self, msg):
        if msg.table_id not in (C.TABLE, C.TABLE_COUNT, OFP.OFPTT_ALL):
            raise SwitchError("switch %#x: table %s" % (self.dpid, msg.table_id))
        key = match_key(msg.match)
        for name, _, _ in key:
            need = _PREREQ.get(name)
            if need is not None and ("eth_type", need, None) not in key:
                raise SwitchError("switch %#x: OFPBMC_BAD_PREREQ for %s" % (self.dpid, name))
        if msg.command == OFP.OFPFC_ADD and msg.table_id == C.TABLE_COUNT:
            inst = msg.instructions
            if len(inst) != 1 or not isinstance(inst[0], PARSER.OFPInstructionGotoTable) or inst[0].table_id != C.TABLE:
                raise SwitchError("switch %#x: a counting entry must only go to table %d" % (self.dpid, C.TABLE))
            self.counting[(msg.priority, key)] = Flow(msg.priority, key, msg.cookie, ())
        elif msg.command == OFP.OFPFC_ADD:
            if msg.table_id != C.TABLE:
                raise SwitchError("switch %#x: OFPFC_ADD to table %s" % (self.dpid, msg.table_id))
            actions = ()
            for inst in msg.instructions:
                if not isinstance(inst, PARSER.OFPInstructionActions) or inst.type != OFP.OFPIT_APPLY_ACTIONS:
                    raise SwitchError("switch %#x: unsupported instruction %r" % (self.dpid, inst))
                actions += _actions(self.dpid, inst.actions)
            self._check_output(actions)
            self.flows[(msg.priority, key)] = Flow(msg.priority, key, msg.cookie, actions)
        elif msg.command in (OFP.OFPFC_DELETE, OFP.OFPFC_DELETE_STRICT):
            tables = [t for tid, t in ((C.TABLE, self.flows), (C.TABLE_COUNT, self.counting))
                      if msg.table_id in (tid, OFP.OFPTT_ALL)]
            for table, (fkey, flow) in [(t, item) for t in tables for item in list(t.items())]:
                if (flow.cookie & msg.cookie_mask) != (msg.cookie & msg.cookie_mask):
                    continue
                if msg.out_port != OFP.OFPP_ANY and ("output", msg.out_port) not in flow.actions:
                    continue
                if msg.out_group != OFP.OFPG_ANY and ("group", msg.out_group) not in flow.actions:
                    continue
                if msg.command == OFP.OFPFC_DELETE_STRICT:
                    if (flow.priority, flow.key) != (msg.priority, key):
                        continue
                elif not set(key) <= set(flow.key):
                    continue
                del table[fkey]
        else:
            raise SwitchError("switch %#x: unsupported flow-mod command %s" % (self.dpid, msg.command))

    def _group_mod(self, msg):
        if msg.command == OFP.OFPGC_DELETE:
            gids = list(self.groups) if msg.group_id == OFP.OFPG_ALL else [msg.group_id]
            for gid in gids:
                if self.groups.pop(gid, None) is not None:
                    for fkey, flow in list(self.flows.items()):
                        if ("group", gid) in flow.actions:
                            del self.flows[fkey]
            return
        buckets = tuple(_actions(self.dpid, b.actions) for b in msg.buckets)
        for bucket in buckets:
            self._check_output(bucket)
        if msg.type == OFP.OFPGT_SELECT and any(b.weight == 0 for b in msg.buckets):
            raise SwitchError("switch %#x: SELECT bucket with weight 0" % self.dpid)
        if msg.command == OFP.OFPGC_ADD:
            if msg.group_id in self.groups:
                raise SwitchError("switch %#x: OFPGMFC_GROUP_EXISTS %#x" % (self.dpid, msg.group_id))
            self.groups[msg.group_id] = (msg.type, buckets)
        elif msg.command == OFP.OFPGC_MODIFY:
            if msg.group_id not in self.groups:
                raise SwitchError("switch %#x: OFPGMFC_UNKNOWN_GROUP %#x" % (self.dpid, msg.group_id))
            self.groups[msg.group_id] = (msg.type, buckets)
        else:
            raise SwitchError("switch %#x: unsupported group-mod command %s" % (self.dpid, msg.command))

    # -- lookups -------------------------------------------------------------------------------
    def lookup(self, fields):
        """The flow a packet with ``fields`` hits (None: no flow, i.e. OpenFlow 1.3 drops it)."""
        best = [f for f in self.flows.values() if key_matches(f.key, fields)]
        if not best:
            return None
        top = max(f.priority for f in best)
        winners = [f for f in best if f.priority == top]
        if len(winners) > 1:
            raise SwitchError("switch %#x: ambiguous overlapping flows at priority %d: %r" % (self.dpid, top, winners))
        return winners[0]

    def expand(self, actions):
        """Every alternative list of output ports of ``actions`` (one per SELECT bucket choice)."""
        alternatives = [[]]
        for kind, arg in actions:
            if kind == "output":
                alternatives = [alt + [arg] for alt in alternatives]
            else:
                _gtype, buckets = self.groups[arg]
                alternatives = [alt + [p for _, p in bucket] for alt in alternatives for bucket in buckets]
        return alternatives

    def route_flows(self):
        """{ipv4_dst (int): output ports as a sorted tuple, or ('group', bucket ports...)} at PRIORITY_ROUTE."""
        out = {}
        for flow in self.flows.values():
            if flow.priority != C.PRIORITY_ROUTE:
                continue
            dst = dict((n, v) for n, v, _ in flow.key)["ipv4_dst"]
            out[dst] = tuple(sorted(p for alt in self.expand(flow.actions) for p in alt))
        return out

    def referenced_groups(self):
        return {arg for flow in self.flows.values() for kind, arg in flow.actions if kind == "group"}


# ---------------------------------------------------------------------------------------------
# simulated fabric
class FabricSim:
    """A synthetic fat-tree (primitives.fattree graph) of `SwitchSim`s and hosts, driving a `Core`."""

    def __init__(self, graph, routing="dmodk", **settings):
        self.graph = graph
        self.settings = options.Settings(default_routing=routing, **settings)
        self.core = Core(self.settings)
        self.now = 100.0
        self.ports = collections.defaultdict(dict)      # dpid -> {port: hw addr}
        self.peer = {}                                  # (dpid, port) -> (dpid, port), live links
        self.host_at = {}                               # (dpid, port) -> host mac
        self.host_port = {}                             # host mac -> (dpid, port)
        self.host_ip = {}
        self.host_name = {}
        for u, v, data in graph.edges(data=True):
            ends = data["ports"]
            for sw, port in ends.items():
                self.ports[sw][port] = port_hw_addr(sw, port)
            if len(ends) == 2:
                (a, pa), (b, pb) = ends.items()
                self.peer[(a, pa)] = (b, pb)
                self.peer[(b, pb)] = (a, pa)
            else:
                (sw, port), = ends.items()
                mac = u if u != sw else v
                self.host_at[(sw, port)] = mac
                self.host_port[mac] = (sw, port)
                self.host_ip[mac] = graph.nodes[mac].get("ip")
                self.host_name[mac] = graph.nodes[mac].get("name")
        self.switch_ids = fabric.switches(graph)
        self.dps = {d: FakeDatapath(d) for d in self.switch_ids}
        self.switches = {d: SwitchSim(d, self.ports[d]) for d in self.switch_ids}
        self.connected = set()
        self.inbox = collections.defaultdict(list)      # host mac -> frames it received
        self.to_controller = 0                          # packet-ins handed to the controller
        self.lost = []                                  # (dpid, port, frame) sent out of dead ports
        self._queue = collections.deque()

    # -- topology views --------------------------------------------------------------------------
    def hosts(self):
        """Host MACs in destination-index order (fabric.hosts)."""
        return fabric.hosts(self.graph)

    def mac_of_ip(self, ip):
        return next(m for m, i in self.host_ip.items() if i == ip)

    def edge_ports(self):
        return sorted(self.host_at)

    def fabric_ports(self):
        return sorted(self.peer)

    def links(self):
        """Live switch links, each once, smaller end first."""
        return sorted({tuple(sorted((a, b))) for a, b in self.peer.items()})

    # -- events ----------------------------------------------------------------------------------
    def run(self, msgs):
        """Sends the controller's messages and everything that follows from them (packet-ins of
        forwarded packets, the controller's answers, ...), until the network is quiet."""
        for msg in msgs:
            self._queue.append(("msg", msg))
        self._drain()
        return msgs

    def _drain(self):
        steps = 0
        while self._queue:
            steps += 1
            assert steps < 1_000_000, "the simulated network never went quiet"
            event = self._queue.popleft()
            if event[0] == "msg":
                self._send(event[1])
            else:
                self._arrive(*event[1:])

    def _send(self, msg):
        dpid = msg.datapath.id
        assert msg.datapath is self.dps[dpid], "message for a datapath this fabric does not own"
        self.dps[dpid].send_msg(msg)
        if dpid not in self.connected:
            raise SwitchError("message for switch %#x, which is not connected" % dpid)
        if isinstance(msg, PARSER.OFPPacketOut):
            assert msg.buffer_id == OFP.OFP_NO_BUFFER and msg.in_port == OFP.OFPP_CONTROLLER
            for kind, port in _actions(dpid, msg.actions):
                assert kind == "output", "packet-out with %s" % kind
                self._emit(dpid, port, bytes(msg.data), 0)
        else:
            self.switches[dpid].apply(msg)

    def _emit(self, dpid, port, data, hops):
        if (dpid, port) in self.peer:
            self._queue.append(("arrive", *self.peer[(dpid, port)], data, hops + 1))
        elif (dpid, port) in self.host_at:
            self.inbox[self.host_at[(dpid, port)]].append(data)
        else:
            self.lost.append((dpid, port, data))

    def _arrive(self, dpid, in_port, data, hops):
        if hops > MAX_HOPS:
            raise AssertionError("forwarding loop: frame still travelling after %d hops" % hops)
        if dpid not in self.connected:
            return  # a switch with no controller (fail-mode secure) forwards nothing
        sw = self.switches[dpid]
        flow = sw.lookup(packet_fields(data, in_port))
        if flow is None:
            return
        alternatives = sw.expand(flow.actions)
        ports = alternatives[zlib.crc32(data) % len(alternatives)]  # SELECT: a hash of the packet
        for port in ports:
            if port == OFP.OFPP_CONTROLLER:
                self.to_controller += 1
                for msg in self.core.packet_in(self.dps[dpid], in_port, data, self.now):
                    self._queue.append(("msg", msg))
            elif port == in_port:
                continue  # OpenFlow never sends a packet back out of its in_port (OFPP_IN_PORT does)
            else:
                self._emit(dpid, port, data, hops)

    def host_send(self, mac, frame):
        """Host ``mac`` puts ``frame`` on its wire."""
        dpid, port = self.host_port[mac]
        self._queue.append(("arrive", dpid, port, bytes(frame), 0))
        self._drain()

    # -- controller life cycle ---------------------------------------------------------------------
    def connect(self, dpid):
        self.connected.add(dpid)
        return self.run(self.core.switch_enter(self.dps[dpid], dict(self.ports[dpid])))

    def connect_all(self, order=None):
        for dpid in order or self.switch_ids:
            self.connect(dpid)

    def probe_round(self):
        return self.run(self.core.lldp_probes())

    def advertise(self, mac, ttl=120, ip=None, name=None):
        ip = self.host_ip[mac] if ip is None else ip
        name = self.host_name[mac] if name is None else name
        self.host_send(mac, lldp_host_frame(mac, ip, name, ttl=ttl))

    def advertise_all(self, ttl=120):
        for mac in self.hosts():
            self.advertise(mac, ttl=ttl)

    def recompute(self):
        return self.run(self.core.recompute_routes())

    def discover(self):
        """Switches connect, two rounds of LLDP probes, every host's LLDP agent speaks, routes."""
        self.connect_all()
        self.probe_round()
        self.probe_round()
        self.advertise_all()
        return self.recompute()

    def tick(self, seconds):
        """Time passes: one probe round and an expiry pass at the new time."""
        self.now += seconds
        self.probe_round()
        self.core.expire(self.now)

    def cut_link(self, a, b, notify=True):
        """Unplugs the cable between switches a and b (both ends report port-down if ``notify``)."""
        pa, pb = fabric.port_towards(self.graph, a, b), fabric.port_towards(self.graph, b, a)
        del self.peer[(a, pa)], self.peer[(b, pb)]
        if notify:
            for sw, port in ((a, pa), (b, pb)):
                self.run(self.core.port_status(self.dps[sw], port, self.ports[sw][port], False))
        return pa, pb

    def restore_link(self, a, b):
        pa, pb = fabric.port_towards(self.graph, a, b), fabric.port_towards(self.graph, b, a)
        self.peer[(a, pa)], self.peer[(b, pb)] = (b, pb), (a, pa)
        for sw, port in ((a, pa), (b, pb)):
            self.run(self.core.port_status(self.dps[sw], port, self.ports[sw][port], True))

    # -- tracing -----------------------------------------------------------------------------------
    def trace(self, src_mac, dst_ip):
        """Every way an IPv4 packet from host ``src_mac`` to ``dst_ip`` can go through the current
        flow tables (one per SELECT-group choice), without involving the controller.

        Returns [(outcome, hops)]: outcome ("host", mac), ("controller", dpid), ("drop", dpid) or
        ("lost", dpid, port); hops [(dpid, in_port, out_port), ...]."""
        dst_mac = next((m for m, i in self.host_ip.items() if i == dst_ip), "02:00:00:00:00:99")
        frame = ipv4_frame(src_mac, dst_mac, self.host_ip[src_mac], dst_ip)
        results = []

        def walk(dpid, in_port, hops):
            if len(hops) > MAX_HOPS:
                results.append((("loop", dpid), hops))
                return
            if dpid not in self.connected:
                results.append((("drop", dpid), hops))
                return
            sw = self.switches[dpid]
            flow = sw.lookup(packet_fields(frame, in_port))
            if flow is None or not flow.actions:
                results.append((("drop", dpid), hops))
                return
            for ports in sw.expand(flow.actions):
                for port in ports:
                    hop = hops + [(dpid, in_port, port)]
                    if port == OFP.OFPP_CONTROLLER:
                        results.append((("controller", dpid), hop))
                    elif port == in_port:
                        results.append((("drop", dpid), hop))
                    elif (dpid, port) in self.peer:
                        walk(*self.peer[(dpid, port)], hop)
                    elif (dpid, port) in self.host_at:
                        results.append((("host", self.host_at[(dpid, port)]), hop))
                    else:
                        results.append((("lost", dpid, port), hop))

        walk(*self.host_port[src_mac], [])
        return results

    def check_tables_consistent(self):
        """The controller's record of what it installed matches the switches, and no group is
        dangling (unreferenced) or missing."""
        for dpid in sorted(self.connected):
            sw = self.switches[dpid]
            installed = {ip_int(ip): tuple(sorted(ports)) for ip, ports in self.core.routes[dpid].flows.items()}
            assert sw.route_flows() == installed, "switch %#x: tables differ from the controller's record" % dpid
            assert set(sw.groups) == sw.referenced_groups(), "switch %#x: dangling groups" % dpid
            assert set(sw.groups) == set(self.core.routes[dpid].groups.values())
            for gid, (_gtype, buckets) in sw.groups.items():
                ports = tuple(p for bucket in buckets for _, p in bucket)
                assert self.core.routes[dpid].groups[ports] == gid


@pytest.fixture
def make_fabric():
    """make_fabric(graph, routing="dmodk", **settings) -> FabricSim."""
    return FabricSim


# ---------------------------------------------------------------------------------------------
# libsdnmpi
@pytest.fixture(scope="session")
def built():
    """Builds the libraries and the test programs; a build error fails the tests."""
    res = subprocess.run(["make", "-C", str(LIB), "all", "check"], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.fail("make -C libsdnmpi all check failed:\n%s\n%s" % (res.stdout[-4000:], res.stderr[-4000:]))
    return LIB


@pytest.fixture
def stub_factory():
    """stub_factory(mode="ok", **options) -> a StubController (see libsdnmpi_harness.py), closed
    after the test."""
    stubs = []

    def make(mode="ok", **options):
        stub = StubController(mode, **options)
        stubs.append(stub)
        return stub

    yield make
    for stub in stubs:
        stub.close()
