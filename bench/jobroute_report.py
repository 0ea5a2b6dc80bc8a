"""Tables of the job-routing bench (bench/bench_jobroute_mininet.py): medians per policy, the ratio
to D-mod-K, the per-flow rate of the shift and the permutation against the host link, the model's
link loads, and the simulator's ranking against the measured one. Pure; tested by
tests/unit/test_jobroute_bench.py.

    .venv/bin/python bench/jobroute_report.py RESULTS_DIR... [--out FILE.md]

merges the results.json of several runs (pieces run one after the other) into one report.
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from sdnmpi.primitives import PAIR_ROUTERS, fattree, pairs  # noqa: E402

import benchcore  # noqa: E402
import jobroute_sim  # noqa: E402

# The bench's fabrics. k4: issue 15's 16-host k=4 fat-tree, full bisection (every link the same
# rate); leafspine: the bench's 8-host 2:1 fabric (bench/run.py's defaults). shift/perm: the
# pattern program's shift distance and permutation seed, chosen where D-mod-K collides with the
# ranks on bench_placement (model_loads shows it). grid: hpcc's P x Q.
FABRIC_MODELS = {
    "k4": {"kind": "kary", "k": 4, "hosts": 16, "host_bw": 5, "fabric_bw": 5, "shift": 9, "perm": 12,
           "grid": (4, 4), "sim": "kary:k=4,host_bw=%g,fabric_bw=%g"},
    "leafspine": {"kind": "leafspine", "spines": 2, "leaves": 4, "hosts_per_leaf": 2, "hosts": 8, "host_bw": 30,
                  "fabric_bw": 15, "shift": 1, "perm": 2, "grid": (2, 4),
                  "sim": "leafspine:spines=2,leaves=4,hosts=2,host_bw=%g,fabric_bw=%g"},
}


def bench_placement(nhosts, seed=7):
    """Host numbers of ranks 0..n-1: a random permutation of the hosts, as a batch scheduler may
    place them (bench/benchcore.placement_hosts, the collectives bench's random placement)."""
    return benchcore.placement_hosts("random", nhosts, nhosts, seed)

PATTERN_ORDER = ("shift", "perm", "halo2d", "halo3d", "alltoall", "total")
# hpcc's stopped reruns (bench/jobroute_hpcc.py): mpirun's start to LatencyBandwidth, and the
# sections hpcc times itself
HPCC_ROWS = ("to_latbw_s", "wall_s", "PTRANS_time", "MPIRandomAccess_time", "MPIRandomAccess_LCG_time", "MPIFFT_time")
GOAL_RATE = 0.9
GOAL_RATIO = 1.5
_LCG_A, _LCG_C, _MASK = 6364136223846793005, 1442695040888963407, (1 << 64) - 1


def pattern_perm(seed, size):
    """traffic_patterns.c's `perm SEED`: rank r sends to the returned list's entry r."""
    p = list(range(size))
    x = (seed * _LCG_A + _LCG_C) & _MASK
    for i in range(size - 1, 0, -1):
        x = (x * _LCG_A + _LCG_C) & _MASK
        j = (x >> 33) % (i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def _graph(spec):
    if spec["kind"] == "kary":
        return fattree.kary(spec["k"])
    return fattree.leaf_spine(spec["spines"], spec["leaves"], spec["hosts_per_leaf"])


def model_loads(spec, routers=("dmodk", "ecmp", "sdn-optimal")):
    """Max flows on a switch link of the shift and the permutation on the fabric's placement."""
    graph, hosts = _graph(spec), spec["placement"]
    macs = [fattree.host_mac(h) for h in hosts]
    n = len(macs)
    perm = pattern_perm(spec["perm"], n)
    demands = {"shift %d" % spec["shift"]: [(i, (i + spec["shift"]) % n) for i in range(n)],
               "perm %d" % spec["perm"]: [(i, perm[i]) for i in range(n) if perm[i] != i]}
    out = {}
    for name, ranks in demands.items():
        demand = [pairs.Flow(macs[a], macs[b], 1) for a, b in ranks]
        out[name] = {r: pairs.link_load(graph, demand, PAIR_ROUTERS[r](graph, demand)).max_flows() for r in routers}
    return out


def simulate_program(spec, program, trace, policies):
    """The simulator's figures for a program's trace: per pattern phase (patterns) or the whole
    run (hpcc, phase 0), for the measured policies and Greedy2 (the max-load check)."""
    routers = list(policies) + [r for r in ("dmodk", "sdn-optimal", "greedy2") if r not in policies]
    phases = None if program == "patterns" else [0]
    return jobroute_sim.simulate(trace, spec["sim"], spec["placement"], routers, phases=phases)


def _values(runs, policy, getter):
    out = []
    for run in runs:
        if run.get("policy") != policy or run.get("rc") != 0:
            continue
        try:
            value = getter(run)
        except (KeyError, TypeError):
            continue
        if value is not None:
            out.append(value)
    return out


def medians(runs, policies, getter):
    """{policy: (median, n)} over the successful runs (None, 0 when none)."""
    out = {}
    for policy in policies:
        vals = _values(runs, policy, getter)
        out[policy] = (statistics.median(vals), len(vals)) if vals else (None, 0)
    return out


def run_summary(rec):
    pats = rec.get("patterns")
    if pats:
        return ": " + ", ".join("%s %.2f s" % (k, pats[k]["seconds"]) for k in PATTERN_ORDER if k in pats)
    hp = rec.get("hpcc")
    if hp:
        return ": " + ", ".join("%s %.3g" % kv for kv in sorted(hp.items()))
    return ""


def _cell(value, n, fmt="%.2f"):
    return "-" if value is None else (fmt % value) + ("" if n >= 3 else " (n=%d)" % n)


def bottleneck(spec):
    """Mbit/s of the slowest link a flow between leaves crosses (the host link on a full-bisection
    fabric, the leaf uplink on the 2:1 one)."""
    return min(spec["host_bw"], spec["fabric_bw"])


def pattern_rows(fab):
    """Rows of the pattern table: {pattern: {"medians", "ratio", "rate"}}."""
    prog = fab["programs"].get("patterns")
    if not prog:
        return {}
    policies = sorted({r["policy"] for r in prog["runs"]}, key=jobroute_sim.POLICIES.index)
    spec = fab["spec"]
    rows = {}
    for pattern in PATTERN_ORDER:
        med = medians(prog["runs"], policies, lambda r, p=pattern: r["patterns"][p]["seconds"])
        if not any(n for _v, n in med.values()):
            continue
        base = med.get("dmodk", (None, 0))[0]
        row = {"medians": med, "ratio": {}, "rate": {}}
        for policy, (value, _n) in med.items():
            if value and base:
                row["ratio"][policy] = base / value
        if pattern in ("shift", "perm"):
            sample = next((r["patterns"][pattern] for r in prog["runs"] if pattern in (r.get("patterns") or {})),
                          None)
            if sample:
                for policy, (value, _n) in med.items():
                    if value:
                        mbit = sample["bytes"] * sample["reps"] * 8 / value / 1e6
                        row["rate"][policy] = mbit / bottleneck(spec)
        rows[pattern] = row
    return rows


def sim_check(fab):
    """Per pattern phase: the simulator's completion times and its ranking against Mininet's."""
    out = {}
    for program, prog in fab["programs"].items():
        if program == "hpcc":
            continue   # its trace is the whole run, its reruns stop before LatencyBandwidth: not comparable
        sim = prog.get("sim") or {}
        policies = sorted({r["policy"] for r in prog["runs"]}, key=jobroute_sim.POLICIES.index)
        phase_of = {p: str(i + 1) for i, p in enumerate(PATTERN_ORDER[:5])}
        items = [(p, phase_of[p], lambda r, p=p: r["patterns"][p]["seconds"]) for p in PATTERN_ORDER[:5]]
        for name, phase, getter in items:
            simulated = (sim.get(phase) or sim.get(int(phase)) or {})
            if not simulated:
                continue
            measured = {p: v for p, (v, _n) in medians(prog["runs"], policies, getter).items() if v is not None}
            sim_s = {p: simulated[p]["completion_s"] for p in policies if p in simulated}
            flows = {p: simulated[p]["max_link_flows"] for p in simulated}
            out[name] = {"sim": sim_s, "measured": measured,
                         "max_link_flows": {p: flows[p] for p in policies if p in flows},
                         "agreement": jobroute_sim.ranking_agreement(sim_s, measured),
                         "optimal_vs": {p: (flows["sdn-optimal"], flows[p]) for p in ("greedy2", "dmodk")
                                        if p in flows and "sdn-optimal" in flows}}
    return out


def markdown(results):
    lines = []
    transport = results.get("method", {}).get("mpi_transport")
    if transport:
        lines += ["Open MPI transport (bench/mpi_transport.py): %s, MCA %s." % (
            transport["name"], ", ".join("%s=%s" % kv for kv in sorted(transport["mca"].items())) or "none"), ""]
    for name, fab in results.get("fabrics", {}).items():
        spec = fab["spec"]
        lines.append("## %s: %d hosts, host links %g Mbit/s, fabric links %g Mbit/s" % (
            name, spec["hosts"], spec["host_bw"], spec["fabric_bw"]))
        lines.append("")
        lines.append("Ranks on hosts %s (random placement). Max flows on a switch link (model): %s." % (
            spec["placement"], "; ".join("%s: %s" % (k, ", ".join("%s %d" % kv for kv in v.items()))
                                         for k, v in fab.get("model", {}).items())))
        lines.append("")
        rows = pattern_rows(fab)
        if rows:
            policies = list(next(iter(rows.values()))["medians"])
            lines.append("Pattern program, communication seconds (median of rounds; x = D-mod-K / policy):")
            lines.append("")
            lines.append("| pattern | " + " | ".join(policies) + " |")
            lines.append("|---|" + "---|" * len(policies))
            for pattern, row in rows.items():
                cells = []
                for policy in policies:
                    value, n = row["medians"][policy]
                    cell = _cell(value, n)
                    if policy != "dmodk" and policy in row["ratio"]:
                        cell += " (%.2fx)" % row["ratio"][policy]
                    if policy in row["rate"]:
                        cell += ", %.0f%%" % (100 * row["rate"][policy])
                    cells.append(cell)
                lines.append("| %s | %s |" % (pattern, " | ".join(cells)))
            lines.append("")
            lines.append("shift/perm: %% = per-flow rate (bytes x reps / time) of %g Mbit/s, the slowest link "
                         "on an inter-leaf flow's path." % bottleneck(spec))
            lines.append("")
            lines += goal_lines(name, rows, full_bisection=spec["host_bw"] <= spec["fabric_bw"])
        prog = fab["programs"].get("hpcc")
        if prog and prog.get("runs"):
            policies = sorted({r["policy"] for r in prog["runs"]}, key=jobroute_sim.POLICIES.index)
            method = results.get("method", {})
            lines.append("hpcc (unmodified; HPL N=%s, PTRANS N=%s too), seconds, median of rounds, x = D-mod-K / "
                         "policy; each rerun stopped at its LatencyBandwidth section (to_latbw_s: mpirun's start "
                         "to there; wall_s: the whole stopped mpirun; the trace: one whole run profiled on loopback):"
                         % (method.get("hpcc_n"), method.get("hpcc_ptrans_n")))
            lines.append("")
            lines.append("| | " + " | ".join(policies) + " |")
            lines.append("|---|" + "---|" * len(policies))
            for key in HPCC_ROWS:
                med = medians(prog["runs"], policies,
                              (lambda r: r["wall_s"] if r.get("hpcc") else None) if key == "wall_s"
                              else (lambda r, k=key: r["hpcc"][k]))
                base = med.get("dmodk", (None, 0))[0]
                cells = [_cell(*med[p]) + (" (%.2fx)" % (base / med[p][0]) if p != "dmodk" and base and med[p][0]
                                           else "") for p in policies]
                lines.append("| %s | %s |" % (key, " | ".join(cells)))
            lines.append("")
        check = sim_check(fab)
        if check:
            lines.append("Simulator (sdnmpi-sim's job model, same trace, placement and fabric) against Mininet:")
            lines.append("")
            lines.append("| exchange | simulated s by policy | max flows/link | sim order | Mininet order | "
                         "pairs agree/contradict/tie | sdn-optimal max flows <= greedy2, dmodk |")
            lines.append("|---|---|---|---|---|---|---|")
            for exch, c in check.items():
                a = c["agreement"]
                lines.append("| %s | %s | %s | %s | %s | %d/%d/%d | %s |" % (
                    exch, ", ".join("%s %.2f" % kv for kv in c["sim"].items()),
                    ", ".join("%s %d" % kv for kv in c["max_link_flows"].items()),
                    " < ".join(a["sim_order"]), " < ".join(a["measured_order"]),
                    a["agree"], a["contradict"], a["measured_tie"],
                    ", ".join("%s %d <= %d %s" % (p, o, v, "yes" if o <= v else "NO")
                              for p, (o, v) in c.get("optimal_vs", {}).items())))
            lines.append("")
            lines.append("A pair of policies counts when the simulated times differ by more than %d%%; a "
                         "measured difference within %d%% is a tie." % (100 * jobroute_sim.SIM_TIE,
                                                                        100 * jobroute_sim.MEASURED_TIE))
            lines.append("")
    if results.get("failed"):
        lines.append("FAILED: %s" % results["failed"])
    return "\n".join(lines) + "\n"


def goal_lines(name, rows, full_bisection=True):
    out = []
    for pattern in ("shift", "perm"):
        row = rows.get(pattern)
        if not row:
            continue
        rate = row["rate"].get("sdn-optimal")
        ratio = row["ratio"].get("sdn-optimal")
        if rate is None or ratio is None:
            continue
        goal = ("goal >= %d%%: %s" % (100 * GOAL_RATE, "met" if rate >= GOAL_RATE else "NOT met") if full_bisection
                else "the goal is for full bisection")
        out.append("- %s %s under sdn-optimal: per-flow rate %.0f%% of that link (%s), "
                   "%.2fx D-mod-K (goal >= %.1fx: %s)" % (
                       name, pattern, 100 * rate, goal,
                       ratio, GOAL_RATIO, "met" if ratio >= GOAL_RATIO else "NOT met"))
    return out + ([""] if out else [])


def merge(docs):
    """Several results.json (pieces of one measurement) -> one: fabrics and programs united; a
    program measured in several pieces keeps the first piece's trace and simulation and all the
    pieces' runs (each piece profiles the same program again: the same demand)."""
    out = {"fabrics": {}, "method": {}, "pieces": []}
    for doc in docs:
        out["method"] = dict(doc.get("method", {}), **out["method"])   # the first piece's, others fill gaps
        out["pieces"].append({k: doc.get(k) for k in ("started", "command", "wall_s", "failed")})
        for name, fab in doc.get("fabrics", {}).items():
            dst = out["fabrics"].setdefault(name, {"spec": fab["spec"], "model": fab.get("model"), "programs": {}})
            for program, prog in fab.get("programs", {}).items():
                if program in dst["programs"]:
                    dst["programs"][program] = dict(dst["programs"][program],
                                                    runs=dst["programs"][program]["runs"] + prog.get("runs", []))
                else:
                    dst["programs"][program] = prog
        if doc.get("failed"):
            out["failed"] = "; ".join(filter(None, [out.get("failed"), "%s (the piece started %s)" % (
                doc["failed"], doc.get("started"))]))
    return out


def build_parser():
    p = argparse.ArgumentParser(prog="bench/jobroute_report.py", description="merge job-routing bench results")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--out")
    p.add_argument("--resimulate", action="store_true",
                   help="run the simulator again on each program's trace (after a change of the model)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    docs = []
    for d in args.dirs:
        path = os.path.join(d, "results.json") if os.path.isdir(d) else d
        try:
            with open(path) as f:
                doc = json.load(f)
            if args.resimulate:
                base = os.path.dirname(os.path.abspath(path))
                for fab in doc.get("fabrics", {}).values():
                    for program, prog in fab.get("programs", {}).items():
                        policies = sorted({r["policy"] for r in prog.get("runs", [])}, key=jobroute_sim.POLICIES.index)
                        prog["sim"] = simulate_program(fab["spec"], program, os.path.join(base, prog["trace"]),
                                                       policies)
            docs.append(doc)
        except (OSError, ValueError, KeyError) as exc:
            print("bench/jobroute_report.py: %s: %s" % (path, exc), file=sys.stderr)
            return 2
    text = markdown(merge(docs))
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
