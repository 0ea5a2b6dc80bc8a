"""The link rates chosen per machine (``bench/run.py --rates link-bound``; bench/README.md, "Link
rates chosen per machine").

The any-algorithm bound of a row is computed from the link rates; it is a bound only where the
emulated links, not ovs-vswitchd's one forwarding thread, limit the transfers. How fast a rate this
machine's switch can carry depends on the machine (its CPUs, its kernel build, what else runs) and
on the fabric's host count (16 hosts ask the switch for 1.6x the crossings per byte of 8), so the
rates are chosen on the machine, before the jobs: on the bench's own fabric (started at the
ladder's first rung), a short probe loads it as a collective does, every host at once, and is
judged by the bottleneck check's 4th criterion's rule (bench_jobcheck.judge: the links at >= 80 %
of their rate = link-bound; below that with the forwarding thread busy >= 80 % = switch-bound),
with the probe's own link figure: what its streams received in % of what the links allow them
(rung_record). Rungs
are tried fastest first; the first link-bound one is chosen (none: the last, slowest, marked not
link-bound). The rates change in place (Bench.set_rates), so the jobs run on the probed fabric.

The probe: TCP streams (iperf3, jobroute_iperf.iperf_streams; TCP like MPI's traffic, so a switch
that cannot keep up shows as streams below what the links allow) from every host to the
host in its place on the next leaf (across the spines) and, with more than one host a leaf, to the
next host of its own leaf (the hierarchical allreduce's ring steps and cross-leaf steps run at the
same time too). Sampled by bench_sampling.CpuMonitor on the jobs' link list, as the jobs are.

Pure except ``probe_rung`` and ``choose_on_fabric`` (Mininet, at run time).
"""
import collections
import statistics
import sys

import bench_jobcheck
from bench_common import pct_text as _pct
from bench_limits import CHECK_FOREIGN_MAX

DEFAULT_LADDER = "30/15,20/10,12/6,8/4"
DEFAULT_SECONDS = 5


def parse_ladder(text):
    """'30/15,20/10,12/6' -> [(30.0, 15.0), (20.0, 10.0), (12.0, 6.0)]: host / fabric Mbit/s per rung,
    fastest first (each rung's fabric and host rates below the one before). ValueError otherwise."""
    rungs = []
    for item in [t.strip() for t in str(text).split(",") if t.strip()]:
        host, sep, fabric = item.partition("/")
        try:
            rung = tuple(int(v) if v.is_integer() else v for v in (float(host), float(fabric)))
        except ValueError:
            raise ValueError("--rate-ladder wants HOST/FABRIC Mbit/s per rung, e.g. 30/15, got %r" % item) from None
        if not sep or rung[0] <= 0 or rung[1] <= 0:
            raise ValueError("--rate-ladder wants positive HOST/FABRIC Mbit/s per rung, got %r" % item)
        if rungs and not (rung[0] < rungs[-1][0] and rung[1] < rungs[-1][1]):
            raise ValueError("--rate-ladder runs fastest first: %g/%g after %g/%g" % (rung + rungs[-1]))
        rungs.append(rung)
    if not rungs:
        raise ValueError("--rate-ladder is empty")
    return rungs


# The probe's loads (load_pairs): "ring", every host one stream across the spines (to its place on
# the next leaf) and one within its leaf (to the next host); "peers", every host one stream to every
# other host of its leaf and one to its place on every other leaf (the hierarchical allreduce's
# partners and more: as many connections at once as its rings and halvings touch over a call).
# "-paced": each stream sent at its max-min fair share in MESSAGE_BYTES writes without Nagle
# (iperf3 -b -l -N), as the collective's steps send one message at a time, instead of as fast as
# TCP's window allows. "-ranks": with one process a host that polls the CPU as a waiting rank does
# (Open MPI's mpi_yield_when_idle: sched_yield in a loop; RANK_POLLER), the ranks' share of the two
# CPUs that ovs-vswitchd's thread and the hosts' TCP stacks run on.
Load = collections.namedtuple("Load", "every paced ranks")   # every: the "peers" streams
LOADS = {"ring": Load(False, False, False), "ring-paced": Load(False, True, False),
         "ring-ranks": Load(False, False, True), "peers": Load(True, False, False),
         "peers-paced": Load(True, True, False), "peers-ranks": Load(True, False, True)}
