"""libsdnmpi, traffic-aware job routing (issue 15), the pure parts (no MPI, no lock needed): the
`traffic` and `phase` ops (docs/rpc.md) as unit_tool encodes and decodes
them, and the trace reader behind SDN_MPI_TRAFFIC (`unit_tool read`), checked against the Python
references: sdnmpi.traces (reading) and simulator.job.host_demand (PFSim's folding of rank pairs
into host pairs). The mpirun tests are in test_libsdnmpi_traffic.py.
"""
import gzip
import io
import json
import random
import tarfile

import msgpack
import pytest

import libsdnmpi_harness as harness
from libsdnmpi_harness import frame_body
from sdnmpi import traces
from sdnmpi.controller import rpc_schema
from traffic_harness import (CG, as_dicts, expected, random_trace, rank_record, read, tool, write_dir,
                             write_tar)


# ---------------------------------------------------------------------------------------------
# the RPC: encoding checked by the controller's schema, replies decoded
def encode(*args):
    res = tool("encode", *args, check=False)
    return res.returncode, res.stdout


def test_encode_traffic_and_phase(built):
    rc, data = encode("traffic", 9, "7:secret", 3, 1, "-", "10.0.0.1,10.0.0.2,5", "10.0.0.2,10.0.0.1,1")
    assert rc == 0
    raw = msgpack.unpackb(frame_body(data), raw=False)
    req = rpc_schema.decode_request(frame_body(data))
    assert (req.id, req.op) == (9, "traffic") and "planner" not in raw
    assert req.args == {"job": 7, "token": "secret", "phase": 3, "add": True,
                        "planner": rpc_schema.DEFAULT_TRAFFIC_PLANNER,
                        "pairs": [("10.0.0.1", "10.0.0.2", 5), ("10.0.0.2", "10.0.0.1", 1)]}
    rc, data = encode("traffic", 1, "7:t", 0, 0, "greedy", "10.0.0.1,10.0.0.2,%d" % (2 ** 62))
    raw = msgpack.unpackb(frame_body(data), raw=False)
    assert rc == 0 and raw["add"] is False and raw["planner"] == "greedy" and raw["pairs"] == [["10.0.0.1", "10.0.0.2", 2 ** 62]]
    rc, data = encode("phase", 4, "7:t", 5, 2)
    assert rc == 0 and rpc_schema.decode_request(frame_body(data)) == rpc_schema.Request(
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
    assert rc == 0 and len(rpc_schema.decode_request(frame_body(data)).args["pairs"]) == 20000


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
