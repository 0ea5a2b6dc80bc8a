"""controller/jobtraffic.py: a job's traffic phases planned by a pair router and installed as
per-job flows, on a simulated fabric (conftest.FabricSim: OpenFlow 1.3 tables, packets traced)."""
import random

import pytest

from sdnmpi.controller import jobidle, jobtraffic, rpc
from sdnmpi.controller.jobs import CommPlan, JobTable
from sdnmpi.primitives import fattree, pairs, reverse


def setup(make_fabric, graph, routing="dmodk", **settings):
    sim = make_fabric(graph, routing=routing, **settings)
    sim.discover()
    return sim, JobTable()


def register(jobs, sim, macs=None):
    ips = [sim.host_ip[m] for m in (macs or sim.hosts())]
    return jobs.register(ips, 60.0, owner=object(), now=0.0)


def job_flows(sim, job):
    """{dpid: number of flows with the job's cookie} on the simulated switches."""
    counts = {}
    for dpid, sw in sim.switches.items():
        n = sum(1 for f in sw.flows.values() if f.cookie == job.cookie)
        if n:
            counts[dpid] = n
    return counts


def route_of(sim, src_mac, dst_mac):
    """The switches a packet from src to dst crosses (exactly one way, delivered)."""
    ways = sim.trace(src_mac, sim.host_ip[dst_mac])
    assert len(ways) == 1 and ways[0][0] == ("host", dst_mac), ways
    return [dpid for dpid, _in, _out in ways[0][1]]


def permutation(sim, seed):
    hosts = sim.hosts()
    order = hosts[:]
    random.Random(seed).shuffle(order)
    return [(sim.host_ip[a], sim.host_ip[b], 1000) for a, b in zip(hosts, order) if a != b]


