"""How a job's flows reach the switches: encoded once per host pair (ofmsgs.WireMatch), and with
--sdnmpi-elide-default-hops only the hops the default routes do not take anyway
(controller/jobroutes.py), on simulated fabrics (conftest.FabricSim) whose packets are traced."""
import random

import pytest
from ryu import cfg
from ryu.ofproto import ofproto_v1_3_parser as parser

from sdnmpi.controller import constants as C
from sdnmpi.controller import jobroutes, ofmsgs, options, rpc
from sdnmpi.controller.jobs import Job
from sdnmpi.primitives import fattree, schedule

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
    quick = ofmsgs.ipv4_pair_match("10.0.0.1", "10.0.1.2")
    assert dict(quick.items()) == dict(shared.items())
    for src, dst in (("10.0.0.1", "10.0.1.2"), ("192.168.255.254", "1.2.3.4"), ("0.0.0.0", "255.255.255.255")):
        assert encoded(ofmsgs.flow_add(dp, 2000, ofmsgs.ipv4_pair_match(src, dst), [parser.OFPActionOutput(2)], 1)) == \
            encoded(ofmsgs.flow_add(dp, 2000, parser.OFPMatch(eth_type=C.ETH_TYPE_IPV4, ipv4_src=src, ipv4_dst=dst),
                                    [parser.OFPActionOutput(2)], 1))


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


# -- eliding hops the default routes forward the same way (--sdnmpi-elide-default-hops) ---------
def _world(make_fabric, graph, routing="dmodk", elide=True, seed=1):
    """A discovered simulated fabric, an RpcService on its Core, and a job of every host with its
    world communicator (recursive doubling, one rank per host, ranks placed by a seeded shuffle;
    seed None: block) planned and installed."""
    sim = make_fabric(graph, routing=routing, elide_default_hops=elide)
    sim.discover()
    service = rpc.RpcService(sim.core, sim.run)
    return sim, service, _planned_job(sim, service, seed)


def _planned_job(sim, service, seed=1):
    ips = [sim.host_ip[m] for m in sim.hosts()]
    if seed is not None:
        random.Random(seed).shuffle(ips)
    job = service.jobs.register(ips, 60.0, owner=object(), now=0.0)
    steps = schedule.host_steps(schedule.recursive_doubling_steps(len(ips)), ips)
    service._plan_allreduce(job, {"comm": 0, "steps": steps, "planner": "balanced"})
    return job


def _default(sim, key):
    dpid, _src, dst = key
    return sim.core.routes[dpid].flows.get(dst)


@pytest.mark.parametrize("graph", [fattree.leaf_spine(2, 4, 2), fattree.kary(4)], ids=["leafspine", "kary4"])
def test_a_hop_the_default_route_takes_anyway_gets_no_flow_and_one_that_differs_does(make_fabric, graph):
    sim, _service, job = _world(make_fabric, graph)
    flows = job.flows()
    elided = {k for k in flows if k not in job.installed}
    assert elided and all(_default(sim, k) == (flows[k],) for k in elided)
    assert all(_default(sim, k) != (p,) for k, p in job.installed.items())
    assert {k for k, p in job.installed.items() if job.installed[k] == flows[k]} == set(job.installed)
    # the plan differs from D-mod-K somewhere (it balances the uplinks): those hops are installed
    assert any(_default(sim, k) != (p,) for k, p in flows.items())
    assert len(job.installed) < len(flows) and sim.check_job_routes(job) == {k: flows[k] for k in elided}
    routes = job.to_json()["routes"]
    assert len(routes) == len(flows) and sum(r["installed"] for r in routes) == len(job.installed)


def test_the_block_placement_on_the_bench_fabric_needs_no_job_flow(make_fabric):
    """Ranks leaf by leaf on 2 spines x 4 leaves: the balanced plan is D-mod-K's routes, hop for hop."""
    sim, _service, job = _world(make_fabric, fattree.leaf_spine(2, 4, 2), seed=None)
    assert len(job.flows()) == 48 and job.installed == {} and sim.job_entries(job) == {}
    assert sim.check_job_routes(job) == job.flows()


def test_without_the_option_every_hop_is_installed(make_fabric):
    sim, _service, job = _world(make_fabric, fattree.leaf_spine(2, 4, 2), elide=False)
    assert job.installed == job.flows() == sim.job_entries(job)
    assert all(r["installed"] for r in job.to_json()["routes"])
    assert sim.check_job_routes(job) == {}


