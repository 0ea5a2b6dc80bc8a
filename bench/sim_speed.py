"""Simulator speed (no Mininet): PFSim's cg.yml, and one 128-rank job on a 4096-host fat-tree.

    .venv/bin/python bench/sim_speed.py [--repeat N] [--json OUT] [--pfsim-data DIR]

1. ``cg.yml`` (12 scenarios, about 100 jobs each) in this process (``-j 1``) and in two local
   processes (``-j 2``), as ``sdnmpi-sim scenario`` runs it minus the interpreter start-up; and the
   whole command line (``sdnmpi-sim scenario cg.yml``, interpreter and imports included).
   PFSim's figure for the same file on a 2-vCPU machine: 5.85 s.
2. CG's 128 ranks, one rank per host, on ``kary:k=16,hosts=32`` (4096 hosts, 320 switches, 64
   equal-cost paths between pods) under every registered router, Linear and Random host
   selection: topology build, then the job (placement, fold, routing, link loads) and, separately,
   the time model.

Times are the best of ``--repeat`` runs (wall clock; the machine is shared) and the process CPU
time of that run.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "tests", "data", "pfsim")

from sdnmpi import traces  # noqa: E402
from sdnmpi.primitives import PAIR_ROUTERS, paths  # noqa: E402
from sdnmpi.simulator import job, parallel, scenario, topology  # noqa: E402

PFSIM_CG_S = 5.85
BIG = "kary:k=16,hosts=32"


def best(fn, repeat):
    runs = []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn()
        runs.append((time.perf_counter() - wall, time.process_time() - cpu, value))
    return min(runs, key=lambda r: r[0])


def bench_cg(data, repeat):
    yml = os.path.join(data, "cg.yml")
    _, specs = scenario.load(yml, seed=0)
    out = {}
    for jobs in (1, 2):
        wall, cpu, results = best(lambda: parallel.run_all(specs, jobs=jobs), repeat)
        out[f"cg_yml_j{jobs}_s"] = wall
        out[f"cg_yml_j{jobs}_cpu_s"] = cpu
        out["cg_jobs"] = sum(r.summary["jobs_started"] for r in results)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "sdnmpi.simulator.cli", "scenario", yml, "--outdir", tmp]
        wall, _, _ = best(lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL), repeat)
    out["cg_yml_cli_s"] = wall
    out["pfsim_cg_yml_s"] = PFSIM_CG_S
    out["speedup_j1"] = PFSIM_CG_S / out["cg_yml_j1_s"]
    return out


def bench_big(data, repeat):
    trace = traces.load(os.path.join(data, "traces", "cg-c-128.tar.gz"))
    tm, counts = trace.traffic_matrix(), trace.tx_messages > 0
    wall, _, graph = best(lambda: topology.from_spec(BIG), 1)
    rows = {"topology": BIG, "hosts": len(paths.index(graph).hosts), "build_s": wall, "jobs": []}
    for policy in ("linear", "random"):
        for router in sorted(PAIR_ROUTERS):
            runs = []
            for _ in range(repeat):
                g = topology.from_spec(BIG)  # a fresh graph: no path cache carried over
                wall = time.perf_counter()
                placement = job.place(g, trace.n_procs, policy, "block", rng=random.Random(1))
                demand, flows = job.host_demand(tm, counts, placement.rank_host, trace.file_order)
                routed_at = time.perf_counter()
                routed = job.route(g, demand, flows, router, seed=1)
                done = time.perf_counter()
                runs.append((done - wall, done - routed_at, routed))
            job_s, route_s, routed = min(runs, key=lambda r: r[0])
            start = time.perf_counter()
            completion = routed.completion_s()
            rows["jobs"].append({
                "hosts": policy, "router": router, "job_s": job_s, "route_s": route_s,
                "time_model_s": time.perf_counter() - start, "host_pairs": len(routed.pairs),
                "max_link_bytes": job.maxima(routed.graph, routed.link_bytes, routed.link_flows)[0],
                "completion_s": completion})
    return rows


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--pfsim-data", default=DATA)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    cg = bench_cg(args.pfsim_data, args.repeat)
    print(f"cg.yml ({cg['cg_jobs']} jobs in 12 scenarios): -j 1 {cg['cg_yml_j1_s']:.3f} s "
          f"(cpu {cg['cg_yml_j1_cpu_s']:.3f} s), -j 2 {cg['cg_yml_j2_s']:.3f} s, "
          f"whole command {cg['cg_yml_cli_s']:.3f} s; PFSim {PFSIM_CG_S} s "
          f"-> {cg['speedup_j1']:.1f}x")
    big = bench_big(args.pfsim_data, args.repeat)
    print(f"{big['topology']}: {big['hosts']} hosts, topology built in {big['build_s']:.3f} s "
          "(excluded below; a fresh graph per run, so path caches start empty)")
    print("hosts   router    job_s  route_s  time_model_s  host_pairs  max_link_bytes  completion_s")
    for r in big["jobs"]:
        print(f"{r['hosts']:<7} {r['router']:<8} {r['job_s']:6.3f}  {r['route_s']:7.3f}  "
              f"{r['time_model_s']:12.3f}  {r['host_pairs']:10d}  {r['max_link_bytes']:14,.0f}  "
              f"{r['completion_s']:12.4f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cg": cg, "big": big}, f, indent=1)


if __name__ == "__main__":
    main()
