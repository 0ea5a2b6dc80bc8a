"""controller/flowdetect.py's mismatch check (`_check_declared`): a job's declared routes (a
profile, hints) released when they load its live busy data pairs worse than the default routes,
MISMATCH_S seconds of polls in a row, on a simulated k=4 fat-tree (conftest.FabricSim; the Mininet side:
tests/integration/test_release_mininet.py)."""
import itertools
import logging
import random

import pytest

from sdnmpi.controller import flowcount, flowdetect, jobtraffic
from sdnmpi.primitives import PAIR_ROUTERS, fabric, pairs, reroute, reverse

from test_flowdetect import LINK, Tcp, fab, poll, register, route_of, threshold  # noqa: F401  (fab: the fixture)

MISMATCH = flowdetect.FlowDetection(threshold()).mismatch_polls   # 3 at 1 s polls


def _permutation(sim, seed):
    order = sim.hosts()
    random.Random(seed).shuffle(order)
    return [pairs.Flow(a, b, 1) for a, b in zip(sim.hosts(), order) if a != b]


def _mismatched_live_traffic(sim, declared):
    """Live busy pairs (MAC flows) on which ``declared``'s sdn-optimal routes load the busiest link
    more than D-mod-K would: half of the declared permutation and 8 pairs of another one."""
    graph = sim.core.topology.graph()
    plan = PAIR_ROUTERS["sdn-optimal"](graph, declared)
    for seed in range(100, 140):
        live = sorted(set(declared[:len(declared) // 2]) | {f for f in _permutation(sim, seed)[:8] if f not in declared})
        default = PAIR_ROUTERS["dmodk"](graph, live)
        if reroute.busiest(graph, live, plan, default) > reroute.busiest(graph, live, {}, default):
            return live
    raise AssertionError("no mismatched live traffic found")


def _declared_permutation(sim, jobs, job, seed=1):
    """A random permutation the job declares as its whole-run profile: installed (its plan puts
    1 flow on the busiest link, D-mod-K 2 for seed 1)."""
    declared = _permutation(sim, seed)
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, [(sim.host_ip[f.src], sim.host_ip[f.dst], 1000) for f in declared],
                               router="sdn-optimal"))
    assert job.traffic.routes[0].fabric_policy is None and job.traffic.routes[0].max_flows == 1 and job.flows()
    return declared


def _declared_job(fab):
    """(sim, jobs, service, threshold FlowDetection, job on every host, its declared permutation
    (`_declared_permutation`), the job's installed flows)."""
    sim, jobs, service = fab
    job = register(sim, jobs, sim.hosts())
    declared = _declared_permutation(sim, jobs, job)
    return sim, jobs, service, flowdetect.FlowDetection(threshold()), job, declared, job.flows()


def test_declared_routes_that_load_the_live_traffic_worse_are_released_after_three_polls(fab, caplog):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    job = register(sim, jobs, sim.hosts())
    declared = _declared_permutation(sim, jobs, job)
    live = _mismatched_live_traffic(sim, declared)
    ip = [(sim.host_ip[f.src], sim.host_ip[f.dst]) for f in live]
    match = [(sim.host_ip[f.src], sim.host_ip[f.dst]) for f in declared]
    installed = job.flows()
    sent = {}

    def busy(pairs_):     # each pair sends half its link in the interval (a busy pair)
        for p in pairs_:
            sent[p] = sent.get(p, 0) + int(0.5 * LINK)
        return poll(sim, jobs, service, fd, dict(sent))

    poll(sim, jobs, service, fd, {})
    busy(ip)
    busy(ip)
    busy(match)             # one poll of the declared traffic: the count starts again
    assert job.flows() == installed and fd.mismatch == {}
    busy(ip)
    busy(ip)
    assert job.flows() == installed and not job.traffic.dormant and fd.mismatch[job.id] == 2
    with caplog.at_level(logging.WARNING, logger="sdnmpi.controller.flowdetect"):
        busy(ip)
    # the declaration is withdrawn: what is left is detection's, for the pairs flagged so far
    assert not job.traffic.dormant and not fd.hinted(job) and fd.counters["declared_released"] == 1
    assert set(fd.detected[job.id]) == {p for p in set(ip) | set(match) if p in fd.counting.job_of}   # counted ones
    assert job.traffic.demands in ({}, {0: fd.owned.get(job.id)})
    # polls 2-3 worse, 4 not, 5-7 worse: released at poll 7, 6 polls after the first that saw the job
    [entry] = fd.to_json()["released"]
    assert (entry["job"], entry["poll"], entry["polls_since_seen"]) == (job.id, 7, 6)
    assert entry["declared_flows"] > entry["default_flows"] and 0 < entry["busy_pairs"] <= len(ip)   # counted ones
    assert any("released (the profile or hints do not match the live traffic)" in r.getMessage()
               for r in caplog.records)
    sim.check_tables_consistent()
    # the next declaration brings the routes back
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, [(sim.host_ip[f.src], sim.host_ip[f.dst], 1000) for f in declared],
                               router="sdn-optimal"))
    assert fd.hinted(job) and job.flows() == installed


