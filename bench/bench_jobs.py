"""Running the bench's jobs: one mpirun of coll_bench with its route switching and sampling, the
retry of disrupted jobs, and the records each job adds to results.json."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading

from bench_common import FABRIC_SUBNET, pct_text, write_json, fmt_duration, now_s
from bench_sampling import CpuMonitor
from bench_flows import RouteSwitch
from bench_limits import parallel_iperf, parse_sdn_env
import bench_more
import bench_rotate
import bench_startup
import benchcore
import bounds


PLAN_RE = re.compile(r"plan comm=\d+ ranks=(?P<ranks>\d+) hosts=\d+ steps=(?P<steps>\d+) pairs=(?P<pairs>\d+): ok "
                     r"flows=(?P<flows>\d+) max_load=\[(?P<max_load>[^\]]*)\] in (?P<rtt>[\d.]+)s "
                     r"\(controller total (?P<total>[\d.]+)s plan (?P<plan>[\d.]+)s install (?P<install>[\d.]+)s"
                     r"(?:, sent ahead at Init)?\)")


def run_mpi_job(bench, job, progress):
    """Runs one coll_bench job; returns (events, meta)."""
    from sdnmpi.mininet_topos.net import MpiJob
    args = bench.args
    fab = bench.fabric
    hosts = [fab.host(h) for h in bench.host_names(job["hosts"])]
    toggle_dir = tempfile.mkdtemp(prefix="toggle-", dir=fab.tmpdir)
    prog = coll_bench_argv(bench, job, toggle_dir)
    env = job_env(bench, job)
    slots = job.get("slots", 1)   # startup rows at p > hosts (bench_startup.py)
    mpi = MpiJob(fab, hosts, slots=slots)
    argv = mpi.mpirun_argv(prog, np=job["nprocs"] if slots > 1 else len(hosts), env=env, mca=args.mca)
    log_path = os.path.join(bench.log_dir, "%s.log" % job["name"])
    meta = {"name": job["name"], "argv": [str(a) for a in argv]}
    plan_info = {}

    def capture_plan():
        # Called at coll_bench's "end" request, before SDN_MPI_Finalize releases the job.
        plan_info.update(summarize_jobs(bench.ctl.rest("/sdnmpi/jobs"), bench.topo))

    stats_before = bench.rpc_stats()
    # phase: the implementation whose routes are on (RouteSwitch.state), to judge each one's traffic apart;
    # the switch announces each change of it (on_phase), and the monitor reads Open vSwitch's counters then
    cpu = CpuMonitor(links=bench.link_directions(), phase=lambda: switch.state)
    switch_args = dict(hide=not args.no_hide_job_flows, on_end=capture_plan, on_phase=cpu.phase_changed)
    if job.get("rotation"):   # --rotate-routings: the default routing changes between blocks (bench_rotate.py)
        switch = bench_rotate.RotatingSwitch(
            toggle_dir, bench.topo.switch_names, bench.spine_ports(),
            bench_rotate.RoutingControl(bench.ctl, args.operator_token_file),
            read_jobs=lambda: bench.ctl.rest("/sdnmpi/jobs"), **switch_args)
    else:
        switch = RouteSwitch(toggle_dir, bench.topo.switch_names, bench.spine_ports(), **switch_args)
    timeout = job["timeout_s"]
    t0 = now_s()
    with cpu, switch, open(log_path, "w") as log:
        rc, timed_out, events, plan_lines = run_logged(hosts[0], argv, mpi, env, timeout, log, job, progress)
    meta.update({"rc": rc, "timed_out": timed_out, "wall_s": now_s() - t0,
                 "cpu": cpu.summary(), "routes": switch.summary(), "plan": plan_info,
                 "log": os.path.relpath(log_path, bench.out_dir)})
    meta.update(controller_counts(stats_before, bench.rpc_stats(),
                                  bench_rotate.expected_recomputes(meta["routes"].get("rotation"))))
    meta["disrupted"] = disruption_reasons(meta)
    lib_plan = parse_lib_plan(plan_lines)
    if lib_plan is not None:
        meta["lib_plan"] = lib_plan
    if not bench.wait_no_jobs():
        meta["warning"] = "the controller still lists the job 30 s after it ended"
    if meta["rc"] == 0 and not switch.ended:
        meta["warning"] = "coll_bench never sent its end request: no plan recorded"
    return events, meta


def coll_bench_argv(bench, job, toggle_dir):
    """coll_bench's command line for ``job``; ``toggle_dir`` is where it asks for route switches."""
    prog = [job.get("coll_bench") or bench.coll_bench, "--collective", job["collective"], "--reps", job["reps"]]
    for key in ("sizes", "calls", "roots"):
        if job.get(key):
            prog += ["--" + key, ",".join(str(v) for v in job[key])]
    if job.get("sdn_algs"):
        prog += ["--sdn-algs", ",".join(job["sdn_algs"])]
    if job.get("rotation"):
        prog += ["--routing-blocks", ",".join(job["rotation"])]
    if job.get("settle_calls"):
        prog += ["--settle", job["settle_calls"]]
    for key in ("idle_ms", "tiny_idle_ms"):
        if job.get(key):
            prog += ["--" + key.replace("_", "-"), job[key]]
    prog += ["--tiny-reps", job.get("tiny_reps", 0), "--tiny-block", job.get("tiny_block", 10),
             "--toggle", toggle_dir]
    if job.get("lib_verbose"):
        prog.append("--lib-verbose")
    if job.get("warm"):
        prog.append("--warm")
    for key in ("gap_ms", "startup_bcast_bytes", "startup_comms"):   # startup rows (bench_startup.py)
        if job.get(key):
            prog += ["--" + key.replace("_", "-"), job[key]]
    if job.get("variant"):
        prog += ["--startup-variant", job["variant"]]
    return prog


