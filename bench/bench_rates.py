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
import statistics

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


def load_pairs(fab):
    """The probe's streams [(src host, dst host, "across" | "within")] on ``fab`` (benchcore.Fabric):
    each host sends one across the spines, to the host in its place on the next leaf (so every leaf
    sends and takes hosts_per_leaf streams over its uplinks), and, with more than one host a leaf,
    one to the next host of its own leaf (so every host link carries two streams each way)."""
    hpl, leaves = fab.hosts_per_leaf, fab.leaves
    pairs = []
    for host in range(1, fab.hosts + 1):
        leaf, place = divmod(host - 1, hpl)
        if leaves > 1:
            pairs.append((host, ((leaf + 1) % leaves) * hpl + place + 1, "across"))
        if hpl > 1:
            pairs.append((host, leaf * hpl + (place + 1) % hpl + 1, "within"))
    return pairs


def link_shares(fab):
    """{"across": Mbit/s, "within": Mbit/s}: each stream's max-min fair share when the links alone
    limit them (load_pairs' streams, the across streams spread evenly over the spines): an across
    stream gets its leaf's uplinks / hosts_per_leaf, at most half a host link when a within stream
    shares it; a within stream the rest of its host link."""
    host, fabric = fab.host_bw, fab.fabric_bw
    out = {}
    if fab.leaves > 1:
        across = fab.spines * fabric / float(fab.hosts_per_leaf)
        out["across"] = min(across, host / 2.0 if fab.hosts_per_leaf > 1 else host)
    if fab.hosts_per_leaf > 1:
        out["within"] = host - out.get("across", 0.0)
    return out


def rung_record(fab, pairs, streams, cpu):
    """One rung's record from its streams (rate_probe_parse.iperf_stream dicts, in ``pairs``' order;
    {} for an unreadable one) and the sampler's summary: the rates, per kind the streams' Mbit/s
    (median, sum; of_fair_share: the read streams' sum over their fair shares' sum) and retransmits,
    the sampler's figures and the verdict.

    The verdict is check 4's rule (bench_jobcheck.judge, 80 % / 80 %) with the probe's own link
    figure: ``delivered_pct``, what all read streams received in % of what their fair shares add
    up to, i.e. how full the links that limit them ran on average. A job's sampler knows only the
    busiest link; under this load that one reached 81-103 % of its rate on every rung of the first
    runs (20261129-104927, -105007) while the streams got 34-93 % of what the links allow, so it is
    kept in the record but not judged."""
    shares = link_shares(fab)
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
    got = sum(k["mbit_sum"] or 0.0 for k in kinds.values())
    allowed = sum((k["streams"] - k["unread"]) * (k["fair_share_mbit"] or 0.0) for k in kinds.values())
    delivered = 100.0 * got / allowed if allowed else None
    switch = cpu.get("ovs_main_runnable_weighted_pct")
    return {"host_bw_mbit": fab.host_bw, "fabric_bw_mbit": fab.fabric_bw, "streams": kinds,
            "delivered_pct": delivered,
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


def decision(ladder, rungs, seconds, routing, npairs):
    """The record results.json keeps as ``rate_choice``: the ladder, every probed rung, the choice."""
    index, bound = choose(rungs)
    chosen = rungs[index] if index is not None else None
    return {"ladder": [list(r) for r in ladder], "seconds": seconds, "routing": routing, "streams": npairs,
            "rule": "fastest rung whose streams received >= %.0f%% of what the links allow them (their max-min fair "
                    "shares), the link figure of the bottleneck check's 4th criterion (bench_jobcheck.judge)"
                    % bench_jobcheck.LINK_MIN_PCT,
            "rungs": rungs, "chosen": [chosen["host_bw_mbit"], chosen["fabric_bw_mbit"]] if chosen else None,
            "link_bound": bound,
            "busy": any((r.get("foreign_cpu_pct") or 0) >= CHECK_FOREIGN_MAX for r in rungs)}


def _mbit(kind):
    if not kind or kind.get("mbit_median") is None:
        return "-"
    return "%.1f (%s)" % (kind["mbit_median"], _pct(100 * kind["of_fair_share"]) if kind.get("of_fair_share")
                          is not None else "-")


def markdown(choice):
    """results.md's lines for ``rate_choice`` ([] without one)."""
    if not choice:
        return []
    out = ["", "**Link rates chosen on this machine** (`--rates link-bound`, before the jobs; bench/README.md): "
           "%d TCP streams at once under %s routing (every host one across the spines, to its place on the next "
           "leaf, and one within its leaf), %d s a rung, fastest rung first%s; rule: the %s." % (
               choice["streams"], choice["routing"], choice["seconds"],
               " (every rung probed, --rate-probe-all)" if choice.get("every_rung") else
               " until one is link-bound", choice["rule"]), "",
           "| host / fabric Mbit/s | streams received, of what the links allow | busiest link | forwarding thread "
           "ran + waited | switch crossings | streams across: median Mbit/s (sum, % of their fair shares) | within | "
           "other processes | verdict |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for rung in choice["rungs"]:
        streams = rung.get("streams") or {}
        out.append("| %g / %g | %s | %s | %s + %s | %s | %s | %s | %s of a CPU | %s |" % (
            rung["host_bw_mbit"], rung["fabric_bw_mbit"], _pct(rung.get("delivered_pct")),
            _pct(rung.get("busiest_link_weighted_pct")),
            _pct(rung.get("ovs_main_run_weighted_pct")), _pct(rung.get("ovs_main_wait_weighted_pct")),
            "-" if rung.get("crossing_mib_s_weighted") is None else "%.0f MiB/s" % rung["crossing_mib_s_weighted"],
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


def probe_rung(bench, seconds):
    """The probe at the fabric's current rates: load_pairs' streams for ``seconds`` (after iperf3's
    omitted first second), sampled like a job from the moment every stream started; rung_record."""
    from bench_sampling import CpuMonitor
    from jobroute_iperf import iperf_streams
    import rate_probe_parse
    fab = bench.fab_model
    pairs = load_pairs(fab)
    monitor = CpuMonitor(links=bench.link_directions())
    started = []

    def start():
        monitor.__enter__()
        started.append(True)
    try:
        outputs = iperf_streams(bench, [(s, d) for s, d, _kind in pairs], seconds, on_start=start)
    finally:
        if started:
            monitor.__exit__(None, None, None)
    return rung_record(fab, pairs, [rate_probe_parse.iperf_stream(o) for o in outputs], monitor.summary())


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
    record = decision(ladder, rungs, seconds, routing, len(load_pairs(bench.fab_model)))
    record["every_rung"] = every_rung
    if record["chosen"] is not None:
        bench.set_rates(*record["chosen"])
    return record
