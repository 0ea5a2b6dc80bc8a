"""sdnmpi-ctl checks each answer's shape before it renders it (ctl/shapes.py), and catches only
that check's error: an answer of another shape is one line and exit code 1, while an error in
ctl's own rendering of an answer of the right shape is a bug and surfaces as one, a traceback and
a non-zero exit code, not as "unexpected answer from the controller" (it was: main caught every
KeyError, TypeError, ValueError, ... that rendering raised)."""
import json
import math
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ctl_fakes import argv_of, assert_one_error_line, requests_of, run
from sdnmpi.ctl import render, shapes
from test_ctl_answers import _serve, real, server, spoilt  # noqa: F401  (real, server: the fixtures)

# command: (the request whose answer it renders, its shape, a rendering of it as the command does)
RENDERED = {
    "topology": ("/sdnmpi/view", shapes.TOPOLOGY, render.topology),
    "jobs": ("/sdnmpi/jobs", shapes.JOBS, render.jobs),
    "job": ("/sdnmpi/jobs/%d", shapes.JOB, render.job),
    "links": ("/sdnmpi/linkload", shapes.LINKS,
              lambda a: render.table(render.LINK_HEADERS, render.link_rows(render.busiest(a, 10)))),
    "routing": ("/sdnmpi/routing", shapes.ROUTING, render.routing),
    "watch": ("/sdnmpi/view", shapes.WATCH, render.watch),
}
ODD = st.one_of(st.integers(), st.integers(min_value=2 ** 63).map(lambda n: n * 10 ** 30), st.floats(),
                st.sampled_from([math.nan, math.inf, -math.inf, True, False, None, "", " ", "x", "1e999", [], {}]),
                st.text(max_size=3), st.lists(st.integers(), max_size=3))


def _answer(real, command):
    answers, job = real
    path = RENDERED[command][0]
    return answers[("GET", path % job if "%d" in path else path)]


@pytest.mark.parametrize("command", sorted(RENDERED))
def test_the_real_answers_have_their_shapes(real, command):
    _path, shape, rendering = RENDERED[command]
    answer = _answer(real, command)
    assert shapes.check(answer, shape) is answer and rendering(answer)


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), command=st.sampled_from(sorted(RENDERED)))
def test_an_answer_that_passes_the_check_renders(real, data, command):
    """Spoilt real answers, and real answers with one value replaced by an odd one (a huge integer,
    NaN, infinity, a bool, a string, ...): either the check refuses it, or it renders (text and
    JSON) without an error. An error here is a shape the check lets through and rendering cannot
    take."""
    _path, shape, rendering = RENDERED[command]
    answer = data.draw(spoilt(_answer(real, command)))
    if data.draw(st.booleans()):
        answer = _replaced(answer, data.draw(st.randoms()), data.draw(ODD))
    try:
        shapes.check(answer, shape)
    except shapes.BadAnswer as err:
        assert str(err).startswith("answer") and "\n" not in str(err)
        return
    assert all(isinstance(line, str) for line in rendering(answer))
    json.dumps(answer, indent=2)


def _replaced(answer, rng, value):
    """``answer`` with one of its leaves (a value that is no list or object) set to ``value``."""
    leaves = []

    def walk(node):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, inner in items:
            if isinstance(inner, (dict, list)) and inner:
                walk(inner)
            else:
                leaves.append((node, key))
    answer = json.loads(json.dumps(answer))
    walk(answer)
    if leaves:
        node, key = rng.choice(leaves)
        node[key] = value
    return answer


WRONG = [   # (command, the place spoilt, its value, what the line says)
    ("job", ("trees", 0, "port"), "47001", "answer.trees[0].port is a string, not an integer"),
    ("job", ("comms",), {"zero": {}}, "answer.comms has the key 'zero'"),
    ("jobs", (0, "hosts", 0), ["10.0.0.1"], "answer[0].hosts[0] is a list, not a string"),
    ("links", (0, "bps"), [1.0], "answer[0].bps has 1 items, not 2"),
    ("links", (0, "bps", 0), True, "answer[0].bps[0] is true or false, not a number"),
    ("links", (0, "bps", 0), 10 ** 400, "answer[0].bps[0] is an integer over 64 bits, not a number"),
    ("watch", ("counters", "rpc", "errors"), 1.5, "answer.counters.rpc.errors is a number, not an integer"),
    ("routing", ("policies", 1), None, "answer.policies[1] is null, not a string"),
]


@pytest.mark.parametrize("command,place,value,said", WRONG,
                         ids=["%s:%s" % (c, ".".join(map(str, p))) + ("=big" if v == 10 ** 400 else "")
                              for c, p, v, _ in WRONG])
def test_a_wrong_shape_is_one_line_naming_the_place(server, real, command, place, value, said):
    answers, job = real
    [request] = requests_of(command, job)
    spoilt_answer = json.loads(json.dumps(answers[request]))
    parent = spoilt_answer
    for key in place[:-1]:
        parent = parent[key]
    parent[place[-1]] = value
    _serve(server, {**answers, request: spoilt_answer})
    for json_too in (False, True):   # --json checks the answer too
        result = run("--url", server.url, *argv_of(command, job, json_too))
        assert_one_error_line(result, 1)
        assert result[2].startswith("sdnmpi-ctl: unexpected answer from the controller (%s" % said), result


def test_a_name_of_spaces_renders(server, real):
    """A host named " " (the name is any string: the system name a host's LLDP frames carry) is
    a good answer: its table used to fail on it (IndexError, reported as an unexpected answer)."""
    answers, job = real
    view = json.loads(json.dumps(answers[("GET", "/sdnmpi/view")]))
    view["hosts"][0]["name"] = " "
    _serve(server, {**answers, ("GET", "/sdnmpi/view"): view})
    code, out, err = run("--url", server.url, "topology")
    assert (code, err) == (0, "") and "Hosts (%d)" % len(view["hosts"]) in out, (out, err)


def _broken(*_args, **_kwargs):
    raise TypeError("a bug in render")


@pytest.mark.parametrize("command,function", [("jobs", "jobs"), ("job", "job"), ("topology", "table"),
                                              ("links", "rate"), ("routing", "routing"), ("watch", "watch")])
def test_a_bug_in_rendering_a_good_answer_is_not_called_a_bad_answer(server, real, monkeypatch, command, function):
    answers, job = real
    _serve(server, answers)
    assert run("--url", server.url, *argv_of(command, job))[0] == 0      # the answers are good
    monkeypatch.setattr(render, function, _broken)
    with pytest.raises(TypeError, match="a bug in render"):
        run("--url", server.url, *argv_of(command, job))


def test_a_bug_in_rendering_is_a_traceback_and_a_non_zero_exit(server, real):
    """As the console script runs: sys.exit(main())."""
    answers, job = real
    _serve(server, answers)
    program = ("import sys\nfrom sdnmpi.ctl import cli, render\n"
               "def broken(_jobs):\n    raise TypeError('a bug in render')\n"
               "render.jobs = broken\nsys.exit(cli.main(sys.argv[1:]))\n")
    res = subprocess.run([sys.executable, "-c", program, "--url", server.url, "jobs"], capture_output=True,
                         text=True, timeout=60, check=False)
    assert res.returncode == 1 and res.stdout == "", res
    assert "Traceback (most recent call last)" in res.stderr and "TypeError: a bug in render" in res.stderr, res
    assert "unexpected answer" not in res.stderr
