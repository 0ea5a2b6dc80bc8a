"""libsdnmpi, traffic-aware job routing (issue 15): a phase's matrix larger than one RPC frame goes
to the controller in parts (`traffic` with add=true after the first, docs/rpc.md), and a trace's
light pairs are left to the default routes (SDN_MPI_TRAFFIC_MIN_SHARE). The C code
(src/traffic.c: sdnmpi_traffic_send_pairs, sdnmpi_traffic_heavy) runs through unit_tool against
the stub controller of libsdnmpi_harness.py, which checks every request against the contract and
refuses frames over 1 MiB. No mpirun: no lock needed."""
import json
import os
import subprocess

import msgpack

import libsdnmpi_harness as harness
from libsdnmpi_harness import MAX_FRAME, TOOL, request_args


def send_traffic(stub, nhosts, phase):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDN_MPI_")}
    env["SDN_MPI_CONTROLLER"] = stub.address
    res = subprocess.run([str(TOOL), "send-traffic", str(nhosts), str(phase)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def all_pairs(nhosts):
    """unit_tool's matrix: every ordered pair of 10.255.0.1..N, bytes 1000 + its index."""
    ips = ["10.255.0.%d" % (i + 1) for i in range(nhosts)]
    pairs = [(a, b) for a in ips for b in ips if a != b]
    return [(a, b, 1000 + k) for k, (a, b) in enumerate(pairs)]


def test_a_matrix_over_one_frame_goes_in_parts_that_add_up_to_it(built, stub_factory):
    nhosts, phase = 254, 3
    want = all_pairs(nhosts)
    whole = msgpack.packb(dict(v=1, id=2, op="traffic", job=harness.JOB, token="t" * 32, phase=phase, add=False,
                               pairs=[list(p) for p in want]))
    assert len(whole) > MAX_FRAME                     # one request could not carry it
    stub = stub_factory()
    out = send_traffic(stub, nhosts, phase)
    sent = [request_args(r) for _, r in stub.requests("traffic")]
    assert not stub.errors
    assert out["requests"] == len(sent) == -(-len(want) // out["chunk"]) == 3, out
    assert [a["add"] for a in sent] == [False, True, True]
    assert {a["phase"] for a in sent} == {phase} and {a["token"] for a in sent} == {stub.token}
    assert [p for a in sent for p in a["pairs"]] == want
    assert out["flows"] == 0 and out["pairs"] == len(want)   # phase 3 is stored, not installed


def test_the_part_size_fits_a_frame_at_its_worst(built, stub_factory):
    """SDNMPI_TRAFFIC_CHUNK_PAIRS pairs of the longest IPs and byte counts, with a planner and the
    largest job id, still fit one frame (the encoding is msgpack's, as the C encoder's tests show)."""
    out = send_traffic(stub_factory(), 3, 0)
    chunk = out["chunk"]
    worst = [["255.255.255.%d" % (100 + i % 100), "255.255.254.255", 2 ** 63 - 1] for i in range(chunk)]
    body = msgpack.packb(dict(v=1, id=2 ** 63 - 1, op="traffic", job=2 ** 63 - 1, token="f" * 32, phase=64,
                              add=True, planner="p" * 15, pairs=worst))
    assert len(body) <= MAX_FRAME < len(body) + 1024 + 42 * 2   # and no part is needlessly small
    assert out["requests"] == 1 and out["flows"] == 6          # phase 0: installed at once


def test_a_refused_part_stops_the_sending_with_the_controllers_reason(built, stub_factory):
    stub = stub_factory("error_traffic")
    out = send_traffic(stub, 200, 1)
    assert out == {"error": "controller error: " + harness.REFUSED_TRAFFIC, "requests": 0}
    assert len(stub.requests("traffic")) == 1


def heavy(share, pairs):
    res = subprocess.run([str(TOOL), "heavy", str(share)] + ["%s,%s,%d" % p for p in pairs], capture_output=True,
                         text=True, check=True)
    return [(s, d, int(b)) for s, d, b in (line.split(",") for line in res.stdout.split())]


def test_light_pairs_are_left_out(built):
    a, b, c = "10.0.0.1", "10.0.0.2", "10.0.0.3"
    pairs = [(a, b, 4 << 20), (b, c, 8), (c, a, 41944), (a, c, 41943)]   # 1 % of 4 MiB = 41943.04
    assert heavy(1, pairs) == [(a, b, 4 << 20), (c, a, 41944)]
    assert heavy(0, pairs) == pairs
    assert heavy(100, pairs) == [(a, b, 4 << 20)]
    top = 2 ** 63 - 1
    assert heavy(100, [(a, b, top), (b, a, top - 1)]) == [(a, b, top)]