def job_env(bench, job):
    """The variables every rank of ``job`` gets: the controller's address, sdn_env and the job's own."""
    env = {"SDN_MPI_CONTROLLER": "%s:%d" % (bench.fabric.mgmt.root_ip, bench.ports["rpc"]),
           "SDN_MPI_FABRIC_SUBNET": FABRIC_SUBNET}
    env.update(sdn_env(bench.args))
    env.update(job.get("env", {}))   # a job's own library knobs (bench_startup.py's variants)
    return env


def run_logged(host, argv, mpi, env, timeout, log, job, progress):
    """Runs mpirun in ``host``, killed after ``timeout`` s, its output into ``log`` and shown as it comes;
    returns (returncode, timed out, coll_bench's events, the library's plan lines)."""
    from sdnmpi.mininet_topos import procs
    events, plan_lines, pending = [], [], {}
    log.write(" ".join(str(a) for a in argv) + "\n")
    proc = subprocess.Popen(procs.in_host(host, argv), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=mpi.environment(env), start_new_session=True,
                            universal_newlines=True, bufsize=1)
    timed_out = threading.Event()

    def kill():
        timed_out.set()
        procs.terminate([proc], timeout=2.0)
    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        for line in proc.stdout:
            log.write(line)
            ev = benchcore.parse_line(line)
            if ev is None:
                if "sdnmpi[0]: plan" in line:
                    plan_lines.append(line.strip())
                continue
            events.append(ev)
            _show(ev, job, pending, progress)
        proc.wait()
    finally:
        timer.cancel()
        procs.kill_by_environ(mpi.dir)
        shutil.rmtree(mpi.dir, ignore_errors=True)
    return proc.returncode, timed_out.is_set(), events, plan_lines


def controller_counts(stats_before, stats_after, expected=0):
    """What the controller did during the job (its RPC statistics before and after): the RPCs, the
    route recomputes (less the ``expected`` ones: --rotate-routings' own routing changes), and
    whether the fabric was disrupted."""
    route_recomputes = stats_after.get("route_recomputes", 0) - stats_before.get("route_recomputes", 0) - expected
    return {"controller_rpc": {k: stats_after.get(k, 0) - stats_before.get(k, 0)
                               for k in ("jobs_registered", "allreduce_plans", "bcast_trees", "errors")},
            # Routes are recomputed only when the topology changes: during a job that means the controller
            # lost LLDP links or switches (a CPU-starved machine) and the job's times are not trustworthy.
            "route_recomputes": route_recomputes,
            "fabric_disrupted": route_recomputes > 0 or not stats_after}


