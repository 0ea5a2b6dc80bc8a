"""controller/jobtraffic.py: a phase declared again hands its installed paths to the router
(``previous=``, primitives/jobroute_incremental.py), so re-declaring it with more pairs (flow
detection as it flags more, accumulating hints) moves few of the running pairs; on the simulated
fabric of conftest.FabricSim (OpenFlow 1.3 tables, packets traced)."""
import collections

from sdnmpi.controller import jobtraffic
from sdnmpi.primitives import fattree

from test_jobtraffic import permutation, register, route_of, setup


def moved(before, after):
    return sorted(p for p in before if p in after and after[p] != before[p])


def replan_moves(make_fabric, add):
    """12 random permutations on the k=4 fat-tree, half the pairs declared, then all of them, as
    flow detection does (the whole demand again, sorted, ``add`` False) or as hints do (the new
    pairs added): per seed, the first half's pairs moved by the new plan and by planning the whole
    demand from scratch (``plan`` with no previous routes). The switches hold the new plan, and a
    pair it keeps is not rewritten."""
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    moves = []
    for seed in range(12):
        demand = permutation(sim, seed)
        sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand[::2], router="sdn-optimal"))
        before = dict(job.traffic.routes[0].paths)
        hops = {pair: route_of(sim, *pair) for pair in before}
        if add:
            sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand[1::2], add=True))
        else:
            sim.run(jobtraffic.declare(sim.core, jobs, job, 0, sorted(demand)))
        after = job.traffic.routes[0]
        assert after.max_flows == 1 and after.fabric_policy is None
        sim.check_job_routes(job)
        kept = [pair for pair in before if pair not in moved(before, after.paths)]
        assert all(route_of(sim, *pair) == hops[pair] for pair in kept)
        fresh = jobtraffic.plan(sim.core, jobs, job, 0)
        moves.append((len(moved(before, after.paths)), len(moved(before, fresh.paths))))
        sim.run(jobtraffic.declare(sim.core, jobs, job, 0, []))
    return moves


def test_declaring_more_pairs_moves_few_running_pairs_as_flow_detection_declares_them(make_fabric):
    moves = replan_moves(make_fabric, add=False)
    incremental, fresh = (sum(m) for m in zip(*moves))
    assert incremental < fresh / 2, moves


def test_adding_pairs_moves_no_more_running_pairs_than_a_fresh_plan(make_fabric):
    """Added pairs come after the old ones in the merged demand, so a fresh plan colours the old
    pairs first and already moves fewer of them; the kept paths still move no more, seed by seed."""
    moves = replan_moves(make_fabric, add=True)
    assert all(incremental <= fresh for incremental, fresh in moves), moves
    assert sum(m[0] for m in moves) < sum(m[1] for m in moves), moves


def test_declaring_the_same_pairs_again_moves_nothing_and_sends_nothing(make_fabric):
    sim, jobs = setup(make_fabric, fattree.kary(4))
    job = register(jobs, sim)
    demand = permutation(sim, 7)
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, demand, router="sdn-optimal"))
    before = dict(job.traffic.routes[0].paths)
    assert jobtraffic.declare(sim.core, jobs, job, 0, demand) == []
    assert job.traffic.routes[0].paths == before
