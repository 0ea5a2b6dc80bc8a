"""controller/jobtraffic.py: a declared demand's plan is installed only where it beats the default
routes (flow detection's guard, primitives/reroute.choose): worse never, equal on a demand denser
than a permutation never (hpcc's whole-run profile), equal on a permutation yes. On the simulated
fabric of conftest.FabricSim (OpenFlow 1.3 tables, packets traced)."""
import os

from sdnmpi import traces
from sdnmpi.controller import jobtraffic
from sdnmpi.primitives import PAIR_ROUTERS, fattree, pair_routing, pairs, reroute

from test_jobtraffic import job_flows, register, route_of, setup

DATA = os.path.join(os.path.dirname(__file__), os.pardir, "data", "jobroute")
PLACEMENT = [7, 8, 3, 5, 1, 4, 2, 6]      # the bench's 2:1 placement (jobroute_report.bench_placement(8))


def two_to_one():
    """The bench's 8-host 2:1 fabric: 2 spines, 4 leaves, 2 hosts per leaf."""
    return fattree.leaf_spine(2, 4, 2)


def hpcc_demand(sim):
    """hpcc's profiled whole-run demand (tests/data/jobroute/leafspine-hpcc.tar.gz) as the library
    sends it: (src ip, dst ip, bytes) of every rank pair, ranks on PLACEMENT."""
    tm = traces.load(os.path.join(DATA, "leafspine-hpcc.tar.gz")).phases[0].traffic_matrix()
    ip = [sim.host_ip[fattree.host_mac(n)] for n in PLACEMENT]
    return [(ip[i], ip[j], int(tm[i][j])) for i in range(len(ip)) for j in range(len(ip)) if i != j and tm[i][j]]


def macs(sim, demand):
    return [pairs.Flow(sim.mac_of_ip(s), sim.mac_of_ip(d), b) for s, d, b in demand]


def test_hpccs_dense_profile_that_the_plan_does_not_improve_stays_on_d_mod_k(make_fabric):
    sim, jobs = setup(make_fabric, two_to_one())
    job = register(jobs, sim)
    demand = hpcc_demand(sim)
    graph = sim.core.topology.graph()
    flows = macs(sim, demand)
    assert len(demand) == 56 and pairs.node_load(flows) == 7
    plan = PAIR_ROUTERS["sdn-optimal"](graph, flows)
    default = pair_routing.dmodk(graph, flows)
    # the measured case: the plan's busiest link carries as many flows as D-mod-K's
    assert reroute.busiest(graph, flows, plan, default) == reroute.busiest(graph, flows, {}, default) == 6

    assert sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand, router="sdn-optimal")) == []
    routes = job.traffic.routes[0]
    assert routes.fabric_policy == "dmodk" and routes.flows == {} and job_flows(sim, job) == {}
    assert routes.max_flows == 6 and routes.nl_d == 7
    for f in flows:                                 # every pair on the switches' D-mod-K routes
        assert route_of(sim, f.src, f.dst) == default[f.src, f.dst][1:-1]
    # the comparison is with the default routing in force: ECMP's model (one hashed path per
    # pair) puts 9 flows on a link, the plan 6, so under ECMP the plan is installed
    sim2, jobs2 = setup(make_fabric, two_to_one(), routing="ecmp")
    job2 = register(jobs2, sim2)
    assert reroute.busiest(graph, flows, {}, pair_routing.ecmp(graph, flows)) == 9
    sim2.run(jobtraffic.declare(sim2.core, jobs2, job2, 0, hpcc_demand(sim2), router="sdn-optimal"))
    assert job2.traffic.routes[0].fabric_policy is None and job_flows(sim2, job2)


def test_a_permutation_whose_plan_ties_with_d_mod_k_is_still_routed(make_fabric):
    sim, jobs = setup(make_fabric, two_to_one())
    job = register(jobs, sim)
    hosts = sim.hosts()
    # a shift by one leaf, ranks in host order: D-mod-K is contention-free already
    demand = [(sim.host_ip[a], sim.host_ip[hosts[(i + 2) % 8]], 1000) for i, a in enumerate(hosts)]
    graph = sim.core.topology.graph()
    flows = macs(sim, demand)
    assert reroute.busiest(graph, flows, {}, pair_routing.dmodk(graph, flows)) == 1
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand, router="sdn-optimal"))
    routes = job.traffic.routes[0]
    assert routes.fabric_policy is None and routes.max_flows == 1 and routes.flows   # planned
    sim.check_job_routes(job)      # (the hops equal to D-mod-K's are elided on the switches)


def test_a_dense_demand_the_plan_improves_is_routed(make_fabric):
    sim, jobs = setup(make_fabric, two_to_one())
    job = register(jobs, sim)
    ip = [sim.host_ip[fattree.host_mac(n)] for n in PLACEMENT]
    # ranks 0..7 on PLACEMENT, shift 1 and shift 3 together (node load 2)
    demand = [(ip[r], ip[(r + k) % 8], 1000) for r in range(8) for k in (1, 3)]
    graph = sim.core.topology.graph()
    flows = macs(sim, demand)
    default = pair_routing.dmodk(graph, flows)
    plan = PAIR_ROUTERS["sdn-optimal"](graph, flows)
    assert pairs.node_load(flows) == 2
    assert reroute.busiest(graph, flows, plan, default) < reroute.busiest(graph, flows, {}, default)
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand, router="sdn-optimal"))
    routes = job.traffic.routes[0]
    assert routes.fabric_policy is None and job_flows(sim, job)
    for f in flows:
        assert route_of(sim, f.src, f.dst) == routes.paths[f.src, f.dst][1:-1]


def test_a_plan_worse_than_the_default_routes_is_never_installed(make_fabric):
    sim, jobs = setup(make_fabric, two_to_one())
    job = register(jobs, sim)
    hosts = sim.hosts()
    demand = [(sim.host_ip[a], sim.host_ip[hosts[(i + 2) % 8]], 1000) for i, a in enumerate(hosts)]
    # "single" puts every pair on the first spine: 2 flows per uplink where D-mod-K has 1
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand, router="single"))
    routes = job.traffic.routes[0]
    assert routes.fabric_policy == "dmodk" and routes.max_flows == 1 and job_flows(sim, job) == {}
    # under the plan's own default ("single" as the default routing) it is as good: installed
    sim2, jobs2 = setup(make_fabric, two_to_one(), routing="single")
    job2 = register(jobs2, sim2)
    sim2.run(jobtraffic.declare(sim2.core, jobs2, job2, 0, demand, router="single"))
    assert job2.traffic.routes[0].fabric_policy is None and job2.traffic.routes[0].max_flows == 2
