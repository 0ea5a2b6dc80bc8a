"""Counter logs (flows/counterlog.py): the controller's per-poll counters written as JSON lines,
read back as per-interval counts, labelled from the counters, and training from a folder of them
(``sdnmpi-sim train-flows --counter-logs``). Pure Python, no lock."""
import gzip
import json
import logging
import os

import numpy as np
import pytest

from sdnmpi import flows
from sdnmpi.flows import counterlog
from sdnmpi.simulator import cli, flowtraffic, train_flows

LINK = 100.0  # bytes/s of a host link


def write_log(path, counts, pairs, **header):
    """A counter log of ``counts`` (pairs x polls, bytes per interval) as the controller writes it."""
    log = flows.CounterLog(str(path), interval_s=1.0, link_rate_Bps=LINK, **header)
    cum = np.cumsum(counts, axis=1)
    for t in range(counts.shape[1]):
        readings = {p: float(cum[i, t]) for i, p in enumerate(pairs) if cum[i, t] > 0 or t > 0}
        log.poll(t + 1, readings, {p: 7 for p in pairs}, {})
    log.close()


def test_a_log_reads_back_as_the_counts_it_recorded(tmp_path):
    counts = np.array([[0, 30, 100, 100, 20, 0], [5, 5, 5, 5, 5, 5]], dtype=float)
    pairs = [("10.0.0.1", "10.0.0.3"), ("10.0.0.2", "10.0.0.4")]
    write_log(tmp_path / "c.jsonl", counts, pairs, pattern="shift")
    header, got_pairs, got = counterlog.read((tmp_path / "c.jsonl").read_text().splitlines())
    assert header["pattern"] == "shift" and header["link_rate_Bps"] == LINK
    assert got_pairs == pairs and got.tolist() == counts.tolist()


def test_a_restarted_counter_counts_its_new_reading():
    lines = [json.dumps({"format": counterlog.FORMAT, "version": 1, "interval_s": 1, "link_rate_Bps": 10})]
    for reading in (50, 80, 20, 60):
        lines.append(json.dumps({"poll": 1, "counts": [["a", "b", 1, reading]], "flagged": []}))
    assert counterlog.read(lines)[2].tolist() == [[50, 30, 20, 40]]


@pytest.mark.parametrize("lines, words", [
    ([], "empty counter log"),
    (["{"], "not a counter log"),
    (['{"format": "x"}'], "header line"),
    (['{"format": "sdnmpi-flow-counters", "version": 1, "interval_s": 0, "link_rate_Bps": 1}'], "interval_s"),
])
def test_bad_logs_are_one_line_errors(lines, words):
    with pytest.raises(flows.CounterLogError) as err:
        counterlog.read(lines)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_labels_from_the_counters_need_a_whole_busy_interval_at_a_tenth_of_the_link():
    counts = np.array([
        [0, 5, 12, 12, 3, 0],     # 12 % through whole intervals: an elephant from interval 1
        [0, 50, 0, 0, 0, 0],      # one partial burst: no whole interval seen busy
        [9, 9, 9, 9, 9, 9],       # 9 %: a mouse
        [0, 0, 2, 0, 4, 30],      # ends busy: the last interval is not known whole
        [0.5, 0, 0.5, 3, 20, 20],  # chatter (< 1 %) before it starts: not part of its start
        [3, 4, 5, 3, 14, 12],     # busy at 3-5 % (a mouse's rate) until interval 4: heavy from 3
        [0, 0, 12, 12, 12, 0],    # starts at a poll: nothing busy before its first whole interval
    ], dtype=float)
    labels, starts = counterlog.label(counts, LINK)
    assert labels.tolist() == [True, False, False, False, True, True, True]
    assert starts.tolist() == [1, -1, -1, -1, 3, 3, 2]