def parse_lib_plan(plan_lines):
    """The last of the library's plan log lines (PLAN_RE) as a record, or None."""
    lib_plan = None
    for line in plan_lines:
        m = PLAN_RE.search(line)
        if m:
            lib_plan = {"rtt_s": float(m.group("rtt")), "controller_total_s": float(m.group("total")),
                        "controller_plan_s": float(m.group("plan")),
                        "controller_install_s": float(m.group("install")),
                        "flows": int(m.group("flows")), "max_load": m.group("max_load")}
    return lib_plan


def disruption_reasons(meta):
    """Why a job's times cannot be trusted: [] if nothing happened."""
    reasons = []
    stalls = (meta.get("cpu") or {}).get("stalls") or []
    if stalls:
        reasons.append("the machine stalled %d time(s), longest %.1f s (at %.0f s into the job)" % (
            len(stalls), max(s["length_s"] for s in stalls),
            max(stalls, key=lambda s: s["length_s"])["at_s"]))
    if meta.get("route_recomputes"):
        reasons.append("the controller recomputed its routes %d time(s) (links, switches or hosts lost and found)"
                       % meta["route_recomputes"])
    elif meta.get("fabric_disrupted"):
        reasons.append("the controller did not answer after the job")
    return reasons


def summarize_jobs(jobs, topo=None):
    """The plans and trees of the jobs listed by /sdnmpi/jobs (normally just this one)."""
    names = {}
    if topo is not None:
        names = {dpid: name for name, dpid in getattr(topo, "dpids", {}).items()}
    out = {"jobs": len(jobs), "routes": 0, "trees": []}
    for j in jobs:
        for comm, plan in sorted((j.get("comms") or {}).items()):
            out["comm %s" % comm] = {k: plan.get(k) for k in ("planner", "max_load", "lower_bound", "flows")}
        out["routes"] += len(j.get("routes") or [])
        for tree in j.get("trees") or []:
            out["trees"].append({"comm": tree.get("comm"), "root": tree.get("root"),
                                 "members": len(tree.get("members") or []),
                                 "top": names.get(tree.get("top"), tree.get("top")),
                                 "switches": len(tree.get("switches") or {})})
    return out


def _show(ev, job, pending, progress):
    kind = ev.get("bench")
    if kind == "sample" and ev.get("bytes", 0) >= job.get("show_min_bytes", 1024):
        key = (ev["collective"], ev["bytes"], ev.get("root"), ev["rep"])
        pending.setdefault(key, {})[ev["impl"]] = ev["t_s"]
        impls = pending[key]
        if len(impls) == job["nimpl"]:
            del pending[key]
            work = job["work_per_byte"] * ev["bytes"] * job["nimpl"]
            progress.add(work)
            job["done_work"] = job.get("done_work", 0.0) + work
            root = "" if ev.get("root", -1) < 0 else " root %d" % ev["root"]
            calls = 1
            if ev["collective"] == "allreduce" and job.get("calls") and ev["bytes"] in job.get("sizes", []):
                calls = job["calls"][job["sizes"].index(ev["bytes"])]
            progress.say("  %s %s: %s%s sample %d/%d: %s" % (
                job["label"], ev["collective"], benchcore.fmt_bytes(ev["bytes"]), root, ev["rep"] + 1,
                job["reps"] * calls, "  ".join("%s %s" % (i, benchcore.fmt_seconds(impls[i]))
                                        for i in benchcore.IMPLS if i in impls)))
    elif kind == "init":
        progress.say("  %s %s: %s" % (job["label"], ev.get("metric"), benchcore.fmt_seconds(ev.get("t_s"))))
    elif kind == "check" and not ev.get("ok"):
        progress.say("  %s CHECK FAILED: %s" % (job["label"], json.dumps(ev)))


def sdn_env(args):
    """The SDN_MPI_* settings every job gets besides the controller address (recorded)."""
    env = {"SDN_MPI_TIMEOUT_MS": str(args.sdn_timeout_ms)}
    if args.bcast_rate_mbps is not None:
        env["SDN_MPI_BCAST_RATE_MBPS"] = str(args.bcast_rate_mbps)
    env.update(parse_sdn_env(getattr(args, "sdn_env", None)))   # --sdn-env NAME=VALUE
    return env


