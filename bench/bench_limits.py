"""Planning the run from the limit model (calls per point, jobs, roots, the SDN bcast rate), the
fabric checks with iperf3, and the verdict of the bottleneck check (is it the links, not the CPU)."""

import json
import math
import os
import statistics
import subprocess
import types

from bench_common import ROUTINGS, csv_list, parse_nprocs
import bench_jobcheck
import bench_more
import bench_startup
import benchcore


def estimate_call_s(fab, hosts, collective, nbytes, root=0, impl="openmpi"):
    """A rough duration of one call (for timeouts and the ETA), fitted to QUICK runs on this
    emulation (quiet machine): an allreduce took 1.2-2.2x the recursive-doubling limit (1.8 used);
    Open MPI's bcast ~1.2 log2(p) times the single-tree limit, sdnmpi's ~1.2-1.5 times it."""
    if collective == "allreduce":
        limit = benchcore.allreduce_limits(fab, hosts, nbytes)["rd"] or 0.0
        return 1.8 * limit + 0.01
    limit = benchcore.bcast_limits(fab, hosts, root, nbytes)["tree"] or 0.0
    factor = 1.3 if impl == "sdnmpi" else 1.2 * max(1.0, (len(hosts) - 1).bit_length())
    return factor * limit + 0.01


# SDN_MPI_Allreduce's algorithms that --sdn-algs may force (coll_bench's names).
SDN_ALGS = ("rd", "rabenseifner", "hier", "pmpi", "hier-d1", "hier-d2", "hier-d3", "hier-d4",
            "hier-d6", "hier-d8", "hier-d12", "hier-d16",
            "hier-s4k", "hier-s8k", "hier-s16k", "hier-s32k")  # coll_bench_algs.c's alg_names (test_c_twins.py)

# Seconds one switch of the routes between the implementations takes in an allreduce job
# (ovs-ofctl on every switch, then waiting for Open vSwitch's revalidation, about 0.45 s):
# measured on this 2-core machine (17 switches took 10-12 s).
TOGGLE_S = 0.7


def calls_per_point(est_call_s, point_seconds, max_calls):
    """Back-to-back calls per implementation at one allreduce point: enough for about
    ``point_seconds`` of samples (each call estimated at ``est_call_s``), between 1 and
    ``max_calls``. Short calls are noisy (a few ms of jitter in userspace OVS), so they get more
    samples; long ones keep one call per route switch."""
    if point_seconds <= 0 or est_call_s <= 0:
        return 1
    return max(1, min(max_calls, int(math.ceil(point_seconds / est_call_s))))


def plan_jobs(args, fab, have_sdn_bcast):
    """The list of jobs (dicts) in run order, grouped by routing."""
    opts = plan_options(args, fab.hosts)
    jobs = []
    for routing in [r for r in ROUTINGS if r in opts.routings or r in opts.bcast_routings]:
        if "init" in args.collectives and routing in opts.routings:
            jobs += init_jobs(args, fab.hosts, routing, opts.placements[:1])
        if "allreduce" in args.collectives and routing in opts.routings:
            for placement, p, hosts in benchcore.placed_hosts(opts.placements, opts.ar_nprocs, fab.hosts, args.seed):
                jobs.append(allreduce_job(args, fab, routing, placement, p, hosts, opts.ar_sizes, opts.sdn_algs))
        if "bcast" in args.collectives and routing in opts.bcast_routings:
            nimpl = 2 if have_sdn_bcast else 1
            for placement, p, hosts in benchcore.placed_hosts(opts.bcast_placements, opts.bc_nprocs, fab.hosts,
                                                              args.seed):
                jobs.append(bcast_job(args, fab, routing, placement, p, hosts, opts.bc_sizes, nimpl))
    jobs += bench_more.plan_jobs(args, fab, opts.routings, opts.placements,
                                 benchcore.parse_sizes(args.more_sizes), parse_nprocs(args.more_nprocs, fab.hosts))
    if "startup" in args.collectives:   # issue 17: start-up and first-call cost (bench/bench_startup.py)
        jobs += bench_startup.plan_jobs(args, fab, "dmodk" if "dmodk" in opts.routings else opts.routings[0])
    jobs.sort(key=lambda job: ROUTINGS.index(job["routing"]))   # stable: grouped by routing, as before
    for job in jobs:
        benchcore.finish_job(job, args.job_timeout)
    return jobs


