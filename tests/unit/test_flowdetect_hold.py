"""controller/flowdetect.py with flows/hold.py: a job whose flagged pairs end before they can be
routed (an all-to-all's) is left to the fabric, a job whose elephants last is routed as before, on
a simulated k=4 fat-tree (conftest.FabricSim): counter logs recorded on Mininet at 5/5 Mbit/s
replayed poll by poll through the controller's detection, and a synthetic phase change."""
import logging
import os
import types

import pytest

from sdnmpi import flows
from sdnmpi.controller import flowdetect, options
from sdnmpi.controller.jobs import JobTable
from sdnmpi.flows import counterlog
from sdnmpi.flows.hold import HOLD_SHARE
from sdnmpi.primitives import fattree

from test_flowdetect import LINK, fab, poll, poll_recorded, register, threshold  # noqa: F401  (fab: the fixture)
from test_flowdetect_acks import _permutation
from test_flows_hold import ALLTOALL, RESULTS

PERMUTATION = "flowdetect-20261129T224040Z/counters/permutation-learned-2.jsonl.gz"
TWO_PHASES = "flowdetect-20261129T233016Z/counters/two-phases-learned-1.jsonl.gz"
LOGGER = "sdnmpi.controller.flowdetect"


def replay(make_fabric, name, share):
    """A recorded counter log through FlowDetection (the shipped model at the log's link rate) on a
    fresh simulated fabric, one job on the 16 hosts: (fd, job, per poll: (the job's routed paths,
    the busy data pairs whose path changed at that poll))."""
    header, polls = counterlog.parse(counterlog.file_lines(os.path.join(RESULTS, name)))
    sim = make_fabric(fattree.kary(4))
    sim.discover()
    jobs = JobTable()
    service = types.SimpleNamespace(core=sim.core, jobs=jobs, confirm=sim.run, resync=lambda job: None)
    clf = flows.load_or_fallback(flows.DEFAULT_MODEL, link_rate=header["link_rate_Bps"], interval=header["interval_s"])
    assert isinstance(clf, flows.LearnedClassifier)
    fd = flowdetect.FlowDetection(clf, hold_share=share)
    job = register(sim, jobs, sim.hosts())
    poll(sim, jobs, service, fd, {})
    mac = {ip: m for m, ip in sim.host_ip.items()}

    def paths():
        routes = job.traffic.routes.get(flowdetect.PHASE)
        return dict(routes.routed_paths()) if routes is not None else {}

    seen = []
    for p in polls:
        before = paths()
        poll_recorded(sim, jobs, service, fd, p)
        after = paths()
        moved = [q for q in fd._data_pairs(fd._busy(job.id))
                 if before.get((mac[q[0]], mac[q[1]])) != after.get((mac[q[0]], mac[q[1]]))]
        seen.append((after, moved))
    sim.check_tables_consistent()
    return fd, job, seen


def test_the_recorded_all_to_all_is_left_to_the_fabric(make_fabric, caplog):
    """flowdetect-20261129T235201Z's all-to-all under learned detection (196 flags, precision 0.43).
    Before the rule the controller installed sdn-optimal routes at 5 polls and moved 52 busy data
    pairs mid-transfer (the same replay with the rule off, below); with it nothing is installed."""
    with caplog.at_level(logging.INFO, logger=LOGGER):
        fd, job, seen = replay(make_fabric, ALLTOALL, HOLD_SHARE)
    assert all(paths == {} and moved == [] for paths, moved in seen)
    assert "routed" not in fd.counters and fd.counters["elephants"] == 196
    assert fd.counters["left_short_lived"] == 167 and fd.counters["short_lived_jobs"] == 1
    assert fd.counters["flags_held"] + fd.counters["flags_short_lived"] == 195    # the last poll's flag pending
    lines = [r.getMessage() for r in caplog.records if "left to the fabric until" in r.getMessage()]
    assert lines == ["flow detection: job %d: 16 of its last 16 flagged pairs went idle within 2 polls (2 s; "
                     "under 50 %% lasted): its detected pairs are left to the fabric until more of them last "
                     "(--sdnmpi-flow-hold-share)" % job.id]
    assert fd.to_json()["hold"] == {str(job.id): {"held": 0, "judged": 16, "short_lived": True}}
    # the rule off: the same counters route pairs and move running ones
    fd, _job, seen = replay(make_fabric, ALLTOALL, 0.0)
    # (seeded where the pairs run, primitives/seeding.py: 2 routed, 3 moved at 4 polls; with unseeded
    # incremental re-plans, primitives/jobroute_incremental.py: 22 routed, 52 moved at 5 polls; planned
    # from scratch each time it was 29, 59 and 6)
    assert fd.counters["routed"] == 2 and sum(len(moved) for _paths, moved in seen) == 3
    assert sum(1 for (paths, _), (before, _) in zip(seen[1:], seen) if paths and paths != before) == 4


