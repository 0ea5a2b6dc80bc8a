"""Flow detection without hints (issue 16): the controller finds a job's elephant host pairs in
the counters of controller/flowcount.py and routes them like hinted ones.

Every ``--sdnmpi-flow-interval`` seconds the app calls `FlowDetection.poll` (counting entries
brought up to date, one flow-stats request per edge switch), feeds the replies to `reply`, and
then calls `detect`: the readings go to a `flows.PairCounters` over the classifier chosen by
``--sdnmpi-flow-detection`` (threshold, or the learned model), and each newly flagged pair joins
its job's detected demand. That demand is the job's phase 0 (wanted while the job is not
dormant), declared through the same path as the RPC op `traffic` (jobtraffic.declare, confirmed
and rolled back by rpc_traffic.install) with the router ``--sdnmpi-flow-router`` (sdn-optimal),
so the routes carry the job's cookie and priority. The flagged pairs are running: with
``--sdnmpi-flow-seed`` (on) the plan starts from where each runs (its installed or reverse route,
else its D-mod-K or single-path default path; primitives/seeding.py) and keeps it there wherever
the plan's bound allows. Unless that plan loads the job's busiest link
more than its installed routes or the default routes do, counted over every busy data pair of
the job (`_data_pairs`: TCP ACK streams left out) with the undetected ones on their default paths
(primitives.reroute): then the detected pairs stay where they are (halo3d: D-mod-K is optimal,
and a plan of a part of its pairs is worse).

Hints and profiles win: a job whose traffic demands are not exactly what detection declared (the
job sent `traffic`) gets no detected routes. But a declaration that does not match the live traffic
is withdrawn: when, for MISMATCH_S seconds of polls in a row, the job's installed routes load its busy
pairs' busiest link more than the default routes would (the same score), its demands and routes go
(jobtraffic.withdraw; one log line), so the job is undeclared: its flagged pairs are routed at once
like any undeclared job's, and so are the pairs flagged later, until the job declares again (a
`traffic` op; a phase entry alone brings nothing back). Release: dynamic phase detection
(controller/jobidle.py) makes an idle job dormant and removes its routes; detection then forgets
the job's detected pairs (`PairCounters.rearm`) so that the next busy phase is detected anew, and
its next declaration wakes the job. Within a busy job, a phase's end: a detected pair that sends
under BUSY_SHARE of the link for STALE_S seconds of complete polls in a row leaves the job's detected
demand (`_age`), which is declared again without it, so that the next phase's pairs are planned
against the pairs that run, not against the last phase's idle ones; it may be flagged again.
Short-lived flags (flows.hold): a job whose flagged pairs mostly go idle within HOLD_S seconds
(an all-to-all's, over before a route could pay) is left to the fabric, no plan and no route
change, until its flags last again (`_judge_flags`, --sdnmpi-flow-hold-share). These three
timings are seconds, counted in whole complete polls of ``--sdnmpi-flow-interval``
(flows.polls.polls_for: 3 s is 3 polls at 1 s, 6 at 0.5 s).

Sliding windows (``--sdnmpi-flow-span``, flows.sliding): the classifier's intervals may span a
whole number of polls; at every poll it sees each pair's windows of that span ending at that poll
(flows.sliding.SlidingCounters), and the busy line, the ACK rule's packets and the stale, hold and
mismatch checks read the same window ending at the latest poll. Delays are counted in polls.
"""
import collections
import logging
import time

from sdnmpi import flows
from sdnmpi.flows.acks import (ACK_FRAME, ACK_SHARE, BUSY_SHARE,  # noqa: F401  (ACK_*: named here too)
                               PAYLOAD_SHARE, carries_data)
from sdnmpi.flows.hold import HOLD_SHARE, FlagHold
from sdnmpi.flows.polls import polls_for
from sdnmpi.flows.sliding import counters as book_of, window_polls
from sdnmpi.primitives import reroute

from . import flowchoice, jobtraffic, rpc_traffic
from . import rpc_schema as schema
from .flowcount import CountingTable

LOG = logging.getLogger(__name__)