def plan_options(args, n):
    """plan_jobs' options parsed (all of them, before any job is planned), for a fabric of n hosts."""
    return types.SimpleNamespace(
        routings=csv_list(args.routings, ROUTINGS),
        bcast_routings=csv_list(args.bcast_routings, ROUTINGS) if "bcast" in args.collectives else [],
        placements=csv_list(args.placements, ("block", "random")),
        bcast_placements=csv_list(args.bcast_placements, ("block", "random")),
        ar_sizes=benchcore.parse_sizes(args.allreduce_sizes),
        bc_sizes=benchcore.parse_sizes(args.bcast_sizes),
        ar_nprocs=parse_nprocs(args.allreduce_nprocs, n),
        sdn_algs=csv_list(getattr(args, "sdn_algs", "") or "", SDN_ALGS) if getattr(args, "sdn_algs", "") else [],
        bc_nprocs=parse_nprocs(args.bcast_nprocs, n))


def init_jobs(args, n, routing, placements):
    """args.init_reps init-only jobs on all n hosts (SDN_MPI_Init's cost, the library verbose)."""
    jobs = []
    for rep in range(args.init_reps):
        for placement in placements:
            hosts = benchcore.placement_hosts(placement, n, n, args.seed)
            jobs.append({"name": "init-%s-%s-p%d-%d" % (routing, placement, n, rep + 1),
                         "collective": "init", "routing": routing, "placement": placement,
                         "nprocs": n, "hosts": hosts, "reps": 1, "tiny_reps": 3,
                         "lib_verbose": True, "nimpl": 1, "work": 2.0, "work_per_byte": 0.0})
    return jobs


def allreduce_job(args, fab, routing, placement, p, hosts, sizes, sdn_algs):
    """One allreduce job: both implementations and the forced ``sdn_algs``, back-to-back calls per point
    (calls_per_point), the 8-byte calls in blocks."""
    est = [estimate_call_s(fab, hosts, "allreduce", s) for s in sizes]
    calls = [calls_per_point(e, args.point_seconds, args.max_calls) for e in est]
    return dict(benchcore.job_head("allreduce", routing, placement, p, hosts, args.reps),
                sizes=sizes, calls=calls, tiny_reps=args.tiny_reps, tiny_block=args.tiny_block,
                tiny_idle_ms=getattr(args, "tiny_idle_ms", 0) or 0, nimpl=2 + len(sdn_algs), sdn_algs=sdn_algs,
                work=allreduce_work(args, sizes, est, calls, len(sdn_algs)),
                settle_calls=getattr(args, "settle_calls", 0), idle_ms=getattr(args, "idle_ms", 0) or 0)