@pytest.mark.parametrize("packets", ["kept", "not kept"])
def test_ack_streams_do_not_hide_a_mismatch(fab, packets):
    """The live pairs' TCP ACK streams (their reverse pairs, at 1.8 % of the link where the data
    runs at 80 %: busy) are not data: their payload is nil (or, on a switch that keeps no packet
    counts, they send under ACK_SHARE of their reverse pair's bytes). Counted as flows, one of
    them on the default routes next to a data flow made D-mod-K's busiest link as loaded as the
    declared routes' (3 flows against 3), so the mismatch was never released."""
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    job = register(sim, jobs, sim.hosts())
    declared = _declared_permutation(sim, jobs, job)
    live = _mismatched_live_traffic(sim, declared)
    graph = sim.core.topology.graph()
    routes = job.traffic.routes[0].routed_paths()
    hides = []
    for ack in (pairs.Flow(f.dst, f.src, 1) for f in live):
        default = PAIR_ROUTERS["dmodk"](graph, live + [ack])
        if ack not in live and reroute.busiest(graph, live + [ack], routes, default) <= reroute.busiest(
                graph, live + [ack], {}, default):
            hides.append(ack)
    assert hides
    ack = (sim.host_ip[hides[0].src], sim.host_ip[hides[0].dst])
    data = {(sim.host_ip[f.src], sim.host_ip[f.dst]) for f in live}
    tcp = Tcp()
    poll(sim, jobs, service, fd, {})
    for _ in range(MISMATCH):
        assert fd.hinted(job)
        tcp.send({p: int(0.8 * LINK) for p in data})
        sent = {p: b for p, b in tcp.bytes.items() if p in data or p == ack}      # one ACK stream busy
        counted = tcp.packets if packets == "kept" else {p: flowcount.UNAVAILABLE for p in fd.counting.job_of}
        poll(sim, jobs, service, fd, sent, counted)
        assert ack in fd._busy(job.id)           # the ACK stream is busy: over 1 % of the link
    assert not fd.hinted(job) and fd.counters["declared_released"] == 1


def test_declared_routes_that_match_the_live_traffic_stay(fab):
    sim, jobs, service, fd, job, declared, installed = _declared_job(fab)
    match = [(sim.host_ip[f.src], sim.host_ip[f.dst]) for f in declared]
    poll(sim, jobs, service, fd, {})
    for k in range(1, 6):
        poll(sim, jobs, service, fd, {p: k * int(0.5 * LINK) for p in match})
    assert job.flows() == installed and not job.traffic.dormant and "declared_released" not in fd.counters
    assert fd.counters["left_to_hints"] == len(match)      # seen as elephants, left to the profile


