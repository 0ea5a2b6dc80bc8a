"""sdnmpi-ctl against a server that answers badly: not HTTP, cut short, not JSON, JSON of the wrong
shape. Each is one line on stderr starting with the program's name and exit code 1, never a
traceback (docs/operator.md, "sdnmpi-ctl")."""
import copy
import os
import subprocess
import sys
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ctl_fakes import (COMMANDS, FakeServer, argv_of, assert_one_error_line, http_answer, json_answer,
                       real_answers, requests_of, run)

NOT_HTTP = {
    "garbage": b"\x00\x00\x00\x10hello-not-http\r\n\r\n",                     # e.g. the RPC port
    "cut short": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\":",     # IncompleteRead
    "bad chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "bad status": b"HTTP/1.1 2000 OK\r\n\r\n",
    "nothing": b"",
    "error cut short": b"HTTP/1.1 500 Oops\r\nContent-Length: 100\r\n\r\n{\"error\":",
}
NOT_JSON = {
    "html": http_answer(b"<html>hello</html>"),
    "not UTF-8": http_answer(b"{\"routing\": \"\xff\xfe\"}"),
    "nested too deep": http_answer(b"[" * 100000),
    "empty": http_answer(b""),
}
QUICK = settings(max_examples=60, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def server():
    fake = FakeServer()
    with mock.patch.dict(os.environ, {"SDNMPI_TOKEN": "a-token-for-the-tests"}):
        yield fake
    fake.close()


@pytest.fixture(scope="module")
def real():
    return real_answers()


def ctl(server, command, job=7, json_too=False):
    return run("--url", server.url, "--timeout", "5", *argv_of(command, job, json_too))


def assert_handled(command, result):
    """Exit 0 with nothing on stderr (``watch`` shows errors in its frame and keeps going), or one
    line on stderr and exit 1 (2 for an unknown policy)."""
    code, out, err = result
    if code == 0:
        assert err == "", result
        if command == "watch" and "sdnmpi-ctl: " in out:
            assert out.count("sdnmpi-ctl: ") == 1 and out.split("\n")[1].startswith("sdnmpi-ctl: "), out
    else:
        assert_one_error_line(result, 2 if command == "routing set" and code == 2 else 1)


@pytest.mark.parametrize("case", sorted(NOT_HTTP))
@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"watch"}))
def test_an_answer_that_is_not_http_is_one_line(server, command, case):
    server.answer = NOT_HTTP[case]
    result = ctl(server, command)
    assert_one_error_line(result, 1)
    if case != "nothing":   # no answer at all: the connection was closed
        assert "is not HTTP or is cut short" in result[2] or "HTTP 500" in result[2], result


@pytest.mark.parametrize("case", sorted(NOT_JSON))
def test_an_answer_that_is_not_json_is_one_line(server, case):
    server.answer = NOT_JSON[case]
    for command in sorted(set(COMMANDS) - {"watch"}):
        result = ctl(server, command)
        assert_one_error_line(result, 1)
        assert result[2].endswith(": the answer is not JSON\n"), result


def test_watch_shows_a_bad_answer_and_keeps_going(server):
    server.answer = NOT_HTTP["garbage"]
    code, out, err = run("--url", server.url, "watch", "--count", "2", "--interval", "0.01")
    assert (code, err) == (0, "")
    assert out.count("sdnmpi-ctl: /sdnmpi/view: the answer from %s is not HTTP" % server.url) == 2


def _spoil(answer, *path_and_value):
    """A copy of ``answer`` with the item at ``path`` (keys and indexes) set to ``value``, or deleted
    if ``value`` is ``DELETE``."""
    *path, value = path_and_value
    spoilt = copy.deepcopy(answer)
    parent = spoilt
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return spoilt


DELETE = object()
WRONG_SHAPES = [   # (command, the request spoilt, (path..., value)): each once with --json and once without
    ("topology", "/sdnmpi/view", ("switches", 0, "tier", DELETE)),                   # KeyError
    ("topology", "/sdnmpi/view", ("hosts", 0, ["a", "list"])),                        # TypeError
    ("jobs", "/sdnmpi/jobs", (0, "lease_s", "sixty")),                                # "%g" % str: TypeError
    ("jobs", "/sdnmpi/jobs", (0, {"job": 1})),                                        # KeyError
    ("job", "/sdnmpi/jobs/%d", ("comms", ["not", "a", "mapping"])),                   # AttributeError
    ("job", "/sdnmpi/jobs/%d", ("job", float("nan"))),                                # "%d" % NaN: ValueError
    ("job", "/sdnmpi/jobs/%d", ("job", float("inf"))),                                # OverflowError
    ("links", "/sdnmpi/linkload", (0, "bps", [])),                                    # max([]): ValueError
    ("links", "/sdnmpi/linkload", (0, "a", "not an end")),                            # TypeError
    ("routing", "/sdnmpi/routing", ("policies", 5)),                                  # TypeError
    ("routing set", "/sdnmpi/routing", ("policies", "ecmp-dmodk")),                   # a string, not a list
    ("watch", "/sdnmpi/view", ("counters", "rpc", DELETE)),                           # KeyError
]
WHOLE = [(command, path) for command in sorted(COMMANDS) for path in (["a", "list"], {}, None, 7)]