def allreduce_work(args, sizes, est, calls, nforced):
    """An allreduce job's estimated seconds (its timeout, the ETA) from each point's estimated call
    (``est``) and calls: its calls, route switches and idle gaps; ``nforced`` forced algorithms."""
    # timed, check, and the warm-up up to 256 KiB (per variant: 2 + forced algorithms)
    nvar = 2 + nforced
    work = sum(e * (args.reps * nvar * c + nvar + (nvar if s <= 262144 else 0))
               for s, e, c in zip(sizes, est, calls))
    work += nforced * len(sizes) * 2 * TOGGLE_S   # their checks' route switches
    settle = getattr(args, "settle_calls", 0)   # untimed, after each of <= 2 switches a point
    work += sum(e * 2 * settle * args.reps for e in est)
    idle_ms = getattr(args, "idle_ms", 0) or 0
    work += sum(nvar * c * args.reps for c in calls) * idle_ms / 1000.0
    work += args.tiny_reps * 2 * 0.02 + 4
    blocks = -(-args.tiny_reps // max(1, args.tiny_block))
    tiny_idle_ms = getattr(args, "tiny_idle_ms", 0) or 0
    work += 2 * blocks * tiny_idle_ms / 1000.0
    toggles = blocks + 3 + len(sizes) * (args.reps + 1)
    return work + toggles * TOGGLE_S


def bcast_job(args, fab, routing, placement, p, hosts, sizes, nimpl):
    """One bcast job: ``nimpl`` implementations (Open MPI's, and SDN_MPI_Bcast's if built) from each root."""
    roots = bcast_roots(args.bcast_roots, fab, hosts)
    impls = benchcore.IMPLS[:nimpl]
    # timed, the warm-up up to 256 KiB, and the first call per root (first size)
    work = sum(estimate_call_s(fab, hosts, "bcast", s, r, impl)
               * (args.reps + (1 if s <= 262144 else 0) + (1 if s == sizes[0] else 0))
               for s in sizes for r in roots for impl in impls)
    if nimpl == 2:   # route switches change nothing in a bcast job (no host-pair routes)
        work += (2 * len(roots) + 2 + args.reps * len(roots) * len(sizes)) * 0.05
    return dict(benchcore.job_head("bcast", routing, placement, p, hosts, args.reps),
                sizes=sizes, roots=roots, nimpl=nimpl, work=work + 4)


def bcast_roots(text, fab, hosts):
    """--bcast-roots: 'auto' (rank 0 and the first rank on another leaf, benchcore.bcast_roots) or
    a list of ranks, each below the job's process count."""
    if text.strip() == "auto":
        return benchcore.bcast_roots(fab, hosts)
    roots = [int(r) for r in csv_list(text)]
    bad = [r for r in roots if not 0 <= r < len(hosts)]
    if bad or not roots:
        raise ValueError("bcast roots %s do not fit %d processes" % (bad or text, len(hosts)))
    return roots


# SDN_MPI_Bcast's trees per (communicator, root) when SDN_MPI_BCAST_TREES is not set (libsdnmpi's
# SDNMPI_BCAST_DEFAULT_TREES, test_c_twins.py); the controller installs one per spine, at most this many.
LIB_BCAST_TREES = 2
# --sdn-bcast-rate auto: this share of each tree's part of its slowest link (docs/bench-notebook.md,
# "Bcast: where the multicast path's time goes"): at 1.0 no datagram was lost on the default fabric
# and p = 8 took 304 ms at 1 MiB; the 0.9 used before (13 of 15 Mbit/s) took 351 ms, all of the
# difference in the pacing.
BCAST_AUTO_SHARE = 1.0


def parse_sdn_env(items):
    """{NAME: VALUE} of --sdn-env items (NAME=VALUE strings; None: none): a later NAME overrides an
    earlier one, an item without "=" is NAME with an empty value."""
    return dict(item.partition("=")[::2] for item in items or ())


def bcast_trees(spines, sdn_env_items=()):
    """The multicast trees a Bcast of the jobs uses: SDN_MPI_BCAST_TREES (an --sdn-env item, else the
    library's default), at most one per spine."""
    trees = int(parse_sdn_env(sdn_env_items).get("SDN_MPI_BCAST_TREES", LIB_BCAST_TREES))
    return max(1, min(trees, spines))


def bcast_rate(text, host_bw, fabric_bw, trees=1):
    """SDN_MPI_BCAST_RATE_MBPS (per tree) from --sdn-bcast-rate: a number, None for 'lib', or for
    'auto' BCAST_AUTO_SHARE of what each of the ``trees`` trees gets of its slowest link: a fabric
    link carries one tree, the root's and every receiver's host link all of them (so host_bw /
    trees), rounded down (None if no link is limited)."""
    text = str(text).strip().lower()
    if text == "lib":
        return None
    if text == "auto":
        limited = [bw for bw in (host_bw / max(1, trees) if host_bw else 0, fabric_bw) if bw]
        return max(1, int(BCAST_AUTO_SHARE * min(limited) + 1e-9)) if limited else None
    value = int(float(text))
    if value < 1:
        raise ValueError("--sdn-bcast-rate must be at least 1 (Mbit/s)")
    return value


PARALLEL_LOAD = 0.9   # the parallel check offers this fraction of every flow's fair share


def parallel_pairs(fab):
    """The flows of the parallel check: [(client host, server host, fair share Mbit/s)].

    On every leaf L at once: its first host sends to the first host of leaf L+1 (across the spines;
    each leaf sends one such flow up and takes one down, so no fabric link carries two, whatever
    the routing), and its second host sends to its first host (within the leaf). The first host's
    link then carries two flows in: the max-min fair shares are min(fabric, host/2) for the flow
    across the spines and the rest of the host link for the one within the leaf (20 and 20 Mbit/s
    on the default fabric: 8 flows, 160 Mbit/s in all, through 2-3 switches each)."""
    hpl, leaves = fab.hosts_per_leaf, fab.leaves
    inf = float("inf")
    host_bw, fabric_bw = fab.host_bw or inf, fab.fabric_bw or inf
    first = [(leaf - 1) * hpl + 1 for leaf in range(1, leaves + 1)]
    pairs = []
    for index, src in enumerate(first):
        cross = leaves > 1
        intra = hpl > 1
        if cross and intra:
            cross_rate = min(fabric_bw, host_bw / 2.0)
            intra_rate = host_bw - cross_rate
        else:
            cross_rate, intra_rate = min(fabric_bw, host_bw), host_bw
        if cross:
            pairs.append((src, first[(index + 1) % leaves], cross_rate))
        if intra:
            pairs.append((src + 1, src, intra_rate))
    return [p for p in pairs if p[2] != inf]


def udp_received_mbit(iperf_json):
    """Mbit/s the server received in an ``iperf3 -u -J`` client's output (sent x (1 - loss))."""
    end = json.loads(iperf_json)["end"]
    total = end.get("sum_received") or end["sum"]
    if "lost_percent" in end["sum"] and "sum_received" not in end:
        return end["sum"]["bits_per_second"] * (1 - end["sum"]["lost_percent"] / 100.0) / 1e6
    return total["bits_per_second"] / 1e6


def parallel_iperf(bench, seconds, port0=5301):
    """The parallel check: the flows of ``parallel_pairs`` at the same time, as UDP at
    PARALLEL_LOAD x their fair share (so no link is over-subscribed: 144 of 160 Mbit/s on the
    default fabric). If the emulation keeps up, the servers receive all of it; what they do not
    receive was lost in a switch or a veth's queue because a CPU did not keep up. UDP, not TCP:
    TCP flows that share a link split it unevenly and hide the question asked here. Returns a dict
    for results.json: per flow the Mbit/s offered and received, and the totals."""
    from sdnmpi.mininet_topos import procs
    from sdnmpi.mininet_topos.demo import _wait_listening
    fab, net = bench.fab_model, bench.fabric
    ips = net.host_ips()
    pairs = parallel_pairs(fab)
    servers, clients, flows = [], [], []
    try:
        for k, (src, dst, _rate) in enumerate(pairs):
            server = net.host("h%d" % dst)
            servers.append(procs.popen_in_host(server, ["iperf3", "-s", "-1", "-p", port0 + k]))
            _wait_listening(server, port0 + k)
        for k, (src, dst, rate) in enumerate(pairs):
            argv = procs.in_host(net.host("h%d" % src), [
                "iperf3", "-c", ips["h%d" % dst], "-p", port0 + k, "-u", "-b", "%.3fM" % (PARALLEL_LOAD * rate),
                "-l", "1400", "-t", seconds, "-J"])
            clients.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, universal_newlines=True,
                                            start_new_session=True))
        for (src, dst, rate), client in zip(pairs, clients):
            out, _ = client.communicate(timeout=seconds + 30)
            error = None
            try:
                got = udp_received_mbit(out)
            except (ValueError, KeyError, TypeError):
                got = None
                try:
                    error = json.loads(out).get("error")
                except ValueError:
                    error = out.strip()[-300:]
            flows.append({"client": "h%d" % src, "server": "h%d" % dst, "mbit_s": got,
                          "offered_mbit_s": PARALLEL_LOAD * rate, "fair_share_mbit_s": rate,
                          "across_spines": fab.leaf_of(src) != fab.leaf_of(dst)})
            if error:
                flows[-1]["error"] = error
    finally:
        procs.terminate(clients + servers, timeout=2)
    got = [f["mbit_s"] for f in flows]
    offered = sum(f["offered_mbit_s"] for f in flows)
    total = sum(got) if got and all(g is not None for g in got) else None
    return {"protocol": "udp", "seconds": seconds, "load": PARALLEL_LOAD, "flows": flows, "mbit_s": total,
            "offered_mbit_s": offered, "fraction_received": (total / offered) if total is not None and offered else None}


