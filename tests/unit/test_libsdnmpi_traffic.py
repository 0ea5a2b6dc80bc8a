"""libsdnmpi, traffic-aware job routing (issue 15), the library side: the `traffic` and `phase` ops
(/work/wt/SPEC-traffic.md, docs/rpc.md), the trace reader behind SDN_MPI_TRAFFIC, the flow hints
and MPI_Pcontrol under the preload library.

The pure parts run through libsdnmpi/tests/unit_tool (no MPI) and are checked against the
Python references: sdnmpi.traces (reading) and simulator.job.host_demand (PFSim's folding of rank
pairs into host pairs). The rest runs real programs (libsdnmpi/tests/traffic_patterns) under
mpirun on localhost against the stub controller of libsdnmpi_harness.py, which checks every
traffic/phase request against the SPEC and records it. `SDN_MPI_FAKE_HOSTS=N` puts rank r on host
10.255.0.(r % N + 1).

The mpirun tests take the machine-wide lock (COMMON.md): run this file as
`flock /tmp/sdnmpi-mininet.lock timeout 900 .venv/bin/python -m pytest tests/unit/test_libsdnmpi_traffic.py`.
"""
import functools
import gzip
import io
import json
import random
import re
import subprocess
import tarfile

import msgpack
import pytest

import libsdnmpi_harness as harness
from libsdnmpi_harness import LIB, MPIRUN, PRELOAD, TOOL, closed_port, fake_hosts, frame_body, spec_request
from sdnmpi import traces
from sdnmpi.simulator import job as simjob

PATTERNS = LIB / "tests" / "traffic_patterns"
CHECK = LIB / "tests" / "traffic_check"
PROF = LIB / "libsdnmpi_prof.so"
CG = harness.ROOT / "tests" / "data" / "pfsim" / "traces" / "cg-c-128.tar.gz"
MPI_TIMEOUT = 120
BIG = 1 << 30
TRAFFIC_LINE = re.compile(r"^sdnmpi\[0\]: SDN_MPI_TRAFFIC: .*; the job runs on default routes$", re.M)
OK_LINE = re.compile(r"traffic_patterns: p=(\d+) ok seconds=")

mpirun = functools.partial(harness.mpirun, timeout=MPI_TIMEOUT)
needs_mpi = pytest.mark.skipif(MPIRUN is None, reason="Open MPI (mpirun) is not installed")


# ---------------------------------------------------------------------------------------------
# helpers
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


def expected(path, hosts):
    """The Python reference: sdnmpi.traces reads the trace, simulator.job.host_demand folds each
    phase (PFSim's rule: tx_bytes where tx_messages > 0; same-host pairs dropped; 0 bytes dropped).
    Phase 0 only without phases; phases 1..K with."""
    trace = traces.load(path)
    phases = list(enumerate(trace.phases))
    phases = phases[1:] if len(phases) > 1 else phases
    out = {}
    for k, phase in phases:
        demand, _ = simjob.host_demand(phase.traffic_matrix(), phase.tx_messages > 0, list(hosts))
        out[k] = {(f.src, f.dst): f.bytes for f in demand}
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


# ---------------------------------------------------------------------------------------------
# the RPC: encoding checked by the SPEC's rules, replies decoded
def encode(*args):
    res = tool("encode", *args, check=False)
    return res.returncode, res.stdout


def test_encode_traffic_and_phase(built):
    rc, data = encode("traffic", 9, "7:secret", 3, 1, "-", "10.0.0.1,10.0.0.2,5", "10.0.0.2,10.0.0.1,1")
    assert rc == 0
    raw = msgpack.unpackb(frame_body(data), raw=False)
    req_id, op, args = spec_request(raw)
    assert (req_id, op) == (9, "traffic") and "planner" not in raw
    assert args == {"job": 7, "token": "secret", "phase": 3, "add": True, "planner": None,
                    "pairs": [("10.0.0.1", "10.0.0.2", 5), ("10.0.0.2", "10.0.0.1", 1)]}
    rc, data = encode("traffic", 1, "7:t", 0, 0, "greedy", "10.0.0.1,10.0.0.2,%d" % (2 ** 62))
    raw = msgpack.unpackb(frame_body(data), raw=False)
    assert rc == 0 and raw["add"] is False and raw["planner"] == "greedy" and raw["pairs"] == [["10.0.0.1", "10.0.0.2", 2 ** 62]]
    rc, data = encode("phase", 4, "7:t", 5, 2)
    assert rc == 0 and spec_request(msgpack.unpackb(frame_body(data), raw=False)) == (
        4, "phase", {"job": 7, "token": "t", "phase": 2, "rank": 5})