@pytest.mark.parametrize("name", [PERMUTATION, TWO_PHASES])
def test_recorded_long_flows_are_routed_as_without_the_rule(make_fabric, name):
    """A permutation and the two phases at 5/5 Mbit/s: the same routes at every poll as with the
    rule off, every flag routed."""
    fd, _job, seen = replay(make_fabric, name, HOLD_SHARE)
    off, _job, seen_off = replay(make_fabric, name, 0.0)
    assert [paths for paths, _ in seen] == [paths for paths, _ in seen_off]
    assert fd.counters["routed"] == fd.counters["elephants"] > 10
    assert "left_short_lived" not in fd.counters and "short_lived_jobs" not in fd.counters


def test_a_dense_phase_then_lasting_elephants_are_routed_again(fab, caplog):
    """Bursts that end at the next poll make the job short-lived; a colliding permutation flagged
    then is left to the fabric until its flags have held HOLD_S (2 polls at 1 s), and routed then."""
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold(), router="sdn-optimal")
    job = register(sim, jobs, sim.hosts())
    perm = [(sim.host_ip[f.src], sim.host_ip[f.dst]) for f in _permutation(sim)]
    burst = [(sim.host_ip[a], sim.host_ip[b]) for a, b in zip(sim.hosts()[:4], sim.hosts()[8:12])]
    sent = {}

    def step(busy):
        for p in busy:
            sent[p] = sent.get(p, 0) + int(0.9 * LINK)
        return poll(sim, jobs, service, fd, dict(sent))[0]

    step([])
    assert len(step(burst)[job.id]) == 4          # nothing judged yet: routed (a sparse set: planned)
    routes = job.flows()
    assert {(s, d) for s, d, _ in job.traffic.demands[flowdetect.PHASE]} == set(burst) and routes
    with caplog.at_level(logging.INFO, logger=LOGGER):
        step([])                                  # every burst over: 4 idle verdicts
    assert fd.hold.short_lived(job.id) and "4 of its last 4 flagged pairs went idle within 2 polls" in caplog.text
    assert len(step(perm)[job.id]) == len(perm) == 11
    # left to the fabric: no plan, no route change (the bursts' routes stay until they all go quiet)
    assert fd.counters["left_short_lived"] == 11 and job.flows() == routes
    step(perm)                                    # busy once: not judged yet
    assert job.flows() == routes and fd.hold.short_lived(job.id)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        step(perm)                                # held: routed again, at this poll
    assert not fd.hold.short_lived(job.id)
    assert ("11 of its last 15 flagged pairs stayed busy for 2 polls (2 s): its detected pairs are routed again"
            in caplog.text)
    assert {(s, d) for s, d, _ in job.traffic.demands[flowdetect.PHASE]} == set(perm) and job.flows()
    sim.check_job_routes(job)
    sim.check_tables_consistent()


def test_the_option_sets_the_share():
    assert options.Settings().flow_hold_share == HOLD_SHARE
    fd = flowdetect.from_settings(options.Settings(flow_detection="threshold", flow_hold_share=0.25))
    assert fd.hold.share == 0.25
