"""libsdnmpi (C): build, install, the RPC and schedule against the Python reference, and
SDN_MPI_Allreduce against PMPI_Allreduce under mpirun on localhost -- without a controller, with
stubs that die or never answer, and under the preload library (with a working stub controller:
test_libsdnmpi_allreduce.py; the shared runners: libsdnmpi_checks.py).

The stub controller (libsdnmpi_harness.StubController, made by conftest's `stub_factory`) validates
every request with the controller's own schema, records it per connection, and answers like the
real controller would (or not, depending on its mode). `SDN_MPI_FAKE_HOSTS=N` (a test-only knob of
the library) makes rank r report fabric address 10.255.0.(r % N + 1), so that plans on one machine
contain real host pairs.
"""
import json
import os
import re
import subprocess

import msgpack
import pytest

from libsdnmpi_checks import PLAIN, expected_steps, mpirun, run_check, sorted_steps
from libsdnmpi_harness import PRELOAD, TOOL, closed_port, decode, fake_hosts, frame_body, tool
from sdnmpi.controller import rpc_schema

pytestmark = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips


# ---------------------------------------------------------------------------------------------
# build and install
def test_build_exports(built):
    for name in ("libsdnmpi.a", "libsdnmpi.so", "libsdnmpi-preload.so", "sdnmpi.pc"):
        assert (built / name).is_file(), name
    dyn = subprocess.run(["nm", "-D", "--defined-only", str(built / "libsdnmpi.so")], capture_output=True,
                         text=True, check=True).stdout
    exported = {line.split()[-1] for line in dyn.splitlines() if " T " in line}
    assert {"SDN_MPI_Init", "SDN_MPI_Finalize", "SDN_MPI_Allreduce"} <= exported
    assert not any(s.startswith("MPI_") for s in exported), "libsdnmpi.so must not wrap MPI_*"
    assert not any(s.startswith("sdnmpi_") and s != "sdnmpi_test_last_path" for s in exported)
    dyn = subprocess.run(["nm", "-D", "--defined-only", str(PRELOAD)], capture_output=True, text=True,
                         check=True).stdout
    exported = {line.split()[-1] for line in dyn.splitlines() if " T " in line}
    assert {"MPI_Init", "MPI_Init_thread", "MPI_Allreduce", "MPI_Finalize"} <= exported
    # The library calls only PMPI_*: MPI_* would recurse through the preload wrappers.
    for obj in sorted((built / "build").glob("*.o")):
        if obj.name == "preload.o":
            continue
        undefined = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
        assert not re.search(r"\bMPI_[A-Z]", undefined), "%s calls MPI_* instead of PMPI_*" % obj.name


APP = r"""
#include <stdio.h>
#include <sdnmpi.h>
int main(int argc, char **argv) {
    int rank, size, v, r = 0;
    MPI_Init(&argc, &argv);
    if (SDN_MPI_Init() != MPI_SUCCESS) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    v = rank + 1;
    if (SDN_MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) return 1;
    if (rank == 0) printf("sum=%d\n", r);
    SDN_MPI_Finalize();
    MPI_Finalize();
    return r == size * (size + 1) / 2 ? 0 : 1;
}
"""


def test_install_and_pkg_config(built, tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["make", "-C", str(built), "install", "PREFIX=%s" % prefix], check=True, capture_output=True)
    for rel in ("include/sdnmpi.h", "lib/libsdnmpi.a", "lib/libsdnmpi.so", "lib/libsdnmpi-preload.so",
                "lib/pkgconfig/sdnmpi.pc"):
        assert (prefix / rel).is_file(), rel
    pc = (prefix / "lib/pkgconfig/sdnmpi.pc").read_text()
    assert "prefix=%s\n" % prefix in pc
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "sdnmpi"], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    assert "-I%s/include" % prefix in flags and "-L%s/lib" % prefix in flags
    assert "-lsdnmpi" in flags and "-lmsgpackc" in flags
    (tmp_path / "app.c").write_text(APP)
    subprocess.run("mpicc -o %s/app %s/app.c $(pkg-config --cflags --libs sdnmpi)" % (tmp_path, tmp_path),
                   shell=True, env=env, check=True, capture_output=True)
    res, _ = mpirun(2, [tmp_path / "app"], extra=("-x", "LD_LIBRARY_PATH=%s" % (prefix / "lib")))
    assert res.returncode == 0, res.stderr
    assert "sum=3" in res.stdout

    # DESTDIR stages the same tree; the .pc file names the final prefix.
    stage = tmp_path / "stage"
    subprocess.run(["make", "-C", str(built), "install", "PREFIX=/opt/sdnmpi", "DESTDIR=%s" % stage],
                   check=True, capture_output=True)
    pc = (stage / "opt/sdnmpi/lib/pkgconfig/sdnmpi.pc").read_text()
    assert "prefix=/opt/sdnmpi\n" in pc and "Libs: -L${libdir} -lsdnmpi -lmsgpackc" in pc
    assert (stage / "opt/sdnmpi/include/sdnmpi.h").is_file()


