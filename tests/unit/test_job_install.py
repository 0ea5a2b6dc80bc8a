"""How a job's flows are built for the switches: encoded once per host pair (ofmsgs.WireMatch)."""
from ryu.ofproto import ofproto_v1_3_parser as parser

from sdnmpi.controller import constants as C
from sdnmpi.controller import jobroutes, ofmsgs
from sdnmpi.controller.jobs import Job

from rpc_helpers import FakeDatapath


def encoded(msg):
    msg.set_xid(7)
    msg.serialize()
    return bytes(msg.buf)


def test_wire_match_encodes_as_ryu_and_can_be_shared():
    dp = FakeDatapath(1)
    fields = dict(eth_type=C.ETH_TYPE_IPV4, ipv4_src="10.0.0.1", ipv4_dst="10.0.1.2")
    shared = ofmsgs.WireMatch(**fields)
    for port in (3, 4, 3):   # the same object in several messages, each encoded like a plain OFPMatch
        ours = ofmsgs.flow_add(dp, 2000, shared, [parser.OFPActionOutput(port)], C.COOKIE_JOB | 5)
        ryus = ofmsgs.flow_add(dp, 2000, parser.OFPMatch(**fields), [parser.OFPActionOutput(port)], C.COOKIE_JOB | 5)
        assert encoded(ours) == encoded(ryus)
    assert shared["ipv4_dst"] == "10.0.1.2" and isinstance(shared, parser.OFPMatch)


def test_sync_messages_share_one_match_per_pair():
    dps = {1: FakeDatapath(1), 2: FakeDatapath(2)}
    job = Job(id=5, hosts=[], owner=None, lease_s=1.0, expires=1.0)
    new = {(1, "10.0.0.1", "10.0.0.2"): 3, (2, "10.0.0.1", "10.0.0.2"): 1, (1, "10.0.0.2", "10.0.0.1"): 2}
    msgs = jobroutes.sync_messages(dps, job, {}, new)
    by_pair = {}
    for msg in msgs:
        by_pair.setdefault((msg.match["ipv4_src"], msg.match["ipv4_dst"]), set()).add(id(msg.match))
    assert {pair: len(ids) for pair, ids in by_pair.items()} == {("10.0.0.1", "10.0.0.2"): 1, ("10.0.0.2", "10.0.0.1"): 1}
    gone = jobroutes.sync_messages(dps, job, new, {})
    assert sorted((m.datapath.id, m.command, m.match["ipv4_src"]) for m in gone) == [
        (1, dps[1].ofproto.OFPFC_DELETE_STRICT, "10.0.0.1"), (1, dps[1].ofproto.OFPFC_DELETE_STRICT, "10.0.0.2"),
        (2, dps[1].ofproto.OFPFC_DELETE_STRICT, "10.0.0.1")]
