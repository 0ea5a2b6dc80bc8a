"""A bool or a float where the RPC schema wants an int is refused (controller/rpc_schema.py): in
Python True == 1 and isinstance(True, int), and 1.0 == 1, so a plain ``== 1`` let ``"v": true`` and
``"v": 1.0`` through as version 1. Every integer field of every op, found by walking a valid
request of each op, gets the usual one-line error reply; the C library packs them as msgpack ints
(libsdnmpi/src/rpc_encode.c), so it is not affected."""
import msgpack
import pytest

from sdnmpi.controller import rpc, rpc_schema as schema

from rpc_helpers import GRAPH, IPS, FakeCore, Switches, call, reply

JOB = 1   # stands for the registered job in the service tests
VALID = {
    "hello": {},
    "register": {"hosts": IPS[:4], "lease_s": 60},
    "locate": {"job": JOB, "token": "t", "hosts": IPS[:2]},
    "plan_allreduce": {"job": JOB, "token": "t", "comm": 0, "planner": "balanced",
                       "steps": [[[IPS[0], IPS[-1], 2]]]},
    "plan_bcast": {"job": JOB, "token": "t", "comm": 1, "root": IPS[0], "members": IPS[:4], "trees": 2},
    "release": {"job": JOB, "token": "t"},
    "traffic": {"job": JOB, "token": "t", "phase": 1, "pairs": [[IPS[0], IPS[-1], 100]], "add": True},
    "phase": {"job": JOB, "token": "t", "rank": 0, "phase": 1},
}
# What the walk must find: every integer field of the schema (a new one needs a place in VALID).
INT_FIELDS = {("v",), ("id",), ("register", "lease_s"), ("job",), ("plan_allreduce", "comm"),
              ("plan_allreduce", "steps", 0, 0, 2), ("plan_bcast", "comm"), ("plan_bcast", "trees"),
              ("traffic", "phase"), ("traffic", "pairs", 0, 2), ("phase", "rank"), ("phase", "phase")}
NUMBERS = {"lease_s"}   # a number of seconds: an int or a float, never a bool


def _message(op):
    return dict(v=1, id=5, op=op, **VALID[op])


def _int_places(value, here=()):
    """Paths (keys and indexes) to the ints in ``value``, bools left out (the `add` flag is one)."""
    if isinstance(value, int) and not isinstance(value, bool):
        yield here
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield from _int_places(inner, here + (key,))


PLACES = sorted({(op, path) for op in VALID for path in _int_places(_message(op))}, key=repr)


def _named(op, path):
    """The INT_FIELDS name of ``path`` in ``op``'s request: fields every request or every job's
    request has alone, the others with their op."""
    return path if path[0] in ("v", "id", "job") else (op,) + path


def _with(msg, path, value):
    out = msgpack.unpackb(msgpack.packb(msg))   # a deep copy
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return out


def test_the_walk_finds_every_integer_field_of_every_op():
    assert set(VALID) == set(schema._VALIDATORS)  # pylint: disable=protected-access
    assert {_named(op, path) for op, path in PLACES} == INT_FIELDS
    for op in VALID:
        assert schema.decode_request(msgpack.packb(_message(op))).op == op


@pytest.mark.parametrize("op,path", PLACES, ids=["%s:%s" % (op, ".".join(map(str, p))) for op, p in PLACES])
def test_a_bool_or_float_for_an_int_is_refused(op, path):
    msg = _message(op)
    wrong = [True, False] + ([] if path[-1] in NUMBERS else [float(_get(msg, path))])
    for value in wrong:
        body = msgpack.packb(_with(msg, path, value), use_bin_type=True)
        with pytest.raises(schema.RpcError) as err:
            schema.decode_request(body)
        assert err.value.req_id == (-1 if path == ("id",) else 5), (value, err.value)
        assert str(err.value) and "\n" not in str(err.value)


def _get(msg, path):
    for key in path:
        msg = msg[key]
    return msg


def test_version_true_and_one_point_zero_name_the_version():
    for value in (True, 1.0):
        with pytest.raises(schema.RpcError, match=r"unsupported protocol version (True|1\.0) \(want 1\)"):
            schema.decode_request(msgpack.packb(dict(_message("hello"), v=value)))


@pytest.fixture
def service():
    svc = rpc.RpcService(FakeCore(GRAPH), Switches().confirm)
    r = call(svc, "register", hosts=IPS)
    assert r["status"] == "ok", r
    svc.test_job = (r["job"], r["token"])
    return svc


@pytest.mark.parametrize("op,path", PLACES, ids=["%s:%s" % (op, ".".join(map(str, p))) for op, p in PLACES])
def test_the_service_answers_a_bool_for_an_int_with_one_error_line(service, op, path):
    job, token = service.test_job
    msg = _message(op)
    if "job" in msg:
        msg.update(job=job, token=token)
    before = sorted(service.jobs.jobs)
    for value in (True, False):
        r = reply(service, msgpack.packb(_with(msg, path, value)))
        assert r["status"] == "error" and r["error"] and "\n" not in r["error"], r
        assert r["id"] == (-1 if path == ("id",) else 5) and r["error"] != "internal error", r
    assert sorted(service.jobs.jobs) == before     # nothing registered nor released
    assert call(service, "hello")["status"] == "ok"