MODES = ("none", "threshold", "learned")
DEFAULT_MODE = "none"
DEFAULT_INTERVAL = 0.5             # s between counter polls
DEFAULT_SPAN = 1.0                 # s each classifier interval spans: 1 s windows sliding every poll
DEFAULT_ROUTER = "sdn-optimal"
DEFAULT_LINK_BPS = 1e9             # host link rate when --sdnmpi-link-capacity is 0
PHASE = 0                          # detected demand: the job's whole-run phase
RECENT = 1000                      # detections kept for the REST/stats view
MISMATCH_S = 3.0                   # s of polls in a row a declaration may load the busy pairs worse
STALE_S = 3.0                      # s of complete polls in a row a detected pair may stay under the busy line


def make_classifier(mode, model_path, link_rate, interval, window, fraction):
    """The classifier of ``mode`` ('threshold' or 'learned'); a learned model that cannot be
    read gets one warning line (flows.load_or_fallback) and the threshold classifier."""
    if mode == "threshold":
        return flows.ThresholdClassifier(link_rate=link_rate, interval=interval, window=window, fraction=fraction)
    path = model_path or flows.DEFAULT_MODEL
    clf = flows.load_or_fallback(path, link_rate=link_rate, interval=interval, window=window, fraction=fraction)
    if isinstance(clf, flows.LearnedClassifier):
        LOG.info("flow detection: learned model %s (window %d intervals, cutoff %.2f)", path, clf.window, clf.cutoff)
    return clf


def from_settings(settings):
    """The FlowDetection the options ask for, or None for ``--sdnmpi-flow-detection none``. Its
    timings follow ``--sdnmpi-flow-interval``; the classifier's ``interval`` is the span of its
    windows (``--sdnmpi-flow-span``, else the interval)."""
    if settings.flow_detection == "none":
        return None
    polls = span_polls(settings)
    link_rate = (settings.link_capacity or DEFAULT_LINK_BPS) / 8
    span = settings.flow_interval * polls
    clf = make_classifier(settings.flow_detection, settings.flow_model, link_rate, span,
                          settings.flow_window, settings.flow_fraction)
    log = None
    if settings.flow_log:
        log = flows.CounterLog(settings.flow_log, interval_s=settings.flow_interval, link_rate_Bps=link_rate,
                               window_s=span,
                               classifier="learned" if isinstance(clf, flows.LearnedClassifier) else "threshold")
    return FlowDetection(clf, router=settings.flow_router, max_entries=settings.flow_max_pairs, log=log,
                         hold_share=settings.flow_hold_share, seed=settings.flow_seed, window_polls=polls)


def span_polls(settings):
    """The polls one classifier interval spans (``--sdnmpi-flow-span`` / ``--sdnmpi-flow-interval``; 1
    without a span). A span that is not a whole multiple of the interval stops the controller with one
    line (SystemExit: 'sdnmpi: --sdnmpi-flow-span 0.7 s is not a whole multiple ...')."""
    try:
        return window_polls(settings.flow_span, settings.flow_interval)
    except ValueError as exc:
        LOG.error("flow detection: %s", exc)
        raise SystemExit("sdnmpi: %s" % exc) from None