def test_a_log_scores_the_controllers_flags_against_the_counters_labels(tmp_path):
    counts = np.array([[0, 5, 12, 12, 12, 0], [0, 0, 30, 30, 30, 30], [9, 9, 9, 9, 9, 9]], dtype=float)
    pairs = [("a", "b"), ("c", "d"), ("e", "f")]
    log = flows.CounterLog(str(tmp_path / "c.jsonl"), interval_s=1.0, link_rate_Bps=LINK)
    cum = np.cumsum(counts, axis=1)
    for t in range(counts.shape[1]):
        flags = {("a", "b"): 4} if t == 4 else {("e", "f"): 2} if t == 1 else {}
        log.poll(t + 1, {p: float(cum[i, t]) for i, p in enumerate(pairs)}, {}, flags)
    log.close()
    got = counterlog.score((tmp_path / "c.jsonl").read_text().splitlines())
    # a: elephant from interval 1, flagged at 4 (4 polls); c: elephant never flagged; e: a mouse flagged
    assert got == {"pairs": 3, "elephants": 2, "flagged": 2, "true_flags": 1, "within_2": 0, "delays": [4]}


def test_an_unwritable_log_is_one_warning_and_nothing_else(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="sdnmpi.flows"):
        log = flows.CounterLog(str(tmp_path / "no" / "such" / "dir.jsonl"), interval_s=1.0, link_rate_Bps=LINK)
        log.poll(1, {("a", "b"): 5}, {}, {})
    assert not log.active
    assert len(caplog.records) == 1 and "not logging counters" in caplog.records[0].getMessage()


def test_train_flows_from_counter_logs_splits_by_their_patterns(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    for pattern in ("shift", "halo2d", "permutation"):
        for i in range(2):
            run = flowtraffic.instance(pattern, 11 + i, LINK, 1.0, train_flows.TRACE_DIR)
            pairs = [("10.0.0.%d" % k, "x") for k in range(len(run.counts))]
            write_log(logs / ("%s-learned-%d.jsonl" % (pattern, i)), run.counts, pairs, pattern=pattern)
    out, rep = tmp_path / "m.json", tmp_path / "r.json"
    argv = ["train-flows", "--counter-logs", str(logs), "--out", str(out), "--report", str(rep)]
    assert cli.main(argv + ["--test-patterns", "permutation"]) == 0
    model = json.loads(out.read_text())
    assert model["trained"]["source"].startswith("counter logs") and model["trained"]["link_rate_Bps"] == LINK
    assert model["trained"]["train_patterns"] == ["halo2d", "shift"]
    report = json.loads(rep.read_text())["patterns"]
    assert set(report) == {"shift", "halo2d", "permutation", "all held-out"}
    assert report["permutation"]["split"] == "test" and report["permutation"]["learned"]["elephants"] > 0
    assert "| permutation | test | learned |" in capsys.readouterr().out
    # the default held-out patterns are the bench's: halo3d and two-phases are not in these logs
    assert cli.main(argv) == 2
    assert "unknown test pattern(s) halo3d, two-phases" in capsys.readouterr().err
    assert cli.main(["train-flows", "--counter-logs", str(tmp_path / "none"), "--out", str(out)]) == 2
    assert "no counter logs" in capsys.readouterr().err


RECORDED = os.path.join(os.path.dirname(__file__), "..", "data", "flows", "mininet-two-phases.jsonl.gz")


@pytest.mark.parametrize("kind", ["threshold", "learned"])
def test_both_classifiers_on_a_counter_log_recorded_on_mininet(kind):
    # bench_flowdetect.py, two-phases (shift 4, 3 s pause, perm 7; 4 MiB per pair) on the k=4
    # fat-tree, host links 40 Mbit/s: 91 pairs with bytes, 27 of them elephants by the counters
    header, pairs, counts = counterlog.read(counterlog.file_lines(RECORDED))
    labels, starts = counterlog.label(counts, header["link_rate_Bps"] * header["interval_s"])
    assert (len(pairs), int(labels.sum())) == (91, 27)
    rate = header["link_rate_Bps"]
    clf = (flows.ThresholdClassifier(link_rate=rate, interval=1.0) if kind == "threshold"
           else flows.load_model(flows.DEFAULT_MODEL, link_rate=rate, interval=1.0))
    got = train_flows.score(clf, [flowtraffic.Run(counts, labels, starts, pairs)])
    assert (got["tp"], got["fp"], got["fn"]) == (27, 0, 0)   # every elephant, no mouse
    assert got["delay_median"] <= 3 and got["delay_max"] <= 6


def test_the_offline_tool_lists_each_elephant_and_why_the_late_ones_were_late(capsys):
    import bench_setup  # noqa: F401  (puts bench/ on sys.path)
    import flowdetect_offline
    folder = os.path.dirname(RECORDED)
    assert flowdetect_offline.main([folder, "--pairs", "two-phases"]) == 0
    rows = [r.split("|")[1:-1] for r in capsys.readouterr().out.splitlines()[2:]]
    assert len(rows) == 27   # the log's elephants, each with the same polls of bytes, share and score
    assert all(len(r[4].split()) == len(r[5].split()) == len(r[6].split()) == min(7, int(r[2]) + 5) for r in rows)
    header, pairs, counts = counterlog.read(counterlog.file_lines(RECORDED))
    labels, starts = counterlog.label(counts, header["link_rate_Bps"] * header["interval_s"])
    listed = {tuple(r[1].strip().split(" -> ")): int(r[2]) for r in rows}
    assert listed == {p: int(starts[i]) for i, p in enumerate(pairs) if labels[i]}
    assert flowdetect_offline.main([folder]) == 0
    table = [r.split("|")[1:-1] for r in capsys.readouterr().out.splitlines() if r.startswith("| two-phases")]
    for row in table:   # the late ones (either cause) are the elephants not flagged within 2 polls
        elephants, within = int(row[4]), float(row[10])
        assert int(row[11]) + int(row[12]) == round(elephants * (1 - within))
    assert flowdetect_offline.main([folder, "--pairs", "halo3d"]) == 2


MININET_LOGS = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "results",
                            "flowdetect-20261128T072002Z", "counters")
