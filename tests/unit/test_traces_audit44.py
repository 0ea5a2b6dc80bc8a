"""sdnmpi.traces on malformed rank files (audit 44): wrongly typed histograms, infinite sizes,
deep nesting and a huge n_procs are one TraceError line naming the file, at once, for the
readers of sdnmpi-prof and sdnmpi-sim alike; any mutation of a valid file loads or is one line."""
import json
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdnmpi import traces
from sdnmpi.profiler import cli as prof_cli
from sdnmpi.simulator import cli as sim_cli

FUZZ = settings(derandomize=True, deadline=None, max_examples=200)


def record(rank=0, n=2, **extra):
    rec = {"n_procs": n, "rank": rank, "tx_bytes": [100] * n, "rx_bytes": [0] * n, "tx_messages": [1] * n,
           "rx_messages": [0] * n, "tx_message_sizes": [{"message_size": 100, "frequency": 1}]}
    rec.update(extra)
    return rec


def write(folder, texts):
    folder.mkdir(exist_ok=True)
    for rank, text in texts.items():
        (folder / f"oxton-result{rank}.json").write_text(text)
    return folder


def one_line_error(folder):
    with pytest.raises(traces.TraceError) as err:
        traces.load(folder)
    text = str(err.value)
    assert "\n" not in text and text.startswith(str(folder))
    return text


BAD = [
    ({"tx_message_sizes": None}, "'tx_message_sizes' must be a list"),
    ({"tx_message_sizes": 5}, "'tx_message_sizes' must be a list"),
    ({"rx_message_sizes": "ab"}, "'rx_message_sizes' must be a list"),
    ({"tx_message_sizes": [5]}, "entries need message_size and frequency"),
    ({"tx_message_sizes": [{"message_size": float("inf"), "frequency": 1}]}, "entries need message_size"),
    ({"tx_message_sizes": [{"message_size": float("nan"), "frequency": 1}]}, "entries need message_size"),
    ({"tx_message_sizes": [{"message_size": 8, "frequency": 1e300}]}, "entries need message_size"),
    ({"tx_message_sizes": [{"message_size": -8, "frequency": 1}]}, "entries need message_size"),
    ({"tx_bytes": [0, 2 ** 63]}, "'tx_bytes' must be a list of 2 non-negative integers"),
    ({"tx_bytes": [0, 2 ** 64]}, "'tx_bytes' must be a list of 2 non-negative integers"),
    ({"tx_bytes": [0, [1]]}, "'tx_bytes' must be a list of 2 non-negative integers"),
    ({"tx_bytes": [[0, 1], [1]]}, "'tx_bytes' must be a list of 2 non-negative integers"),
    ({"tx_bytes": [0, float("inf")]}, "'tx_bytes' must be a list of 2 non-negative integers"),
    ({"duration": float("inf")}, "'duration' must be a non-negative finite number"),
    ({"duration": float("nan")}, "'duration' must be a non-negative finite number"),
    ({"duration": -1.0}, "'duration' must be a non-negative finite number"),
]


@pytest.mark.parametrize("extra, words", BAD, ids=[str(i) for i in range(len(BAD))])
def test_malformed_fields_are_one_line_naming_the_file(tmp_path, extra, words):
    folder = write(tmp_path / "t", {0: json.dumps(record(0, **extra)), 1: json.dumps(record(1))})
    text = one_line_error(folder)
    assert "oxton-result0.json" in text and words in text


def test_deep_nesting_is_one_line(tmp_path):
    folder = write(tmp_path / "t", {0: "[" * 200000})
    assert "nested too deeply" in one_line_error(folder)


def test_an_integer_of_too_many_digits_is_one_line(tmp_path):
    folder = write(tmp_path / "t", {0: '{"n_procs": ' + "1" * 5000 + "}"})
    assert "not valid JSON" in one_line_error(folder)