# Thresholds of the bottleneck check (bench/README.md, "Bottleneck check"). TCP moves at most
# ~95 % of a link's rate as payload (1448 of 1514 bytes per full frame); 85 % leaves room for
# TCP's own dynamics, not for a CPU that cannot keep up. The parallel check offers UDP below
# every link's rate, so nearly all of it must arrive.
CHECK_IPERF_MIN = 0.85          # one TCP flow across the spines: >= 85 % of the fabric rate
CHECK_PARALLEL_MIN = 0.95       # the parallel UDP check: >= 95 % of what was offered arrives
CHECK_FOREIGN_MAX = 25.0        # other processes used < 25 % of one CPU: the machine was quiet


def finish_cpu_check(results):
    """The verdict: is link bandwidth, not CPU, the bottleneck? Fills results["cpu_check"].

    Criteria (each a line of the verdict; thresholds above):
    1. iperf3, one TCP flow between two hosts on different leaves on the otherwise idle fabric,
       reaches the fabric link rate: the emulation can fill a link.
    2. iperf3 with a flow from every leaf across the spines and one within every leaf at the
       same time (``parallel_pairs``: every first host's link nearly full, every fabric link
       carrying one flow; 8 flows through 2-3 switches each, about what a collective's busiest
       step asks of the emulation), as UDP at 90 % of each flow's fair share (144 Mbit/s on the
       default fabric): >= 95 % of it arrives. No link is over-subscribed, so whatever does not
       arrive was dropped because ovs-vswitchd (one thread forwards every packet of the
       userspace datapath) or the CPUs did not keep up.
    3. No job whose records are in the tables was disrupted (machine stall, topology change).
    4. Per job (bench_jobcheck.py; where the sampler kept them apart, per implementation): no job
       ran its busiest link below 80 % of its rate while ovs-vswitchd's forwarding thread was
       busy >= 80 % (16 hosts ask the switch for more than check 2 does). Judged only where the
       jobs have link figures.
    All of them: "link-bound". Reported besides, over the MPI jobs (not the init jobs, not
    superseded attempts): the busiest link's load and ovs-vswitchd's forwarding thread's
    busy % (run + waiting for a CPU), both weighted by the traffic, i.e. while data moved;
    the CPU used by processes outside the bench (other tests, builds: above 25 % of one CPU the
    machine counts as shared); steal time; the machine-wide busy % (near 100 % in every job: MPI
    ranks poll). The busy % of ovs-vswitchd's thread is not a criterion: it is high even at low
    rates (it wakes up for every few packets, and pays for the kernel's work of the veths and
    the rate limiters) and grows far slower than the traffic (measured here: 68 % for one
    9.5 Mbit/s flow, 99 % for one 260 Mbit/s flow on unlimited links)."""
    fab = results["fabric"]
    check = results["cpu_check"]
    fig = job_figures(results["jobs"])
    disrupted = [j for j in results["jobs"] if j.get("disrupted") and not j.get("superseded")]
    retried = [j for j in results["jobs"] if j.get("superseded")]
    iperf = [e for e in check.get("iperf", []) if e.get("mbit_s")]
    par = check.get("parallel") or {}
    check.update(check_figures(fig, disrupted, retried))
    criteria = [iperf_criterion(iperf, fab), parallel_criterion(par), stable_criterion(disrupted, retried)]
    if fig["linkw"]:   # per job: older results without link figures have nothing to judge
        criteria.append(("jobs",) + bench_jobcheck.criterion(check_jobs(results["jobs"])))
    check["criteria"] = {name: ok for name, ok, _text in criteria}
    ok = all(c[1] is True for c in criteria)
    check["link_bound"] = ok
    shared = _median(fig["foreign"]) is not None and _median(fig["foreign"]) >= CHECK_FOREIGN_MAX
    check["machine_shared"] = shared
    lines = [text for _name, _ok, text in criteria] + figure_lines(fig)
    check["verdict"] = "; ".join(lines) + ". " + verdict_conclusion(criteria, shared, fig["foreign"])
    check["note"] = ("CPU figures are sampled once a second and link counters every 0.25 s during each job; "
                     "'other processes' misses processes that start and end between two samples (a lower bound).")


