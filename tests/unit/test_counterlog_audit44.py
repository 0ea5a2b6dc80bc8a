"""Counter logs with malformed values (audit 44): an unhashable or mixed-type pair, a NaN interval,
non-finite counts and bad flags are one CounterLogError line naming the line, and sdnmpi-sim
score-flows / train-flows print one line and exit 2; any poll line reads or is one error line."""
import json
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sdnmpi import flows
from sdnmpi.flows import counterlog
from sdnmpi.simulator import cli

FUZZ = settings(derandomize=True, deadline=None, max_examples=100)
HEAD = {"format": counterlog.FORMAT, "version": 2, "interval_s": 1, "link_rate_Bps": 625000,
        "pattern": "permutation"}
GOOD = {"poll": 1, "counts": [["a", "b", 1, 100, 1]], "flagged": []}


def lines_of(*polls, **header):
    return [json.dumps(dict(HEAD, **header))] + [json.dumps(p) for p in polls]


def one_line_error(lines):
    for reader in (counterlog.read, counterlog.read_log, counterlog.score):
        with pytest.raises(flows.CounterLogError) as err:
            reader(lines)
        assert "\n" not in str(err.value)
    return str(err.value)


BAD_POLLS = [
    ({"counts": [[["x"], "b", 1, 100, 1]]}, "line 3: count"),
    ({"counts": [["a", {"b": 1}, 1, 100, 1]]}, "line 3: count"),
    ({"counts": [[1, 2, 1, 100, 1]]}, "line 3: count"),
    ({"counts": [["a", "b", [1], 100, 1]]}, "line 3: count"),
    ({"counts": [["a", "b", 1, math.nan, 1]]}, "line 3: count"),
    ({"counts": [["a", "b", 1, math.inf, 1]]}, "line 3: count"),
    ({"counts": [["a", "b", 1, 10 ** 400, 1]]}, "line 3: count"),
    ({"counts": [["a", "b", 1, 100, math.nan]]}, "line 3: count"),
    ({"counts": [["a", "b", 1, True, 1]]}, "line 3: count"),
    ({"counts": [], "flagged": [[["a"], "b", 1]]}, "line 3: flagged"),
    ({"counts": [], "flagged": [["a", "b", "x"]]}, "line 3: flagged"),
]


@pytest.mark.parametrize("poll, words", BAD_POLLS, ids=[str(i) for i in range(len(BAD_POLLS))])
def test_malformed_polls_are_one_line_naming_it(poll, words):
    assert words in one_line_error(lines_of(GOOD, poll))


@pytest.mark.parametrize("key, value", [("interval_s", math.nan), ("interval_s", math.inf),
                                        ("link_rate_Bps", math.nan), ("link_rate_Bps", True)])
def test_a_non_finite_header_value_is_one_line(key, value):
    assert f"line 1: header: {key} must be a positive finite number" in one_line_error(
        lines_of(GOOD, **{key: value}))


def test_good_logs_still_read():
    pairs, counts = counterlog.read(lines_of(GOOD, {"counts": [["a", "b", None, 250.5, None]],
                                                    "flagged": [["a", "b", 2]]}))[1:]
    assert pairs == [("a", "b")] and counts.tolist() == [[100, 150.5]]


@pytest.mark.parametrize("command", [["score-flows"], ["train-flows", "--out", "{tmp}/m.json"]])
@pytest.mark.parametrize("text", [
    "\n".join(lines_of({"counts": [[["x"], "b", 1, 100, 1]], "flagged": []})),
    "\n".join(lines_of({"counts": [["a", "b", 1, 100, 1]], "flagged": []},
                       {"counts": [[1, 2, 1, 100, 1]], "flagged": []})),
    "\n".join(lines_of(GOOD, interval_s=math.nan)),
])
def test_the_cli_prints_one_line_and_exits_2(tmp_path, capsys, command, text):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_text(text + "\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in command]
    assert cli.main([*argv, "--counter-logs", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdnmpi-sim: error: ") and "a.jsonl: line" in err and err.count("\n") == 1


scalars = st.none() | st.booleans() | st.integers(-2, 2 ** 70) | st.floats() | st.text(max_size=2)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
    st.sampled_from(["counts", "flagged", "t", "poll"]), inner, max_size=3), max_leaves=12)
names = st.sampled_from(["a", "b"]) | st.integers(0, 2) | st.lists(st.sampled_from(["a", "b"]), max_size=1)
numbers = st.integers(-1, 2 ** 70) | st.floats() | st.none() | st.booleans()
counts = st.lists(st.tuples(names, names, scalars | st.lists(scalars, max_size=1), numbers, numbers).map(list)
                  | st.lists(scalars, max_size=6), max_size=3)
polls = st.fixed_dictionaries({"counts": counts, "flagged": st.lists(st.lists(scalars, max_size=3), max_size=2)},
                              optional={"t": scalars}) | json_values


@FUZZ
@given(st.lists(polls, min_size=1, max_size=3))
@example([{"counts": [[["x"], "b", 1, 100, 1]], "flagged": []}])       # the audit's inputs
@example([{"counts": [[1, 2, 1, 100, 1]], "flagged": []}])
def test_any_poll_lines_read_or_are_one_counter_log_error(docs):
    try:
        log = counterlog.read_log(lines_of(GOOD, *docs))
        counterlog.score(lines_of(GOOD, *docs))
    except flows.CounterLogError as exc:
        assert "\n" not in str(exc)
        return
    assert log.counts.shape == (len(log.pairs), len(docs) + 1)
    assert all(isinstance(s, str) and isinstance(d, str) for s, d in log.pairs)