def run_all(bench, jobs, progress, results, results_path):
    """Runs the jobs routing by routing, in the order their routings first come: the controller
    restarted with each routing, the fabric started (once) and discovered, the iperf3 checks, then
    the routing's jobs (run_job_with_retries)."""
    args = bench.args
    from sdnmpi.mininet_topos.net import ensure_ovs
    from sdnmpi.mininet_topos.demo import iperf3
    ensure_ovs()
    fab = bench.fab_model
    for index, routing in enumerate(routing_order(jobs)):
        start_routing(bench, routing, progress)
        if args.iperf_seconds and (index == 0 or not args.quick):
            iperf_check(bench, routing, iperf3, progress, results)
            if index == 0 and fab.host_bw and fab.fabric_bw:
                parallel_check(bench, routing, progress, results)
        for job in [j for j in jobs if j["routing"] == routing]:
            run_job_with_retries(bench, job, progress, results, results_path)
        bench.stop_controller()


def routing_order(jobs):
    """The jobs' routings, each once, in the order they first come."""
    order = []
    for job in jobs:
        if job["routing"] not in order:
            order.append(job["routing"])
    return order


def start_routing(bench, routing, progress):
    """(Re)starts the controller with ``routing``, the fabric if it is not up yet, and waits until the
    controller has discovered and routed it."""
    fab = bench.fab_model
    t0 = now_s()
    bench.stop_controller()
    bench.start_controller(routing)
    if bench.fabric is None:
        progress.say("starting the fabric: %d spines, %d leaves, %d hosts/leaf, host links %s Mbit/s, "
                     "fabric links %s Mbit/s" % (fab.spines, fab.leaves, fab.hosts_per_leaf,
                                                 fab.host_bw or "unlimited", fab.fabric_bw or "unlimited"))
        bench.start_fabric()
    bench.wait_ready(bench.args.discovery_timeout)
    progress.say("controller up with routing %s; fabric discovered and routed in %.1f s"
                 % (routing, now_s() - t0))


def iperf_check(bench, routing, iperf3, progress, results):
    """The single-flow check: one TCP flow with ``iperf3`` from the first host to the last (different
    leaves) under the CPU monitor, added to results["cpu_check"]["iperf"] (a failure to the notes)."""
    fab = bench.fab_model
    hosts = bench.fabric.hosts
    client, server = hosts[0], hosts[-1]
    with CpuMonitor(links=bench.link_directions()) as cpu:
        try:
            mbps = iperf3(server, client, bench.fabric.host_ips()[server.name], seconds=bench.args.iperf_seconds)
        except Exception as exc:  # pylint: disable=broad-except
            mbps = None
            results["notes"].append("iperf3 failed under %s: %s" % (routing, exc))
    usage = cpu.summary()
    entry = {"routing": routing, "client": client.name, "server": server.name,
             "seconds": bench.args.iperf_seconds, "mbit_s": mbps,
             "fraction_of_fabric_bw": (mbps / fab.fabric_bw if mbps and fab.fabric_bw else None),
             "foreign_cpu_pct": _median_of(usage, "foreign_cpu_pct_of_one_cpu"),
             "ovs_main_runnable_pct": _median_of(usage, "ovs_main_runnable_pct"),
             "busiest_link_weighted_pct": usage.get("busiest_link_weighted_pct"), "cpu": usage}
    results["cpu_check"]["iperf"].append(entry)
    progress.say("iperf3 %s -> %s (different leaves) under %s: %s Mbit/s (fabric links %s Mbit/s); "
                 "busiest link at %s of its rate, ovs-vswitchd forwarding thread busy %s, other processes "
                 "%s of a CPU" % (client.name, server.name, routing, "%.1f" % mbps if mbps else "-",
                                  fab.fabric_bw, pct_text(entry["busiest_link_weighted_pct"]),
                                  pct_text(entry["ovs_main_runnable_pct"]), pct_text(entry["foreign_cpu_pct"])))


def _median_of(usage, field):
    """The median of a CpuMonitor summary's ``field`` (None if it has none)."""
    return (usage.get(field) or {}).get("median")