MININET_MODEL = os.path.join(os.path.dirname(flows.DEFAULT_MODEL), "model-mininet.json")


def test_the_mininet_model_is_what_the_documented_command_writes(tmp_path):
    out, rep = tmp_path / "m.json", tmp_path / "r.json"
    assert cli.main(["train-flows", "--counter-logs", MININET_LOGS, "--test-patterns", "two-phases",
                     "--out", str(out), "--report", str(rep)]) == 0
    made, shipped = json.loads(out.read_text()), json.loads(open(MININET_MODEL, encoding="utf-8").read())
    assert (made["cutoff"], made["min_age"], made["trained"]["train_patterns"]) == (
        shipped["cutoff"], shipped["min_age"], shipped["trained"]["train_patterns"])
    assert made["weights"] == pytest.approx(shipped["weights"], rel=1e-3, abs=1e-6)
    held = json.loads(rep.read_text())["patterns"]["two-phases"]
    assert held["split"] == "test" and held["learned"]["accuracy"] >= 0.95
    assert held["learned"]["within_2"] >= 0.95 > held["threshold"]["within_2"]


def _v1(counts, pairs):
    """The lines of a version 1 log (no packets) of ``counts``, as the controller wrote it before."""
    lines = [json.dumps({"format": counterlog.FORMAT, "version": 1, "interval_s": 1.0, "link_rate_Bps": LINK})]
    cum = np.cumsum(counts, axis=1)
    for t in range(counts.shape[1]):
        lines.append(json.dumps({"poll": t + 1, "counts": [[s, d, 7, int(cum[i, t])] for i, (s, d) in enumerate(pairs)],
                                 "flagged": []}))
    return lines


def test_version_2_records_packets_and_reads_like_version_1(tmp_path):
    counts = np.array([[0, 3000, 9000, 600], [66, 132, 0, 66]], dtype=float)
    frames = np.array([[0, 2, 6, 1], [1, 2, 0, 1]])
    pairs = [("10.0.0.1", "10.0.0.3"), ("10.0.0.3", "10.0.0.1")]
    log = flows.CounterLog(str(tmp_path / "c.jsonl"), interval_s=1.0, link_rate_Bps=LINK, pattern="shift")
    cum, cum_frames = np.cumsum(counts, axis=1), np.cumsum(frames, axis=1)
    for t in range(4):
        # the second pair's switch keeps no packet count at poll 2 (index 1)
        known = {p: int(cum_frames[i, t]) for i, p in enumerate(pairs) if not (i == 1 and t == 1)}
        log.poll(t + 1, {p: cum[i, t] for i, p in enumerate(pairs)}, {}, {}, packets=known)
    log.close()
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["version"] == counterlog.VERSION == 2
    assert json.loads(lines[2])["counts"] == [[*pairs[0], None, 3000, 2], [*pairs[1], None, 198, None]]
    header, got_pairs, got, packets = counterlog.read_packets(lines)
    assert got_pairs == pairs and got.tolist() == counts.tolist()
    # the packets per interval; unknown (NaN) without a count and in the interval after one
    assert packets[0].tolist() == frames[0].tolist()
    assert packets[1, 0] == 1 and np.isnan(packets[1, 1:3]).all() and packets[1, 3] == 1
    # the same counts read from a version 1 log: every interval's packets unknown
    v1_header, v1_pairs, v1_counts, v1_packets = counterlog.read_packets(_v1(counts, pairs))
    assert v1_pairs == pairs and v1_counts.tolist() == counts.tolist() and np.isnan(v1_packets).all()
    assert counterlog.read(lines)[2].tolist() == counts.tolist()