DEFAULT_LOAD = "ring"    # peers did not refuse 16 hosts' 30/15 more reliably (bench/README.md, "The probe's load")
MESSAGE_BYTES = 4096   # the hierarchical allreduce's ring messages (its segment: 4 KiB per rank of a leaf)
RANK_POLLER = "import os\nwhile True:\n    os.sched_yield()\n"
SWITCHES_ACROSS = 3    # an across stream crosses its leaf, a spine and the other leaf; a within one its leaf


def streams_per_host(fab, load=DEFAULT_LOAD):
    """(across, within): the streams each host sends under ``load`` on ``fab`` (and takes: the
    pattern is symmetric)."""
    if load not in LOADS:
        raise ValueError("unknown probe load %r (%s)" % (load, ", ".join(LOADS)))
    every = LOADS[load].every
    across = (fab.leaves - 1 if every else 1) if fab.leaves > 1 else 0
    within = (fab.hosts_per_leaf - 1 if every else 1) if fab.hosts_per_leaf > 1 else 0
    return across, within


def load_pairs(fab, load=DEFAULT_LOAD):
    """The probe's streams [(src host, dst host, "across" | "within")] on ``fab`` (benchcore.Fabric)
    under ``load`` (LOADS): per host its across streams, to the host in its place on the next
    leaves (so every leaf sends and takes hosts_per_leaf of them a step over its uplinks), then its
    within streams, to the next hosts of its own leaf."""
    hpl, leaves = fab.hosts_per_leaf, fab.leaves
    n_across, n_within = streams_per_host(fab, load)
    pairs = []
    for host in range(1, fab.hosts + 1):
        leaf, place = divmod(host - 1, hpl)
        pairs += [(host, ((leaf + step) % leaves) * hpl + place + 1, "across") for step in range(1, n_across + 1)]
        pairs += [(host, leaf * hpl + (place + step) % hpl + 1, "within") for step in range(1, n_within + 1)]
    return pairs


def link_shares(fab, load=DEFAULT_LOAD):
    """{"across": Mbit/s, "within": Mbit/s}: each stream's max-min fair share when the links alone
    limit them (load_pairs' streams, the across streams spread evenly over the spines): an across
    stream gets its leaf's uplinks over the leaf's across streams, at most an even share of its host
    link; a within stream an even share of what its host link has left."""
    n_across, n_within = streams_per_host(fab, load)
    out = {}
    if n_across:
        uplinks = fab.spines * fab.fabric_bw / float(fab.hosts_per_leaf * n_across)
        out["across"] = min(uplinks, fab.host_bw / float(n_across + n_within))
    if n_within:
        out["within"] = (fab.host_bw - n_across * out.get("across", 0.0)) / float(n_within)
    return out


def client_args(fab, pairs, load=DEFAULT_LOAD):
    """iperf3 client options per stream of ``pairs`` (load_pairs' list): none for a greedy load; for
    a "-paced" one its fair share (-b, Mbit/s), MESSAGE_BYTES writes (-l) and no Nagle (-N)."""
    if not LOADS[load].paced:
        return [[] for _pair in pairs]
    shares = link_shares(fab, load)
    return [["-b", "%.4gM" % shares[kind], "-l", MESSAGE_BYTES, "-N"] for _s, _d, kind in pairs]


def mib_s(mbit_s):
    """Mbit/s (10^6 bit/s) -> MiB/s, the sampler's unit of switch crossings."""
    return None if mbit_s is None else mbit_s * 1e6 / 8 / 2 ** 20


def asked_crossings(fab, load=DEFAULT_LOAD):
    """Mbit/s of switch crossings ``load`` asks of ovs-vswitchd when its streams get their fair shares
    (each across stream's bytes cross SWITCHES_ACROSS switches, a within stream's one)."""
    n_across, n_within = streams_per_host(fab, load)
    shares = link_shares(fab, load)
    return fab.hosts * (SWITCHES_ACROSS * n_across * shares.get("across", 0.0) + n_within * shares.get("within", 0.0))