def parallel_check(bench, routing, progress, results):
    """The parallel check (parallel_iperf) under the CPU monitor, as results["cpu_check"]["parallel"]
    (its error if it failed)."""
    with CpuMonitor(links=bench.link_directions()) as cpu:
        try:
            par = parallel_iperf(bench, bench.args.iperf_seconds)
        except Exception as exc:  # pylint: disable=broad-except
            par = {"error": str(exc)}
    par["cpu"] = cpu.summary()
    par["routing"] = routing
    results["cpu_check"]["parallel"] = par
    progress.say("iperf3, %d UDP flows at once (%s): %s of the %s Mbit/s offered received; busiest link at %s "
                 "of its rate, ovs-vswitchd forwarding thread busy %s, other processes %s of a CPU" % (
                     len(par.get("flows", [])), routing,
                     ("%.1f Mbit/s" % par["mbit_s"]) if par.get("mbit_s") else par.get("error", "-"),
                     "%.0f" % par.get("offered_mbit_s", 0),
                     pct_text(par["cpu"].get("busiest_link_weighted_pct")),
                     pct_text(_median_of(par["cpu"], "ovs_main_runnable_pct")),
                     pct_text(_median_of(par["cpu"], "foreign_cpu_pct_of_one_cpu"))))


def run_job_with_retries(bench, job, progress, results, results_path):
    """Runs a job; re-runs it (up to --retry-disrupted times) if it was disrupted.

    The rule is mechanical and ignores the times: a job is disrupted when the machine stalled
    (CpuMonitor: the sampler could not run for 2 s or more) or the controller recomputed its
    routes (it lost and found links, switches or hosts). A disrupted attempt's records stay in
    results.json with ``superseded: true`` and are listed in results.md apart from the tables;
    the last attempt is used even if it was disrupted too (then its rows are marked)."""
    args = bench.args
    attempts = 1 + max(0, args.retry_disrupted)
    for attempt in range(1, attempts + 1):
        bench.wait_ready(args.discovery_timeout)   # quick when all is well; after a disruption it waits
        progress.say("job %s%s: %s, ranks on hosts %s%s" % (
            job["name"], "" if attempt == 1 else " (attempt %d)" % attempt, job["label"], job["hosts"],
            (", roots %s" % job["roots"]) if job.get("roots") else ""))
        if attempt > 1:
            job = dict(job, work_per_byte=0.0)    # the progress/ETA counted the work once
        job["done_work"] = 0.0
        events, meta = run_mpi_job(bench, job, progress)
        if attempt == 1:
            progress.add(max(0.0, job["work"] - job.get("done_work", 0.0)))
        retry = bool(meta["disrupted"]) and attempt < attempts and meta["rc"] == 0
        record_attempt(bench, job, attempt, retry, events, meta, results, results_path)
        report_attempt(bench, job, meta, retry, progress)
        if not retry:
            return


def record_attempt(bench, job, attempt, retry, events, meta, results, results_path):
    """Adds an attempt's meta and records to ``results`` (superseded if it is to be run again; marked
    if disrupted) and writes results.json; notes a have_sdn_bcast that differs from the build's."""
    meta.update({k: job[k] for k in ("collective", "routing", "placement", "nprocs", "hosts")})
    if job.get("rotation"):
        meta["rotation_schedule"] = job["rotation"]
    meta["roots"] = job.get("roots")
    meta["attempt"] = attempt
    meta_events = [e for e in events if e.get("bench") in ("meta", "check")]
    meta["program"] = meta_events
    records = job_records(bench, job, events, meta)
    for rec in records:
        rec["attempt"] = attempt
        if meta["disrupted"]:
            rec["disrupted"] = True
    if retry:
        meta["superseded"] = True
        for rec in records:
            rec["superseded"] = True
    results["jobs"].append(meta)
    results["records"].extend(records)
    write_json(results_path, results)
    for ev in meta_events:
        if ev.get("bench") == "meta" and bool(ev.get("have_sdn_bcast")) != bool(bench.have_sdn_bcast):
            results["notes"].append("job %s: coll_bench says have_sdn_bcast=%s, the build detected %s"
                                    % (job["name"], ev.get("have_sdn_bcast"), bench.have_sdn_bcast))


def report_attempt(bench, job, meta, retry, progress):
    """The progress lines of a finished attempt (and a failed one's log tail, printed)."""
    progress.say(done_line(job, meta))
    if meta["routes"]["errors"]:
        progress.say("job %s: route switch errors: %s" % (job["name"], "; ".join(meta["routes"]["errors"])))
    if meta["rc"] != 0:
        print(open(os.path.join(bench.out_dir, meta["log"])).read()[-3000:], flush=True)
    if meta["disrupted"]:
        progress.say("job %s DISRUPTED: %s%s" % (job["name"], "; ".join(meta["disrupted"]),
                                                 ": running it again" if retry else ""))