def test_first_rank_in_installs_the_planned_paths_and_last_rank_out_removes_them(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    demand = permutation(sim, 3)
    default = {(s, d): route_of(sim, sim.mac_of_ip(s), sim.mac_of_ip(d)) for s, d, _b in demand}
    assert sim.run(jobtraffic.declare(sim.core, jobs, job, 1, demand)) == []   # nobody inside yet
    assert job.traffic.routers[1] == "sdn-adaptive" and job.traffic.demands[1] == jobtraffic.merged(demand)

    msgs = sim.run(jobtraffic.move(sim.core, jobs, job, 0, 1))
    assert msgs and all(m.cookie == job.cookie and m.priority == job.priority for m in msgs)
    routes = job.traffic.routes[1]
    assert routes.fabric_policy is None and routes.max_flows == 1 == routes.nl_d   # contention-free
    for s, d, _b in demand:
        src, dst = sim.mac_of_ip(s), sim.mac_of_ip(d)
        assert route_of(sim, src, dst) == routes.paths[src, dst][1:-1]
    assert any(route_of(sim, sim.mac_of_ip(s), sim.mac_of_ip(d)) != default[s, d] for s, d, _b in demand)

    assert jobtraffic.move(sim.core, jobs, job, 5, 1) == []       # already installed
    assert jobtraffic.move(sim.core, jobs, job, 0, 0) == []       # rank 5 is still inside
    msgs = sim.run(jobtraffic.move(sim.core, jobs, job, 5, 0))
    assert msgs and all(m.command == m.datapath.ofproto.OFPFC_DELETE_STRICT for m in msgs)
    assert job_flows(sim, job) == {} and job.traffic.routes == {} and job.traffic.inside() == {}
    for s, d, _b in demand:
        assert route_of(sim, sim.mac_of_ip(s), sim.mac_of_ip(d)) == default[s, d]
    sim.check_tables_consistent()


def test_phases_switch_routes_and_share_unchanged_flows(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    first, second = permutation(sim, 1), permutation(sim, 2)
    jobtraffic.declare(sim.core, jobs, job, 1, first)
    jobtraffic.declare(sim.core, jobs, job, 2, second)
    sim.run(jobtraffic.move(sim.core, jobs, job, 0, 1))
    assert set(job.traffic.routes) == {1}
    sim.run(jobtraffic.move(sim.core, jobs, job, 0, 2))       # entering phase 2 leaves phase 1
    assert set(job.traffic.routes) == {2} and job.traffic.inside() == {2: {0}}
    assert job.flows() == job.traffic.routes[2].all_flows()
    sim.check_job_routes(job)      # the switches hold phase 2's installed hops, its elided ones are the defaults'
    for s, d, _b in second:
        src, dst = sim.mac_of_ip(s), sim.mac_of_ip(d)
        assert route_of(sim, src, dst) == job.traffic.routes[2].paths[src, dst][1:-1]


def test_a_second_job_is_planned_around_the_first_and_its_release_keeps_the_first(make_fabric):
    graph = fattree.leaf_spine(2, 2, 2)
    sim, jobs = setup(make_fabric, graph)
    h1, h2, h3, h4 = sim.hosts()
    a, b = register(jobs, sim, [h1, h3]), register(jobs, sim, [h2, h4])
    sim.run(jobtraffic.declare(sim.core, jobs, a, 0, [(sim.host_ip[h1], sim.host_ip[h3], 10)]))  # whole run: at once
    sim.run(jobtraffic.declare(sim.core, jobs, b, 1, [(sim.host_ip[h2], sim.host_ip[h4], 10)]))
    sim.run(jobtraffic.move(sim.core, jobs, b, 1, 1))
    spine_a, spine_b = route_of(sim, h1, h3)[1], route_of(sim, h2, h4)[1]
    assert spine_a != spine_b                       # b saw a's load on a's spine
    a_flows = job_flows(sim, a)
    sim.run(jobtraffic.move(sim.core, jobs, b, 1, 0))
    assert job_flows(sim, b) == {} and job_flows(sim, a) == a_flows
    assert route_of(sim, h1, h3)[1] == spine_a


def test_adaptive_leaves_a_dense_phase_to_ecmp_and_routes_a_permutation(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4), routing="ecmp")
    job = register(jobs, sim)
    dense = permutation(sim, 1) + permutation(sim, 2)
    assert sim.run(jobtraffic.declare(sim.core, jobs, job, 0, dense, router="sdn-adaptive")) == []
    routes = job.traffic.routes[0]
    assert routes.fabric_policy == "ecmp" and routes.flows == {} and routes.nl_d == 2
    # Its modelled paths still count as load for the other jobs.
    other = register(jobs, sim)
    assert jobtraffic.others_load(sim.core.topology.graph(), jobs, other).max_flows() >= 1
    assert sim.run(jobtraffic.declare(sim.core, jobs, job, 0, permutation(sim, 1)))
    assert job.traffic.routes[0].fabric_policy is None and job_flows(sim, job)


def test_declaring_for_an_active_phase_replans_and_an_empty_demand_removes_it(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    jobtraffic.declare(sim.core, jobs, job, 3, permutation(sim, 1))
    sim.run(jobtraffic.move(sim.core, jobs, job, 0, 3))
    msgs = sim.run(jobtraffic.declare(sim.core, jobs, job, 3, permutation(sim, 2)))
    assert msgs and job.flows() == job.traffic.routes[3].all_flows()
    sim.check_job_routes(job)
    assert job.traffic.demands[3] == jobtraffic.merged(permutation(sim, 2))   # replaced
    sim.run(jobtraffic.declare(sim.core, jobs, job, 3, []))
    assert job_flows(sim, job) == {} and job.flows() == job.installed == {} and 3 not in job.traffic.demands
    assert job.traffic.inside() == {3: {0}}         # the rank is still inside the phase


def test_add_merges_into_the_phases_demand(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    a, b, c = (sim.host_ip[m] for m in sim.hosts()[:3])
    jobtraffic.declare(sim.core, jobs, job, 2, [(a, b, 5)])
    jobtraffic.declare(sim.core, jobs, job, 2, [(a, b, 7), (b, c, 20)], add=True)
    assert job.traffic.demands[2] == [(b, c, 20), (a, b, 12)]
    jobtraffic.declare(sim.core, jobs, job, 2, [(c, a, 1)])
    assert job.traffic.demands[2] == [(c, a, 1)]


def test_idle_removes_every_phase_and_the_next_enter_restores_it(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, permutation(sim, 1)))
    jobtraffic.declare(sim.core, jobs, job, 1, permutation(sim, 2))
    sim.run(jobtraffic.move(sim.core, jobs, job, 2, 1))
    installed = job_flows(sim, job)
    assert set(job.traffic.routes) == {0, 1}
    sim.run(jobtraffic.idle(sim.core, jobs, job))
    assert job_flows(sim, job) == {} and job.traffic.dormant and job.traffic.inside() == {1: {2}}
    assert sim.run(jobtraffic.move(sim.core, jobs, job, 3, 0)) == []    # leaving does not wake it
    sim.run(jobtraffic.move(sim.core, jobs, job, 2, 1))                 # entering does
    assert job_flows(sim, job) == installed and set(job.traffic.routes) == {0, 1}
    sim.run(jobtraffic.idle(sim.core, jobs, job))
    sim.run(jobtraffic.declare(sim.core, jobs, job, 5, permutation(sim, 3)))  # so does a declare
    assert job_flows(sim, job) == installed and not job.traffic.dormant


def test_collective_plans_win_over_traffic_routes_on_the_same_pair(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    demand = permutation(sim, 1)
    jobtraffic.declare(sim.core, jobs, job, 0, demand)
    key = next(iter(job.traffic.flows()))
    job.plans[0] = CommPlan(steps=[], planner="balanced", flows={key: 99}, max_load=(), lower_bound=())
    assert job.flows()[key] == 99
    del job.plans[0]
    assert job.flows()[key] == job.traffic.flows()[key]


def test_replan_after_a_link_failure_routes_around_it(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    demand = permutation(sim, 4)
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand))
    used = {(u, v) for p in job.traffic.routes[0].paths.values() for u, v in zip(p[1:-2], p[2:-1])}
    a, b = sorted(used)[0]
    sim.cut_link(a, b)
    sim.recompute()
    sim.run(jobtraffic.replan(sim.core, jobs))
    for s, d, _b in demand:
        src, dst = sim.mac_of_ip(s), sim.mac_of_ip(d)
        hops = route_of(sim, src, dst)
        assert hops == job.traffic.routes[0].paths[src, dst][1:-1]
        assert (a, b) not in set(zip(hops, hops[1:])) and (b, a) not in set(zip(hops, hops[1:]))


def test_a_host_missing_from_the_topology_leaves_the_phase_on_default_routes(make_fabric):
    sim, jobs = setup(make_fabric, fattree.leaf_spine(2, 2, 2))
    h1, _h2, h3, _h4 = sim.hosts()
    job = jobs.register([sim.host_ip[h1], "10.9.9.9"], 60.0, owner=object(), now=0.0)
    assert jobtraffic.declare(sim.core, jobs, job, 0, [(sim.host_ip[h1], "10.9.9.9", 5)]) == []
    assert job.traffic.routes == {} and job.traffic.demands == {0: [(sim.host_ip[h1], "10.9.9.9", 5)]}


@pytest.mark.parametrize("demand, message", [
    ("10.0.0.1", "list of"),
    ([("10.0.0.1", "10.0.0.2")], "not \\[src ip"),
    ([("10.0.0.1", "10.0.0.300", 5)], "bad IPv4"),
    ([("10.0.0.1", "10.0.0.99", 5)], "not one of the job's hosts"),
    ([("10.0.0.1", "10.0.0.2", -1)], "bad byte count"),
    ([("10.0.0.1", "10.0.0.2", 0)], "bad byte count"),
    ([("10.0.0.1", "10.0.0.1", 3)], "src == dst"),
    ([("10.0.0.1", "10.0.0.2", 1.5)], "bad byte count"),
    ([("10.0.0.1", "10.0.0.2", True)], "bad byte count"),
    ([("10.0.0.1", "10.0.0.2", 1)] * (jobtraffic.MAX_PAIRS + 1), "more than"),
])
def test_bad_demands_are_refused_and_change_nothing(make_fabric, demand, message):
    sim, jobs = setup(make_fabric, fattree.leaf_spine(2, 2, 2))
    job = register(jobs, sim)
    jobtraffic.declare(sim.core, jobs, job, 0, [("10.0.0.1", "10.0.0.3", 1)])
    with pytest.raises(jobtraffic.TrafficError, match=message):
        jobtraffic.declare(sim.core, jobs, job, 0, demand)
    with pytest.raises(jobtraffic.TrafficError, match=message):
        jobtraffic.declare(sim.core, jobs, job, 0, demand, add=True)
    assert job.traffic.demands == {0: [("10.0.0.1", "10.0.0.3", 1)]}


def test_bad_phases_ranks_and_routers_are_refused(make_fabric):
    sim, jobs = setup(make_fabric, fattree.leaf_spine(2, 2, 2))
    job = register(jobs, sim)
    for phase in (-1, jobtraffic.MAX_PHASE + 1, "1", True):
        with pytest.raises(jobtraffic.TrafficError, match="bad phase"):
            jobtraffic.move(sim.core, jobs, job, 0, phase)
        with pytest.raises(jobtraffic.TrafficError, match="bad phase"):
            jobtraffic.declare(sim.core, jobs, job, phase, [("10.0.0.1", "10.0.0.3", 1)])
    for rank in (-1, 4, None):
        with pytest.raises(jobtraffic.TrafficError, match="bad rank"):
            jobtraffic.move(sim.core, jobs, job, rank, 0)
    with pytest.raises(jobtraffic.TrafficError, match="unknown router"):
        jobtraffic.declare(sim.core, jobs, job, 1, [("10.0.0.1", "10.0.0.3", 1)], router="fastest")
    assert job.traffic.demands == {} and job.traffic.inside() == {}


def test_a_job_holds_at_most_max_job_pairs(make_fabric, monkeypatch):
    sim, jobs = setup(make_fabric, fattree.leaf_spine(2, 2, 2))
    job = register(jobs, sim)
    monkeypatch.setattr(jobtraffic, "MAX_JOB_PAIRS", 3)
    monkeypatch.setattr(jobtraffic, "MAX_PAIRS", 2)
    one, two, three = ("10.0.0.1", "10.0.0.3", 1), ("10.0.0.2", "10.0.0.3", 1), ("10.0.0.3", "10.0.0.1", 1)
    jobtraffic.declare(sim.core, jobs, job, 1, [one, two])
    with pytest.raises(jobtraffic.TrafficError, match="phase 1 would have 3 pairs"):
        jobtraffic.declare(sim.core, jobs, job, 1, [three], add=True)
    jobtraffic.declare(sim.core, jobs, job, 2, [one])
    with pytest.raises(jobtraffic.TrafficError, match="4 pairs in all phases"):
        jobtraffic.declare(sim.core, jobs, job, 3, [two])
    jobtraffic.declare(sim.core, jobs, job, 2, [three])          # replacing phase 2 keeps 3 in all
    assert job.traffic.demands == {1: [one, two], 2: [three]}


def test_to_json_reports_phases_and_active_routes(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    jobtraffic.declare(sim.core, jobs, job, 2, permutation(sim, 1), router="sdn-optimal")
    jobtraffic.move(sim.core, jobs, job, 1, 2)
    doc = job.to_json()["traffic"]
    assert doc["phases"] == {"2": {"pairs": len(permutation(sim, 1)), "router": "sdn-optimal"}} and doc["inside"] == {"2": [1]}
    active = doc["active"]["2"]
    assert active["max_flows"] == 1 and active["flows"] + active["reverse_flows"] == len(job.flows())
    assert all(r["port"] for r in job.to_json()["routes"])
    assert pairs.node_load(job.traffic.routes[2].demand) == 1


class Stat:
    """An OFPPortStats entry as portstats.PortStats.update reads it."""

    def __init__(self, port_no, rx_bytes):
        self.port_no, self.rx_bytes = port_no, rx_bytes
        self.rx_packets = self.tx_packets = self.tx_bytes = 0
        self.rx_dropped = self.tx_dropped = self.rx_errors = self.tx_errors = 0


def feed(sim, macs, rx_bytes, now):
    for mac in macs:
        dpid, port = sim.host_port[mac]
        sim.core.port_stats.update(dpid, [Stat(port, rx_bytes[mac])], now)


def one_flow_job(make_fabric, elide=True):
    """A 4-host leaf-spine with one job whose one-pair phase 0 is installed. Its path is D-mod-K's:
    with elided hops (the default) the switches hold none of it, without every hop."""
    sim, jobs = setup(make_fabric, fattree.leaf_spine(2, 2, 2), elide_default_hops=elide)
    macs = sim.hosts()
    job = register(jobs, sim)
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, [(sim.host_ip[macs[0]], sim.host_ip[macs[2]], 10)]))
    return sim, jobs, job, macs


def routed(sim, job):
    """The job has planned hops and the switches forward them as planned (sim.check_job_routes:
    job flows where installed, default routes where elided)."""
    sim.check_job_routes(job)
    return bool(job.flows())


@pytest.mark.parametrize("elide", [True, False], ids=["elided", "every-hop"])
def test_idle_watch_releases_a_quiet_job_after_the_quiet_time_only(make_fabric, elide):
    sim, jobs, job, macs = one_flow_job(make_fabric, elide)
    assert bool(job_flows(sim, job)) != elide
    watch = jobidle.IdleWatch(threshold_bps=8000, quiet_s=4.0)
    counters = dict.fromkeys(macs, 0)
    assert watch.poll(sim.core, jobs, 0.0) == [] and routed(sim, job)   # no samples yet: busy
    feed(sim, macs, counters, 0.0)
    for t in (2.0, 4.0):                                      # 2 MB/s from one host: busy
        counters[macs[0]] += 2_000_000
        feed(sim, macs, counters, t)
        assert watch.poll(sim.core, jobs, t) == [] and routed(sim, job)
    for t in (6.0, 8.0):                                      # 400 B/s in all = 3200 bit/s: quiet
        counters[macs[1]] += 800
        feed(sim, macs, counters, t)
        assert watch.poll(sim.core, jobs, t) == [] and routed(sim, job)
    feed(sim, macs, counters, 10.0)
    msgs = sim.run(watch.poll(sim.core, jobs, 10.0))           # quiet since 6.0, for 4 s
    assert job.traffic.dormant and job_flows(sim, job) == {} and job.traffic.routes == {} == job.flows() == job.installed
    assert bool(msgs) != elide                                 # deletes only for what the switches held
    assert watch.poll(sim.core, jobs, 12.0) == []              # nothing left to release
    sim.run(jobtraffic.move(sim.core, jobs, job, 0, 1))       # the next phase entry brings them back
    assert routed(sim, job) and bool(job_flows(sim, job)) != elide


@pytest.mark.parametrize("elide", [True, False], ids=["elided", "every-hop"])
def test_idle_watch_counts_a_host_without_samples_as_busy_and_forgets_released_jobs(make_fabric, elide):
    sim, jobs, job, macs = one_flow_job(make_fabric, elide)
    watch = jobidle.IdleWatch(threshold_bps=8000, quiet_s=0.0)
    feed(sim, macs[:3], dict.fromkeys(macs, 0), 0.0)
    assert watch.poll(sim.core, jobs, 1.0) == [] and routed(sim, job)
    feed(sim, macs[3:], dict.fromkeys(macs, 0), 1.0)
    watch.quiet_since[999] = 0.0
    assert bool(sim.run(watch.poll(sim.core, jobs, 2.0))) != elide and 999 not in watch.quiet_since
    assert job.traffic.dormant and job.flows() == {} and job_flows(sim, job) == {}
    with pytest.raises(ValueError):
        jobidle.IdleWatch(threshold_bps=-1)


@pytest.mark.parametrize("elide", [True, False], ids=["elided", "every-hop"])
def test_the_service_counts_an_idle_release_that_sends_nothing(make_fabric, elide):
    """With every hop elided a release has no flow to delete; it is a release all the same (the
    job goes dormant, stats `idle_releases` counts it), and it is counted once."""
    sim, jobs, job, macs = one_flow_job(make_fabric, elide)
    svc = rpc.RpcService(sim.core, sim.run, idle_watch=jobidle.IdleWatch(threshold_bps=8000, quiet_s=0.0))
    svc.jobs = jobs
    sent = sum(len(dp.sent) for dp in sim.dps.values())
    feed(sim, macs, dict.fromkeys(macs, 0), 0.0)
    svc.watch_idle(1.0)
    assert job.traffic.dormant and job.flows() == {} and svc.stats_json()["idle_releases"] == 1
    assert (sum(len(dp.sent) for dp in sim.dps.values()) == sent) == elide
    svc.watch_idle(2.0)
    assert svc.stats_json()["idle_releases"] == 1             # dormant: nothing more to release


@pytest.mark.parametrize("on", [True, False])
def test_reverse_pairs_follow_the_reversed_paths_unless_turned_off(make_fabric, on):
    """--sdnmpi-traffic-reverse-routes (on by default): the ACKs of a routed pair come back along
    its path reversed; off, the reverse pairs keep the default routes."""
    sim, jobs = setup(make_fabric, fattree.kary(4), traffic_reverse_routes=on)
    job = register(jobs, sim)
    demand = permutation(sim, 3)
    routed = {(s, d) for s, d, _b in demand}
    back = [(d, s) for s, d, _b in demand if (d, s) not in routed]
    default = {(s, d): route_of(sim, sim.mac_of_ip(s), sim.mac_of_ip(d)) for s, d in back}
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand, router="sdn-optimal"))
    routes = job.traffic.routes[0]
    assert bool(routes.reverse_flows) == on and job.to_json()["traffic"]["active"]["0"]["reverse_flows"] == len(
        routes.reverse_flows)
    acks = reverse.reverse_paths(sim.core.topology.graph(), routes.paths)   # (mostly the paths reversed)
    moved = 0
    for s, d in back:
        src, dst = sim.mac_of_ip(s), sim.mac_of_ip(d)
        want = acks[src, dst][1:-1] if on else default[s, d]
        assert route_of(sim, src, dst) == want
        moved += want != default[s, d]
    assert (moved > 0) == on                                 # D-mod-K would have sent some elsewhere
    for s, d, _b in demand:                                  # the data still on the planned paths
        assert route_of(sim, sim.mac_of_ip(s), sim.mac_of_ip(d)) == routes.paths[sim.mac_of_ip(s), sim.mac_of_ip(d)][1:-1]
    sim.check_tables_consistent()