def allreduce_crossings(fab):
    """Mbit/s of switch crossings the hierarchical allreduce on every host asks at its bandwidth bound
    (benchcore.hierarchical_limit): per rank and vector byte 2 (k-1)/k within its leaf (1 switch) and
    2 (L-1)/(L k) across (SWITCHES_ACROSS), in the time its host link or its leaf's uplinks need
    (42 n over 1.875 n at 30 Mbit/s on 4 leaves of 4, 26 n over 1.75 n on 4 of 2). None where it
    does not run (one leaf, one host a leaf) or a link is unlimited."""
    k, leaves = fab.hosts_per_leaf, fab.leaves
    if k < 2 or leaves < 2 or not fab.host_bw or not fab.fabric_bw:
        return None
    within, across = 2.0 * (k - 1) / k, 2.0 * (leaves - 1) / (leaves * k)
    seconds_per_byte = max((within + across) / fab.host_bw, 2.0 * (leaves - 1) / leaves / (fab.spines * fab.fabric_bw))
    return fab.hosts * (within + SWITCHES_ACROSS * across) / seconds_per_byte


def rung_record(fab, pairs, streams, cpu, load=DEFAULT_LOAD):
    """One rung's record from its streams (rate_probe_parse.iperf_stream dicts, in ``pairs``' order;
    {} for an unreadable one) and the sampler's summary: the rates and the load, per kind the
    streams' Mbit/s (median, sum; of_fair_share: the read streams' sum over their fair shares' sum;
    slowest_of_fair_share: the slowest read stream's) and retransmits, the switch crossings the
    load asks (asked_crossings) and a hierarchical allreduce at its bound would
    (allreduce_crossings), MiB/s, the sampler's figures and the verdict.

    The verdict is check 4's rule (bench_jobcheck.judge, 80 % / 80 %) with the probe's own link
    figure: ``delivered_pct``, what all read streams received in % of what their fair shares add
    up to, i.e. how full the links that limit them ran on average. A job's sampler knows only the
    busiest link; under this load that one reached 81-103 % of its rate on every rung of the first
    runs (20261129-104927, -105007) while the streams got 34-93 % of what the links allow, so it is
    kept in the record but not judged."""
    shares = link_shares(fab, load)
    kinds = {}
    for (_src, _dst, kind), stream in zip(pairs, streams):
        k = kinds.setdefault(kind, {"streams": 0, "read": [], "retransmits": 0})
        k["streams"] += 1
        if stream.get("mbit") is not None:
            k["read"].append(stream["mbit"])
            k["retransmits"] += stream.get("retransmits") or 0
    for kind, k in kinds.items():
        got = k.pop("read")
        k["unread"] = k["streams"] - len(got)
        k["mbit_sum"] = sum(got) if got else None
        k["mbit_median"] = statistics.median(got) if got else None
        k["fair_share_mbit"] = shares.get(kind)
        k["of_fair_share"] = k["mbit_sum"] / (len(got) * shares[kind]) if got and shares.get(kind) else None
        k["slowest_of_fair_share"] = min(got) / shares[kind] if got and shares.get(kind) else None
    got = sum(k["mbit_sum"] or 0.0 for k in kinds.values())
    allowed = sum((k["streams"] - k["unread"]) * (k["fair_share_mbit"] or 0.0) for k in kinds.values())
    delivered = 100.0 * got / allowed if allowed else None
    switch = cpu.get("ovs_main_runnable_weighted_pct")
    return {"host_bw_mbit": fab.host_bw, "fabric_bw_mbit": fab.fabric_bw, "load": load, "streams": kinds,
            "delivered_pct": delivered, "asked_crossing_mib_s": mib_s(asked_crossings(fab, load)),
            "allreduce_crossing_mib_s": mib_s(allreduce_crossings(fab)),
            "busiest_link_weighted_pct": cpu.get("busiest_link_weighted_pct"), "ovs_main_runnable_weighted_pct": switch,
            "ovs_main_run_weighted_pct": cpu.get("ovs_main_run_weighted_pct"),
            "ovs_main_wait_weighted_pct": cpu.get("ovs_main_wait_weighted_pct"),
            "crossing_mib_s_weighted": cpu.get("crossing_mib_s_weighted"),
            "busiest_link_most_often": cpu.get("busiest_link_most_often"),
            "foreign_cpu_pct": (cpu.get("foreign_cpu_pct_of_one_cpu") or {}).get("median"),
            "stalls": len(cpu.get("stalls") or ()),
            "verdict": bench_jobcheck.judge(delivered, switch)}


