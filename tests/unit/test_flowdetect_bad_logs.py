"""The counter-log tools of bench/ on a log they cannot read: one line on stderr naming the file
(flows.counterlog.from_file's error), exit status 2, no traceback."""
import gzip
import json

import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_age0
import flowdetect_decision_time
import flowdetect_hold
import flowdetect_stalls

HEADER = {"format": "sdnmpi-flow-counters", "version": 2, "interval_s": 1.0, "link_rate_Bps": 625000.0,
          "pattern": "permutation", "mode": "learned", "rep": 1}


@pytest.fixture
def bad_log(tmp_path):
    """A results folder whose one counter log breaks at its second line: (folder, log path)."""
    counters = tmp_path / "flowdetect-X" / "counters"
    counters.mkdir(parents=True)
    path = counters / "permutation-learned-1.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps(HEADER) + "\n{oops\n")
    return tmp_path / "flowdetect-X", path


def one_line_naming(capsys, prog, path):
    err = capsys.readouterr().err
    assert err.startswith(f"{prog}: {path}: line 2"), err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_hold(bad_log, capsys):
    folder, path = bad_log
    assert flowdetect_hold.main([str(folder)]) == 2
    one_line_naming(capsys, "flowdetect_hold", path)


def test_stalls(bad_log, capsys):
    folder, path = bad_log
    assert flowdetect_stalls.main([str(folder)]) == 2
    one_line_naming(capsys, "flowdetect_stalls", path)


def test_decision_time(bad_log, tmp_path, capsys):
    _folder, path = bad_log
    out = tmp_path / "run.json"
    assert flowdetect_decision_time.main(["run", str(path), "--label", "x", "--json", str(out)]) == 2
    one_line_naming(capsys, "flowdetect_decision_time", path)
    assert not out.exists()


def test_age0(bad_log, capsys, monkeypatch):
    folder, path = bad_log
    monkeypatch.setattr(flowdetect_age0, "RESULTS", str(folder.parent))
    monkeypatch.setattr(flowdetect_age0, "COMMAND_LOGS", (folder.name,))
    assert flowdetect_age0.main([]) == 2
    one_line_naming(capsys, "flowdetect_age0", path)
