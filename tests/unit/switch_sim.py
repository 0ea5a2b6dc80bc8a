"""A fake Ryu datapath and a simulated OpenFlow 1.3 switch, for the unit tests.

`FakeDatapath` records what is sent to it (and proves every message encodes). `SwitchSim` applies
flow-mods and group-mods to a per-switch table with OpenFlow 1.3 semantics (ADD overwrites an
identical match+priority, DELETE_STRICT, DELETE by cookie/mask, group ADD/MODIFY/DELETE, deleting a
group deletes the flows pointing at it) and rejects what a real switch would reject (duplicate
group, flow pointing at a missing group, unknown port, missing match prerequisites).
`packet_fields` decodes a frame into the match fields a switch looks it up by."""
import collections
import struct

from ryu.ofproto import ofproto_v1_3 as OFP
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from sdnmpi.controller import constants as C

from frame_builders import ip_int, mac_int


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


def flow_actions(dp, actions):
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
                actions += flow_actions(self.dpid, inst.actions)
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
        buckets = tuple(flow_actions(self.dpid, b.actions) for b in msg.buckets)
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
        """{ipv4_dst (int): its output ports (a SELECT group's: each once) as a sorted tuple} at PRIORITY_ROUTE."""
        out = {}
        for flow in self.flows.values():
            if flow.priority != C.PRIORITY_ROUTE:
                continue
            dst = dict((n, v) for n, v, _ in flow.key)["ipv4_dst"]
            out[dst] = tuple(sorted({p for alt in self.expand(flow.actions) for p in alt}))
        return out

    def referenced_groups(self):
        return {arg for flow in self.flows.values() for kind, arg in flow.actions if kind == "group"}