def test_declared_routes_are_scored_with_their_reverse_routes(fab):
    """Busy reverse pairs of the declared pairs (data sent back: here 40 % of the forward bytes,
    more than an ACK stream) take the reverse routes the declaration installed
    (--sdnmpi-traffic-reverse-routes). Scored on their default paths instead (the declared pairs'
    paths only), 8 busy pairs of this matching declaration with their reverse pairs looked worse
    than D-mod-K (3 flows on the busiest link against 2) and were released after 3 polls."""
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    job = register(sim, jobs, sim.hosts())
    declared = _declared_permutation(sim, jobs, job, seed=13)
    installed = job.flows()
    live = declared[:8]
    acks = [r for r in (pairs.Flow(f.dst, f.src, 1) for f in live) if r not in live]
    assert acks and job.traffic.routes[0].reverse_flows
    graph = sim.core.topology.graph()
    busy = live + acks
    default = PAIR_ROUTERS["dmodk"](graph, busy)
    routes = job.traffic.routes[0]
    assert reroute.busiest(graph, busy, routes.paths, default) > reroute.busiest(graph, busy, {}, default)
    where = {**reverse.reverse_paths(graph, routes.paths), **routes.paths}      # where their packets go
    assert reroute.busiest(graph, busy, where, default) <= reroute.busiest(graph, busy, {}, default)
    share = {f: 0.5 if f in live else 0.2 for f in busy}       # half the link, and 40 % of that back
    poll(sim, jobs, service, fd, {})
    for k in range(1, 6):
        poll(sim, jobs, service, fd, {(sim.host_ip[f.src], sim.host_ip[f.dst]): k * int(share[f] * LINK) for f in busy})
    assert job.flows() == installed and not job.traffic.dormant and "declared_released" not in fd.counters
    assert fd.mismatch == {} and fd.counters["left_to_hints"] == len(busy)    # elephants, left to it


def _plannable_mismatch(sim, declared):
    """Live busy pairs (MAC flows across edge switches: counted) that ``declared``'s sdn-optimal
    routes load worse than D-mod-K, which loads them worse than their own sdn-optimal plan."""
    graph = sim.core.topology.graph()
    plan = PAIR_ROUTERS["sdn-optimal"](graph, declared)
    edge = {h: fabric.attachment(sim.graph, h)[0] for h in sim.hosts()}
    for seed, k, m in itertools.product(range(100, 300), (0, 2, 4, 8), (4, 6, 8)):
        live = [f for f in _permutation(sim, seed)[:m] if f not in declared] + declared[:k]
        live = [f for f in pairs.merge(live) if edge[f.src] != edge[f.dst]]
        default = PAIR_ROUTERS["dmodk"](graph, live)
        own = PAIR_ROUTERS["sdn-optimal"](graph, live)
        if reroute.busiest(graph, live, plan, default) > reroute.busiest(graph, live, {}, default) > reroute.busiest(
                graph, live, own, default):
            return live
    raise AssertionError("no plannable mismatched live traffic found")


def _released(sim, jobs, service, fd, job, live):
    """Polls ``live`` busy (half the link each) until the job's declaration is withdrawn; the
    cumulative bytes sent."""
    sent = {(sim.host_ip[f.src], sim.host_ip[f.dst]): 0 for f in live}
    poll(sim, jobs, service, fd, {})
    for _ in range(MISMATCH):
        assert fd.hinted(job) and "declared_released" not in fd.counters
        sent = {p: b + int(0.5 * LINK) for p, b in sent.items()}
        poll(sim, jobs, service, fd, sent)
    assert fd.counters["declared_released"] == 1
    return sent


