"""primitives/steps_optimal.py: the per-step SDN-optimal planner of SDN_MPI_Alltoall's pairwise
exchange (registered as ALLREDUCE_PLANNERS["sdn-optimal"], the `planner` of `plan_allreduce`)."""
import random

import msgpack
import pytest

from sdnmpi.controller import rpc_schema
from sdnmpi.primitives import ALLREDUCE_PLANNERS, allreduce, fabric, fattree


def pairwise_steps(hosts):
    """The pairwise exchange of len(hosts) ranks (rank r on hosts[r]): XOR partners for a power
    of two, else shifts; as host steps (same-host pairs dropped)."""
    p = len(hosts)
    pof2 = p & (p - 1) == 0
    steps = []
    for k in range(1, p):
        step = {}
        for r in range(p):
            peer = r ^ k if pof2 else (r + k) % p
            if hosts[r] != hosts[peer]:
                step[hosts[r], hosts[peer]] = step.get((hosts[r], hosts[peer]), 0) + 1
        steps.append(sorted(step.items()))
    return steps


def walk_ok(graph, plan):
    for (src, dst), path in plan.paths.items():
        assert path[0] == fabric.attachment(graph, src)[0] and path[-1] == fabric.attachment(graph, dst)[0]
        for a, b in zip(path, path[1:]):
            assert graph.has_edge(a, b)


@pytest.mark.parametrize("spines,leaves,hpl", [(2, 4, 2), (4, 4, 4), (2, 2, 2), (3, 3, 3)])
def test_every_pairwise_step_is_contention_free_on_full_bisection(spines, leaves, hpl):
    graph = fattree.leaf_spine(spines=spines, leaves=leaves, hosts_per_leaf=hpl)
    hosts = sorted(fabric.hosts(graph))
    rng = random.Random(spines * 100 + leaves)
    for p in range(2, len(hosts) + 1):
        placed = rng.sample(hosts, p)
        steps = pairwise_steps(placed)
        plan = ALLREDUCE_PLANNERS["sdn-optimal"](graph, steps)
        walk_ok(graph, plan)
        assert set(plan.paths) == {pair for step in steps for pair, _c in step}
        # a permutation on a full-bisection fabric: at most one flow per link and step
        assert all(load <= 1 for load in plan.max_load), (p, plan.max_load)
        assert plan.max_load == plan.lower_bound or all(m <= 1 for m in plan.max_load)


def test_on_3_tier_fat_tree_steps_stay_at_the_bound():
    graph = fattree.kary(k=4)
    hosts = sorted(fabric.hosts(graph))
    random.Random(5).shuffle(hosts)   # random placement (in host order D-mod-K is contention-free too)
    steps = pairwise_steps(hosts)
    plan = ALLREDUCE_PLANNERS["sdn-optimal"](graph, steps)
    walk_ok(graph, plan)
    assert max(plan.max_load) == 1
    dmodk = ALLREDUCE_PLANNERS["dmodk"](graph, steps)
    assert max(dmodk.max_load) > 1   # the default routes collide somewhere; the planner does not


def test_a_pair_keeps_its_path_and_counts_as_load():
    graph = fattree.leaf_spine(spines=2, leaves=2, hosts_per_leaf=2)
    a, b, c, d = sorted(fabric.hosts(graph))
    steps = [[((a, c), 1)], [((a, c), 1), ((b, d), 1)]]
    plan = ALLREDUCE_PLANNERS["sdn-optimal"](graph, steps)
    assert plan.paths[a, c][1] != plan.paths[b, d][1]   # b -> d avoids the spine a -> c already uses
    assert plan.max_load == (1, 1)


def test_unknown_hosts_are_refused_and_the_rpc_accepts_the_name():
    graph = fattree.leaf_spine(spines=2, leaves=2, hosts_per_leaf=2)
    with pytest.raises(allreduce.PlanError):
        ALLREDUCE_PLANNERS["sdn-optimal"](graph, [[(("02:00:00:00:99:99", fattree.host_mac(1)), 1)]])
    assert "sdn-optimal" in rpc_schema.PLANNERS
    req = rpc_schema.decode_request(msgpack.packb({"v": 1, "id": 1, "op": "plan_allreduce", "job": 1, "token": "t",
                                                   "comm": 3, "planner": "sdn-optimal",
                                                   "steps": [[["10.0.0.1", "10.0.0.2", 1]]]}))
    assert req.args["planner"] == "sdn-optimal"


def shift_steps(hosts):
    """SDN_MPI_Alltoall's shifts (libsdnmpi/src/alltoall_sched.c, sdnmpi_alltoall_shift) of
    len(hosts) ranks in the given order, in the library's step order d = 1 .. p/2, p-1 .. p/2+1."""
    p = len(hosts)
    order = list(range(1, p // 2 + 1)) + list(range(p - 1, p // 2, -1))
    return [sorted(((hosts[q], hosts[(q + d) % p]), 1) for q in range(p)) for d in order]


@pytest.mark.parametrize("leaves", [4, 6])
def test_ties_go_to_the_uplink_earlier_steps_used_least(leaves):
    """The shifts by 1 and p - 1 send one flow out of each leaf of 2 hosts: alone either spine is
    contention-free, but both on spine 1 gave spine 1 7 of each leaf's 12 outgoing blocks (bench
    run 20261128-213404). Over the whole exchange every leaf uplink carries the same number."""
    graph = fattree.leaf_spine(spines=2, leaves=leaves, hosts_per_leaf=2)
    hosts = sorted(fabric.hosts(graph), key=lambda h: (fabric.attachment(graph, h)[0], h))
    plan = ALLREDUCE_PLANNERS["sdn-optimal"](graph, shift_steps(hosts))
    assert all(load == 1 for load in plan.max_load), plan.max_load
    per_uplink = {}
    for (src, _dst), path in plan.paths.items():
        if len(path) == 3:          # leaf, spine, leaf
            per_uplink[path[0], path[1]] = per_uplink.get((path[0], path[1]), 0) + 1
    assert len(per_uplink) == 2 * leaves
    assert set(per_uplink.values()) == {2 * (len(hosts) - 2) // 2}, per_uplink


def test_a_tie_goes_to_the_spine_earlier_steps_left_free():
    """Step 2's lone flow takes the spine step 1 did not use; in step 3 a pair routed earlier (a -> c)
    still counts as a whole flow for the step's new one, beside the earlier steps' history."""
    graph = fattree.leaf_spine(spines=2, leaves=2, hosts_per_leaf=2)
    a, b, c, d = sorted(fabric.hosts(graph), key=lambda h: (fabric.attachment(graph, h)[0], h))
    # step 1 puts b -> d on spine 1 (ties: the first uplink); step 2 repeats a -> c, which then
    # already has its path, and b -> d's is fixed too; step 3: a -> d must avoid a -> c's spine
    steps = [[((a, c), 1)], [((b, d), 1)], [((a, c), 1), ((b, c), 1)]]
    plan = ALLREDUCE_PLANNERS["sdn-optimal"](graph, steps)
    assert plan.paths[a, c][1] != plan.paths[b, d][1]   # step 2's tie went to the unused spine
    assert plan.paths[b, c][1] != plan.paths[a, c][1]
    assert plan.max_load == (1, 1, 1)
