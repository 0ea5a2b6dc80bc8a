"""--sdnmpi-flow-seed (primitives/seeding.py) through the controller on a simulated k=4 fat-tree
(conftest.FabricSim): flow detection plans flagged pairs from where they run, so fewer running
pairs change path, with the same busiest link; and the simulator's ``sdnmpi-sim job --detected``
plans the same paths as the controller installs for the same demand."""
import os
import random
import types

import pytest

from sdnmpi import flows
from sdnmpi.controller import flowdetect, jobtraffic, options
from sdnmpi.controller.jobs import JobTable
from sdnmpi.flows import counterlog
from sdnmpi.primitives import fabric, fattree, pair_routing, pairs
from sdnmpi.simulator import job as simjob

from test_flowdetect import LINK, poll, poll_recorded, register, threshold
from test_flowdetect_hold import PERMUTATION, TWO_PHASES
from test_flows_hold import RESULTS


def fabric_for(make_fabric, routing="dmodk", **settings):
    sim = make_fabric(fattree.kary(4), routing=routing, **settings)
    sim.discover()
    jobs = JobTable()
    service = types.SimpleNamespace(core=sim.core, jobs=jobs, confirm=sim.run, resync=lambda job: None)
    return sim, jobs, service


def traced(sim, pairs_):
    """{(src ip, dst ip): the switches a packet crosses now} (the switches' tables, not the plan)."""
    out = {}
    for src, dst in pairs_:
        ways = sim.trace(sim.mac_of_ip(src), dst)
        assert len(ways) == 1, ways
        out[src, dst] = [dpid for dpid, _in, _out in ways[0][1]]
    return out


def replay(make_fabric, name, seed):
    """A counter log recorded on Mininet (5/5 Mbit/s) replayed poll by poll through learned
    detection: (detection, the busy data pairs whose path through the switches changed at a poll,
    summed, the busiest link of the job's plan at each poll)."""
    header, polls = counterlog.parse(counterlog.file_lines(os.path.join(RESULTS, name)))
    sim, jobs, service = fabric_for(make_fabric)
    clf = flows.load_or_fallback(flows.DEFAULT_MODEL, link_rate=header["link_rate_Bps"], interval=header["interval_s"])
    fd = flowdetect.FlowDetection(clf, seed=seed)
    job = register(sim, jobs, sim.hosts())
    poll(sim, jobs, service, fd, {})
    moved, busiest = 0, []
    for p in polls:
        busy = fd._data_pairs(fd._busy(job.id))                 # pylint: disable=protected-access
        before = traced(sim, busy)
        poll_recorded(sim, jobs, service, fd, p)
        after = traced(sim, busy)
        moved += sum(1 for q in busy if after[q] != before[q])
        routes = job.traffic.routes.get(flowdetect.PHASE)
        busiest.append(routes.max_flows if routes is not None else None)
    sim.check_job_routes(job)
    sim.check_tables_consistent()
    return fd, moved, busiest


@pytest.mark.parametrize("name", [PERMUTATION, TWO_PHASES])
def test_recorded_runs_move_fewer_running_pairs_with_seeding(make_fabric, name):
    """The recorded permutation and two phases: the same pairs flagged at the same polls, every
    one routed, each plan with the same busiest link; seeded, fewer busy data pairs change path."""
    on, moved_on, busiest_on = replay(make_fabric, name, True)
    off, moved_off, busiest_off = replay(make_fabric, name, False)
    assert on.counters["elephants"] == off.counters["elephants"] == on.counters["routed"] > 10
    assert busiest_on == busiest_off and max(b for b in busiest_on if b is not None) == 1
    assert moved_on < moved_off, (moved_on, moved_off)


def _flag_all(sim, jobs, service, fd, demand):
    """One poll that flags every pair of ``demand`` [(src ip, dst ip)] (90 % of the link each)."""
    poll(sim, jobs, service, fd, {})
    found, _ = poll(sim, jobs, service, fd, {p: int(0.9 * LINK) for p in demand})
    return found


def permutation(sim, seed):
    order = sim.hosts()
    random.Random(seed).shuffle(order)
    edge = {h: fabric.attachment(sim.graph, h)[0] for h in sim.hosts()}
    return [(a, b) for a, b in zip(sim.hosts(), order) if edge[a] != edge[b]]