@pytest.mark.parametrize("line, words", [
    ('{"poll": 2, "counts": [["a", "b", 1, 5, 3]], "flagged": []', "line 3: not JSON"),
    ('{"poll": 2, "counts": [["a", "b", 1, 5]], "flagged": []}', "line 3: count"),
    ('{"poll": 2, "counts": [["a", "b", 1, 5, -1]], "flagged": []}', "line 3: count"),
    ('{"poll": 2, "counts": [["a", "b", 1, "5", 3]], "flagged": []}', "is not [src, dst, job, bytes, packets]"),
    ('[1, 2]', "line 3: not a poll"),
    ('{"poll": 2, "counts": [], "flagged": [["a", "b"]]}', "line 3: flagged"),
])
def test_a_bad_line_is_a_one_line_error_naming_it(line, words):
    head = json.dumps({"format": counterlog.FORMAT, "version": 2, "interval_s": 1, "link_rate_Bps": 10})
    good = '{"poll": 1, "counts": [["a", "b", 1, 4, 2]], "flagged": []}'
    assert counterlog.read([head, good])[2].tolist() == [[4]]
    for call in (counterlog.read, counterlog.read_packets, counterlog.score, counterlog.parse):
        with pytest.raises(flows.CounterLogError) as err:
            call([head, good, line])
        assert words in str(err.value) and "\n" not in str(err.value)


def test_a_version_1_count_with_packets_and_an_unknown_version_are_errors():
    with pytest.raises(flows.CounterLogError, match="is not .src, dst, job, bytes. .version 1."):
        counterlog.read(_v1(np.ones((1, 2)), [("a", "b")])[:1] + ['{"counts": [["a", "b", 1, 5, 3]]}'])
    head = {"format": counterlog.FORMAT, "version": 3, "interval_s": 1, "link_rate_Bps": 10}
    with pytest.raises(flows.CounterLogError) as err:
        counterlog.read([json.dumps(head), '{"counts": []}'])
    assert "version 3: this code reads versions 1, 2" in str(err.value) and "\n" not in str(err.value)


def test_a_cut_tags_the_header_and_keeps_every_poll_line():
    lines = [ln + "\n" for ln in _v1(np.ones((1, 4)), [("a", "b")])]
    got = counterlog.cut(lines, 2, {"pattern": "shift", "rep": 1})
    assert json.loads(got[0]) == dict(json.loads(lines[0]), pattern="shift", rep=1) and got[1:] == lines[2:]
    assert counterlog.cut(lines, 0, {})[1:] == lines[1:]           # the header line never twice
    with pytest.raises(flows.CounterLogError, match="line 1"):
        counterlog.cut(["{oops\n"] + lines[1:], 1, {})


def test_training_sees_the_same_runs_from_version_1_and_2_logs_and_names_a_bad_file(tmp_path):
    from sdnmpi.simulator import counterlogs
    run = flowtraffic.instance("shift", 11, LINK, 1.0, train_flows.TRACE_DIR)
    pairs = [("10.0.0.%d" % k, "x") for k in range(len(run.counts))]
    (tmp_path / "v1").mkdir()
    (tmp_path / "v2").mkdir()
    lines = _v1(np.round(run.counts), pairs)
    lines[0] = json.dumps(dict(json.loads(lines[0]), pattern="shift"))
    (tmp_path / "v1" / "a.jsonl").write_text("\n".join(lines) + "\n")
    write_log(tmp_path / "v2" / "a.jsonl", np.round(run.counts), pairs, pattern="shift")
    one, two = counterlogs.dataset(str(tmp_path / "v1")), counterlogs.dataset(str(tmp_path / "v2"))
    assert one[1:] == two[1:] and len(one[0]["shift"]) == len(two[0]["shift"]) == 1
    a, b = one[0]["shift"][0], two[0]["shift"][0]
    assert a.pairs == b.pairs and a.counts.tolist() == b.counts.tolist() and a.labels.tolist() == b.labels.tolist()
    with open(tmp_path / "v2" / "a.jsonl", "a", encoding="utf-8") as f:
        f.write('{"poll": 99, "counts": [["a", "b", 1]]}\n')
    with pytest.raises(flows.CounterLogError) as err:
        counterlogs.dataset(str(tmp_path / "v2"))
    assert str(err.value).startswith(str(tmp_path / "v2" / "a.jsonl") + ": line %d: count" % (len(lines) + 1))