def check_jobs(jobs):
    """The MPI jobs the check's figures cover: not the init or startup jobs, not superseded attempts."""
    return [j for j in jobs if j.get("collective") not in ("init", "startup") and not j.get("superseded")]


def per_job(jobs, field, stat="median"):
    """Each job's value of a CPU figure (``stat`` of a summary dict), skipping jobs without it."""
    values = []
    for j in jobs:
        value = (j.get("cpu") or {}).get(field)
        if isinstance(value, dict):
            value = value.get(stat)
        if value is not None:
            values.append(value)
    return values


def _median(values):
    """The median, None for no values."""
    return statistics.median(values) if values else None


# short name -> the job CPU figure (bench_sampling.py) the check summarises
JOB_FIGURES = (("busy", "machine_busy_pct"), ("steal", "steal_pct"), ("ovs", "ovs_vswitchd_pct_of_one_core"),
               ("run", "ovs_main_run_weighted_pct"), ("wait", "ovs_main_wait_weighted_pct"),
               ("runnable", "ovs_main_runnable_weighted_pct"), ("linkw", "busiest_link_weighted_pct"),
               ("foreign", "foreign_cpu_pct_of_one_cpu"))


def job_figures(jobs):
    """The per-job values of every JOB_FIGURES figure over the MPI jobs (check_jobs), by short name."""
    mpi_jobs = check_jobs(jobs)
    return {name: per_job(mpi_jobs, field) for name, field in JOB_FIGURES}


