"""What the traffic-aware routing tests (test_libsdnmpi_trace.py, test_libsdnmpi_traffic.py)
share: unit_tool's trace reader, the Python reference of a trace's host-pair demand, and builders
of rank files, traces and archives."""
import io
import json
import subprocess
import tarfile

from libsdnmpi_harness import ROOT, TOOL
from sdnmpi import traces
from sdnmpi.simulator import job as simjob

CG = ROOT / "tests" / "data" / "pfsim" / "traces" / "cg-c-128.tar.gz"
BIG = 1 << 30


def tool(*args, stdin=None, check=True):
    res = subprocess.run([str(TOOL), *map(str, args)], input=stdin, capture_output=True)
    if check:
        assert res.returncode == 0, res.stderr
    return res


def read(path, hosts, max_bytes=BIG):
    """The C reader's demand {phase: {(src, dst): bytes}} (in its order: a list), or its error."""
    out = json.loads(tool("read", path, max_bytes, *hosts).stdout)
    if "error" in out:
        return out["error"]
    return {p["phase"]: [tuple(x) for x in p["pairs"]] for p in out["phases"]}


def expected(path, hosts, min_share=0):
    """The Python reference: sdnmpi.traces reads the trace, simulator.job.host_demand folds each
    phase (PFSim's rule: tx_bytes where tx_messages > 0; same-host pairs dropped; 0 bytes dropped).
    Phase 0 only without phases; phases 1..K with. ``min_share``: only the pairs with at least
    that percentage of their phase's heaviest pair's bytes (what SDN_MPI_TRAFFIC sends, libsdnmpi's
    SDN_MPI_TRAFFIC_MIN_SHARE)."""
    trace = traces.load(path)
    phases = list(enumerate(trace.phases))
    phases = phases[1:] if len(phases) > 1 else phases
    out = {}
    for k, phase in phases:
        demand, _ = simjob.host_demand(phase.traffic_matrix(), phase.tx_messages > 0, list(hosts))
        top = max((f.bytes for f in demand), default=0)
        out[k] = {(f.src, f.dst): f.bytes for f in demand if f.bytes * 100 >= top * min_share}
    return out


def as_dicts(demand):
    return {k: {(s, d): b for s, d, b in pairs} for k, pairs in demand.items()}


def rank_record(n, rank, tx_bytes, tx_messages, phases=None):
    rec = {"n_procs": n, "rank": rank, "tx_bytes": tx_bytes, "tx_messages": tx_messages,
           "rx_bytes": [0] * n, "rx_messages": [0] * n, "processor_name": "h", "n_events": 1}
    if phases is not None:
        rec["n_phases"] = len(phases)
        rec["phases"] = [{"phase": k, "tx_bytes": b, "tx_messages": m, "rx_bytes": [0] * n,
                          "rx_messages": [0] * n, "duration": 0.5, "n_events": 1}
                         for k, (b, m) in enumerate(phases)]
    return json.dumps(rec, indent=4, sort_keys=True).encode()


def random_rows(rng, n, density=0.5):
    rows_b, rows_m = [], []
    for i in range(n):
        b = [rng.choice([0, rng.randrange(1, 1 << 40)]) if rng.random() < density else 0 for _ in range(n)]
        m = [rng.randrange(0, 3) if b[j] else rng.choice([0, 0, 1]) for j in range(n)]
        rows_b.append(b)
        rows_m.append(m)
    return rows_b, rows_m


def write_dir(path, files):
    path.mkdir()
    for name, data in files.items():
        (path / name).write_bytes(data)
    return path


def write_tar(path, files, prefix="job/"):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(prefix + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def random_trace(rng, n, nphases=0):
    """{file name: bytes} of a random n-rank trace with phases 1..nphases (none if 0)."""
    whole = random_rows(rng, n)
    per = [whole] + [random_rows(rng, n, 0.3) for _ in range(nphases)]
    files = {}
    for r in range(n):
        phases = [(p[0][r], p[1][r]) for p in per] if nphases else None
        files["oxton-result%d.json" % r] = rank_record(n, r, whole[0][r], whole[1][r], phases)
    return files