def _serve(server, answers):
    server.answer = lambda method, path: (json_answer(answers[(method, path)]) if (method, path) in answers
                                          else json_answer({"error": "not here"}, "404 Not Found"))


@pytest.mark.parametrize("command,path,spoil", WRONG_SHAPES)
def test_json_of_the_wrong_shape_is_one_line(server, real, command, path, spoil):
    answers, job = real
    key = ("GET", path % job if "%d" in path else path)
    _serve(server, {**answers, key: _spoil(answers[key], *spoil)})
    for json_too in (False, True):   # --json renders too, to check the answer
        result = ctl(server, command, job, json_too)
        assert_one_error_line(result, 1)
        assert result[2].startswith("sdnmpi-ctl: unexpected answer from the controller ("), result


@pytest.mark.parametrize("command,whole", WHOLE)
def test_an_answer_of_the_wrong_type_is_one_line(server, real, command, whole):
    answers, job = real
    _serve(server, {request: whole for request in requests_of(command, job)})
    for json_too in (False, True):
        result = ctl(server, command, job, json_too)
        assert_one_error_line(result, 1)
        assert result[2].startswith("sdnmpi-ctl: unexpected answer from the controller ("), result


def test_the_real_answers_pass(server, real):
    answers, job = real
    _serve(server, answers)
    for command in COMMANDS:
        for json_too in (False, True):
            code, out, err = ctl(server, command, job, json_too)
            assert (code, err) == (0, "") and out.strip(), (command, out)


def test_a_character_stdout_cannot_encode_is_one_line(server, real, tmp_path):
    """A host name with a lone surrogate (valid JSON: "\\ud800") on a UTF-8 stdout."""
    answers, job = real
    key = ("GET", "/sdnmpi/view")
    _serve(server, {**answers, key: _spoil(answers[key], "hosts", 0, "name", "\ud800")})
    with open(tmp_path / "out", "w", encoding="utf-8") as out:
        result = run("--url", server.url, "topology", out=out)
    assert_one_error_line(result, 1)
    assert "UnicodeEncodeError" in result[2]


HTTPISH = st.one_of(st.binary(max_size=200),
                    st.binary(max_size=200).map(lambda b: b"HTTP/1.1 200 OK\r\n" + b),
                    st.binary(max_size=200).map(http_answer))


@QUICK
@given(command=st.sampled_from(sorted(COMMANDS)), answer=HTTPISH)
def test_any_bytes_as_the_answer_give_one_line(server, command, answer):
    server.answer = answer
    assert_handled(command, ctl(server, command))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=6)


def _places(value, here=()):
    yield here
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield from _places(inner, here + (key,))


@st.composite
def spoilt(draw, answer):
    """``answer`` with one to three items replaced by any JSON or deleted."""
    for _ in range(draw(st.integers(1, 3))):
        place = draw(st.sampled_from(list(_places(answer))))
        if not place:
            answer = draw(JSON)
        else:
            answer = _spoil(answer, *place, DELETE if draw(st.booleans()) else draw(JSON))
    return answer


@QUICK
@given(data=st.data(), command=st.sampled_from(sorted(COMMANDS)), json_too=st.booleans())
def test_spoilt_real_answers_give_one_line_or_an_answer(server, real, data, command, json_too):
    answers, job = real
    request = data.draw(st.sampled_from(requests_of(command, job)))
    _serve(server, {**answers, request: data.draw(spoilt(answers[request]))})
    assert_handled(command, ctl(server, command, job, json_too))


def test_the_console_script_on_a_non_http_answer(server):
    server.answer = NOT_HTTP["garbage"]
    script = os.path.join(os.path.dirname(sys.executable), "sdnmpi-ctl")
    res = subprocess.run([script, "--url", server.url, "jobs"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert res.returncode == 1 and res.stdout == "", res
    assert res.stderr.startswith("sdnmpi-ctl: /sdnmpi/jobs: the answer from ") and res.stderr.count("\n") == 1, res