def check_figures(fig, disrupted, retried):
    """The summary figures, job lists and thresholds recorded in results["cpu_check"]."""
    ovs, foreign = fig["ovs"], fig["foreign"]
    return {
        "jobs_machine_busy_pct_median": _median(fig["busy"]), "jobs_steal_pct_median": _median(fig["steal"]),
        "jobs_ovs_vswitchd_pct_median": _median(ovs), "jobs_ovs_vswitchd_pct_max": max(ovs) if ovs else None,
        "jobs_ovs_main_run_weighted_pct_median": _median(fig["run"]),
        "jobs_ovs_main_wait_weighted_pct_median": _median(fig["wait"]),
        "jobs_ovs_main_runnable_weighted_pct_median": _median(fig["runnable"]),
        "jobs_busiest_link_weighted_pct_median": _median(fig["linkw"]),
        "jobs_foreign_cpu_pct_median": _median(foreign), "jobs_foreign_cpu_pct_max": max(foreign) if foreign else None,
        "jobs_disrupted": [j["name"] for j in disrupted], "jobs_rerun": [j["name"] for j in retried],
        "thresholds": {"iperf_fraction_min": CHECK_IPERF_MIN, "parallel_fraction_min": CHECK_PARALLEL_MIN,
                       "foreign_cpu_pct_max": CHECK_FOREIGN_MAX},
    }


def foreign_during(entry):
    """'; other processes used N% of a CPU meanwhile' for an iperf3 check entry, or ''."""
    value = ((entry.get("cpu") or {}).get("foreign_cpu_pct_of_one_cpu") or {}).get("median")
    if value is None:
        value = entry.get("foreign_cpu_pct")
    return "" if value is None else "; other processes used %.0f%% of a CPU meanwhile" % value


def iperf_criterion(iperf, fab):
    """Criterion (1), (name, ok, text): one TCP flow across the spines fills a fabric link."""
    if not (iperf and fab.get("fabric_bw_mbit")):
        return ("iperf", None, "(1) no single-flow iperf3 result")
    frac = statistics.median(e["fraction_of_fabric_bw"] for e in iperf)
    return ("iperf", frac >= CHECK_IPERF_MIN,
            "(1) one TCP flow across the spines (iperf3 %s->%s, %d s): %.1f Mbit/s = %.0f%% of the %g "
            "Mbit/s fabric links (needs >= %.0f%%)%s" % (
                iperf[0]["client"], iperf[0]["server"], iperf[0]["seconds"],
                statistics.median(e["mbit_s"] for e in iperf), 100 * frac, fab["fabric_bw_mbit"],
                100 * CHECK_IPERF_MIN, foreign_during(iperf[0])))