def test_after_the_release_the_jobs_elephants_get_the_planners_routes(fab):
    """Once its declaration is proven wrong, the job is undeclared: its elephants, flagged while
    the declaration won (left to it), are routed by the planner at the release, under the job's
    cookie; before, they stayed on the default routes (the job dormant, its demand kept)."""
    sim, jobs, service, fd, job, declared, _installed = _declared_job(fab)
    live = _plannable_mismatch(sim, declared)
    ip = {(sim.host_ip[f.src], sim.host_ip[f.dst]) for f in live}
    _released(sim, jobs, service, fd, job, live)
    assert fd.counters["left_to_hints"] == len(live)          # flagged while the declaration won
    assert not job.traffic.dormant and set(job.traffic.demands) == {0}
    assert {(s, d) for s, d, _b in job.traffic.demands[0]} == ip and fd.owned[job.id] == job.traffic.demands[0]
    assert set(fd.detected[job.id]) == ip and fd.counters["routed"] == len(live)
    routes = job.traffic.routes[0]
    assert routes.router == "sdn-optimal" and routes.fabric_policy is None and routes.flows
    graph = sim.core.topology.graph()
    default = PAIR_ROUTERS["dmodk"](graph, live)
    assert reroute.busiest(graph, live, routes.paths, default) < reroute.busiest(graph, live, {}, default)
    for f in live:
        assert route_of(sim, f.src, f.dst) == routes.paths[f.src, f.dst][1:-1]
    assert all(key[1:] in ip or key[1:][::-1] in ip for key in job.flows())
    sim.check_tables_consistent()
    # a pair flagged later is routed too (detection's demand grows), as for an undeclared job
    extra = next(f for f in _permutation(sim, 3) if f not in live and f.src not in {g.src for g in live}
                 and f.dst not in {g.dst for g in live})
    sent = {p: 3 * int(0.5 * LINK) for p in ip}
    sent[sim.host_ip[extra.src], sim.host_ip[extra.dst]] = int(0.5 * LINK)
    poll(sim, jobs, service, fd, sent)
    assert (sim.host_ip[extra.src], sim.host_ip[extra.dst]) in fd.detected[job.id]
    assert fd.counters["left_to_hints"] == len(live) and fd.counters["declared_released"] == 1


def test_a_new_declaration_after_the_release_wins_again(fab):
    sim, jobs, service, fd, job, declared, installed = _declared_job(fab)
    live = _plannable_mismatch(sim, declared)
    sent = _released(sim, jobs, service, fd, job, live)
    assert job.traffic.routes[0].router == "sdn-optimal" and fd.counters["routed"] == len(live)
    detected = job.flows()
    # a phase entry alone brings nothing back: the withdrawn declaration has no phase left
    sim.run(jobtraffic.move(sim.core, jobs, job, 0, 1))
    assert job.flows() == detected and not fd.hinted(job)
    # the job declares again (the RPC op `traffic`): its routes replace detection's, and win
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, [(sim.host_ip[f.src], sim.host_ip[f.dst], 1000) for f in declared],
                               router="sdn-optimal"))
    # (planned from detection's installed paths, which are seeded where the pairs ran: the same
    # bound as the first declaration's plan, not necessarily its paths)
    routes = job.traffic.routes[0]
    assert fd.hinted(job) and job.flows() != detected and routes.max_flows == 1 and routes.fabric_policy is None
    assert {(f.src, f.dst) for f in routes.demand} == {(f.src, f.dst) for f in declared}
    sim.check_job_routes(job)
    installed = job.flows()
    extra = next(f for f in declared if (sim.host_ip[f.src], sim.host_ip[f.dst]) not in sent)
    sent = {p: b + int(0.5 * LINK) for p, b in sent.items()}
    sent[sim.host_ip[extra.src], sim.host_ip[extra.dst]] = int(0.5 * LINK)
    found, _ = poll(sim, jobs, service, fd, sent)
    assert (sim.host_ip[extra.src], sim.host_ip[extra.dst], 1) in found[job.id]
    assert fd.counters["left_to_hints"] == len(live) + 1 and fd.counters["routed"] == len(live)
    assert job.flows() == installed
