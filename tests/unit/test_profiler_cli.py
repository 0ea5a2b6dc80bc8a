"""sdnmpi-prof (show, plot) on traces of the profiler, of PFProf (the public CG trace) and of an
unmodified real application (hpcc from apt on 4 ranks, also replayed by sdnmpi-sim), and its
one-line errors (exit 2) on
truncated, non-JSON, missing and disagreeing rank files."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import profiler_harness as ph
from sdnmpi.profiler import cli

CG = Path(__file__).resolve().parents[1] / "data" / "pfsim" / "traces" / "cg-c-128.tar.gz"
CLI = Path(sys.executable).parent / "sdnmpi-prof"
HPCC = shutil.which("hpcc")
HPCC_TEMPLATE = Path("/usr/share/doc/hpcc/examples/_hpccinf.txt")


def sdnmpi_prof(*args):
    """The installed console script: (exit code, stdout, stderr)."""
    res = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120)
    return res.returncode, res.stdout, res.stderr


def assert_one_line_error(args, *needles):
    rc, out, err = sdnmpi_prof(*args)
    assert rc == 2 and out == "", (rc, out, err)
    assert err.count("\n") == 1 and err.startswith("sdnmpi-prof: ") and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


@pytest.fixture
def ring_trace(built, mpirun_path, tmp_path):
    """A 4-rank ring job (1000 bytes x 3 per rank) profiled under Open MPI: its directory."""
    ph.run("openmpi", 4, ["ring", 1000], tmp_path, env={"SDN_MPI_PROF_JOB": "ring"})
    return tmp_path


def test_show_our_trace(ring_trace, capsys):
    assert cli.main(["show", str(ring_trace / "ring.tar.gz"), "--top", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "ranks      4" in out and "source     pmpi" in out
    assert "bytes      12000 (11.7 KiB) in 12 messages" in out
    assert "density    33.3 % of rank pairs exchanged messages" in out
    pairs = out[out.index("top pairs  (src -> dst: bytes, messages)") + 1:][:2]
    assert [p.split() for p in pairs] == [["0", "->", "1", "3000", "3"], ["1", "->", "2", "3000", "3"]]
    assert "  [512 B, 1.0 KiB)  12" in out


def test_show_and_plot_pfprof_trace(tmp_path, capsys):
    assert cli.main(["show", str(CG), "--top", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "ranks      128" in out and "source     PFProf (no source field)" in out
    png = tmp_path / "cg.png"
    assert cli.main(["plot", str(CG), "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_a_phase(built, mpirun_path, tmp_path):
    ph.run("openmpi", 4, ["phases", 64], tmp_path)
    png = tmp_path / "p2.png"
    rc, _, err = sdnmpi_prof("plot", tmp_path, "-o", png, "--phase", "2")
    assert rc == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert_one_line_error(("plot", tmp_path, "-o", png, "--phase", "3"), "phase 3 does not exist", str(tmp_path))
    assert_one_line_error(("plot", tmp_path, "-o", tmp_path / "no" / "x.png"), "cannot write the plot")


def test_hpcc_unmodified_under_the_profiler(built, mpirun_path, tmp_path, capsys):
    """HPC Challenge from apt, 4 ranks, a tiny problem (N=200): a trace the reader and show accept,
    and in it every rank talks to every other (HPL's panel broadcasts, PTRANS, the ring tests)."""
    if HPCC is None:
        pytest.fail("hpcc is missing: scripts/install-deps.sh installs it")
    text = HPCC_TEMPLATE.read_text().replace("1000         Ns", "200          Ns").replace(
        "80           NBs", "20           NBs")
    (tmp_path / "hpccinf.txt").write_text(text)
    res = subprocess.run(
        ["timeout", "-k", "10", "300", mpirun_path, "--oversubscribe", "-np", "4", "--mca", "btl", "self,vader",
         "--mca", "mpi_yield_when_idle", "1", "-x", "LD_PRELOAD=%s" % ph.PROF, "-x", "SDN_MPI_PROF_JOB=hpcc",
         HPCC], cwd=tmp_path, capture_output=True, text=True,
        env=dict(subprocess.os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "End of HPC Challenge tests." in (tmp_path / "hpccoutf.txt").read_text()
    from sdnmpi import traces

    trace = traces.load(tmp_path / "hpcc.tar.gz")
    assert trace.n_procs == 4 and trace.source == "pmpi"
    sent = trace.traffic_matrix()
    assert (sent[~np.eye(4, dtype=bool)] > 0).all()
    assert (trace.rx_bytes == trace.tx_bytes.T).all()
    assert cli.main(["show", str(tmp_path / "hpcc.tar.gz")]) == 0
    assert "ranks      4" in capsys.readouterr().out
    # ... and the simulator replays it: 4 ranks on 4 hosts of a leaf-spine, 12 host pairs
    sim = subprocess.run([str(CLI.parent / "sdnmpi-sim"), "job", "--topology", "leafspine:spines=2,leaves=2,hosts=2",
                          "--trace", str(tmp_path / "hpcc.tar.gz"), "--json"], capture_output=True, text=True,
                         timeout=120)
    assert sim.returncode == 0, sim.stderr
    result = json.loads(sim.stdout)
    assert result["n_procs"] == 4 and result["host_pairs"] == 12 and result["max_link_bytes"] > 0


@pytest.mark.parametrize("damage,needles", [
    ("truncate", ("oxton-result1.json", "not valid JSON")),
    ("not_json", ("oxton-result1.json", "not valid JSON")),
    ("missing", ("oxton-result1.json missing",)),
    ("n_procs", ("oxton-result", "n_procs")),
])
def test_bad_input_is_one_line_exit_2(ring_trace, damage, needles):
    bad = ring_trace / "bad"
    bad.mkdir()
    for r in range(4):
        shutil.copy(ring_trace / ("oxton-result%d.json" % r), bad)
    victim = bad / "oxton-result1.json"
    if damage == "truncate":
        victim.write_bytes(victim.read_bytes()[:200])
    elif damage == "not_json":
        victim.write_text("this is not json\n")
    elif damage == "missing":
        victim.unlink()
    else:
        record = json.loads(victim.read_text())
        record["n_procs"] = 5
        victim.write_text(json.dumps(record))
    assert_one_line_error(("show", bad), *needles)


def test_missing_trace_and_broken_archive(tmp_path):
    assert_one_line_error(("show", tmp_path / "nothing.tar.gz"), str(tmp_path / "nothing.tar.gz"))
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(CG.read_bytes()[:5000])
    assert_one_line_error(("show", broken), str(broken))


@pytest.mark.parametrize("args", [
    ("sdnmpi-prof", "show", CG, "--top", "100"),
    ("sdnmpi-sim", "job", "--topology", "leafspine:spines=4,leaves=16,hosts=8", "--trace", CG),
])
def test_a_reader_that_left_early_gets_no_traceback(args):
    """`... | head`: the reader is gone before the first write, so every write fails with EPIPE."""
    proc = subprocess.Popen([str(CLI.parent / args[0]), *map(str, args[1:])], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1 and "Traceback" not in err and "BrokenPipe" not in err, err
