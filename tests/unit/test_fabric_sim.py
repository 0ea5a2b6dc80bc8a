"""The simulated switch and fabric themselves (switch_sim.SwitchSim, fabric_sim.FabricSim): the
route tests are only as good as they are."""
import pytest
from ryu.ofproto import ofproto_v1_3 as OFP
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from sdnmpi.controller import ofmsgs
from sdnmpi.controller import constants as C
from sdnmpi.primitives import fattree

from core_checks import assert_all_pairs_routed
from frame_builders import ip_int, ipv4_frame
from switch_sim import FakeDatapath, SwitchError, SwitchSim, match_key, packet_fields


# ---------------------------------------------------------------------------------------------
# the simulated switch itself (switch_sim.SwitchSim): the route tests are only as good as it is
def _flow(dp, priority, match, actions, cookie=C.COOKIE_ROUTE, command=OFP.OFPFC_ADD, **kw):
    inst = [PARSER.OFPInstructionActions(OFP.OFPIT_APPLY_ACTIONS, actions)] if actions else []
    return PARSER.OFPFlowMod(dp, table_id=kw.pop("table_id", C.TABLE), cookie=cookie, command=command,
                             priority=priority, match=match, instructions=inst, out_port=kw.pop("out_port", OFP.OFPP_ANY),
                             out_group=kw.pop("out_group", OFP.OFPG_ANY), **kw)


def test_switch_sim_semantics():
    dp = FakeDatapath(1)
    sw = SwitchSim(1, [1, 2, 3])
    m1 = PARSER.OFPMatch(eth_type=0x800, ipv4_dst="10.0.0.1")
    out = PARSER.OFPActionOutput
    sw.apply(_flow(dp, 1000, m1, [out(1)]))
    sw.apply(_flow(dp, 1000, PARSER.OFPMatch(eth_type=0x800, ipv4_dst="10.0.0.1"), [out(2)]))   # ADD overwrites
    assert [f.actions for f in sw.flows.values()] == [(("output", 2),)]
    sw.apply(_flow(dp, 999, m1, [out(3)]))                                    # another priority: a second flow
    assert sw.lookup(packet_fields(ipv4_frame("00:00:00:00:00:02", "00:00:00:00:00:01", "10.0.0.2", "10.0.0.1"),
                                   3)).priority == 1000
    sw.apply(ofmsgs.flow_delete_strict(dp, 999, m1))
    assert [f.priority for f in sw.flows.values()] == [1000]
    sw.apply(_flow(dp, 5, PARSER.OFPMatch(), [out(1)], cookie=C.COOKIE_CONTROL))
    sw.apply(ofmsgs.flow_delete_cookie(dp, C.COOKIE_ROUTE))                   # by cookie: only route flows
    assert [f.cookie for f in sw.flows.values()] == [C.COOKIE_CONTROL]
    sw.apply(_flow(dp, 7, PARSER.OFPMatch(), [out(1)], cookie=C.COOKIE_JOB | 5))
    sw.apply(ofmsgs.flow_delete_cookie(dp, C.COOKIE_JOB, C.COOKIE_KIND_MASK))  # by cookie and mask
    assert [f.cookie for f in sw.flows.values()] == [C.COOKIE_CONTROL]
    sw.apply(_flow(dp, 5, PARSER.OFPMatch(), [], command=OFP.OFPFC_DELETE, out_port=2))   # out_port filter
    assert len(sw.flows) == 1
    # groups: add, refuse duplicates, flows pointing at them, deleting one deletes its flows
    sw.apply(ofmsgs.group_select(dp, OFP.OFPGC_ADD, 0x1000, (2, 3)))
    with pytest.raises(SwitchError):
        sw.apply(ofmsgs.group_select(dp, OFP.OFPGC_ADD, 0x1000, (1, 2)))
    with pytest.raises(SwitchError):
        sw.apply(_flow(dp, 1000, m1, [PARSER.OFPActionGroup(0x1001)]))
    with pytest.raises(SwitchError):
        sw.apply(_flow(dp, 1000, m1, [out(9)]))
    with pytest.raises(SwitchError):
        sw.apply(_flow(dp, 1000, PARSER.OFPMatch(ipv4_dst="10.0.0.1"), [out(1)]))   # missing prerequisite
    sw.apply(_flow(dp, 1000, m1, [PARSER.OFPActionGroup(0x1000)]))
    assert {tuple(alt) for alt in sw.expand(sw.flows[(1000, match_key(m1))].actions)} == {(2,), (3,)}
    assert sw.route_flows() == {ip_int("10.0.0.1"): (2, 3)}
    sw.apply(ofmsgs.group_delete(dp, 0x1000))
    assert sw.groups == {} and (1000, match_key(m1)) not in sw.flows
    # overlapping flows at one priority are ambiguous: the simulator refuses to guess
    sw.apply(_flow(dp, 50, PARSER.OFPMatch(eth_type=0x800), [out(1)]))
    sw.apply(_flow(dp, 50, PARSER.OFPMatch(in_port=3), [out(2)]))
    with pytest.raises(SwitchError):
        sw.lookup(packet_fields(ipv4_frame("00:00:00:00:00:02", "00:00:00:00:00:01", "10.0.0.2", "10.0.0.1"), 3))


def test_fabric_sim_detects_forwarding_loops(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 2, 1))   # leaves: host port 1, uplinks 2 (0x101) and 3 (0x102)
    sim.discover()
    h1, h2 = sim.hosts()
    assert assert_all_pairs_routed(sim)
    # a cycle 0x201 -> 0x101 -> 0x202 -> 0x102 -> 0x201 -> ... for h2's address
    for dpid, port in ((0x201, 2), (0x101, 2), (0x202, 3), (0x102, 1)):
        sim.switches[dpid].apply(_flow(sim.dps[dpid], C.PRIORITY_ROUTE,
                                       PARSER.OFPMatch(eth_type=0x800, ipv4_dst=sim.host_ip[h2]),
                                       [PARSER.OFPActionOutput(port)]))
    outcomes = [o[0] for o, _ in sim.trace(h1, sim.host_ip[h2])]
    assert outcomes == ["loop"]
    with pytest.raises(AssertionError):
        assert_all_pairs_routed(sim)
    with pytest.raises(AssertionError, match="forwarding loop"):
        sim.host_send(h1, ipv4_frame(h1, h2, sim.host_ip[h1], sim.host_ip[h2]))