@pytest.mark.parametrize("routing", ["dmodk", "single"])
def test_the_simulator_plans_what_the_controller_installs_for_a_detected_demand(make_fabric, routing):
    """A permutation flagged at one poll: the controller's routes (reverse routes off: the simulator
    models data paths only) are `sdnmpi-sim job --detected --fabric-default ROUTING`'s paths, and
    not the unseeded plan's on 11 of the 12 demands under D-mod-K (on single-path routing 1: every
    default path takes the first uplinks, as the fresh colouring's first colours do)."""
    differ = 0
    for seed in range(12):
        sim, jobs, service = fabric_for(make_fabric, routing, traffic_reverse_routes=False)
        fd = flowdetect.FlowDetection(threshold(), router="sdn-optimal")
        job = register(sim, jobs, sim.hosts())
        perm = permutation(sim, seed)
        ips = [(sim.host_ip[a], sim.host_ip[b]) for a, b in perm]
        assert len(_flag_all(sim, jobs, service, fd, ips)[job.id]) == len(perm)
        routes = job.traffic.routes[flowdetect.PHASE]
        assert routes.fabric_policy is None
        graph = fattree.kary(4)
        demand = pairs.merge(pairs.Flow(sim.mac_of_ip(s), sim.mac_of_ip(d), b)
                             for s, d, b in job.traffic.demands[flowdetect.PHASE])
        flows_ = {(f.src, f.dst): 1 for f in demand}
        detected = simjob.route(graph, demand, flows_, "sdn-optimal", fabric_default=routing, detected=True)
        assert dict(zip(detected.pairs, detected.paths)) == routes.paths, seed
        sim.check_job_routes(job)
        plain = simjob.route(graph, demand, flows_, "sdn-optimal", fabric_default=routing)
        differ += dict(zip(plain.pairs, plain.paths)) != routes.paths
    assert differ >= {"dmodk": 10, "single": 1}[routing], differ


def test_seeding_off_or_on_ecmp_plans_the_first_flags_from_scratch(make_fabric):
    """--nosdnmpi-flow-seed, and an ECMP fabric (the switch's hash is not the pair model's): the
    controller installs the unseeded plan, which `sdnmpi-sim job` without --detected predicts."""
    for routing, seed in (("dmodk", False), ("ecmp", True)):
        sim, jobs, service = fabric_for(make_fabric, routing, traffic_reverse_routes=False)
        fd = flowdetect.FlowDetection(threshold(), router="sdn-optimal", seed=seed)
        job = register(sim, jobs, sim.hosts())
        perm = permutation(sim, 4)
        _flag_all(sim, jobs, service, fd, [(sim.host_ip[a], sim.host_ip[b]) for a, b in perm])
        routes = job.traffic.routes[flowdetect.PHASE]
        demand = pairs.merge(pairs.Flow(sim.mac_of_ip(s), sim.mac_of_ip(d), b)
                             for s, d, b in job.traffic.demands[flowdetect.PHASE])
        plain = simjob.route(fattree.kary(4), demand, {(f.src, f.dst): 1 for f in demand}, "sdn-optimal",
                             fabric_default=routing)
        assert routes.paths == dict(zip(plain.pairs, plain.paths)) != pair_routing.dmodk(fattree.kary(4), demand)


def test_hinted_demands_are_not_seeded(make_fabric):
    """A declared demand runs after its plan: declared through `traffic`, it gets the unseeded plan
    even where the seeded one would differ."""
    sim, jobs, _service = fabric_for(make_fabric, traffic_reverse_routes=False)
    job = register(sim, jobs, sim.hosts())
    perm = permutation(sim, 4)
    demand = [(sim.host_ip[a], sim.host_ip[b], 1000) for a, b in perm]
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand, router="sdn-optimal"))
    hinted = dict(job.traffic.routes[0].paths)
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, [], router="sdn-optimal"))
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand, router="sdn-optimal", running=True))
    flows_ = pairs.merge(pairs.Flow(a, b, 1000) for a, b in perm)
    plain = simjob.route(fattree.kary(4), flows_, {(f.src, f.dst): 1 for f in flows_}, "sdn-optimal")
    assert hinted == dict(zip(plain.pairs, plain.paths)) != job.traffic.routes[0].paths


def test_the_option_switches_seeding():
    assert options.Settings().flow_seed is True
    assert flowdetect.from_settings(options.Settings(flow_detection="threshold")).seed is True
    fd = flowdetect.from_settings(options.Settings(flow_detection="threshold", flow_seed=False))
    assert fd.seed is False and fd.to_json()["seed"] is False


def test_the_simulator_refuses_a_detected_demand_without_a_default_routing():
    graph = fattree.kary(4)
    demand = [pairs.Flow(fattree.host_mac(1), fattree.host_mac(9), 1)]
    with pytest.raises(simjob.SimError, match="--fabric-default"):
        simjob.route(graph, demand, {(f.src, f.dst): 1 for f in demand}, "sdn-optimal", detected=True)