@pytest.mark.parametrize("args", [
    ("traffic", 1, "7:t", 65, 0, "-", "10.0.0.1,10.0.0.2,5"),       # phase out of range
    ("traffic", 1, "7:t", -1, 0, "-", "10.0.0.1,10.0.0.2,5"),
    ("traffic", 1, "7:t", 0, 0, "-"),                                # no pairs
    ("traffic", 1, "7:t", 0, 0, "-", "10.0.0.1,10.0.0.1,5"),         # src == dst
    ("traffic", 1, "7:t", 0, 0, "-", "10.0.0.1,10.0.0.2,0"),         # bytes < 1
    ("phase", 1, "7:t", 0, 65),
    ("phase", 1, "7:t", -1, 1),
])
def test_encode_refuses_what_the_spec_refuses(built, args):
    rc, data = encode(*args)
    assert rc == 3 and data == b""


def test_encode_pair_bound(built):
    """65536 pairs is the SPEC's bound, but they do not fit in one 1 MiB frame: refused as
    oversized, never truncated."""
    pairs = ["10.%d.%d.1,10.%d.%d.2,1" % (i >> 8, i & 255, i >> 8, i & 255) for i in range(45000)]
    res = tool("encode", "traffic", 1, "7:t", 0, 0, "-", *pairs, check=False)
    assert res.returncode == 3 and b"oversized" in res.stderr
    rc, data = encode("traffic", 1, "7:t", 0, 0, "-", *pairs[:20000])
    assert rc == 0 and len(spec_request(msgpack.unpackb(frame_body(data), raw=False))[2]["pairs"]) == 20000


KEYS = ("valid", "ok", "error", "flows", "node_load", "traffic_max_load", "stored", "installed")


def decode(message):
    """unit_tool's reading of a reply: the fields traffic and phase replies have."""
    got = json.loads(tool("decode", stdin=msgpack.packb(message, use_bin_type=True)).stdout)
    return {k: got[k] for k in KEYS if k in got}


def test_decode_traffic_and_phase_replies(built):
    got = decode(harness.reply(3, flows=12, node_load=2, max_load=2, stored=False))
    assert got == {"valid": True, "ok": 1, "error": "", "flows": 12, "node_load": 2, "traffic_max_load": 2,
                   "stored": 0, "installed": -1}
    got = decode(harness.reply(3, flows=0, node_load=4, max_load=-1, stored=True))
    assert (got["traffic_max_load"], got["stored"]) == (-1, 1)
    got = decode(harness.reply(4, installed=True, flows=6))
    assert (got["installed"], got["flows"], got["node_load"]) == (1, 6, -1)
    assert decode(harness.reply(4, error="host 10.0.0.9 is not in job 7"))["ok"] == 0
    assert decode(harness.reply(4, stored=1))["valid"] is False      # not a bool
    assert decode(harness.reply(4, node_load="2"))["valid"] is False


# ---------------------------------------------------------------------------------------------
# the trace reader against the Python reference
@pytest.mark.parametrize("seed", range(6))
def test_reader_matches_python_reference(built, tmp_path, seed):
    rng = random.Random(seed)
    n = rng.randrange(1, 13)
    nphases = rng.choice([0, 0, 1, 3])
    files = random_trace(rng, n, nphases)
    hosts = ["10.1.0.%d" % rng.randrange(1, 5) for _ in range(n)]
    for path in (write_dir(tmp_path / "dir", files), write_tar(tmp_path / "t.tar.gz", files)):
        got = read(path, hosts)
        assert isinstance(got, dict), got
        assert as_dicts(got) == expected(path, hosts)
        assert sorted(got) == (list(range(1, nphases + 1)) if nphases else [0])
        for pairs in got.values():      # heaviest first
            assert [b for _, _, b in pairs] == sorted((b for _, _, b in pairs), reverse=True)


