"""OpenFlow 1.3 message builders. Each returns a message (or a list of them) for one datapath;
nothing here sends. The Ryu app sends what the logic returns, and unit tests inspect it."""
import random
import socket
import struct

from ryu.ofproto import ofproto_v1_3 as _ofp
from ryu.ofproto import ofproto_v1_3_parser

from . import constants as C


def _oxm(field, value_len):
    """An OpenFlow 1.3 OXM TLV header of the basic class, no mask."""
    return (_ofp.OFPXMC_OPENFLOW_BASIC << 16) | (field << 9) | value_len


# ofp_match of eth_type, ipv4_src, ipv4_dst: type, length (without padding), three TLVs, 6 bytes pad
_PAIR_MATCH = struct.Struct("!HHIHI4sI4s6x")
_PAIR_MATCH_LEN = 4 + (4 + 2) + (4 + 4) + (4 + 4)

# About this many buckets per ECMP SELECT group (select_slots); OVS maps up to 64 equal-weight
# buckets to dp_hash values exactly (256 since OVS 2.17).
ECMP_HASH_SLOTS = 64


class WireMatch(ofproto_v1_3_parser.OFPMatch):
    """An OpenFlow 1.3 match that is encoded once: one object shared by many messages (a host
    pair's flows on every switch of its path) is not converted and packed again for each. Ryu's
    OFPMatch turns every address from text to bytes and back at construction and again at every
    serialisation, which dominated the cost of installing a plan (bench/bench_install_cost.py).
    Treat it as immutable."""
    _wire = None

    def serialize(self, buf, offset):
        if self._wire is None:
            scratch = bytearray()
            self._wire = bytes(scratch[:super().serialize(scratch, 0)])
        end = offset + len(self._wire)
        if len(buf) < end:
            buf += bytearray(end - len(buf))
        buf[offset:end] = self._wire
        return len(self._wire)


def ipv4_pair_match(src_ip, dst_ip):
    """A WireMatch on IPv4 ``src_ip`` -> ``dst_ip`` (dotted quads as the topology has them), built
    from its fields in OXM order and encoded with one struct.pack, without Ryu's text/bytes round
    trips (tests/unit/test_job_install.py checks the bytes against Ryu's encoding)."""
    match = WireMatch(_ordered_fields=[("eth_type", C.ETH_TYPE_IPV4), ("ipv4_src", src_ip), ("ipv4_dst", dst_ip)])
    match._wire = _PAIR_MATCH.pack(_ofp.OFPMT_OXM, _PAIR_MATCH_LEN,
                                   _oxm(_ofp.OFPXMT_OFB_ETH_TYPE, 2), C.ETH_TYPE_IPV4,
                                   _oxm(_ofp.OFPXMT_OFB_IPV4_SRC, 4), socket.inet_aton(src_ip),
                                   _oxm(_ofp.OFPXMT_OFB_IPV4_DST, 4), socket.inet_aton(dst_ip))
    return match


def flow_add(dp, priority, match, actions, cookie, idle_timeout=0, hard_timeout=0):
    ofp, parser = dp.ofproto, dp.ofproto_parser
    inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)] if actions else []
    return parser.OFPFlowMod(datapath=dp, table_id=C.TABLE, cookie=cookie, command=ofp.OFPFC_ADD,
                             idle_timeout=idle_timeout, hard_timeout=hard_timeout, priority=priority,
                             buffer_id=ofp.OFP_NO_BUFFER, match=match, instructions=inst)


def goto_routing(dp, priority, match, cookie):
    """A TABLE_COUNT entry: counts the packets it matches and hands them to the routing table."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    return parser.OFPFlowMod(datapath=dp, table_id=C.TABLE_COUNT, cookie=cookie, command=ofp.OFPFC_ADD,
                             priority=priority, buffer_id=ofp.OFP_NO_BUFFER, match=match,
                             instructions=[parser.OFPInstructionGotoTable(C.TABLE)])


def flow_delete_strict(dp, priority, match, cookie=None, table=C.TABLE):
    """Deletes the flow with exactly this match and priority (and cookie, if given)."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    return parser.OFPFlowMod(datapath=dp, table_id=table, command=ofp.OFPFC_DELETE_STRICT,
                             cookie=cookie or 0, cookie_mask=C.COOKIE_FULL_MASK if cookie else 0,
                             priority=priority, out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY, match=match)