def test_a_routed_pair_keeps_its_own_route_over_another_pairs_reverse(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    ha, hb = sim.hosts()[0], sim.hosts()[-1]
    a, b = sim.host_ip[ha], sim.host_ip[hb]
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, [(a, b, 1000)], router="sdn-optimal"))
    assert job.traffic.routes[0].reverse_flows and {k[1:] for k in job.traffic.routes[0].reverse_flows} == {(b, a)}
    jobtraffic.declare(sim.core, jobs, job, 1, [(b, a, 1000)], router="sdn-greedy")
    sim.run(jobtraffic.move(sim.core, jobs, job, 0, 1))
    flows = job.flows()
    assert {k: v for k, v in flows.items() if k[1:] == (b, a)} == job.traffic.routes[1].flows
    assert {k: v for k, v in flows.items() if k[1:] == (a, b)} == job.traffic.routes[0].flows
    assert route_of(sim, hb, ha) == job.traffic.routes[1].paths[hb, ha][1:-1]
    sim.check_tables_consistent()


@pytest.mark.parametrize("argv, on", [([], True), (["--nosdnmpi-traffic-reverse-routes"], False)],
                         ids=["default", "off"])
def test_the_reverse_routes_option_as_ryu_manager_parses_it(argv, on):
    from ryu import cfg  # pylint: disable=import-outside-toplevel
    from sdnmpi.controller import options  # pylint: disable=import-outside-toplevel
    conf = cfg.ConfigOpts()
    options.register_cli(conf)
    conf(args=argv, project="sdnmpi", default_config_files=[])
    assert options.settings(conf).traffic_reverse_routes is on and options.Settings().traffic_reverse_routes is True