@pytest.mark.parametrize("n_procs", [10 ** 11, 2 ** 62])
def test_a_huge_n_procs_fails_fast_by_the_files_present(tmp_path, n_procs):
    folder = write(tmp_path / "t", {0: json.dumps(record(0, 1, n_procs=n_procs))})
    start = time.monotonic()
    text = one_line_error(folder)
    assert time.monotonic() - start < 5
    assert f"oxton-result1.json missing ({n_procs - 1} of {n_procs} ranks absent)" in text


def test_the_first_missing_rank_is_named(tmp_path):
    folder = write(tmp_path / "t", {r: json.dumps(record(r, 5)) for r in (0, 1, 3)})
    assert "oxton-result2.json missing (2 of 5 ranks absent)" in one_line_error(folder)


def test_valid_sizes_still_read_whole_floats_as_integers(tmp_path):
    sizes = [{"message_size": 8.0, "frequency": 2}, {"message_size": 2 ** 40, "frequency": 1}]
    folder = write(tmp_path / "t", {0: json.dumps(record(0, tx_message_sizes=sizes, duration=1.5)),
                                    1: json.dumps(record(1, tx_bytes=[2 ** 63 - 1, 0]))})
    trace = traces.load(folder)
    assert trace.tx_message_sizes[0] == [(8, 2), (2 ** 40, 1)] and trace.durations == [1.5, None]
    assert trace.tx_bytes[1, 0] == 2 ** 63 - 1 and trace.tx_bytes.dtype == np.int64


@pytest.mark.parametrize("main, prog", [(lambda argv: prof_cli.main(["show", *argv]), "sdnmpi-prof: "),
                                        (lambda argv: sim_cli.main(["job", "--topology", "leafspine",
                                                                    "--trace", *argv]), "sdnmpi-sim: error: ")])
@pytest.mark.parametrize("text", [json.dumps(record(0, 1, tx_message_sizes=None)),
                                  json.dumps(record(0, 1, tx_message_sizes=[{"message_size": float("inf"),
                                                                              "frequency": 1}])),
                                  "[" * 200000, json.dumps(record(0, 1, n_procs=10 ** 11))])
def test_both_clis_print_one_line_and_exit_2(tmp_path, capsys, main, prog, text):
    folder = write(tmp_path / "t", {0: text})
    assert main([str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(prog) and err.count("\n") == 1 and "Traceback" not in err


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2 ** 65) | st.floats() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8)
KEYS = ["n_procs", "rank", "tx_bytes", "rx_bytes", "tx_messages", "rx_messages", "tx_message_sizes",
        "rx_message_sizes", "duration", "phases", "source", "processor_name", "n_events"]


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(KEYS), json_values), min_size=1, max_size=4),
       st.sampled_from([None, 0, 1]))
def test_any_mutation_of_a_rank_file_loads_or_is_one_trace_error(tmp_path_factory, edits, phase_of):
    records = [record(0), record(1, phases=[{}, dict(record(1))])]
    records[0]["phases"] = [{}, dict(record(0))]
    for key, value in edits:
        target = records[0] if phase_of is None else records[phase_of]["phases"][1]
        target[key] = value
    folder = write(tmp_path_factory.mktemp("t"), {r: json.dumps(rec) for r, rec in enumerate(records)})
    try:
        trace = traces.load(folder)
    except traces.TraceError as exc:
        assert "\n" not in str(exc)
        return
    for phase in trace.phases:
        assert phase.tx_bytes.dtype == np.int64 and (phase.tx_bytes >= 0).all()
        assert all(isinstance(s, int) and isinstance(f, int) for sizes in phase.tx_message_sizes for s, f in sizes)


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_load_or_are_one_trace_error(tmp_path_factory, raw):
    folder = tmp_path_factory.mktemp("t")
    (folder / "oxton-result0.json").write_bytes(raw)
    try:
        traces.load(folder)
    except traces.TraceError as exc:
        assert "\n" not in str(exc)