def flow_delete_cookie(dp, cookie, cookie_mask=C.COOKIE_FULL_MASK):
    """Deletes every flow whose cookie matches (cookie_mask 0 deletes every flow)."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    return parser.OFPFlowMod(datapath=dp, table_id=ofp.OFPTT_ALL, command=ofp.OFPFC_DELETE,
                             cookie=cookie, cookie_mask=cookie_mask, out_port=ofp.OFPP_ANY,
                             out_group=ofp.OFPG_ANY, match=parser.OFPMatch())


def select_slots(ports, salt, slots=ECMP_HASH_SLOTS):
    """The bucket ports of a SELECT group over ``ports``: each port equally often, about ``slots``
    buckets, ``ports`` first in their order and the rest in an order drawn from ``salt``.

    Why: OVS's default selection (dp_hash) takes the bucket from the low bits of one symmetric
    L3/L4 hash that is the same on every switch, so with one bucket per port two switches in a row
    choose alike: every flow an edge sends to an aggregation switch picks the same uplink there,
    half the core links carry nothing (docs/jobroute.md, "ECMP's polarisation"). Buckets in a
    per-switch order make each switch's choice its own function of the hash."""
    ports = tuple(ports)
    copies = max(1, slots // len(ports))
    rest = [port for port in ports for _ in range(copies - 1)]
    random.Random(salt).shuffle(rest)
    return ports + tuple(rest)


def group_select(dp, command, group_id, ports):
    """A SELECT group hashing flows over ``ports`` (command: OFPGC_ADD or OFPGC_MODIFY): equal
    weights, buckets from select_slots salted with the switch's datapath id."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    buckets = [parser.OFPBucket(weight=1, watch_port=ofp.OFPP_ANY, watch_group=ofp.OFPG_ANY,
                                actions=[parser.OFPActionOutput(port)]) for port in select_slots(ports, dp.id)]
    return parser.OFPGroupMod(dp, command, ofp.OFPGT_SELECT, group_id, buckets)


def group_all(dp, command, group_id, ports):
    """An ALL group: every packet is copied to each of ``ports`` (command: OFPGC_ADD or _MODIFY)."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    buckets = [parser.OFPBucket(watch_port=ofp.OFPP_ANY, watch_group=ofp.OFPG_ANY,
                                actions=[parser.OFPActionOutput(port)]) for port in ports]
    return parser.OFPGroupMod(dp, command, ofp.OFPGT_ALL, group_id, buckets)


def group_delete(dp, group_id):
    """Deletes a group (of any type) and every flow that points at it."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    return parser.OFPGroupMod(dp, ofp.OFPGC_DELETE, ofp.OFPGT_ALL, group_id, [])


def output(dp, port):
    return dp.ofproto_parser.OFPActionOutput(port, dp.ofproto.OFPCML_NO_BUFFER)


def to_controller(dp):
    return output(dp, dp.ofproto.OFPP_CONTROLLER)


def packet_out(dp, port, data):
    ofp, parser = dp.ofproto, dp.ofproto_parser
    return parser.OFPPacketOut(datapath=dp, buffer_id=ofp.OFP_NO_BUFFER, in_port=ofp.OFPP_CONTROLLER,
                               actions=[parser.OFPActionOutput(port)], data=data)


def barrier(dp):
    return dp.ofproto_parser.OFPBarrierRequest(dp)


def port_stats_request(dp):
    return dp.ofproto_parser.OFPPortStatsRequest(dp, 0, dp.ofproto.OFPP_ANY)


def aggregate_stats_request(dp):
    """How many flows the switch has, in every table (answered with one OFPAggregateStatsReply)."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    return parser.OFPAggregateStatsRequest(dp, 0, ofp.OFPTT_ALL, ofp.OFPP_ANY, ofp.OFPG_ANY, 0, 0,
                                           parser.OFPMatch())


def flow_stats_request(dp, table, cookie, cookie_mask):
    """Every flow of ``table`` whose cookie matches, with its counters (OFPFlowStatsReply parts)."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    return parser.OFPFlowStatsRequest(dp, 0, table, ofp.OFPP_ANY, ofp.OFPG_ANY, cookie, cookie_mask,
                                      parser.OFPMatch())


def group_stats_request(dp):
    return dp.ofproto_parser.OFPGroupStatsRequest(dp, 0, dp.ofproto.OFPG_ALL)


def ipv4_dst_match(dp, ip):
    return dp.ofproto_parser.OFPMatch(eth_type=C.ETH_TYPE_IPV4, ipv4_dst=ip)


def base_flows(dp):
    """A clean slate for a switch that just connected: every flow and group removed, then the
    fixed flows: the counting table passes everything on to routing. LLDP and ARP go to the
    controller, unsolicited broadcast and multicast is dropped (nothing is ever flooded), IPv4 with
    no route goes to the controller, the rest is dropped."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    return [
        flow_delete_cookie(dp, 0, 0),
        parser.OFPGroupMod(dp, ofp.OFPGC_DELETE, ofp.OFPGT_ALL, ofp.OFPG_ALL, []),
        goto_routing(dp, C.PRIORITY_TABLE_MISS, parser.OFPMatch(), C.COOKIE_CONTROL),
        flow_add(dp, C.PRIORITY_TABLE_MISS, parser.OFPMatch(), [], C.COOKIE_CONTROL),
        flow_add(dp, C.PRIORITY_CONTROL, parser.OFPMatch(eth_type=C.ETH_TYPE_LLDP), [to_controller(dp)],
                 C.COOKIE_CONTROL),
        flow_add(dp, C.PRIORITY_CONTROL, parser.OFPMatch(eth_type=C.ETH_TYPE_ARP), [to_controller(dp)],
                 C.COOKIE_CONTROL),
        flow_add(dp, C.PRIORITY_DROP_MULTICAST, parser.OFPMatch(eth_dst=C.MULTICAST_BIT), [], C.COOKIE_CONTROL),
        flow_add(dp, C.PRIORITY_IPV4_MISS, parser.OFPMatch(eth_type=C.ETH_TYPE_IPV4), [to_controller(dp)],
                 C.COOKIE_CONTROL),
    ]