def test_a_rank_entering_the_next_phase_early_leaves_the_others_flows_on_their_phase(make_fabric):
    """Phases overlap while ranks move on one by one. A pair both phases route takes the route of
    the phase its sender's rank is in, not the later phase's (measured on the 2:1 fabric: the
    first rank into halo2d moved a permutation pair that halo2d routes too onto another
    permutation flow's uplink)."""
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    hosts, last = sim.hosts(), len(sim.hosts()) - 1
    first = permutation(sim, 1)
    jobtraffic.declare(sim.core, jobs, job, 1, first)
    for rank in range(len(hosts)):
        sim.run(jobtraffic.move(sim.core, jobs, job, rank, 1))
    one = job.traffic.routes[1]
    shared = None
    for seed in range(2, 60):       # a second permutation that routes a pair of the first another way
        jobtraffic.declare(sim.core, jobs, job, 2, permutation(sim, seed))
        sim.run(jobtraffic.move(sim.core, jobs, job, last, 2))        # the last rank moves on first
        two = job.traffic.routes[2]
        shared = next(((a, b) for a, b in one.paths if hosts.index(a) != last and two.fabric_policy is None
                       and two.paths.get((a, b), one.paths[a, b]) != one.paths[a, b]), None)
        if shared:
            break
        sim.run(jobtraffic.move(sim.core, jobs, job, last, 1))
    assert shared, "no second permutation routes a pair of the first another way"
    assert set(job.traffic.routes) == {1, 2}
    for a, b in one.paths:          # the ranks still in phase 1 keep its contention-free paths
        if hosts.index(a) != last:
            assert route_of(sim, a, b) == one.paths[a, b][1:-1]
    src, dst = shared
    if (dst, src) not in one.paths and (dst, src) not in two.paths:              # and its ACKs' route
        back = reverse.reverse_paths(sim.core.topology.graph(), one.paths)[dst, src]
        assert route_of(sim, dst, src) == back[1:-1]
    sim.check_tables_consistent()
    sim.run(jobtraffic.move(sim.core, jobs, job, hosts.index(src), 2))          # its sender moves on
    assert route_of(sim, src, dst) == two.paths[src, dst][1:-1]
    sim.check_tables_consistent()
