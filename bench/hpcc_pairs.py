"""Which rank pairs carry hpcc's bytes in each section (issue 15, the hpcc rerun's demand).

hpcc marks no phases, so its profile (libsdnmpi_prof.so) is one whole-run matrix. This tool runs
hpcc once over loopback TCP (the inputs of bench/jobroute_hpcc.py) and reads the kernel's
per-socket byte counters (``ss -tinp``: bytes_acked of every established loopback socket, the
process at each end mapped to its rank by OMPI_COMM_WORLD_RANK) each time hpccoutf.txt begins or
ends a section. The differences between snapshots are the rank-pair matrices of the sections;
``--stop-at-latbw`` ends the run at the LatencyBandwidth section as the bench's reruns do.

    flock /tmp/sdnmpi-mininet.lock .venv/bin/python bench/hpcc_pairs.py --out DIR [--stop-at-latbw]

Writes DIR/sections.json: {"sections": [[name, {"i>j": bytes}], ...], "order": [...]}. Runs
mpirun: take the machine's lock. Not part of `make bench` (an analysis aid).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jobroute_hpcc  # noqa: E402
import ss_sockets  # noqa: E402

_MARK = re.compile(r"^(Begin|End) of (\S+) section\.", re.M)


def _rank(pid, cache):
    if pid not in cache:
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
            rank = env.get(b"OMPI_COMM_WORLD_RANK")
            cache[pid] = int(rank) if rank is not None else None
        except OSError:
            cache[pid] = None
    return cache[pid]


def pair_bytes(ss_text, rank_of):
    """{(i, j): bytes acked} from ``ss -tinpH state established`` output: every socket's
    bytes_acked (what it sent), from the rank of its process to the rank of the process holding
    the other end (``rank_of(pid)``, None for a process that is not a rank). Sockets are keyed by
    (local, remote) address: accepted sockets share their listener's local address. A socket that
    sent nothing shows no bytes_acked: it adds no pair, but still names the rank its peer sent to."""
    socks = {(s["local"], s["peer"]): (s["pid"], int(s.get("bytes_acked", 0))) for s in ss_sockets.sockets(ss_text)
             if s["state"] is None and s["pid"] is not None}
    pairs = {}
    for (laddr, raddr), (pid, acked) in socks.items():
        peer = socks.get((raddr, laddr), (None,))[0]
        i, j = rank_of(pid), rank_of(peer) if peer else None
        if not acked or i is None or j is None or i == j:
            continue
        pairs[(i, j)] = pairs.get((i, j), 0) + acked
    return pairs


def snapshot(ranks):
    """`pair_bytes` of the machine's established TCP sockets now (``ranks``: a pid -> rank cache)."""
    out = subprocess.run(["ss", "-tinpH", "state", "established"], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    return pair_bytes(out, lambda pid: _rank(pid, ranks))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--np", type=int, default=8)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--ptrans-n", type=int, default=2000)
    ap.add_argument("--stop-at-latbw", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    wdir = tempfile.mkdtemp(prefix="hpcc-pairs-")
    jobroute_hpcc.write_input(wdir, (2, args.np // 2), args.n, (args.ptrans_n,))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", TMPDIR=wdir)
    argv_ = ["mpirun", "--oversubscribe", "-np", str(args.np), "--mca", "btl", "tcp,self",
             "--mca", "btl_tcp_if_include", "lo", "--mca", "mpi_yield_when_idle", "1", "--wdir", wdir,
             jobroute_hpcc.HPCC]
    proc = subprocess.Popen(argv_, env=env, cwd=wdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    ranks, marks, snaps = {}, [], [("start", {})]
    out_path = os.path.join(wdir, "hpccoutf.txt")
    try:
        while proc.poll() is None:
            try:
                with open(out_path) as f:
                    found = _MARK.findall(f.read())
            except OSError:
                found = []
            if len(found) > len(marks):
                snap = snapshot(ranks)
                for kind, name in found[len(marks):]:
                    snaps.append(("%s %s" % (kind, name), snap))
                marks = found
                if args.stop_at_latbw and ("Begin", "LatencyBandwidth") in found:
                    break
            time.sleep(0.05)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    sections = []
    for (name_a, a), (name_b, b) in zip(snaps, snaps[1:]):
        diff = {"%d>%d" % k: v - a.get(k, 0) for k, v in sorted(b.items()) if v - a.get(k, 0) > 0}
        sections.append(["%s .. %s" % (name_a, name_b), diff])
    with open(os.path.join(args.out, "sections.json"), "w") as f:
        json.dump({"sections": sections, "np": args.np, "n": args.n, "ptrans_n": args.ptrans_n}, f, indent=1)
    for name, diff in sections:
        print("%-60s %6.1f MB over %2d pairs" % (name, sum(diff.values()) / 1e6, len(diff)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