# ---------------------------------------------------------------------------------------------
# the pure parts against the Python reference
@pytest.mark.parametrize("p", list(range(1, 34)) + [48, 64, 100])
def test_schedule_matches_python(built, p):
    import random
    rnd = random.Random(p)
    for nhosts in sorted({1, 2, max(1, p // 3), p}):
        hosts = ["10.%d.0.%d" % (rnd.randrange(2), rnd.randrange(nhosts) + 1) for _ in range(p)]
        got = json.loads(tool("schedule", *hosts))
        assert got == expected_steps(hosts), (p, hosts)


def expected_order(hosts, loads):
    """Rabenseifner's halving order (schedule.h: sdnmpi_rab_order), written out independently."""
    p = len(hosts)
    if p < 2:
        return []
    pof2 = 1 << (p.bit_length() - 1)
    rem = p - pof2
    nsteps = pof2.bit_length() - 1 + (2 if rem else 0)
    rank = lambda v: 2 * v + 1 if v < rem else v + rem  # noqa: E731
    keys = []
    for k in range(pof2.bit_length() - 1):
        d = 1 << k
        load = loads[k + (1 if rem else 0)] if loads is not None and len(loads) >= nsteps else 0
        cross = sum(hosts[rank(v)] != hosts[rank(v ^ d)] for v in range(pof2))
        keys.append((load, cross, d))
    return [d for _load, _cross, d in sorted(keys)]


def test_rabenseifner_order_examples(built):
    one_per_host = ["10.0.0.%d" % i for i in range(1, 9)]
    # no loads: one rank per host ties everywhere, so the distances go smallest first
    assert json.loads(tool("order", "-", *one_per_host)) == [1, 2, 4]
    # block placement as the controller reports it: distance 1 stays in the leaf (load 0)
    assert json.loads(tool("order", "0,1,1", *one_per_host)) == [1, 2, 4]
    # a placement whose distance-4 step stays within leaves gets half the vector there
    assert json.loads(tool("order", "2,1,0", *one_per_host)) == [4, 2, 1]
    # two ranks per host, consecutive: distance 1 never leaves the host
    two_per_host = ["10.0.0.%d" % (i // 2 + 1) for i in range(8)]
    assert json.loads(tool("order", "-", *two_per_host)) == [1, 2, 4]
    # two ranks per host, strided: distance 4 is the local one
    strided = ["10.0.0.%d" % (i % 4 + 1) for i in range(8)]
    assert json.loads(tool("order", "-", *strided)) == [4, 1, 2]
    # p = 6: the fold steps come first and last in the loads; a missing load means "unknown"
    six = ["10.0.0.%d" % i for i in range(1, 7)]
    assert json.loads(tool("order", "9,3,1,9", *six)) == [2, 1]
    assert json.loads(tool("order", "9,3,1", *six)) == [1, 2]
    assert json.loads(tool("order", "-", "10.0.0.1")) == []


@pytest.mark.parametrize("p", [2, 3, 5, 8, 12, 16, 33])
def test_rabenseifner_order_matches_rule(built, p):
    import random
    rnd = random.Random(p)
    for trial in range(20):
        hosts = ["10.0.0.%d" % (rnd.randrange(max(1, p // 2)) + 1) for _ in range(p)]
        nsteps = len(expected_steps(hosts))
        loads = None if trial % 3 == 0 else [rnd.randrange(3) for _ in range(nsteps)]
        got = json.loads(tool("order", ",".join(map(str, loads)) if loads else "-", *hosts))
        assert got == expected_order(hosts, loads), (hosts, loads)
        assert sorted(got) == [1 << k for k in range(len(got))]


def test_rpc_requests_pass_the_controller_schema(built):
    req = rpc_schema.decode_request(frame_body(tool("encode", "hello", 1)))
    assert (req.id, req.op) == (1, "hello")
    hosts = ["10.0.0.%d" % i for i in range(1, 9)]
    req = rpc_schema.decode_request(frame_body(tool("encode", "register", 2, *hosts)))
    assert req.op == "register" and req.args["hosts"] == hosts
    raw = msgpack.unpackb(frame_body(tool("encode", "register", 2, *hosts)), raw=False)
    assert raw == {"v": 1, "id": 2, "op": "register", "hosts": hosts}
    ranks = ["10.0.0.%d" % (r % 3 + 1) for r in range(7)]
    token = "0123456789abcdef" * 4      # the longest token the library keeps (64 characters)
    body = frame_body(tool("encode", "plan", 3, "42:" + token, 5, "-", *ranks))
    raw = msgpack.unpackb(body, raw=False)
    assert raw["job"] == 42 and raw["token"] == token and raw["comm"] == 5 and "planner" not in raw
    assert raw["steps"] == expected_steps(ranks)
    req = rpc_schema.decode_request(body)
    assert req.args["planner"] == "balanced"
    assert sorted_steps(raw["steps"]) == [[list(pair) + [c] for pair, c in step] for step in req.args["steps"]]
    raw = msgpack.unpackb(frame_body(tool("encode", "plan", 4, "42:t", 0, "dmodk", *ranks)), raw=False)
    assert raw["planner"] == "dmodk"
    req = rpc_schema.decode_request(frame_body(tool("encode", "locate", 6, *hosts)))
    assert req.op == "locate" and req.args == {"job": 42, "token": "tok42", "hosts": hosts}
    raw = msgpack.unpackb(frame_body(tool("encode", "release", 5, "42:tok42")), raw=False)
    assert raw == {"v": 1, "id": 5, "op": "release", "job": 42, "token": "tok42"}


def test_rpc_oversized_request_is_refused(built):
    # 65536 ranks on distinct hosts: more pairs than one request may carry.
    res = subprocess.run([str(TOOL), "encode", "register", "1"] + ["10.%d.%d.1" % (i // 256, i % 256) for i in range(70000)],
                         capture_output=True)
    assert res.returncode != 0
    res = subprocess.run([str(TOOL), "schedule"] + ["10.%d.%d.1" % (i // 256, i % 256) for i in range(40000)],
                         capture_output=True, check=True)
    assert json.loads(res.stdout) == {"error": -2}


def test_rpc_reply_decoding(built):
    ok = decode({"v": 1, "id": 3, "status": "ok", "error": "", "timings": {"total_s": 0.5, "plan_s": 0.25,
                                                                           "install_s": 1}, "flows": 12,
                 "max_load": [1, 2, 3], "lower_bound": [1, 1, 1]})
    assert ok["valid"] and ok["id"] == 3 and ok["ok"] == 1 and ok["flows"] == 12 and ok["max_load"] == [1, 2, 3]
    assert (ok["total_s"], ok["plan_s"], ok["install_s"]) == (0.5, 0.25, 1.0)
    reg = decode({"v": 1, "id": 1, "status": "ok", "error": "", "timings": {"total_s": 0.0}, "job": 9,
                  "token": "f" * 64})
    assert reg["job"] == 9 and reg["token"] == "f" * 64
    assert decode({"v": 1, "id": 1, "status": "ok", "job": 9, "token": "f" * 65}) == {"valid": False}
    assert decode({"v": 1, "id": 1, "status": "ok", "job": 9, "token": 5}) == {"valid": False}
    err = decode({"v": 1, "id": -1, "status": "error", "error": "malformed msgpack", "timings": {"total_s": 0.0}})
    assert err["valid"] and err["ok"] == 0 and err["id"] == -1 and err["error"] == "malformed msgpack"
    # A reply the real controller builds decodes too.
    real = rpc_schema.encode_reply(4, timings={"total_s": 0.1}, server="sdnmpi 0.1.0")
    assert json.loads(tool("decode", stdin=frame_body(real)))["server"] == "sdnmpi 0.1.0"
    for bad in ({"v": 2, "id": 1, "status": "ok"}, {"id": 1, "status": "ok"}, {"v": 1, "status": "ok"},
                {"v": 1, "id": 1, "status": "maybe"}, {"v": 1, "id": 1, "status": "ok", "job": "x"},
                {"v": 1, "id": 1, "status": "error", "error": 5}, {"v": 1, "id": 1, "status": "ok", "server": b"x"},
                [1, 2]):
        assert decode(bad) == {"valid": False}, bad
    assert json.loads(tool("decode", stdin=b"\xc1garbage")) == {"valid": False}
    assert json.loads(tool("decode", stdin=msgpack.packb({"v": 1, "id": 1, "status": "ok"}) + b"\x00")) == {"valid": False}


def test_controller_address_parsing(built):
    assert tool("hostport", "10.0.0.1:6700").decode().split() == ["10.0.0.1", "6700"]
    assert tool("hostport", "ctl.example:1").decode().split() == ["ctl.example", "1"]
    assert tool("hostport", "[fd00::1]:6700").decode().split() == ["fd00::1", "6700"]
    for bad in ("10.0.0.1", "10.0.0.1:", ":6700", "10.0.0.1:70000", "10.0.0.1:x", "[::1]6700"):
        assert tool("hostport", bad).decode().strip() == "invalid", bad


@pytest.mark.parametrize("value,want", [
    (None, "layout"), ("", "layout"), ("64", "64"), ("0", "0"), ("16k", "16384"), ("1G", "1073741824"),
    ("unlimited", "unlimited"), ("UNLIMITED", "unlimited"),
    ("18446744073709551613", "18446744073709551613"),                              # the largest count below
    ("18446744073709551614", "unlimited"), ("18446744073709551615", "unlimited"),  # the marker and above
    ("18446744073709551616", "layout"), ("17179869184g", "layout"), ("abc", "layout"), ("-5", "layout"),
    ("12x", "layout"), (" 64", "layout"), ("0x40", "layout")])
def test_hier_segment_parsing(built, value, want):
    """SDN_MPI_HIER_SEGMENT (env.c): unset or empty follows the leaf layout; a byte count, up to
    "unlimited" (one segment) for counts as large as the layout's marker; a malformed value (the
    last seven, overflows included) is ignored with one warning line and follows the layout too."""
    env = {k: v for k, v in os.environ.items() if k != "SDN_MPI_HIER_SEGMENT"}
    if value is not None:
        env["SDN_MPI_HIER_SEGMENT"] = value
    res = subprocess.run([str(TOOL), "hier-segment"], env=env, capture_output=True, text=True, check=True)
    assert res.stdout == want + "\n"
    warnings = [line.split(": ", 1)[1] for line in res.stderr.splitlines() if line.startswith("sdnmpi[")]
    malformed = want == "layout" and value
    assert warnings == (['ignoring SDN_MPI_HIER_SEGMENT=%s (want a byte count or "unlimited")' % value]
                        if malformed else []), res.stderr


# ---------------------------------------------------------------------------------------------
# without a controller: everything falls back and equals PMPI_Allreduce exactly
@pytest.mark.parametrize("np", [1, 2, 5])
def test_no_controller_falls_back(built, np):
    out = run_check(np, "pmpi", quick=True)
    assert out["rd"] == out["rab"] == 0


def test_closed_port_falls_back(built):
    out = run_check(3, "pmpi", {"SDN_MPI_CONTROLLER": "127.0.0.1:%d" % closed_port(), "SDN_MPI_VERBOSE": "1"},
                    quick=True)
    assert re.search(r"sdnmpi\[0\]: init: cannot connect to 127\.0\.0\.1:\d+: Connection refused", out["stderr"])
    assert "sdnmpi[2]: init: cannot reach the controller, falling back" in out["stderr"]


def test_unroutable_controller_times_out(built):
    # TEST-NET-2 is never routed: the connect either fails at once or times out.
    out = run_check(2, "pmpi", {"SDN_MPI_CONTROLLER": "198.51.100.1:6700", "SDN_MPI_TIMEOUT_MS": "700"},
                    quick=True)
    assert out["seconds"] < 60


def test_disabled_never_connects(built, stub_factory):
    stub = stub_factory()
    run_check(3, "pmpi", {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_DISABLE": "1"}, quick=True)
    stub.wait_idle()   # (accepts whatever is pending: a connection would show)
    assert stub.conns == []


# ---------------------------------------------------------------------------------------------
# a controller that fails
def test_controller_closes_after_register(built, stub_factory):
    stub = stub_factory("close_after_register")
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_RECONNECT_TRIES": "0"}   # (registering again: test_libsdnmpi_reconnect.py)
    out = run_check(4, "any", env, quick=True)
    # World rank 0's connection is gone: its communicators fall back, the odd half (led by world
    # rank 1 over its own connection) still gets routes.
    # Rank 0 notices at its first call on MPI_COMM_WORLD and gives up (SDN_MPI_RECONNECT_TRIES=0),
    # or, if the close was not there yet, its first request (plan_allreduce: the leaves came with
    # register's reply, which knew none of the hosts) finds the connection closed; no request
    # after that.
    gone = r"an earlier failure closed the connection|gave up after 1 failed attempts, SDN_MPI_RECONNECT_TRIES=0"
    assert ("sdnmpi[0]: plan ranks=4: ranks keep their order (register's locality: rank 0's host is not in "
            "the controller's topology)") in out["stderr"]
    assert stub.requests("locate") == []
    assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=4 hosts=4 steps=2 pairs=8: failed after \S+ "
                     r"\((%s|send failed: [^)]*|no reply: [^)]*)\), falling back" % gone, out["stderr"])
    assert out["pmpi"] > 0  # rank 0's counts: all its communicators fell back
    # the odd half's id: 1 + leader's world rank + world size * communicators it led before
    assert re.search(r"sdnmpi\[1\]: plan comm=2 ranks=2 hosts=2 steps=1 pairs=2: ok", out["stderr"])
    assert re.search(r"sdnmpi\[3\]: allreduce comm=2 count=\d+ bytes=\d+: Rabenseifner", out["stderr"])
    assert len(stub.requests("plan_allreduce")) == 1  # only the odd half's
    assert stub.requests("release") == []


def test_controller_never_answers_plan(built, stub_factory):
    stub = stub_factory("silent_plan")
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_TIMEOUT_MS": "1000",
           "SDN_MPI_VERBOSE": "1"}
    out = run_check(4, "pmpi", env, quick=True, calls_per_comm=2)
    assert "no reply: Connection timed out" in out["stderr"]
    # One timeout for world rank 0 (its connection is then dead: no further attempt), one for
    # world rank 1's odd half.
    assert len(stub.requests("plan_allreduce")) == 2
    assert "an earlier failure closed the connection" in out["stderr"]
    assert out["seconds"] < 60


def test_controller_refuses_plans(built, stub_factory):
    stub = stub_factory("error_plan")
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1"}
    out = run_check(4, "pmpi", env, quick=True)
    assert "controller error: host 10.255.0.9 is not in the topology" in out["stderr"]
    # An error reply leaves the connection usable: every communicator asked once.
    assert len(stub.requests("plan_allreduce")) == 4
    assert len(stub.requests("release")) == 1


def test_controller_never_answers_hello(built, stub_factory):
    stub = stub_factory("silent_hello")
    out = run_check(3, "pmpi", {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_TIMEOUT_MS": "500"}, quick=True)
    assert [r["op"] for _, r in stub.requests()] == ["register"]   # Init registers without hello
    assert out["seconds"] < 60


def test_controller_refuses_register(built, stub_factory):
    stub = stub_factory("refuse_register")
    run_check(3, "pmpi", {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "3"}, quick=True)
    assert [r["op"] for _, r in stub.requests()] == ["register"]


# ---------------------------------------------------------------------------------------------
# transparent mode
@pytest.mark.parametrize("init", ["init", "thread"])
def test_preload_unmodified_binary(built, stub_factory, init):
    np = 4
    plain, _ = mpirun(np, [PLAIN, init])
    assert plain.returncode == 0, plain.stderr
    stub = stub_factory()
    env = {"LD_PRELOAD": str(PRELOAD), "SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4",
           "SDN_MPI_VERBOSE": "1"}
    pre, _ = mpirun(np, [PLAIN, init], env)
    assert pre.returncode == 0, pre.stderr
    assert sorted(pre.stdout.splitlines()) == sorted(plain.stdout.splitlines())
    assert len(plain.stdout.splitlines()) == 8
    assert "sdnmpi[" not in plain.stderr
    assert "Rabenseifner" in pre.stderr   # the 20001-element calls
    # the 5- and 2-element calls: below SDN_MPI_Allreduce's default threshold (2 KiB)
    assert "allreduce count=5: PMPI_Allreduce (below the minimum size (SDN_MPI_MIN_BYTES))" in pre.stderr
    stub.wait_idle()
    assert stub.errors == []
    assert stub.requests("register")[0][1]["hosts"] == fake_hosts(np, 4)
    plans = stub.requests("plan_allreduce")
    # world, and the two halves (both span two hosts); the second round hits the caches.
    assert sorted(r["comm"] == 0 for _, r in plans) == [False, False, True]
    # the halves' MPI_Comm_split (intercepted) sent their requests; their first calls took the replies
    assert pre.stderr.count(", sent ahead at creation)") == 2
    assert len(stub.requests("release")) == 1