class FlowDetection:
    def __init__(self, classifier, router=DEFAULT_ROUTER, max_entries=None, log=None, hold_share=HOLD_SHARE,
                 seed=True, window_polls=1):
        """``window_polls``: the polls one of the classifier's intervals spans (its ``interval`` is
        that span; the polls come every ``interval / window_polls`` s)."""
        self.classifier = classifier
        self.window_polls = window_polls
        self.seed = seed           # plans keep the flagged pairs where they run (--sdnmpi-flow-seed)
        self.log = log             # flows.CounterLog (--sdnmpi-flow-log) or None
        self.router = router
        self.counting = CountingTable() if max_entries is None else CountingTable(max_entries)
        self.book = book_of(classifier, window_polls)   # flows.PairCounters, or SlidingCounters
        self.detected = {}         # job id -> {(src ip, dst ip): bytes when flagged}, routed now
        self.owned = {}            # job id -> phase-0 demand as detection declared it
        self.recent = collections.deque(maxlen=RECENT)   # (job id, src, dst, delay in polls)
        self.counters = collections.Counter()
        self.mismatch = collections.Counter()   # job id -> polls in a row its declared routes lost
        self.seen = {}             # job id -> the poll that first saw it registered
        self.released = collections.deque(maxlen=RECENT)   # declared routes released (`_check_declared`)
        self.quiet = collections.Counter()   # (src, dst) detected -> complete polls in a row under the busy line
        self.interval = interval = classifier.interval / window_polls   # s between polls: the timings
                                                                        # below are counted in polls of it
        self.stale_polls = polls_for(STALE_S, interval)         # `_age`
        self.mismatch_polls = polls_for(MISMATCH_S, interval)   # `_check_declared`
        self.hold = FlagHold(hold_share, interval=interval)     # jobs whose flags end soon (`_judge_flags`)

    @property
    def kind(self):
        return "learned" if isinstance(self.classifier, flows.LearnedClassifier) else "threshold"

    @property
    def packets(self):
        """{(src, dst): packets in the latest interval} of the pairs whose switch reported a packet
        count, counted by the book like their bytes (flows.tracker.packets_counted: a pair's first
        reading is all of it, a missing reply leaves the next reading the difference). A pair
        answered without one, and the next interval after that (its packets would span both
        intervals): unknown, left out. With sliding windows the interval is the window ending at
        the latest poll (the difference from the reading ``window_polls`` polls ago, as its bytes)."""
        return self.book.latest_packets()

    # -- polling -------------------------------------------------------------------------------
    def poll(self, core, jobs):
        """Messages for one poll: counting entries synchronised with the live jobs, then the
        flow-stats requests. Pairs no longer counted are forgotten; pairs now counted for another
        job may be flagged again (`PairCounters.rearm`: the bytes counted so far are not counted
        twice), for the job that now has them."""
        before = self.counting.job_of
        msgs = self.counting.sync(core.datapaths, core.topology, jobs)
        gone = [p for p in self.book.pairs() if p not in self.counting.job_of]
        if gone:
            self.book.forget(gone)
        moved = [p for p, job_id in self.counting.job_of.items() if before.get(p, job_id) != job_id]
        if moved:           # counted now for another job (one released, the next registered in between)
            self.book.rearm(moved)
        self.counters["polls"] += 1
        return msgs + self.counting.requests(core.datapaths)

    def reply(self, dpid, stats, more):
        """One flow-stats reply part; True when the poll is complete."""
        return self.counting.reply(dpid, stats, more)

    def switch_reset(self, dpid):
        self.counting.switch_reset(dpid)

    # -- detection -----------------------------------------------------------------------------
    def hinted(self, job):
        """True if the job declared traffic itself (hints or a profile): detection stays away."""
        demands = job.traffic.demands
        return bool(demands) and demands != ({PHASE: self.owned[job.id]} if job.id in self.owned else {})

    def detect(self, service):
        """Classifies the current poll's readings and routes every job's newly flagged pairs
        (confirmed through ``service.confirm``). Returns {job id: [(src, dst, delay), ...]}."""
        if not self.counting.complete:
            self.counters["incomplete_polls"] += 1
        jobs = service.jobs
        self._follow_jobs(jobs)
        readings = self.counting.readings()
        packets = self.counting.packet_readings()
        newly = self.book.poll(readings, packets)
        if self.log is not None:
            self.log.poll(self.counters["polls"], readings, self.counting.job_of, newly, self.counting.complete,
                          packets=packets)
        stale = self._age() if self.counting.complete else {}
        resumed = self._judge_flags(jobs) if self.counting.complete else []
        found = {}
        for pair, delay in sorted(newly.items()):
            job_id = self.counting.job_of.get(pair)
            if job_id in jobs.jobs:
                found.setdefault(job_id, []).append((pair[0], pair[1], delay))
        for job_id in sorted((set(stale) | set(resumed)) - set(found)):   # (with new elephants: `_route` below)
            job = jobs.jobs.get(job_id)
            if job is None or self.hinted(job):
                continue
            if self.detected.get(job_id):
                self._route(service, job, {})
            elif PHASE in job.traffic.demands:
                self._declare(service, job, {}, [], "removed: their phase is over")
        for job_id, elephants in sorted(found.items()):
            job = jobs.jobs[job_id]
            self.hold.flagged(job_id, [(s, d) for s, d, _ in elephants])
            for src, dst, delay in elephants:
                self.recent.append((job_id, src, dst, delay))
                self.counters["elephants"] += 1
                LOG.info("flow detection (%s): job %d: elephant %s -> %s after %d polls", self.kind, job_id,
                         src, dst, delay)
            if self.hinted(job):
                self.counters["left_to_hints"] += len(elephants)
                LOG.info("flow detection: job %d declared its traffic: its hints win", job_id)
                continue
            self._route(service, job, {(s, d): max(1, int(readings.get((s, d), 1))) for s, d, _ in elephants})
        for job_id, job in sorted(jobs.jobs.items()):
            if self.hinted(job):
                self._check_declared(service, job)
        return found

    def _follow_jobs(self, jobs):
        """Drops what detection knows of released jobs (its mismatch count too: a job that gets the
        id again starts at 0); a dormant job's detected pairs may be detected again (its routes are gone)."""
        for job_id in list(self.seen):
            if job_id not in jobs.jobs:
                del self.seen[job_id]
                self.hold.forget(job_id)
                self.mismatch.pop(job_id, None)
        for job_id in jobs.jobs:
            self.seen.setdefault(job_id, self.counters["polls"])
        for job_id in list(self.detected):
            job = jobs.jobs.get(job_id)
            if job is None:
                self.detected.pop(job_id)
                self.owned.pop(job_id, None)
            elif job.traffic.dormant and self.detected[job_id]:
                LOG.info("flow detection: job %d idle, %d detected pairs released", job_id, len(self.detected[job_id]))
                self.book.rearm(list(self.detected[job_id]))
                self.detected[job_id] = {}
                self.hold.forget(job_id)

    def _age(self):
        """{job id: [pairs]}: the detected pairs that sent under BUSY_SHARE of the link in
        ``stale_polls`` complete polls in a row (STALE_S s), now left out of their job's detected demand (and
        rearmed: flagged again when they next carry an elephant). The caller declares what is left."""
        floor = self._busy_line()
        latest = self.book.latest()
        routed = {p for detected in self.detected.values() for p in detected}
        for p in [p for p in self.quiet if p not in routed]:   # released or forgotten since
            del self.quiet[p]
        stale = {}
        for job_id, detected in self.detected.items():
            for p in list(detected):
                if latest.get(p, 0) >= floor:
                    self.quiet.pop(p, None)
                    continue
                self.quiet[p] += 1
                if self.quiet[p] >= self.stale_polls:
                    del detected[p]
                    del self.quiet[p]
                    stale.setdefault(job_id, []).append(p)
        for job_id, gone in sorted(stale.items()):
            self.book.rearm(gone)
            self.counters["stale_pairs"] += len(gone)
            LOG.info("flow detection: job %d: %d detected pairs quiet for %d polls (%s): left out of its demand",
                     job_id, len(gone), self.stale_polls, self._seconds(self.stale_polls))
        return stale

    def _judge_flags(self, jobs):
        """At a complete poll: the pairs flagged since the last one are judged (flows.hold.FlagHold:
        held when still a busy data pair); a job whose flags mostly end by then is left to the
        fabric (`_route`), one log line when that starts and one when it stops. Returns the jobs
        routed again: their detected pairs are routed now."""
        floor = self._busy_line()
        busy = set(self._data_pairs([p for p, b in self.book.latest().items() if b >= floor]))
        held, idle, changed = self.hold.judge(busy)
        self.counters["flags_held"] += held
        self.counters["flags_short_lived"] += idle
        resumed = []
        for job_id, short in sorted(changed.items()):
            kept, judged = self.hold.tally(job_id)
            if short:
                self.counters["short_lived_jobs"] += 1
                LOG.info("flow detection: job %d: %d of its last %d flagged pairs went idle within %d polls (%s; "
                         "under %d %% lasted): its detected pairs are left to the fabric until more of them last "
                         "(--sdnmpi-flow-hold-share)", job_id, judged - kept, judged, self.hold.polls,
                         self._seconds(self.hold.polls), round(100 * self.hold.share))
            elif job_id in jobs.jobs:
                resumed.append(job_id)
                LOG.info("flow detection: job %d: %d of its last %d flagged pairs stayed busy for %d polls (%s): its "
                         "detected pairs are routed again", job_id, kept, judged, self.hold.polls,
                         self._seconds(self.hold.polls))
        return resumed

    def _seconds(self, polls):
        """``polls`` polls as a duration for the log: '3 s', '1.5 s'."""
        return "%g s" % round(polls * self.interval, 3)

    def _link_bytes(self):
        """Bytes the host link carries in one interval of the classifier (a window's span)."""
        return self.classifier.link_rate * self.classifier.interval

    def _busy_line(self):
        """Bytes in one interval at BUSY_SHARE of the host link: a pair sending at least this is busy."""
        return BUSY_SHARE * self._link_bytes()

    def _busy(self, job_id):
        """The job's pairs that sent at least BUSY_SHARE of the link in the latest interval."""
        floor = self._busy_line()
        return sorted(p for p, b in self.book.latest().items() if b >= floor and self.counting.job_of.get(p) == job_id)

    def _data_pairs(self, busy):
        """The busy pairs that carry data, i.e. not only the TCP ACK stream of their reverse pair's
        data (flows.acks.carries_data, the rule the offline check applies to counter logs). With the
        pair's packet count: its payload in the latest interval (its bytes less
        ACK_FRAME of headers per packet) alone reaches PAYLOAD_SHARE of the link (half the busy line:
        a data pair just over that line loses some of it to headers). A pure ACK is a bare
        header, so an ACK stream's payload is about 0 at any rate, while a data pair keeps its
        payload with the ACKs of its reverse's data mixed in (a halo pair at 5 % of the link whose
        reverse runs at 90 %: 4.8 % payload in 7 % bytes). Without one (a switch that keeps no
        packet counts): its bytes reach ACK_SHARE of its reverse pair's (which takes that halo
        pair for ACKs). A flow near its link's rate has ACKs at about BUSY_SHARE of the link (on
        Mininet 0.3-1.0 %, rarely over 1 %); scored as flows, they make a permutation look as
        dense as an all-to-all (ties then go to the default routes) and a mismatched
        declaration's routes as good as the default ones (never released)."""
        latest = self.book.latest()
        floor = PAYLOAD_SHARE * self._link_bytes()
        return [p for p in busy if carries_data(latest.get(p, 0), self.packets.get(p), latest.get(p[::-1], 0), floor)]

    def _check_declared(self, service, job):
        """Withdraws the declaration of a job that declared its traffic (a profile, hints) when its
        routes load the job's busy data pairs' (`_data_pairs`) busiest link more than the default
        routes would, ``mismatch_polls`` polls in a row (MISMATCH_S s; reroute.busiest, other jobs' load included):
        it does not match the live traffic. The job is then undeclared (jobtraffic.withdraw) until
        it declares again, and its flagged pairs are routed as detected ones (`_route_flagged`)."""
        current = {}
        for phase in sorted(job.traffic.routes):
            current.update(flowchoice.overrides(job.traffic.routes[phase]))
        busy = self._data_pairs(self._busy(job.id))
        if not current or not busy:
            self.mismatch.pop(job.id, None)
            return
        core = service.core
        graph = core.topology.graph()
        model, mac = flowchoice.default_model(core, graph, busy)
        if model is None:
            return
        flows_, default = flowchoice.default_paths(graph, model, mac, busy)
        if default is None:   # refused (a leaf cut off): not judged now
            return
        base = jobtraffic.others_load(graph, service.jobs, job)
        declared = reroute.busiest(graph, flows_, current, default, base)
        fabric = reroute.busiest(graph, flows_, {}, default, base)
        if declared <= fabric:
            self.mismatch.pop(job.id, None)
            return
        self.mismatch[job.id] += 1
        if self.mismatch[job.id] < self.mismatch_polls:
            return
        self.mismatch.pop(job.id)
        try:
            rpc_traffic.install(service, job, lambda: jobtraffic.withdraw(core, service.jobs, job))
        except schema.RpcError as err:
            LOG.warning("flow detection: job %d: releasing its declared routes failed: %s", job.id, err)
            return
        self.counters["declared_released"] += 1
        polls = self.counters["polls"]
        self.released.append({"job": job.id, "poll": polls, "polls_since_seen": polls - self.seen.get(job.id, polls),
                              "time": time.time(), "busy_pairs": len(busy), "declared_flows": declared,
                              "default_flows": fabric})
        LOG.warning("flow detection: job %d: its declared routes put %d flows on the busiest link of its %d busy "
                    "pairs, the default %s routes %d, for %d polls (%s): released (the profile or hints do not "
                    "match the live traffic); the job counts as undeclared until it declares again", job.id, declared,
                    len(busy), core.routing, fabric, self.mismatch_polls, self._seconds(self.mismatch_polls))
        self._route_flagged(service, job)

    def _route_flagged(self, service, job):
        """A job whose declaration was withdrawn: what detection routed for it before goes with
        the declaration (its phase 0), and its pairs flagged so far (left to the declaration) are
        routed now like an undeclared job's newly flagged pairs."""
        self.detected.pop(job.id, None)
        self.owned.pop(job.id, None)
        readings = self.counting.readings()
        flagged = {p: max(1, int(readings.get(p, 1))) for p in sorted(self.book.flagged)
                   if self.counting.job_of.get(p) == job.id}
        if flagged:
            self._route(service, job, flagged)

    def _choice(self, service, job, detected):
        """Which routes load the job's busy data pairs (`_data_pairs`) and detected pairs least
        (primitives.reroute.choose): 'planned' (``self.router`` on every detected pair), 'current'
        (the installed routes) or 'default' (no job routes); the scores; and the planned traffic
        state to install as it is (None: nothing planned, declare). ('planned', None, ...) when it
        cannot be judged: a default routing the pair routers do not model, a host not in the
        topology, a plan that fails (the declaration then reports it)."""
        busy = set(self._busy(job.id))
        acks = busy - set(self._data_pairs(busy)) - set(detected)
        if acks:
            LOG.info("flow detection: job %d: %d busy pairs carry only TCP ACKs: left out of the routing choice",
                     job.id, len(acks))
        busy = (busy - acks) | set(detected)
        return flowchoice.choose(service, job, PHASE, detected, busy, self.router, running=self.seed)

    def _route(self, service, job, new):
        detected = dict(self.detected.get(job.id, {}))
        detected.update(new)
        if self.hold.short_lived(job.id):    # no plan, no route change (logged by `_judge_flags`)
            self.detected[job.id] = detected
            self.counters["left_short_lived"] += len(new)
            return
        choice, score, planned = self._choice(service, job, detected)
        if choice != "planned":
            self.detected[job.id] = detected
            self.counters["left_to_fabric"] += len(new)
            if choice == "default" and PHASE in job.traffic.demands:
                self._declare(service, job, detected, [], "removed: the default routes do better")
            LOG.info("flow detection: job %d: %d detected pairs kept on the %s routes (busiest link: %s)",
                     job.id, len(detected), "installed" if choice == "current" else "default",
                     ", ".join("%s %d flows" % kv for kv in sorted(score.items())))
            return
        if self._declare(service, job, detected, [(s, d, b) for (s, d), b in sorted(detected.items())],
                         "routed by %s" % self.router, planned):
            self.counters["routed"] += len(new)
        else:
            self.book.rearm(list(new))        # flagged again at a later poll, tried again then

    def _declare(self, service, job, detected, demand, what, planned=None):
        """Declares ``demand`` as the job's phase 0 (confirmed); False if it failed. ``planned``:
        the traffic state `_choice` planned for that declaration, installed as it is (planned once)."""
        def change():
            if planned is not None:
                return jobtraffic.install_planned(service.core, service.jobs, job, planned)
            return jobtraffic.declare(service.core, service.jobs, job, PHASE, demand, router=self.router,
                                      running=self.seed)
        try:
            installed = rpc_traffic.install(service, job, change)
        except schema.RpcError as err:
            self.counters["route_failures"] += 1
            LOG.warning("flow detection: job %d: detected pairs not routed: %s", job.id, err)
            return False
        self.detected[job.id] = detected
        self.owned[job.id] = job.traffic.demands.get(PHASE)
        LOG.info("flow detection: job %d: %d detected pairs %s (%d flow entries changed)", job.id,
                 len(detected), what, installed)
        return True

    def to_json(self):
        return {"classifier": self.kind, "router": self.router, "seed": self.seed, "interval_s": self.interval,
                "window_s": self.classifier.interval,
                "counting_entries": self.counting.entries(),
                "uncounted_pairs": self.counting.left_out,
                "counters": dict(sorted(self.counters.items())),
                "jobs": {str(j): len(p) for j, p in sorted(self.detected.items())},
                "recent": [{"job": j, "src": s, "dst": d, "delay_polls": t} for j, s, d, t in self.recent],
                "released": list(self.released), "hold": self.hold.to_json()}