@pytest.mark.parametrize("argv, on", [([], True), (["--sdnmpi-elide-default-hops"], True),
                                       (["--nosdnmpi-elide-default-hops"], False)], ids=["default", "on", "off"])
def test_elision_is_on_by_default_and_its_negative_flag_turns_it_off(make_fabric, argv, on):
    """The option as ryu-manager parses it (oslo.config: a BoolOpt's ``--no`` form turns it off),
    then a world plan on the bench fabric with the settings parsed: elided hops, or every hop."""
    conf = cfg.ConfigOpts()
    options.register_cli(conf)
    conf(args=argv, project="sdnmpi", default_config_files=[])
    settings = options.settings(conf)
    assert settings.elide_default_hops is on and options.Settings().elide_default_hops is True
    sim, _service, job = _world(make_fabric, fattree.leaf_spine(2, 4, 2), elide=settings.elide_default_hops)
    elided = sim.check_job_routes(job)
    assert (len(job.installed) < len(job.flows()) and elided) if on else (job.installed == job.flows() and not elided)


def test_a_hop_whose_default_is_an_ecmp_group_is_never_elided(make_fabric):
    sim, _service, job = _world(make_fabric, fattree.leaf_spine(2, 4, 2), routing="ecmp")
    flows = job.flows()
    grouped = {k for k in flows if len(_default(sim, k)) > 1}
    assert grouped and grouped <= set(job.installed)            # every leaf uplink hop: pinned
    assert set(flows) - set(job.installed)                      # the single-port hops down: elided
    sim.check_job_routes(job)


def test_a_change_of_the_default_routes_installs_what_is_no_longer_the_same(make_fabric):
    sim, service, job = _world(make_fabric, fattree.leaf_spine(2, 4, 2))
    assert job.installed != job.flows()
    sim.core.set_routing("ecmp")
    sim.recompute()
    service.replan()
    grouped = {k for k in job.flows() if len(_default(sim, k)) > 1}
    assert grouped and grouped <= set(job.installed)
    sim.check_job_routes(job)
    sim.core.set_routing("dmodk")
    sim.recompute()
    service.replan()
    assert len(job.installed) < len(job.flows())
    sim.check_job_routes(job)


def test_a_pair_another_job_routes_too_is_installed_by_both(make_fabric):
    sim, service, first = _world(make_fabric, fattree.leaf_spine(2, 4, 2))
    elided = set(first.flows()) - set(first.installed)
    second = _planned_job(sim, service)            # the same hosts and placement: the same pairs
    assert elided and first.installed == first.flows() and second.installed == second.flows()
    assert sim.job_entries(first) == first.flows() and sim.job_entries(second) == second.flows()
    sim.check_job_routes(first)
    sim.check_job_routes(second)
    service.release(second, "test")                # alone again: elided again on the next sync
    service.resync(first)
    assert set(first.flows()) - set(first.installed) == elided
    sim.check_job_routes(first)


def test_a_reconnected_switch_gets_all_its_hops_until_its_default_routes_are_back(make_fabric):
    sim, service, job = _world(make_fabric, fattree.leaf_spine(2, 4, 2))
    dpid = next(k[0] for k in job.flows() if k not in job.installed)
    here = {k: p for k, p in job.flows().items() if k[0] == dpid}
    sim.run(sim.core.switch_enter(sim.dps[dpid], dict(sim.ports[dpid])))      # tables wiped
    sim.run(service.switch_reset(dpid))
    assert {k for k in job.installed if k[0] == dpid} == set(here)
    assert {k: p for k, p in sim.job_entries(job).items() if k[0] == dpid} == here
    sim.recompute()
    service.replan()
    assert {k for k in here if k not in job.installed}
    sim.check_job_routes(job)


def test_the_install_cost_bench_counts_the_messages_it_times():
    import bench_setup  # noqa: F401  (bench/ on sys.path)
    import bench_install_cost
    full = bench_install_cost.run_case("leafspine8-p8", "dmodk", 2)
    elided = bench_install_cost.run_case("leafspine8-p8", "dmodk", 2, elide=True)
    pinned = bench_install_cost.run_case("leafspine8-p8", "ecmp", 2, elide=True)
    assert (full["plan_flows"], full["messages"]) == (48, 48) and elided["messages"] == 0
    assert pinned["messages"] == 16            # ECMP defaults: each pair's leaf uplink stays pinned
    assert all(full[k]["min"] > 0 for k in ("plan_s", "build_s", "send_s", "install_s"))
