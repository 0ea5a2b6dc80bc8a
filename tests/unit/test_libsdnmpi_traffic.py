"""libsdnmpi, traffic-aware job routing (issue 15), the library side under mpirun: SDN_MPI_TRAFFIC
at MPI_Init, the flow hints, MPI_Pcontrol under the preload library, the linked API, and the
failures. Real programs (libsdnmpi/tests/traffic_patterns, traffic_check) run on localhost against
the stub controller of libsdnmpi_harness.py, which checks every traffic/phase request against the
contract (docs/rpc.md) and records it. `SDN_MPI_FAKE_HOSTS=N` puts rank r on host
10.255.0.(r % N + 1). Expected demands come from the Python reference (traffic_harness.expected).
The pure parts (encoding, the reader) are in test_libsdnmpi_trace.py.

Take the machine-wide lock (COMMON.md):
`flock /tmp/sdnmpi-mininet.lock timeout 900 .venv/bin/python -m pytest tests/unit/test_libsdnmpi_traffic.py`.
"""
import functools
import re
import tarfile

import pytest

import libsdnmpi_harness as harness
from libsdnmpi_harness import LIB, PRELOAD, closed_port, fake_hosts, request_args
from sdnmpi import traces
from traffic_harness import expected

PATTERNS = LIB / "tests" / "traffic_patterns"
CHECK = LIB / "tests" / "traffic_check"
PROF = LIB / "libsdnmpi_prof.so"
MPI_TIMEOUT = 120
TRAFFIC_LINE = re.compile(r"^sdnmpi\[0\]: SDN_MPI_TRAFFIC: .*; the job runs on default routes$", re.M)
OK_LINE = re.compile(r"^traffic_patterns: ranks=(\d+) ok seconds=", re.M)

mpirun = functools.partial(harness.mpirun, timeout=MPI_TIMEOUT)
needs_mpi = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips


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
    return [(conn, request_args(r)) for conn, r in stub.requests("traffic")]


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
    want = expected(trace, hosts, min_share=1)    # SDN_MPI_TRAFFIC_MIN_SHARE's default
    assert want != expected(trace, hosts)         # the barriers' and reductions' few bytes are left out
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
    assert ops[:1 + len(want)] == ["register"] + ["traffic"] * len(want)
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
