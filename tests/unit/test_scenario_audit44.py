"""sdnmpi-sim scenario on bad scenario files (audit 44): gaps or a duration that never end the
event loop (zero, negative, infinite, NaN) and wrongly typed values are one ScenarioError line and
exit 2, before any scenario runs."""
import copy
import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sdnmpi.simulator import cli, scenario

FUZZ = settings(derandomize=True, deadline=None, max_examples=150)

GOOD = {"duration": 100, "output": "out", "topology": "topo.graphml",
        "algorithms": {"scheduler": ["fcfs"], "host_selector": ["linear"], "process_mapper": ["block"],
                       "router": ["dmodk"]},
        "jobs": [{"submit": {"distribution": "constant", "params": {"value": 10}},
                  "duration": {"distribution": "constant", "params": {"value": 1}}, "trace": "tr"}]}


def changed(path, value):
    """GOOD with the value at ``path`` (keys and list indexes) replaced by ``value``."""
    conf = copy.deepcopy(GOOD)
    at = conf
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return conf


def load(tmp_path, conf):
    yml = tmp_path / "s.yml"
    yml.write_text(yaml.safe_dump(conf))
    return scenario.load(str(yml))


def one_line_error(tmp_path, conf):
    with pytest.raises(scenario.ScenarioError) as err:
        load(tmp_path, conf)
    text = str(err.value)
    assert "\n" not in text and text.startswith("s.yml: ")
    return text


SUBMIT = ("jobs", 0, "submit")
BAD_VALUES = [
    (SUBMIT, {"distribution": "constant", "params": {"value": 0}}, "submit.params.value"),
    (SUBMIT, {"distribution": "constant", "params": {"value": -3}}, "submit.params.value"),
    (SUBMIT, {"distribution": "constant", "params": {"value": math.inf}}, "submit.params.value"),
    (SUBMIT, {"distribution": "constant", "params": {"value": math.nan}}, "submit.params.value"),
    (SUBMIT, {"distribution": "uniform", "params": {"a": 0, "b": 0}}, "submit.params.b"),
    (SUBMIT, {"distribution": "uniform", "params": {"a": -1, "b": 1}}, "submit.params.a"),
    (SUBMIT, {"distribution": "uniform", "params": {"a": 3, "b": 2}}, "a must not exceed b"),
    (SUBMIT, {"distribution": "exponential", "params": {"lambd": math.inf}}, "submit.params.lambd"),
    (SUBMIT, {"distribution": "exponential", "params": {"lambd": 0}}, "submit.params.lambd"),
    (SUBMIT, {"distribution": "constant", "params": {"value": 1e-9}}, "more than 100000"),
    (("jobs", 0, "duration"), {"distribution": "constant", "params": {"value": -1}}, "duration.params.value"),
    (("duration",), math.inf, "duration: must be a positive finite number"),
    (("duration",), math.nan, "duration: must be a positive finite number"),
    (("duration",), 0, "duration: must be a positive finite number"),
    (("duration",), True, "duration: must be a positive finite number"),
    (("duration",), 10 ** 400, "duration: must be a positive finite number"),
]


@pytest.mark.parametrize("path, value, words", BAD_VALUES, ids=[str(i) for i in range(len(BAD_VALUES))])
def test_values_that_never_end_the_event_loop_are_one_line(tmp_path, path, value, words):
    assert words in one_line_error(tmp_path, changed(path, value))


