"""The controller connection's plan requests sent ahead (libsdnmpi/src/controller.h), one connection
and a stub controller, no MPI: several requests ahead at once, each reply matched to its request by
id whatever the order of the collects, a request whose communicator went away dropped without
desynchronising the stream, a full list refused, and a refusing or silent controller giving each
collect the failure the request would have had."""
import errno
import os
import re
import subprocess
import time

import pytest

from libsdnmpi_harness import LIB

TOOL = LIB / "tests" / "ahead_tool"


def run(stub, *ops, timeout_ms=None):
    """ahead_tool OPS against the stub: its output lines."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDN_MPI_")}
    env["SDN_MPI_CONTROLLER"] = stub.address
    if timeout_ms is not None:
        env["SDN_MPI_TIMEOUT_MS"] = str(timeout_ms)
    res = subprocess.run([str(TOOL), *ops], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, (res.stdout, res.stderr)
    return res.stdout.splitlines()


def flows_of(stub):
    """comm -> the number of host pairs in the stub's plan_allreduce for it (what it answers)."""
    return {r["comm"]: sum(len(s) for s in r["steps"]) for _, r in stub.requests("plan_allreduce")}


def test_replies_go_to_their_own_request_whatever_the_collect_order(built, stub_factory):
    stub = stub_factory()
    out = run(stub, "s1", "s2", "s3", "c3", "c1", "c2", "r")
    flows = flows_of(stub)
    assert len(set(flows.values())) == 3    # distinct answers: a mix-up would show
    assert out == ["s1 ok", "s2 ok", "s3 ok", "c3 ok flows=%d" % flows[3], "c1 ok flows=%d" % flows[1],
                   "c2 ok flows=%d" % flows[2], "r ok"]
    assert [r["op"] for r in stub.conns[0]["requests"]] == ["hello", "register"] + ["plan_allreduce"] * 3 + ["release"]
    assert stub.errors == []


def test_an_abandoned_request_is_read_and_dropped(built, stub_factory):
    stub = stub_factory()
    out = run(stub, "s1", "s2", "s3", "a2", "c3", "a1", "x", "s4", "c4", "r")
    flows = flows_of(stub)
    assert out == ["s1 ok", "s2 ok", "s3 ok", "a2", "c3 ok flows=%d" % flows[3], "a1", "x 1", "s4 ok",
                   "c4 ok flows=%d" % flows[4], "r ok"]
    out = run(stub, "s1", "a1", "x", "r")    # read by the liveness check (or the release)
    assert out == ["s1 ok", "a1", "x 1", "r ok"]
    assert stub.errors == []


def test_an_abandoned_request_never_collected_is_gone(built, stub_factory):
    stub = stub_factory()
    assert run(stub, "s1", "a1", "c1") == ["s1 ok", "a1", "c1 failed: no request %d was sent ahead" % 3]


def test_a_full_list_refuses_the_next_request(built, stub_factory):
    stub = stub_factory()
    sends = ["s%d" % n for n in range(1, 10)]
    out = run(stub, *sends, "c1", "s10", "c9", "r")
    assert out[:8] == ["s%d ok" % n for n in range(1, 9)]
    assert out[8] == "s9 refused"
    assert out[9].startswith("c1 ok") and out[10] == "s10 ok"
    assert re.fullmatch(r"c9 failed: no request \d+ was sent ahead", out[11]) and out[12] == "r ok"
    assert len(stub.requests("plan_allreduce")) == 9


def test_a_refusing_controller_refuses_each_and_the_stream_stays_usable(built, stub_factory):
    stub = stub_factory("error_plan")
    out = run(stub, "s1", "s2", "c2", "c1", "r")
    assert out[:2] == ["s1 ok", "s2 ok"] and out[4] == "r ok"
    assert out[2].startswith("c2 refused: controller error") and out[3].startswith("c1 refused: controller error")


TIMED_OUT = "no reply: %s" % os.strerror(errno.ETIMEDOUT)   # controller.c's why of a read that timed out
CLOSED = "the connection closed before the reply"             # that of a reply never waited for


@pytest.mark.parametrize("ops, want", [
    # c2 reads request 1's reply first: that read times out, then request 2 fails unread
    (("s1", "s2", "c2", "c1", "r"), ["s1 ok", "s2 ok", "c2 failed: " + CLOSED, "c1 failed: " + TIMED_OUT, "r failed"]),
    # request 1, abandoned, is the one whose reply is waited for (its failure reaches nobody)
    (("s1", "s2", "a1", "c2", "r"), ["s1 ok", "s2 ok", "a1", "c2 failed: " + CLOSED, "r failed"]),
])
def test_a_silent_controller_costs_one_timeout(built, stub_factory, ops, want):
    """Nothing answers: the first reply waited for times out, the connection is dead, every other
    request ahead fails at once, unread, and so does the next exchange (no release is sent).
    Counted from what the library reports per request (a read that timed out says so) and what
    the stub received, not from the clock, which load stretches."""
    stub = stub_factory("silent_plan")
    t0 = time.monotonic()
    out = run(stub, *ops, timeout_ms=700)
    assert time.monotonic() - t0 >= 0.7   # it did wait (load only lengthens the run)
    assert out == want
    assert [r["op"] for _, r in stub.requests()] == ["hello", "register", "plan_allreduce", "plan_allreduce"]
    assert len(stub.conns) == 1 and stub.errors == []
