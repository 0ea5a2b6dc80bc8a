"""sdnmpi.traces: the per-rank trace reader (PFProf's public CG trace and synthetic files)."""
import io
import json
import os
import tarfile

import numpy as np
import pytest

from sdnmpi import traces

PFSIM_DATA = os.path.join(os.path.dirname(__file__), "..", "data", "pfsim")
CG = os.path.join(PFSIM_DATA, "traces", "cg-c-128.tar.gz")


def rank_record(rank, n, tx, msgs=None, **extra):
    record = {"rank": rank, "n_procs": n, "processor_name": f"node{rank // 2}", "n_events": 3,
              "tx_bytes": list(tx), "rx_bytes": [0] * n,
              "tx_messages": list(msgs if msgs is not None else [1 if b else 0 for b in tx]),
              "rx_messages": [0] * n,
              "tx_message_sizes": [{"message_size": 8, "frequency": 2}], "rx_message_sizes": []}
    record.update(extra)
    return record


def write_dir(path, records):
    path.mkdir(exist_ok=True)
    for r in records:
        (path / f"oxton-result{r['rank']}.json").write_text(json.dumps(r))
    return path


def write_tar(path, files):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def ring(n):
    return [rank_record(r, n, [100 * (r + 1) if j == (r + 1) % n else 0 for j in range(n)])
            for r in range(n)]


def test_public_cg_trace():
    trace = traces.load(CG)
    assert trace.n_procs == 128
    assert trace.tx_bytes.shape == (128, 128) and trace.tx_bytes.dtype == np.int64
    # rank 0's file as published: 148,200,000 B in 1,976 messages to ranks 1 and 2, none to 3
    assert trace.tx_bytes[0, 1] == 148200000 and trace.tx_messages[0, 1] == 1976
    assert trace.tx_messages[0, 3] == 0
    assert trace.rx_bytes[0, 1] == 148232840 and trace.rx_messages[0, 1] == 6006
    assert trace.processor_names[0] == "milk01" and trace.processor_names[127] == "milk16"
    assert (75000, 9880) in trace.tx_message_sizes[0]
    assert trace.source is None and trace.durations == [None] * 128
    assert trace.phases == [trace]
    tm = trace.traffic_matrix()
    assert (tm[trace.tx_messages == 0] == 0).all()
    assert (tm[trace.tx_messages > 0] == trace.tx_bytes[trace.tx_messages > 0]).all()


def test_directory_tar_and_single_file_agree(tmp_path):
    records = ring(4)
    d = write_dir(tmp_path / "d", records)
    t = write_tar(tmp_path / "t.tgz", {f"job/oxton-result{r['rank']}.json": json.dumps(r).encode()
                                       for r in records})
    a, b = traces.load(d), traces.load(t)
    for trace in (a, b):
        assert trace.n_procs == 4
        assert trace.tx_bytes[3, 0] == 400 and trace.tx_bytes[0, 1] == 100
        assert trace.tx_bytes.sum() == 1000
    assert (a.tx_messages == b.tx_messages).all()
    single = write_dir(tmp_path / "one", [rank_record(0, 1, [0])])
    assert traces.load(single / "oxton-result0.json").n_procs == 1


def test_traffic_matrix_drops_pairs_without_messages(tmp_path):
    rec = [rank_record(0, 2, [5, 7], msgs=[0, 0]), rank_record(1, 2, [9, 0], msgs=[3, 0])]
    trace = traces.load(write_dir(tmp_path / "d", rec))
    assert trace.traffic_matrix().tolist() == [[0, 0], [9, 0]]


def test_phases_and_source(tmp_path):
    def phase(tx):
        return {"tx_bytes": tx, "rx_bytes": [0, 0], "tx_messages": [1 if b else 0 for b in tx],
                "rx_messages": [0, 0], "duration": 1.5}
    recs = [rank_record(0, 2, [0, 30], source="mpi_t", duration=3.0, n_phases=3,
                        phases=[phase([0, 30]), phase([0, 10]), phase([0, 20])]),
            rank_record(1, 2, [6, 0], source="mpi_t", duration=3.0, n_phases=3,
                        phases=[phase([6, 0]), phase([6, 0]), phase([0, 0])])]
    trace = traces.load(write_dir(tmp_path / "d", recs))
    assert trace.source == "mpi_t" and trace.durations == [3.0, 3.0]
    assert len(trace.phases) == 3 and trace.phases[0] is trace
    assert trace.phases[1].tx_bytes.tolist() == [[0, 10], [6, 0]]
    assert trace.phases[2].tx_bytes.tolist() == [[0, 20], [0, 0]]
    assert trace.phases[1].durations == [1.5, 1.5]
    assert (trace.phases[1].tx_bytes + trace.phases[2].tx_bytes == trace.tx_bytes).all()


def error_of(path):
    with pytest.raises(traces.TraceError) as info:
        traces.load(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_truncated_json_names_the_file(tmp_path):
    d = write_dir(tmp_path / "d", ring(3))
    (d / "oxton-result1.json").write_text(json.dumps(ring(3)[1])[:40])
    assert "oxton-result1.json" in error_of(d) and "JSON" in error_of(d)


def test_truncated_archive_names_the_archive(tmp_path):
    t = write_tar(tmp_path / "t.tar.gz", {f"oxton-result{r['rank']}.json": json.dumps(r).encode()
                                          for r in ring(3)})
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(t.read_bytes()[:60])
    assert "cut.tar.gz" in error_of(cut)


def test_missing_rank_file(tmp_path):
    d = write_dir(tmp_path / "d", ring(4))
    (d / "oxton-result2.json").unlink()
    assert "oxton-result2.json missing" in error_of(d)


def test_rank_count_disagreement_names_the_file(tmp_path):
    recs = ring(3)
    recs[2]["n_procs"] = 4
    assert "oxton-result2.json" in error_of(write_dir(tmp_path / "d", recs))


def test_bad_rows_and_names(tmp_path):
    recs = ring(3)
    recs[1]["tx_bytes"] = [1, 2]
    assert "oxton-result1.json" in error_of(write_dir(tmp_path / "a", recs))
    recs = ring(3)
    recs[0]["rank"] = 2
    assert "oxton-result0.json" in error_of(write_dir(tmp_path / "b", recs))
    (tmp_path / "empty").mkdir()
    assert "empty" in error_of(tmp_path / "empty")
    assert "nowhere" in error_of(tmp_path / "nowhere")
