"""Where the hierarchical allreduce's time goes: reads the per-step trace the library writes with
SDN_MPI_HIER_TRACE=DIR (libsdnmpi/src/allreduce_hier_trace.h; in a bench run pass
``--sdn-env SDN_MPI_HIER_TRACE=DIR``) and prints, per call (all ranks of one job together):

- wall: first rank's start to last rank's end, and / the host-link bound 2(p-1)/p n / B_h;
- per stage (the step kinds of hier_layout.h): the busiest rank's bytes sent there over its link
  time (host link, or the leaf's uplinks for the cross-leaf steps: the leaf's bytes / (S B_f)),
  and the median per step of "wait" (posted until the peer posted too) and "transfer" (from the
  later of the two posts until the rank saw the step complete);
- the tail of the transfers (99th percentile, and the steps over --slow-ms: a retransmission
  timeout, i.e. a lost packet, takes >= 200 ms on Linux);
- segments in flight per rank (time-average) and the share of the call a rank had none;
- overlap: sum of the stages' link times / wall (1 = the stages ran one after the other);
- each rank's CPU time and involuntary context switches in the call.

Usage: bench/hier_trace.py DIR [--host-mbps 30] [--fabric-mbps 15] [--spines 2] [--min-bytes 262144]
       [--slow-ms 150] [--json]   (no Mininet, no MPI: offline)
"""
import argparse
import collections
import glob
import json
import math
import os
import statistics
import sys


def parse_file(path):
    """[(header dict, [step rows])] of one rank file, in call order."""
    calls = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "C":
                v = parts[1:]
                hdr = {"rank": int(v[0]), "p": int(v[1]), "leaves": int(v[2]), "lanes": int(v[3]),
                       "count": int(v[4]), "extent": int(v[5]), "nseg": int(v[6]), "nsteps": int(v[7]),
                       "t0": float(v[8]), "t1": float(v[9]), "cpu_s": float(v[10]), "vcsw": int(v[11]),
                       "ivcsw": int(v[12]), "depth": int(v[13]) if len(v) > 13 else 1}
                calls.append((hdr, []))
            elif parts[0] == "S" and calls:
                v = parts[1:]
                row = (int(v[0]), int(v[1]), float(v[2]), float(v[3]), int(v[4]), int(v[5]),
                       int(v[6]) if len(v) > 6 else None, int(v[7]) if len(v) > 7 else None)
                calls[-1][1].append(row)
    return calls


def step_kinds(nsteps, lanes, leaves):
    """Kind of each step (hier_layout.h): fold, ring-rs, xfold, halve, double, xunfold, ring-ag,
    unfold."""
    pof2 = 1 << int(math.floor(math.log2(leaves)))
    ldims = int(round(math.log2(pof2)))
    cross = 1 if leaves > pof2 else 0
    folds = (nsteps - 2 * (lanes - 1) - 2 * cross - 2 * ldims) // 2
    kinds = (["fold"] * folds + ["ring-rs"] * (lanes - 1) + ["xfold"] * cross + ["halve"] * ldims
             + ["double"] * ldims + ["xunfold"] * cross + ["ring-ag"] * (lanes - 1) + ["unfold"] * folds)
    assert len(kinds) == nsteps, (nsteps, lanes, leaves)
    return kinds


def jobs(directory):
    """Groups the rank files by job: {pid set key: {rank: calls}}; a job's files share the start
    time of their first call within 2 s."""
    files = []
    for path in sorted(glob.glob(os.path.join(directory, "hier-*-*.txt"))):
        calls = parse_file(path)
        if calls:
            files.append((calls[0][0]["t0"], calls))
    files.sort(key=lambda x: x[0])
    groups, cur, start = [], [], None
    for t0, calls in files:
        if start is None or t0 - start > 2.0:
            if cur:
                groups.append(cur)
            cur, start = [], t0
        cur.append(calls)
    if cur:
        groups.append(cur)
    return [{calls[0][0]["rank"]: calls for calls in g} for g in groups]