def test_reader_pfprof_cg_trace(built):
    """PFProf's own archive (NPB CG class C, 128 ranks), 4 ranks per host and 1 per host."""
    for per_host in (4, 1):
        hosts = ["10.2.%d.%d" % (r // per_host // 200, r // per_host % 200 + 1) for r in range(128)]
        got = read(CG, hosts)
        assert isinstance(got, dict) and list(got) == [0], got
        want = expected(CG, hosts)
        assert as_dicts(got) == want and len(want[0]) > 100


def test_reader_fold_rules(built, tmp_path):
    """Only tx_messages > 0 counts; ranks on one host add nothing; 0-byte pairs are left out."""
    n = 4
    rows = {0: ([0, 100, 7, 0], [0, 2, 0, 0]),     # 0->1 same host; 0->2 no messages
            1: ([0, 0, 300, 0], [0, 0, 1, 0]),
            2: ([50, 0, 0, 0], [0, 0, 0, 0]),      # no messages at all
            3: ([5, 6, 0, 0], [1, 1, 0, 0])}
    files = {"oxton-result%d.json" % r: rank_record(n, r, *rows[r]) for r in range(n)}
    got = read(write_dir(tmp_path / "d", files), ["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.3"])
    assert got == {0: [("10.0.0.1", "10.0.0.2", 300), ("10.0.0.3", "10.0.0.1", 11)]}


def test_reader_too_many_host_pairs(built, tmp_path):
    """257 hosts all-to-all: 65792 host pairs, more than one traffic op may carry."""
    n = 257
    files = {"oxton-result%d.json" % r: rank_record(n, r, [0 if j == r else 1 for j in range(n)],
                                                    [0 if j == r else 1 for j in range(n)]) for r in range(n)}
    hosts = ["10.3.%d.%d" % (r // 200, r % 200 + 1) for r in range(n)]
    assert read(write_dir(tmp_path / "d", files), hosts) == "phase 0 has more than 65536 host pairs"


def corrupt_cases(rng):
    n = 3
    good = random_trace(rng, n, 2)
    record = json.loads(good["oxton-result1.json"])

    def replaced(**changes):
        rec = dict(record, **changes)
        return dict(good, **{"oxton-result1.json": json.dumps(rec).encode()})

    many = [(record["tx_bytes"], record["tx_messages"])] * 66
    return {
        "truncated": (dict(good, **{"oxton-result1.json": good["oxton-result1.json"][:200]}),
                      "oxton-result1.json: "),
        "not json": (dict(good, **{"oxton-result1.json": b"hello"}), "oxton-result1.json: expected an object"),
        "rank count": (replaced(n_procs=4), "oxton-result1.json: the trace has 4 ranks, the job 3"),
        "rank field": (replaced(rank=2), "oxton-result1.json: holds rank 2, its name says 1"),
        "missing rank": ({k: v for k, v in good.items() if k != "oxton-result2.json"},
                         "rank file oxton-result2.json missing"),
        "short row": (replaced(phases=[dict(p, tx_bytes=p["tx_bytes"][:2]) for p in record["phases"]]),
                      'oxton-result1.json: phase 1: "tx_bytes" must be a list of 3 non-negative integers'),
        "negative": (replaced(phases=[dict(p, tx_messages=[-1, 0, 0]) for p in record["phases"]]),
                     'oxton-result1.json: phase 1: "tx_messages" must be a list of 3 non-negative integers'),
        "float": (replaced(phases=[dict(p, tx_bytes=[1.5, 0, 0]) for p in record["phases"]]),
                  'oxton-result1.json: phase 1: "tx_bytes" must be a list of 3 non-negative integers'),
        "phases disagree": (replaced(phases=record["phases"][:2]), "oxton-result1.json: 2 phases, other ranks have 3"),
        "too many phases": (replaced(phases=[{"phase": k, "tx_bytes": b, "tx_messages": m}
                                             for k, (b, m) in enumerate(many)]),
                            "oxton-result1.json: more than 64 phases"),
        "no tx_messages": (replaced(phases=[{"phase": k, "tx_bytes": p["tx_bytes"]}
                                            for k, p in enumerate(record["phases"])]),
                           "oxton-result1.json: phase 1 has no \"tx_messages\""),
        "deep nesting": (replaced(extra=json.loads("[" * 40 + "]" * 40)), "oxton-result1.json: nested too deeply"),
    }


@pytest.mark.parametrize("case", ["truncated", "not json", "rank count", "rank field", "missing rank", "short row",
                                  "negative", "float", "phases disagree", "too many phases", "no tx_messages",
                                  "deep nesting"])
def test_reader_malformed(built, tmp_path, case):
    files, message = corrupt_cases(random.Random(5))[case]
    hosts = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
    for path in (write_dir(tmp_path / "d", files), write_tar(tmp_path / "t.tar.gz", files)):
        got = read(path, hosts)
        assert isinstance(got, str) and message in got, got
        assert "\n" not in got
        with pytest.raises(traces.TraceError):     # the Python reader refuses them too
            if case != "deep nesting":
                traces.load(path)
            else:
                raise traces.TraceError("the Python reader has no nesting limit")


def test_reader_mutations(built, tmp_path):
    """Randomly mutated rank files and archives (seeded): the reader answers every one with a
    demand or one line, and never crashes (the same mutations ran clean under ASan/UBSan)."""
    rng = random.Random(7)
    good = random_trace(rng, 4, 2)
    hosts = ["10.0.0.1", "10.0.0.2", "10.0.0.1", "10.0.0.3"]
    errors = 0
    for it in range(150):
        files = dict(good)
        name = rng.choice(sorted(files))
        data = bytearray(files[name])
        for _ in range(rng.randrange(1, 6)):
            i = rng.randrange(len(data))
            op = rng.randrange(3)
            if op == 0:
                data[i] = rng.randrange(256)
            elif op == 1:
                del data[i:i + rng.randrange(1, 50)]
            else:
                data[i:i] = bytes(rng.choice(b'[]{}",:0123456789-.eE \\') for _ in range(rng.randrange(1, 20)))
        files[name] = bytes(data)
        path = write_tar(tmp_path / ("m%d.tar.gz" % it), files)
        if it % 3 == 0:
            raw = bytearray(path.read_bytes())
            raw[rng.randrange(len(raw))] ^= 0xFF
            path.write_bytes(bytes(raw))
        got = read(path, hosts)
        if isinstance(got, str):
            errors += 1
            assert got and "\n" not in got
        path.unlink()
    assert errors > 100      # most mutations break something, and each is reported


def test_reader_bad_archives_and_limits(built, tmp_path):
    files = random_trace(random.Random(1), 2, 0)
    hosts = ["10.0.0.1", "10.0.0.2"]
    tar = write_tar(tmp_path / "t.tar.gz", files)
    assert read(tmp_path / "nope.tar.gz", hosts) == "%s: no such trace file or directory" % (tmp_path / "nope.tar.gz")
    (tmp_path / "garbage.tar.gz").write_bytes(b"x" * 2000)
    assert "not a tar archive" in read(tmp_path / "garbage.tar.gz", hosts)
    raw = tar.read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(raw[:len(raw) // 2])
    assert "truncated" in read(tmp_path / "cut.tar.gz", hosts)
    size = len(files["oxton-result0.json"])
    got = read(tar, hosts, max_bytes=size - 1)
    assert "oxton-result0.json: %d bytes, more than the limit of %d" % (size, size - 1) in got
    assert isinstance(read(tar, hosts, max_bytes=max(len(v) for v in files.values())), dict)
    # a plain (uncompressed) tar and unrelated members are fine; a rank twice is not
    plain = tmp_path / "plain.tar"
    plain.write_bytes(gzip.decompress(raw))
    assert read(plain, hosts) == read(tar, hosts)
    extra = dict(files, **{"README": b"not a rank file"})
    assert read(write_tar(tmp_path / "x.tar.gz", extra), hosts) == read(tar, hosts)
    with tarfile.open(tmp_path / "dup.tar.gz", "w:gz") as t:
        for prefix in ("a/", "b/"):
            info = tarfile.TarInfo(prefix + "oxton-result0.json")
            info.size = len(files["oxton-result0.json"])
            t.addfile(info, io.BytesIO(files["oxton-result0.json"]))
    assert "b/oxton-result0.json: rank 0 appears twice" in read(tmp_path / "dup.tar.gz", hosts)
    # a header whose checksum does not match
    bad = bytearray(gzip.decompress(raw))
    bad[0] ^= 1
    (tmp_path / "sum.tar").write_bytes(bytes(bad))
    assert "bad header of member 1" in read(tmp_path / "sum.tar", hosts)


# ---------------------------------------------------------------------------------------------
# real programs under mpirun (take the lock, see the module's docstring)
def run_patterns(np, args, env, extra_argv=()):
    res, seconds = mpirun(np, [PATTERNS, *extra_argv, *args], env)
    assert res.returncode == 0, "traffic_patterns %s failed (rc %d, %.1fs):\n%s\n%s" % (
        args, res.returncode, seconds, res.stdout[-3000:], res.stderr[-4000:])
    match = OK_LINE.search(res.stdout)
    assert match and int(match.group(1)) == np, res.stdout
    return res


def profile(tmp_path, np, args, name="job"):
    """A trace of traffic_patterns ARGS made by our profiler (pmpi source): <tmp>/<name>.tar.gz."""
    out = tmp_path / ("prof-" + name)
    out.mkdir()
    run_patterns(np, args, {"LD_PRELOAD": str(PROF), "SDN_MPI_PROF_DIR": str(out), "SDN_MPI_PROF_JOB": name,
                            "SDN_MPI_PROF_SOURCE": "pmpi"})
    trace = out / (name + ".tar.gz")
    assert trace.is_file()
    return trace


def traffic_requests(stub):
    return [(conn, spec_request(r)[2]) for conn, r in stub.requests("traffic")]


def phase_sequences(stub, np):
    """{world rank: [phase, ...]} in the order each rank sent them."""
    seqs = {r: [] for r in range(np)}
    for _, req in stub.requests("phase"):
        seqs[req["rank"]].append(req["phase"])
    return seqs


@needs_mpi
@pytest.mark.parametrize("args,nhosts", [
    (["--reps", "2", "phase", "1", "shift", "1", "4096", "phase", "0", "pause", "20",
      "phase", "2", "alltoall", "1000", "phase", "0"], 3),
    (["perm", "11", "30000", "halo2d", "2000"], 6),
])
def test_profiled_trace_is_sent_at_init(built, tmp_path, stub_factory, args, nhosts):
    """A pattern profiled by our profiler, rerun with SDN_MPI_TRAFFIC: rank 0 sends exactly the
    trace's host-pair matrix, one `traffic` op per phase, right after register, on its
    connection; the phases the program marks reach the controller from every rank."""
    np = 6
    trace = profile(tmp_path, np, args)
    hosts = fake_hosts(np, nhosts)
    want = expected(trace, hosts)
    stub = stub_factory()
    env = {"LD_PRELOAD": str(PRELOAD), "SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts),
           "SDN_MPI_TRAFFIC": str(trace)}
    res = run_patterns(np, args, env)
    stub.wait_idle()
    assert not stub.errors and "SDN_MPI_TRAFFIC" not in res.stderr
    sent = traffic_requests(stub)
    assert [conn for conn, _ in sent] == [0] * len(want)
    got = {a["phase"]: {(s, d): b for s, d, b in a["pairs"]} for _, a in sent}
    assert got == want and all(want.values())
    assert all(a["add"] is False and a["job"] == harness.JOB and a["token"] == stub.token for _, a in sent)
    ops = [r["op"] for r in stub.conns[0]["requests"]]
    assert ops[:2 + len(want)] == ["hello", "register"] + ["traffic"] * len(want)
    marked = [int(b) for a, b in zip(args, args[1:]) if a == "phase"]
    assert phase_sequences(stub, np) == {r: marked for r in range(np)}
    if marked:
        assert sorted(want) == [1, 2]
    else:
        assert sorted(want) == [0]


@needs_mpi
def test_hints_and_pcontrol(built, stub_factory):
    """--hints: each rank declares its sends with SDN_MPI_Flow_hints before each exchange: one
    traffic op add=true per rank and exchange, from the rank's own connection, for the phase it is
    in, with its host pairs (the same host's peers left out); MPI_Pcontrol sends enter/leave in
    program order on every rank."""
    np, nhosts = 4, 2
    args = ["--reps", "3", "--hints", "phase", "3", "shift", "1", "5000", "phase", "0", "alltoall", "700"]
    stub = stub_factory()
    env = {"LD_PRELOAD": str(PRELOAD), "SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts)}
    run_patterns(np, args[3:], env, extra_argv=args[:3])
    stub.wait_idle()
    assert not stub.errors
    hosts = fake_hosts(np, nhosts)
    got = {}
    for conn, req in traffic_requests(stub):
        assert req["add"] is True
        (src,) = {s for s, _, _ in req["pairs"]}
        got.setdefault(src, []).append((req["phase"], sorted(req["pairs"]), conn))
    want = {}
    for r in range(np):
        shift = [(hosts[r], hosts[(r + 1) % np], 3 * 5000)] if hosts[r] != hosts[(r + 1) % np] else []
        a2a = {}
        for j in range(np):
            if hosts[j] != hosts[r]:
                a2a[hosts[j]] = a2a.get(hosts[j], 0) + 3 * 700
        entries = want.setdefault(hosts[r], [])
        if shift:
            entries.append((3, sorted(shift)))
        entries.append((0, sorted((hosts[r], d, b) for d, b in a2a.items())))
    for host, entries in want.items():
        assert sorted((p, pairs) for p, pairs, _ in got[host]) == sorted(entries)
    # rank r's hints come from its own connection (world rank 0's is the registering one)
    conns = {conn for entries in got.values() for _, _, conn in entries}
    assert len(conns) == np
    assert phase_sequences(stub, np) == {r: [3, 0] for r in range(np)}


@needs_mpi
def test_linked_api(built, stub_factory):
    """traffic_check (linked with libsdnmpi.a): the hints' and SDN_MPI_Phase's error codes; a peer
    named by its rank in a reversed sub-communicator reaches the controller as its world rank's
    host; a hint to the rank's own host sends nothing; phases 5 then 0 from every rank."""
    np = 5
    stub = stub_factory()
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np)}
    res, _ = mpirun(np, [CHECK], env)
    assert res.returncode == 0 and "traffic_check: ok" in res.stdout, res.stdout + res.stderr[-3000:]
    stub.wait_idle()
    assert not stub.errors
    hosts = fake_hosts(np, np)
    got = sorted((a["phase"], a["add"], a["pairs"]) for _, a in traffic_requests(stub))
    want = sorted((5, True, [(hosts[r], hosts[(r - 1) % np], 1000 + r)]) for r in range(np))
    assert got == want
    assert phase_sequences(stub, np) == {r: [5, 0] for r in range(np)}


@needs_mpi
@pytest.mark.parametrize("order", ["prof-first", "preload-first"])
def test_profiler_and_preload_together(built, tmp_path, stub_factory, order):
    """Both libraries preloaded, in either order: MPI_Init, MPI_Pcontrol and MPI_Finalize reach
    both (each calls the next definition): the profiler writes phases 1 and 2, the controller gets
    every rank's phase changes."""
    np = 4
    out = tmp_path / "prof"
    out.mkdir()
    libs = [str(PROF), str(PRELOAD)] if order == "prof-first" else [str(PRELOAD), str(PROF)]
    stub = stub_factory()
    env = {"LD_PRELOAD": ":".join(libs), "SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "2",
           "SDN_MPI_PROF_DIR": str(out), "SDN_MPI_PROF_JOB": "both", "SDN_MPI_PROF_SOURCE": "pmpi"}
    run_patterns(np, ["phase", "1", "shift", "1", "3000", "phase", "2", "shift", "2", "100", "phase", "0"], env)
    stub.wait_idle()
    assert not stub.errors
    assert phase_sequences(stub, np) == {r: [1, 2, 0] for r in range(np)}
    trace = traces.load(out / "both.tar.gz")
    assert len(trace.phases) == 3
    assert trace.phases[1].tx_bytes[0, 1] == 3000 and trace.phases[2].tx_bytes[0, 2] == 100
    assert [r["op"] for _, r in stub.requests()].count("register") == 1


SHIFT = ["phase", "1", "shift", "1", "2048", "phase", "0"]


@needs_mpi
@pytest.mark.parametrize("case", ["missing", "malformed", "oversized", "wrong size", "refused"])
def test_bad_trace_one_line_and_correct_results(built, tmp_path, stub_factory, case):
    np = 4
    trace = profile(tmp_path, np, SHIFT)
    env = {"LD_PRELOAD": str(PRELOAD), "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_TRAFFIC": str(trace)}
    stub = stub_factory("error_traffic" if case == "refused" else "ok")
    env["SDN_MPI_CONTROLLER"] = stub.address
    if case == "missing":
        env["SDN_MPI_TRAFFIC"] = str(tmp_path / "nothing.tar.gz")
    elif case == "malformed":
        bad = tmp_path / "bad"
        with tarfile.open(trace) as tar:
            tar.extractall(bad)
        victim = next(bad.rglob("oxton-result2.json"))
        victim.write_bytes(victim.read_bytes()[:300])
        env["SDN_MPI_TRAFFIC"] = str(victim.parent)
    elif case == "oversized":
        env["SDN_MPI_TRAFFIC_MAX_BYTES"] = "100"
    elif case == "wrong size":
        np = 3
    res = run_patterns(np, SHIFT, env)
    stub.wait_idle()
    assert not stub.errors
    lines = [line for line in res.stderr.splitlines() if "SDN_MPI_TRAFFIC" in line]
    if case == "refused":
        assert len(lines) == 1 and "phase 1 (" in lines[0] and harness.REFUSED_TRAFFIC in lines[0], res.stderr
        assert len(traffic_requests(stub)) == 1
    else:
        assert len(lines) == 1 and TRAFFIC_LINE.search(res.stderr), res.stderr
        assert traffic_requests(stub) == []
    expect = {"missing": "no such trace file", "malformed": "oxton-result2.json", "oversized": "more than the limit of 100",
              "wrong size": "the trace has 4 ranks, the job 3", "refused": "not accepted"}[case]
    assert expect in lines[0]
    # the job goes on: registered, phases still marked, released
    assert phase_sequences(stub, np) == {r: [1, 0] for r in range(np)}
    assert len(stub.requests("release")) == 1


@needs_mpi
@pytest.mark.parametrize("controller", ["dead", "unset", "dies after register"])
def test_no_controller(built, tmp_path, stub_factory, controller):
    """A dead controller, none configured, or one that closes the connection after register:
    hints and phases are no-ops (at most one line per rank about them), the results are right."""
    np = 4
    trace = profile(tmp_path, np, SHIFT)
    env = {"LD_PRELOAD": str(PRELOAD), "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_TRAFFIC": str(trace)}
    stub = None
    if controller == "dead":
        env["SDN_MPI_CONTROLLER"] = "127.0.0.1:%d" % closed_port()
        env["SDN_MPI_TIMEOUT_MS"] = "3000"
    elif controller == "dies after register":
        stub = stub_factory("close_after_register")
        env["SDN_MPI_CONTROLLER"] = stub.address
    res = run_patterns(np, SHIFT, env, extra_argv=["--hints"])
    for r in range(np):
        mine = [line for line in res.stderr.splitlines() if line.startswith("sdnmpi[%d]:" % r)]
        # rank 0 with a connection that died after register: the trace's line and the hint's
        assert len(mine) <= (2 if r == 0 and stub is not None else 1), res.stderr
    if stub is not None:
        stub.wait_idle()
        assert not stub.errors
        # rank 0's trace op found the connection closed: one line; the other ranks' own
        # connections still reach the (living) stub, which refuses nothing
        assert "SDN_MPI_TRAFFIC: phase 1" in res.stderr