BAD_TYPES = [
    (("algorithms", "router"), [{"a": 1}], "router must be a name"),
    (("algorithms", "scheduler"), [["fcfs"]], "scheduler must be a name"),
    (SUBMIT, {"distribution": ["x"], "params": {"value": 10}}, "unknown distribution ['x']"),
    (SUBMIT, {"distribution": "constant", "params": [10]}, "submit.params: must be a mapping"),
    (SUBMIT, 5, "submit: must be a mapping"),
    (("topology",), [{"kind": "xgft", "params": {"m": 4, "w": 1}}], "params.m: must be a list of positive"),
    (("topology",), [{"kind": "xgft", "params": {"m": [4], "w": ["a"]}}], "params.w: must be a list"),
    (("topology",), [{"kind": "xgft", "params": {"m": [4], "w": [1], "npe": []}}], "params.npe"),
    (("topology",), [{"kind": "kary", "params": [1, 2]}], "topology[0].params: must be a mapping"),
    (("topology",), [{"kind": "kary", "params": {"k": [4]}}], "must be a name and a number"),
    (("topology",), [{"kind": ["kary"]}], "topology[0].kind: must be a name"),
    (("topology",), [{"kind": "file", "params": {"path": ["a"]}}], "params.path: must be a file name"),
    (("jobs", 0, "trace"), ["tr"], "trace: must be a file or folder name"),
    (("output",), {"a": 1}, "output must be a folder name"),
]


@pytest.mark.parametrize("path, value, words", BAD_TYPES, ids=[str(i) for i in range(len(BAD_TYPES))])
def test_wrongly_typed_values_are_one_line(tmp_path, path, value, words):
    assert words in one_line_error(tmp_path, changed(path, value))


def test_good_values_still_load(tmp_path):
    _, specs = load(tmp_path, changed(SUBMIT, {"distribution": "uniform", "params": {"a": 0, "b": 2.5}}))
    assert specs[0].jobs[0].submit == ("uniform", (0.0, 2.5)) and specs[0].duration == 100.0
    _, specs = load(tmp_path, changed(("topology",), [{"kind": "xgft", "params": {"m": [4, 4], "w": [1, 2]}}]))
    assert specs[0].topology == ("spec", "xgft:m=4/4,w=1/2,pes=1")


@pytest.mark.parametrize("text", ["[" * 100000, "duration: " + "1" * 5000, b"duration: \xff"])
def test_deep_nesting_huge_integers_and_other_bytes_are_one_line(tmp_path, text):
    yml = tmp_path / "s.yml"
    (yml.write_bytes if isinstance(text, bytes) else yml.write_text)(text)
    with pytest.raises(scenario.ScenarioError) as err:
        scenario.load(str(yml))
    assert "\n" not in str(err.value)


def test_the_cli_prints_one_line_and_exits_2(tmp_path, capsys):
    yml = tmp_path / "s.yml"
    for conf in (changed(SUBMIT, {"distribution": "constant", "params": {"value": 0}}),
                 changed(("duration",), math.nan), changed(("algorithms", "router"), [{"a": 1}])):
        yml.write_text(yaml.safe_dump(conf))
        assert cli.main(["scenario", str(yml), "--outdir", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("sdnmpi-sim: error: s.yml: ") and err.count("\n") == 1


values = st.recursive(st.none() | st.booleans() | st.integers(-5, 10 ** 400) | st.floats() | st.text(max_size=4),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                  max_size=3), max_leaves=6)
PATHS = [("duration",), ("output",), ("topology",), ("algorithms",), ("algorithms", "router"), ("jobs",),
         ("jobs", 0), SUBMIT, SUBMIT + ("distribution",), SUBMIT + ("params",), SUBMIT + ("params", "value"),
         ("jobs", 0, "duration", "params", "value"), ("jobs", 0, "trace")]


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(PATHS), values), min_size=1, max_size=3))
def test_any_values_load_or_are_one_scenario_error_line(tmp_path_factory, edits):
    conf = copy.deepcopy(GOOD)
    for path, value in edits:
        try:
            at = conf
            for key in path[:-1]:
                at = at[key]
            at[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue        # an earlier edit removed the place
    try:
        _, specs = load(tmp_path_factory.mktemp("s"), conf)
    except scenario.ScenarioError as exc:
        assert "\n" not in str(exc)
        return
    for spec in specs:      # what loads ends: a finite duration and a bounded number of submissions
        assert math.isfinite(spec.duration) and spec.duration > 0
        for jc in spec.jobs:
            assert spec.duration / scenario._mean(jc.submit) <= scenario.MAX_SUBMITS