def choose(rungs):
    """The chosen rung's index in ``rungs`` (rung records, fastest first, as probed) and whether it
    is link-bound: the first judged "links"; if none is, the last (slowest) probed, not link-bound.
    (None, False) without rungs."""
    for index, rung in enumerate(rungs):
        if rung.get("verdict") == "links":
            return index, True
    return (len(rungs) - 1, False) if rungs else (None, False)


def decision(ladder, rungs, seconds, routing, npairs, load=DEFAULT_LOAD):
    """The record results.json keeps as ``rate_choice``: the ladder, every probed rung, the choice."""
    index, bound = choose(rungs)
    chosen = rungs[index] if index is not None else None
    return {"ladder": [list(r) for r in ladder], "seconds": seconds, "routing": routing, "streams": npairs,
            "load": load,
            "rule": "fastest rung whose streams received >= %.0f%% of what the links allow them (their max-min fair "
                    "shares), the link figure of the bottleneck check's 4th criterion (bench_jobcheck.judge)"
                    % bench_jobcheck.LINK_MIN_PCT,
            "rungs": rungs, "chosen": [chosen["host_bw_mbit"], chosen["fabric_bw_mbit"]] if chosen else None,
            "link_bound": bound,
            "busy": any((r.get("foreign_cpu_pct") or 0) >= CHECK_FOREIGN_MAX for r in rungs)}


def describe_load(load):
    """results.md's words for ``load`` (LOADS)."""
    props = LOADS[load]
    text = ("every host one stream to every other host of its leaf and one to its place on every other leaf"
            if props.every
            else "every host one across the spines, to its place on the next leaf, and one within its leaf")
    if props.paced:
        text += "; each sent at its fair share of the links in %d-byte writes without Nagle" % MESSAGE_BYTES
    if props.ranks:
        text += "; beside one process a host polling the CPU as a waiting MPI rank does"
    return text


def _mbit(kind):
    if not kind or kind.get("mbit_median") is None:
        return "-"
    slowest = kind.get("slowest_of_fair_share")
    return "%.1f (%s%s)" % (kind["mbit_median"], _pct(100 * kind["of_fair_share"]) if kind.get("of_fair_share")
                            is not None else "-", "" if slowest is None else "; slowest %s" % _pct(100 * slowest))


def crossings_text(rung):
    """The switch crossings a rung got and what its load asks, "GOT of ASKED MiB/s" ("-" without figures)."""
    got, asked = rung.get("crossing_mib_s_weighted"), rung.get("asked_crossing_mib_s")
    if got is None:
        return "-"
    return "%.0f MiB/s" % got if asked is None else "%.0f of %.0f MiB/s" % (got, asked)


