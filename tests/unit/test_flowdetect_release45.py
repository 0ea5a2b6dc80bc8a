"""controller/flowdetect.py forgets a released job's mismatch count (`FlowDetection.mismatch`, the
polls in a row its declared routes lost) where it forgets the job's other detection state
(`_follow_jobs`): a job that reuses the id starts at 0, and the counter does not grow with the
jobs that come and go."""
from sdnmpi.controller import flowdetect, jobroutes, jobs as jobs_module

from test_flowdetect import LINK, fab, poll, register, threshold  # noqa: F401  (fab: the fixture)
from test_flowdetect_declared import _declared_permutation, _mismatched_live_traffic

REUSED_ID = 4242


def _busy(sim, jobs, service, fd, sent, pairs_):
    """One poll in which each of ``pairs_`` sends half its link (a busy pair)."""
    for p in pairs_:
        sent[p] = sent.get(p, 0) + int(0.5 * LINK)
    return poll(sim, jobs, service, fd, dict(sent))


def _release(sim, jobs, job):
    """What a `release` does to the job, as far as detection sees it: its flows go, then the job."""
    sim.run(jobroutes.release_messages(sim.core.datapaths, job))
    jobs.remove(job.id, "released")


def _declared_job_losing(sim, jobs, service, fd, polls, quiet_first=True):
    """A job with a declared permutation whose live traffic its routes load worse than the default
    routes, for ``polls`` polls (after a first quiet poll if ``quiet_first``: a poll that finds the
    job's pairs idle resets its count); returns (job, the live IP pairs, the bytes sent so far: its
    counting entries are new, their counters start at 0)."""
    sent = {}
    job = register(sim, jobs, sim.hosts())
    declared = _declared_permutation(sim, jobs, job)
    live = [(sim.host_ip[f.src], sim.host_ip[f.dst]) for f in _mismatched_live_traffic(sim, declared)]
    if quiet_first:
        poll(sim, jobs, service, fd, dict(sent))
    for _ in range(polls):
        _busy(sim, jobs, service, fd, sent, live)
    return job, live, sent


def test_a_released_jobs_mismatch_count_is_dropped_and_a_reused_id_starts_at_zero(fab, monkeypatch):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    assert fd.mismatch_polls == 3
    monkeypatch.setattr(jobs_module.secrets, "randbelow", lambda _n: REUSED_ID - 1)   # every job gets one id
    first, _, sent = _declared_job_losing(sim, jobs, service, fd, 2)
    assert first.id == REUSED_ID and fd.mismatch[first.id] == 2 and fd.hinted(first)
    _release(sim, jobs, first)
    poll(sim, jobs, service, fd, dict(sent))           # detection sees the job gone
    assert REUSED_ID not in fd.mismatch and REUSED_ID not in fd.seen
    # the next job's traffic is busy from the first poll that counts it (no idle poll resets the count)
    second, live, sent = _declared_job_losing(sim, jobs, service, fd, 1, quiet_first=False)
    assert second.id == REUSED_ID and second is not first
    # one poll lost, not three: the declaration stays (before: 2 + 1 polls, withdrawn at its first poll)
    assert fd.mismatch[second.id] == 1 and fd.hinted(second) and fd.counters["declared_released"] == 0
    _busy(sim, jobs, service, fd, sent, live)
    assert fd.mismatch[second.id] == 2 and fd.hinted(second)
    _busy(sim, jobs, service, fd, sent, live)          # its own third poll: withdrawn now
    assert not fd.hinted(second) and fd.counters["declared_released"] == 1
    sim.check_tables_consistent()


def test_the_mismatch_counter_stays_bounded_over_many_jobs(fab):
    """Jobs that each lose one poll and are released: the counter holds at most the live job."""
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    for _ in range(6):
        job, _, sent = _declared_job_losing(sim, jobs, service, fd, 1)
        assert fd.mismatch == {job.id: 1}
        _release(sim, jobs, job)
        poll(sim, jobs, service, fd, dict(sent))
    assert len(fd.counting.job_of) == 0
    assert fd.mismatch == {} and fd.seen == {} and fd.counters["declared_released"] == 0