def parallel_criterion(par):
    """Criterion (2), (name, ok, text): the parallel UDP flows arrive at the rates offered."""
    if par.get("fraction_received") is None:
        return ("parallel", None, "(2) no parallel iperf3 result%s" % (
            (": %s" % par["error"]) if par.get("error") else ""))
    flows = par["flows"]
    across = [f["mbit_s"] for f in flows if f["across_spines"]]
    within = [f["mbit_s"] for f in flows if not f["across_spines"]]
    return ("parallel", par["fraction_received"] >= CHECK_PARALLEL_MIN,
            "(2) %d UDP flows at once (%d across the spines, %d within leaves, %d s), each at %.0f%% of its "
            "fair share of the links: %.1f of the %.1f Mbit/s offered arrived = %.0f%% (needs >= %.0f%%; "
            "per flow %s Mbit/s across, %s within)%s" % (
                len(flows), len(across), len(within), par["seconds"], 100 * par["load"], par["mbit_s"],
                par["offered_mbit_s"], 100 * par["fraction_received"], 100 * CHECK_PARALLEL_MIN,
                "/".join("%.1f" % v for v in across) or "-", "/".join("%.1f" % v for v in within) or "-",
                foreign_during(par)))


def stable_criterion(disrupted, retried):
    """Criterion (3), (name, ok, text): no job whose records are in the tables was disrupted."""
    return ("stable", not disrupted,
            "(3) %s" % ("no job was disrupted" if not disrupted else
                        "%d job(s) disrupted even after re-running: %s" % (
                            len(disrupted), "; ".join("%s: %s" % (j["name"], ", ".join(j["disrupted"]))
                                                      for j in disrupted)))
            + ("" if not retried else " (%d attempt(s) re-run after a disruption)" % len(retried)))


def figure_lines(fig):
    """The verdict's lines that report the jobs' link and CPU figures (no criteria)."""
    linkw, runnable, foreign, steal, busy = fig["linkw"], fig["runnable"], fig["foreign"], fig["steal"], fig["busy"]
    lines = []
    if linkw:
        lines.append("while the MPI jobs moved data, the busiest link ran at %.0f%% of its rate (traffic-weighted, "
                     "median over %d jobs; range %.0f-%.0f%%; gaps between an algorithm's steps keep this below "
                     "100%%)" % (_median(linkw), len(linkw), min(linkw), max(linkw)))
    if runnable:
        lines.append("ovs-vswitchd's forwarding thread ran %.0f%% and waited for a CPU %.0f%% of that time "
                     "(traffic-weighted medians; busiest job %.0f%%)" % (
                         _median(fig["run"]), _median(fig["wait"]), max(runnable)))
    if foreign:
        lines.append("other processes on the machine (not the bench, not Open vSwitch) used %.0f%% of one CPU "
                     "during the jobs (median; highest job %.0f%%; %d CPUs in all)%s" % (
                         _median(foreign), max(foreign), os.cpu_count(),
                         (", steal time %.0f%%" % _median(steal)) if steal else ""))
    if busy:
        lines.append("machine CPU busy %.0f%% (MPI ranks poll while they wait, so this is always high "
                     "during a job)" % _median(busy))
    return lines


# why a failed criterion keeps the run from being link-bound
CRITERION_FAILED = {"iperf": "one TCP flow does not fill a link",
                    "parallel": "the links do not reach their rates all at once",
                    "stable": "jobs were disrupted",
                    "jobs": "jobs' links stayed below their rate while the switch was busy"}


def verdict_conclusion(criteria, shared, foreign):
    """The verdict's closing "VERDICT: ..." sentences from the criteria and the other processes' CPU use."""
    if all(c[1] is True for c in criteria):
        return ("VERDICT: link-bound. The emulated links, not the CPU, limit the transfers%s." %
                (" (although other processes used the CPU too)" if shared else ""))
    failed = [name for name, good, _text in criteria if good is False]
    missing = [name for name, good, _text in criteria if good is None]
    why = [CRITERION_FAILED.get(n, n) for n in failed] + ["no data for criterion %s" % n for n in missing]
    conclusion = ("VERDICT: NOT shown to be link-bound (%s). The times include CPU effects of the emulation; "
                  "compare the implementations with care." % "; ".join(why))
    if shared:
        conclusion += (" Other processes used %.0f%% of a CPU: re-run on a quiet machine before concluding "
                       "that the link rates are too high." % _median(foreign))
    elif ("iperf" in failed or "parallel" in failed or "jobs" in failed) and foreign:
        conclusion += (" The machine was otherwise quiet, so the emulation itself is CPU-bound at these rates: "
                       "lower --host-bw/--fabric-bw (bench/README.md).")
    return conclusion