def markdown(choice):
    """results.md's lines for ``rate_choice`` ([] without one)."""
    if not choice:
        return []
    out = ["", "**Link rates chosen on this machine** (`--rates link-bound`, before the jobs; bench/README.md): "
           "%d TCP streams at once under %s routing (%s), %d s a rung, fastest rung first%s; rule: the %s." % (
               choice["streams"], choice["routing"], describe_load(choice.get("load", DEFAULT_LOAD)), choice["seconds"],
               " (every rung probed, --rate-probe-all)" if choice.get("every_rung") else
               " until one is link-bound", choice["rule"]), "",
           "| host / fabric Mbit/s | streams received, of what the links allow | busiest link | forwarding thread "
           "ran + waited | switch crossings (of what the load asks) | streams across: median Mbit/s (sum, % of their "
           "fair shares) | within | "
           "other processes | verdict |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for rung in choice["rungs"]:
        streams = rung.get("streams") or {}
        out.append("| %g / %g | %s | %s | %s + %s | %s | %s | %s | %s of a CPU | %s |" % (
            rung["host_bw_mbit"], rung["fabric_bw_mbit"], _pct(rung.get("delivered_pct")),
            _pct(rung.get("busiest_link_weighted_pct")),
            _pct(rung.get("ovs_main_run_weighted_pct")), _pct(rung.get("ovs_main_wait_weighted_pct")),
            crossings_text(rung),
            _mbit(streams.get("across")), _mbit(streams.get("within")), _pct(rung.get("foreign_cpu_pct")),
            rung.get("verdict") or "no figures"))
    chosen = choice.get("chosen")
    if chosen is None:
        out += ["", "No rung was probed: the fabric's rates were left as given."]
    elif choice.get("link_bound"):
        out += ["", "Chosen: **%g / %g Mbit/s**, the fastest link-bound rung." % tuple(chosen)]
    else:
        out += ["", "Chosen: **%g / %g Mbit/s**, the slowest rung; **no rung was link-bound**: the bounds of this run "
                "are not shown to be reachable on this machine." % tuple(chosen)]
    if choice.get("busy"):
        out[-1] += (" Other processes used >= %.0f%% of a CPU during the probe: on a quiet machine the choice may be "
                    "faster." % CHECK_FOREIGN_MAX)
    return out


def probe_rung(bench, seconds, load=DEFAULT_LOAD):
    """The probe at the fabric's current rates: load_pairs' streams (with client_args) for
    ``seconds`` (after iperf3's omitted first second), sampled like a job from the moment every
    stream started; rung_record."""
    from bench_sampling import CpuMonitor
    from jobroute_iperf import iperf_streams
    from sdnmpi.mininet_topos import procs
    import rate_probe_parse
    fab = bench.fab_model
    pairs = load_pairs(fab, load)
    monitor = CpuMonitor(links=bench.link_directions())
    started, pollers = [], []

    def start():
        monitor.__enter__()
        started.append(True)
    try:
        for h in range(1, fab.hosts + 1) if LOADS[load].ranks else ():
            # one at a time, so that the finally stops those started if a later one fails
            pollers.append(procs.popen_in_host(bench.fabric.host("h%d" % h), [sys.executable, "-c", RANK_POLLER]))
        outputs = iperf_streams(bench, [(s, d) for s, d, _kind in pairs], seconds, on_start=start,
                                client_args=client_args(fab, pairs, load))
    finally:
        if started:
            monitor.__exit__(None, None, None)
        procs.terminate(pollers, timeout=2)
    return rung_record(fab, pairs, [rate_probe_parse.iperf_stream(o) for o in outputs], monitor.summary(), load)


def choose_on_fabric(bench, ladder, seconds, routing, discovery_timeout, say=print, every_rung=False):
    """Starts the controller under ``routing`` and the fabric (bench's args at the ladder's first
    rung), probes rung after rung until one is link-bound (``every_rung``: all of them, for the
    record; the choice is the same rule), leaves the fabric at the chosen rates (Bench.set_rates)
    and returns ``decision``'s record. The caller stops both (its finally)."""
    bench.start_controller(routing)
    if bench.fabric is None:
        bench.start_fabric()
    bench.wait_ready(discovery_timeout)
    rungs = []
    for host_bw, fabric_bw in ladder:
        bench.set_rates(host_bw, fabric_bw)
        rung = probe_rung(bench, seconds)
        rungs.append(rung)
        say("rate probe at %g/%g Mbit/s: the streams received %s of what the links allow (busiest link %s of its "
            "rate), ovs-vswitchd's forwarding thread busy %s, %s of switch crossings, other processes %s of a CPU: %s" % (
                host_bw, fabric_bw, _pct(rung["delivered_pct"]), _pct(rung["busiest_link_weighted_pct"]),
                _pct(rung["ovs_main_runnable_weighted_pct"]),
                "-" if rung["crossing_mib_s_weighted"] is None else "%.0f MiB/s" % rung["crossing_mib_s_weighted"],
                _pct(rung["foreign_cpu_pct"]), rung["verdict"] or "no figures"))
        if rung["verdict"] == "links" and not every_rung:
            break
    record = decision(ladder, rungs, seconds, routing, len(load_pairs(bench.fab_model)), DEFAULT_LOAD)
    record["every_rung"] = every_rung
    if record["chosen"] is not None:
        bench.set_rates(*record["chosen"])
    return record