def done_line(job, meta):
    """An attempt's "job NAME done in ..." line: its status, link and CPU figures and route switches."""
    status = "ok" if meta["rc"] == 0 else ("TIMED OUT" if meta["timed_out"] else "rc=%s" % meta["rc"])
    cpu = meta["cpu"]
    return ("job %s done in %s (%s); busiest link at %s of its rate and ovs-vswitchd's forwarding thread "
            "%s busy while data moved, other processes %s of a CPU; route switches %d (%.1f s, of which "
            "%.1f s waiting for OVS revalidation), job routes overridden for Open MPI: %s"
            % (job["name"], fmt_duration(meta["wall_s"]), status,
               pct_text(cpu.get("busiest_link_weighted_pct")),
               pct_text(cpu.get("ovs_main_runnable_weighted_pct")),
               pct_text((cpu.get("foreign_cpu_pct_of_one_cpu") or {}).get("median")),
               meta["routes"]["toggles"], meta["routes"]["toggle_s_total"],
               meta["routes"]["revalidate_wait_s_total"], meta["routes"]["job_flows_hidden"]))


def job_records(bench, job, events, meta):
    """results.json records of one job: samples aggregated, plus the init metrics."""
    fab = bench.fab_model
    hosts = job["hosts"]
    if job["collective"] == "startup":
        return bench_startup.job_records(job, events)

    def limit(collective, nbytes, root):
        if collective in bench_more.COLLECTIVES:
            return bench_more.limits(fab, hosts, collective, nbytes)["any"]
        if collective == "allreduce":
            return benchcore.allreduce_limit(fab, hosts, nbytes)
        return benchcore.bcast_limit(fab, hosts, root or 0, nbytes)

    if job.get("rotation"):   # per block's routing (bench_rotate.py)
        records = bench_rotate.records(events, job, meta["routes"].get("rotation") or [], limit)
    else:
        records = benchcore.aggregate_samples(events, job["routing"], job["placement"], job["nprocs"], limit)
    for rec in records:
        if rec["collective"] in bench_more.COLLECTIVES:
            rec["limits_s"] = bench_more.limits(fab, hosts, rec["collective"], rec["bytes"])
        elif rec["collective"] == "allreduce":
            rec["limits_s"] = benchcore.allreduce_limits(fab, hosts, rec["bytes"])
        else:
            rec["limits_s"] = benchcore.bcast_limits(fab, hosts, rec["root"] or 0, rec["bytes"])
        if rec["impl"] == "sdnmpi" and rec["collective"] == "allreduce":   # the algorithms the library chose
            rec["sdn_paths"] = sorted({ev["path"] for ev in events if ev.get("bench") == "sample" and ev.get("path")
                                       and ev.get("impl") == "sdnmpi" and ev.get("bytes") == rec["bytes"]})
        if rec["collective"] in bounds.COLLECTIVES:   # the any-algorithm bound (bounds.py)
            rec["bound_s"] = bench_more.row_bound(rec["collective"], fab, hosts, rec["bytes"], rec["root"] or 0)
        if rec["collective"] == "allreduce" and rec["bytes"] == benchcore.TINY_BYTES and job.get("tiny_reps"):
            rec["sample_block"] = job.get("tiny_block", 10)   # coll_bench's tiny calls: blocks between switches
        rec["job"] = job["name"]
    init = {}
    for ev in events:
        if ev.get("bench") == "init":
            key = (ev["metric"], ev.get("bytes", 0), ev.get("root"))
            init.setdefault(key, []).append(ev["t_s"])
    lib_plan = meta.get("lib_plan")
    if lib_plan:
        for metric, field in (("plan_rtt", "rtt_s"), ("controller_total", "controller_total_s"),
                              ("controller_plan", "controller_plan_s"),
                              ("controller_install", "controller_install_s")):
            init[(metric, 0, None)] = [lib_plan[field]]
    for (metric, nbytes, root), samples in sorted(init.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0)):
        records.append(benchcore.make_record("init", "sdnmpi", job["routing"], job["placement"], job["nprocs"],
                                             nbytes, root, samples, None, metric=metric, job=job["name"]))
    return records