def test_the_bench_scores_version_1_and_2_logs_and_keeps_its_results_past_a_bad_one(tmp_path, capsys):
    import bench_setup  # noqa: F401  (puts bench/ on sys.path)
    import bench_flowdetect
    (tmp_path / "counters").mkdir()
    counts = np.array([[0, 5, 12, 12, 12, 0], [9, 9, 9, 9, 9, 9]], dtype=float)
    pairs = [("a", "b"), ("e", "f")]
    write_log(tmp_path / "v2.jsonl", counts, pairs)
    logs = {"shift-threshold-1": (tmp_path / "v2.jsonl").read_text().splitlines(),
            "shift-threshold-2": _v1(counts, pairs),
            "shift-threshold-3": _v1(counts, pairs)[:3] + ['{"poll": 4, "counts": [["a", "b", 7]]}']}
    for name, lines in logs.items():
        with gzip.open(tmp_path / "counters" / (name + ".jsonl.gz"), "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    results = {"shift": {"threshold": [{"seconds": 1.0, "detected": []} for _ in range(3)]}}
    bench_flowdetect.add_counter_scores(results, str(tmp_path))
    one, two, bad = results["shift"]["threshold"]
    assert one["counters"] == two["counters"] and one["counters"]["elephants"] == 1
    assert "counters" not in bad and "shift-threshold-3.jsonl.gz: line 4: count" in bad["counters_error"]
    assert "line 4: count" in capsys.readouterr().err
    assert "| shift | threshold | 3 |" in bench_flowdetect.summary(results, ["shift"], ["threshold"])


def test_read_log_adds_each_polls_time_and_flags_to_the_counts(tmp_path):
    counts = np.array([[0, 3000, 9000, 600], [66, 132, 0, 66]], dtype=float)
    pairs = [("10.0.0.1", "10.0.0.3"), ("10.0.0.3", "10.0.0.1")]
    log = flows.CounterLog(str(tmp_path / "c.jsonl"), interval_s=1.0, link_rate_Bps=LINK)
    cum = np.cumsum(counts, axis=1)
    for t in range(4):
        log.poll(t + 1, {p: cum[i, t] for i, p in enumerate(pairs)}, {}, {pairs[0]: 2} if t == 2 else {},
                 packets={p: t + 1 for p in pairs})
    log.close()
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    got = counterlog.read_log(lines)
    header, got_pairs, got_counts, packets = counterlog.read_packets(lines)
    assert got.header == header and got.pairs == got_pairs == pairs and got.counts.tolist() == counts.tolist()
    assert got.packets.tolist() == packets.tolist()
    assert got.times.tolist() == [json.loads(line)["t"] for line in lines[1:]]
    assert got.flags == [[], [], [("10.0.0.1", "10.0.0.3", 2)], []]
    assert counterlog.read_log(lines, with_packets=False).packets is None
    no_time = [lines[0], json.dumps(dict(json.loads(lines[1]), t=None)), json.dumps({"counts": [], "flagged": []})]
    assert np.isnan(counterlog.read_log(no_time).times).all()


def test_parse_gives_the_polls_as_written_from_a_plain_or_gzipped_file(tmp_path):
    counts = np.array([[0, 30, 100], [5, 5, 5]], dtype=float)
    pairs = [("10.0.0.1", "10.0.0.3"), ("10.0.0.2", "10.0.0.4")]
    write_log(tmp_path / "c.jsonl", counts, pairs, pattern="shift")
    text = (tmp_path / "c.jsonl").read_text()
    with gzip.open(tmp_path / "c.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(text + "\n")                                                  # a blank last line: skipped
    lines = counterlog.file_lines(str(tmp_path / "c.jsonl"))
    assert lines == text.splitlines(True) and counterlog.file_lines(str(tmp_path / "c.jsonl.gz")) == lines + ["\n"]
    header, polls = counterlog.parse(counterlog.file_lines(str(tmp_path / "c.jsonl.gz")))
    assert header == json.loads(lines[0]) and polls == [json.loads(line) for line in lines[1:]]
    assert [p["poll"] for p in polls] == [1, 2, 3] and polls[2]["counts"][0][3] == 130
    with pytest.raises(counterlog.CounterLogError, match="line 3: not JSON"):
        counterlog.parse(lines[:2] + ["{"])


def test_a_file_it_cannot_read_is_one_counter_log_error_naming_it(tmp_path):
    missing, broken, latin = (str(tmp_path / n) for n in ("none.jsonl", "broken.jsonl.gz", "latin.jsonl"))
    (tmp_path / "broken.jsonl.gz").write_bytes(gzip.compress(b'{"format": 1}\n')[:12])   # a cut gzip stream
    (tmp_path / "latin.jsonl").write_bytes(b'{"pattern": "caf\xe9"}\n')
    for path in (missing, broken, latin):
        with pytest.raises(counterlog.CounterLogError) as err:
            counterlog.file_lines(path)
        assert str(err.value).startswith(path + ": ") and "\n" not in str(err.value)
    write_log(tmp_path / "c.jsonl", np.array([[0, 30, 100]], dtype=float), [("10.0.0.1", "10.0.0.3")])
    good = str(tmp_path / "c.jsonl")
    assert counterlog.from_file(good, counterlog.parse) == counterlog.parse(counterlog.file_lines(good))
    (tmp_path / "bad.jsonl").write_text((tmp_path / "c.jsonl").read_text() + "{\n")
    with pytest.raises(counterlog.CounterLogError, match=r"^.*bad\.jsonl: line 5: not JSON"):
        counterlog.from_file(str(tmp_path / "bad.jsonl"), counterlog.parse)
    with pytest.raises(counterlog.CounterLogError, match=r"none\.jsonl: ") as err:
        counterlog.from_file(missing, counterlog.parse)
    assert str(err.value).count(missing) == 1


def test_read_header_reads_the_header_only_and_names_the_file_in_its_errors(tmp_path):
    write_log(tmp_path / "c.jsonl", np.array([[0, 30, 100]], dtype=float), [("10.0.0.1", "10.0.0.3")])
    first = (tmp_path / "c.jsonl").read_text().splitlines(True)[0]
    # the polls after the header are not read: a broken one does not matter; blank lines before it are skipped
    with gzip.open(tmp_path / "g.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("\n" + first + "{oops\n")
    got = counterlog.read_header(str(tmp_path / "g.jsonl.gz"))
    assert got == json.loads(first) and got["link_rate_Bps"] == LINK and got["interval_s"] == 1.0
    assert got == counterlog.from_file(str(tmp_path / "c.jsonl"), counterlog.parse)[0]
    missing, broken = str(tmp_path / "none.jsonl"), str(tmp_path / "broken.jsonl.gz")
    (tmp_path / "broken.jsonl.gz").write_bytes(gzip.compress(first.encode())[:12])       # a cut gzip stream
    for path in (missing, broken):
        with pytest.raises(counterlog.LogFileError) as err:
            counterlog.read_header(path)
        assert str(err.value).startswith(path + ": ") and "\n" not in str(err.value)
    bad = {"v3.jsonl": (json.dumps(dict(json.loads(first), version=3)) + "\n", "version 3"),
           "text.jsonl": ("hello\n", "not a counter log"), "empty.jsonl": ("\n", "empty counter log"),
           "rate.jsonl": (json.dumps(dict(json.loads(first), link_rate_Bps=0)) + "\n", "link_rate_Bps must be")}
    for name, (text, says) in bad.items():
        path = str(tmp_path / name)
        (tmp_path / name).write_text(text)
        with pytest.raises(counterlog.CounterLogError) as err:
            counterlog.read_header(path)
        assert not isinstance(err.value, counterlog.LogFileError)         # the file reads; its header does not
        assert str(err.value).startswith(path + ": ") and str(err.value).count(path) == 1 and says in str(err.value)
        assert "\n" not in str(err.value)