def union_len(intervals):
    total, end = 0.0, -math.inf
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def analyse_call(ranks, host_bps, fabric_bps, spines, slow_s=0.15):
    """ranks: {rank: (hdr, rows)} of one call. Returns a dict of the measures above."""
    hdr0 = next(iter(ranks.values()))[0]
    p, leaves, lanes, nsteps = hdr0["p"], hdr0["leaves"], hdr0["lanes"], hdr0["nsteps"]
    ext = hdr0["extent"]
    kinds = step_kinds(nsteps, lanes, leaves)
    leaf_of = {r: min(r // lanes, leaves - 1) for r in ranks} if p == leaves * lanes else None
    t0 = min(h["t0"] for h, _ in ranks.values())
    wall = max(h["t1"] for h, _ in ranks.values()) - t0
    nbytes = hdr0["count"] * ext
    bound = 2.0 * (p - 1) / p * nbytes * 8 / host_bps
    post = {}
    for r, (h, rows) in ranks.items():
        off = h["t0"] - t0
        for seg, step, po, do, sn, rn, to, fr in rows:
            post[(r, seg, step)] = off + po * 1e-6
    stage = collections.OrderedDict()
    inflight, idle, xfers = [], [], []
    for r, (h, rows) in ranks.items():
        off = h["t0"] - t0
        ivs = [(off + po * 1e-6, off + do * 1e-6) for _, _, po, do, *_ in rows]
        rank_wall = h["t1"] - h["t0"]
        inflight.append(sum(b - a for a, b in ivs) / rank_wall if rank_wall > 0 else 0.0)
        idle.append(1.0 - union_len(ivs) / rank_wall if rank_wall > 0 else 0.0)
        for seg, step, po, do, sn, rn, to, fr in rows:
            kind = kinds[step]
            st = stage.setdefault(kind, {"bytes": collections.Counter(), "wait": [], "xfer": [],
                                         "dur": [], "msg": []})
            st["bytes"][r] += sn * ext
            st["msg"].append(sn * ext)
            a, b = off + po * 1e-6, off + do * 1e-6
            st["dur"].append(b - a)
            if fr is not None and fr >= 0 and (fr, seg, step) in post:
                other = post[(fr, seg, step)]
                st["wait"].append(max(0.0, other - a))
                st["xfer"].append(b - max(a, other))
                xfers.append(b - max(a, other))
    out = {"p": p, "bytes": nbytes, "nseg": hdr0["nseg"], "depth": hdr0["depth"], "wall_s": wall,
           "bound_s": bound, "stages": {}}
    link_sum = 0.0
    for kind, st in stage.items():
        cross = kind in ("halve", "double", "xfold", "xunfold")
        host_t = max(st["bytes"].values()) * 8 / host_bps
        link_t = host_t
        if cross and leaf_of is not None:
            per_leaf = collections.Counter()
            for r, b in st["bytes"].items():
                per_leaf[leaf_of[r]] += b
            link_t = max(host_t, max(per_leaf.values()) * 8 / (spines * fabric_bps))
        link_sum += link_t
        med = (lambda xs: statistics.median(xs) if xs else float("nan"))
        out["stages"][kind] = {"link_s": link_t, "msg_bytes": med(st["msg"]), "step_ms": 1e3 * med(st["dur"]),
                               "wait_ms": 1e3 * med(st["wait"]), "xfer_ms": 1e3 * med(st["xfer"])}
    out["link_sum_s"] = link_sum
    xfers.sort()
    out["xfer_p99_ms"] = 1e3 * xfers[min(len(xfers) - 1, int(0.99 * len(xfers)))] if xfers else float("nan")
    out["slow_steps"] = sum(1 for x in xfers if x > slow_s)
    out["inflight"] = statistics.mean(inflight)
    out["idle"] = statistics.mean(idle)
    out["cpu_s"] = statistics.median(h["cpu_s"] for h, _ in ranks.values())
    out["ivcsw"] = statistics.median(h["ivcsw"] for h, _ in ranks.values())
    return out


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--host-mbps", type=float, default=30.0)
    ap.add_argument("--fabric-mbps", type=float, default=15.0)
    ap.add_argument("--spines", type=int, default=2)
    ap.add_argument("--min-bytes", type=int, default=256 * 1024, help="calls below this are skipped")
    ap.add_argument("--slow-ms", type=float, default=150.0, help="transfers counted as slow from here on")
    ap.add_argument("--json", action="store_true")
    return ap


def main(argv=None):
    a = build_parser().parse_args(argv)
    if not os.path.isdir(a.dir):
        print("hier_trace: no such directory: %s" % a.dir, file=sys.stderr)
        return 2
    results = []
    for j, job in enumerate(jobs(a.dir)):
        ncalls = min(len(c) for c in job.values())
        for c in range(ncalls):
            ranks = {r: calls[c] for r, calls in job.items()}
            hdr = next(iter(ranks.values()))[0]
            if hdr["count"] * hdr["extent"] < a.min_bytes:
                continue
            res = analyse_call(ranks, a.host_mbps * 1e6, a.fabric_mbps * 1e6, a.spines, a.slow_ms / 1e3)
            res.update(job=j, call=c)
            results.append(res)
    if a.json:
        json.dump(results, sys.stdout, indent=1)
        return 0
    for res in results:
        print("job %d call %d: p=%d %d KiB, %d segments, depth %d: wall %.1f ms = %.2fx bound; stages' link "
              "times %.1f ms (overlap %.2f); in flight %.1f; idle %.0f%%; transfers p99 %.1f ms, %d slow; "
              "cpu %.1f ms, %d switches"
              % (res["job"], res["call"], res["p"], res["bytes"] // 1024, res["nseg"], res["depth"],
                 1e3 * res["wall_s"], res["wall_s"] / res["bound_s"], 1e3 * res["link_sum_s"],
                 res["link_sum_s"] / res["wall_s"], res["inflight"], 100 * res["idle"], res["xfer_p99_ms"],
                 res["slow_steps"], 1e3 * res["cpu_s"],
                 res["ivcsw"]))
        for kind, st in res["stages"].items():
            print("   %-8s link %6.1f ms  msg %5d B  step %6.2f ms (wait %6.2f, transfer %6.2f)"
                  % (kind, 1e3 * st["link_s"], st["msg_bytes"], st["step_ms"], st["wait_ms"], st["xfer_ms"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
