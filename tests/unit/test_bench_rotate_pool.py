"""--rotate-routings runs pooled by rounds (rotate_compare.pool, compare_pooled, bench/rotate_pool.py)
and the deployed view (sdnmpi under the default routing against the best routing's Open MPI), on
made-up data (pure; no Mininet, no controller)."""
import collections
import json
import math
import random

import pytest

import bench_setup  # noqa: F401  (bench/ on sys.path)

import report_rotate
import rotate_compare
import rotate_pool

ROUTINGS = ["single", "dmodk", "ecmp"]


def _records(medians, rounds, calls=4, noise=0.0, seed=0, sizes=(4096,), placement="block"):
    """One rotation job's records; ``medians`` {(impl, routing): seconds} (lognormal noise)."""
    rng = random.Random(seed)
    recs = {}
    for block, routing in enumerate(rotate_compare.block_schedule(ROUTINGS, rounds)):
        for nbytes in sizes:
            for impl in ("openmpi", "sdnmpi"):
                rec = recs.setdefault((impl, routing, nbytes), {
                    "collective": "allreduce", "impl": impl, "routing": routing, "placement": placement,
                    "bytes": nbytes, "samples_s": [], "rotation_blocks": []})
                for _ in range(calls):
                    rec["samples_s"].append(medians[(impl, routing)] * math.exp(rng.gauss(0, noise)))
                    rec["rotation_blocks"].append(block)
    return list(recs.values())


def _flat(openmpi, sdnmpi):
    return {**{("openmpi", r): openmpi for r in ROUTINGS}, **{("sdnmpi", r): sdnmpi for r in ROUTINGS}}


# --- pooling -----------------------------------------------------------------------------------

def test_every_draw_keeps_each_jobs_round_count():
    rounds = [(0, r) for r in range(6)] + [(1, r) for r in range(10)]
    strata = rotate_compare.strata_of(rounds)
    assert [len(s) for s in strata] == [6, 10]
    assert rotate_compare.strata_of(list(range(4))) == [[0, 1, 2, 3]]     # one job: one stratum
    rng = random.Random(3)
    for _ in range(50):
        drawn = rotate_compare._draw(rng, strata)
        assert collections.Counter(job for job, _r in drawn) == {0: 6, 1: 10}


def test_pooled_rounds_are_resampled_within_each_job_and_the_jobs_ratios_combined():
    """Two jobs on different levels of the machine (Open MPI 1 s in one, 3 s in the other; sdnmpi
    2 s in both), of 6 and 10 rounds. The pooled ratio is the jobs' ratios' geometric mean weighted by
    their rounds (the median of all samples would say 3 / 2: 40 of Open MPI's 64 samples are at 3 s).
    Resampled within each job, every draw holds each job's share, so the interval is one value;
    resampled across jobs it would swing between 1/2 and 3/2."""
    jobs = [_records(_flat(1.0, 2.0), rounds=6), _records(_flat(3.0, 2.0), rounds=10)]
    rows = rotate_compare.compare_pooled(jobs, 3, draws=300)
    row = rows[("block", 4096)]
    expected = math.exp((6 * math.log(0.5) + 10 * math.log(1.5)) / 16)
    assert row["rounds"] == 16 and row["sdnmpi_median_s"] == pytest.approx(2.0)
    assert row["every"]["dmodk"]["ratio"] == pytest.approx(expected)
    for view in [row["every"][r]["interval"] for r in ROUTINGS] + [row["cross_fit_interval"],
                                                                   row["deployed"]["interval"]]:
        assert view[0] == pytest.approx(view[1])
    assert row["cross_fit"] == pytest.approx(expected) and row["deployed"]["ratio"] == pytest.approx(expected)


def test_pooling_narrows_the_interval_and_one_job_pools_to_itself():
    medians = {("openmpi", "single"): 1.2, ("openmpi", "dmodk"): 1.0, ("openmpi", "ecmp"): 1.2}
    medians.update({("sdnmpi", r): 1.0 for r in ROUTINGS})
    jobs = [_records(medians, rounds=10, noise=0.3, seed=s) for s in range(4)]
    one = rotate_compare.compare(jobs[0], 3, draws=400)[("block", 4096)]
    alone = rotate_compare.compare_pooled(jobs[:1], 3, draws=400)[("block", 4096)]
    assert alone == one                                  # one job pooled: the same numbers as its own run
    four = rotate_compare.compare_pooled(jobs, 3, draws=400)[("block", 4096)]
    width = [math.log(r["cross_fit_interval"][1] / r["cross_fit_interval"][0]) for r in (one, four)]
    assert four["rounds"] == 40 and width[1] < 0.7 * width[0]


def test_pooling_runs_of_other_sizes_or_routings_is_refused():
    a = rotate_compare.rounds_of(_records(_flat(1.0, 1.0), rounds=2), 3)
    b = rotate_compare.rounds_of(_records(_flat(1.0, 1.0), rounds=2, sizes=(4096, 8192)), 3)
    with pytest.raises(ValueError, match="job 1 has the rows block/4096 B, block/8192 B, job 0 block/4096 B"):
        rotate_compare.pool([a, b])
    c = {key: {impl: {r: v for r, v in by.items() if r != "ecmp"} for impl, by in data.items()}
         for key, data in a.items()}
    with pytest.raises(ValueError, match="routings"):
        rotate_compare.pool([a, c])
    with pytest.raises(ValueError):
        rotate_compare.pool([])


# --- the deployed view -------------------------------------------------------------------------

def test_the_deployed_view_takes_sdnmpi_from_the_default_routings_blocks():
    """sdnmpi 1 s under dmodk, 2 s under single and ecmp (the switched blocks' tail); Open MPI's best
    is dmodk at 1.2 s. Pooled over every block sdnmpi looks slower (1.2 / 2); deployed it is faster."""
    medians = {("openmpi", "single"): 1.5, ("openmpi", "dmodk"): 1.2, ("openmpi", "ecmp"): 1.5,
               ("sdnmpi", "single"): 2.0, ("sdnmpi", "dmodk"): 1.0, ("sdnmpi", "ecmp"): 2.0}
    row = rotate_compare.compare(_records(medians, rounds=12, noise=0.05), 3, draws=400)[("block", 4096)]
    assert rotate_compare.verdict(row)["cross_fit"] is True
    dep = row["deployed"]
    assert dep["routing"] == "dmodk" and dep["chosen"] == ["dmodk", "dmodk"]
    assert dep["sdnmpi_median_s"] == pytest.approx(1.0, rel=0.03)
    assert dep["ratio"] == pytest.approx(1.2, rel=0.05) and dep["interval"][0] > 1.0
    assert rotate_compare.deployed_verdict(row) == "faster"


def test_the_deployed_view_compares_with_the_best_routing_not_the_default_one():
    medians = {("openmpi", "single"): 0.8, ("openmpi", "dmodk"): 1.2, ("openmpi", "ecmp"): 1.5}
    medians.update({("sdnmpi", r): 1.0 for r in ROUTINGS})
    row = rotate_compare.compare(_records(medians, rounds=12, noise=0.05), 3, draws=400)[("block", 4096)]
    assert row["deployed"]["chosen"] == ["single", "single"]
    assert row["deployed"]["ratio"] == pytest.approx(0.8, rel=0.05)
    assert rotate_compare.deployed_verdict(row) == "slower"
    assert rotate_compare.deployed_verdict(row, threshold=0.5) == "within"


def test_no_deployed_view_without_the_default_routing_or_enough_rounds():
    medians = _flat(1.0, 1.0)
    recs = [r for r in _records(medians, rounds=12) if r["routing"] != "dmodk"]
    row = rotate_compare.compare(recs, 3, draws=50)[("block", 4096)]
    assert row["deployed"] is None and rotate_compare.deployed_verdict(row) is None
    few = rotate_compare.compare(_records(medians, rounds=4), 3, draws=50)[("block", 4096)]
    assert few["deployed"]["ratio"] == pytest.approx(1.0) and few["deployed"]["interval"] is None
    assert rotate_compare.deployed_verdict(few) is None


def test_the_pmpi_threshold_and_the_deployed_table():
    assert report_rotate.pmpi_below({}) == 2048 and report_rotate.pmpi_below(None) == 2048
    assert report_rotate.pmpi_below({"SDN_MPI_MIN_BYTES": "4k"}) == 4096
    assert report_rotate.pmpi_below({"SDN_MPI_MIN_BYTES": "0"}) == 0
    assert report_rotate.pmpi_below({"SDN_MPI_MIN_BYTES": "lots"}) == 2048     # the library ignores it too
    medians = {("openmpi", "single"): 1.5, ("openmpi", "dmodk"): 1.2, ("openmpi", "ecmp"): 1.5,
               ("sdnmpi", "single"): 2.0, ("sdnmpi", "dmodk"): 1.0, ("sdnmpi", "ecmp"): 2.0}
    rows = rotate_compare.compare(_records(medians, rounds=10, sizes=(8, 4096)), 3, draws=200)
    text = "\n".join(report_rotate.deployed_lines(rows, 2048))
    assert "| block | 8 B | 10 | PMPI (fallback) | 1.00 s | dmodk/dmodk | 1.20 (1.20-1.20) | faster |" in text
    assert "| block | 4 KiB | 10 | SDN path |" in text
    assert "sdnmpi slower in 0 of 2 rows, faster in 2" in text
    results = {"method": {"rotation": rotate_compare.block_schedule(ROUTINGS, 10)},
               "records": _records(medians, rounds=10), "mpirun": {"sdn_env": {"SDN_MPI_MIN_BYTES": "8k"}}}
    assert "| block | 4 KiB | 10 | PMPI (fallback) |" in "\n".join(report_rotate.section(results))


# --- the command -------------------------------------------------------------------------------

def _run_dir(tmp_path, name, rounds, sizes=(8, 4096), medians=None, other_cpu=1.0):
    medians = medians or _flat(1.0, 0.9)
    folder = tmp_path / name
    folder.mkdir()
    results = {"started": "2026-11-30T23:00:00", "fabric": {"hosts": 8},
               "method": {"rotation": rotate_compare.block_schedule(ROUTINGS, rounds), "allreduce_sizes": list(sizes),
                          "placements": {"block": list(range(1, 9))}},
               "mpirun": {"sdn_env": {}},
               "jobs": [{"name": "allreduce-rotate-block-p8", "placement": "block", "wall_s": 240.0,
                         "cpu": {"foreign_cpu_pct_of_one_cpu": {"median": other_cpu, "p90": 2 * other_cpu}},
                         "routes": {"rotation": [{"block": 0, "routing": "single", "changed": True, "s": 0.6}]}}],
               "records": _records(medians, rounds=rounds, sizes=sizes, noise=0.1, seed=len(name))}
    (folder / "results.json").write_text(json.dumps(results))
    return str(folder)


def test_the_command_pools_runs_of_different_lengths(tmp_path):
    runs = [_run_dir(tmp_path, "a", 6), _run_dir(tmp_path, "bb", 10, other_cpu=40.0)]
    out = tmp_path / "pool"
    assert rotate_pool.main(runs + ["--out", str(out), "--draws", "100"]) == 0
    text = (out / "results.md").read_text()
    assert "# Against the best of Open MPI's routings, 2 rotation runs pooled by rounds" in text
    assert "Command: `" in text and "bench/rotate_pool.py %s %s --out %s --draws 100`" % (runs[0], runs[1], out) in text
    assert "- run 0: [a](../a/results.md) (started 2026-11-30T23:00:00; complete rounds per row 6)" in text
    assert "- run 1: [bb](../bb/results.md)" in text and "other processes 40 / 80 % of a CPU" in text
    assert "| block | 4 KiB | 16 |" in text and "### Deployed: sdnmpi under the default routing (dmodk)" in text
    rows = json.loads((out / "pool.json").read_text())["rows"]
    assert [(r["bytes"], r["rounds"]) for r in rows] == [(8, 16), (4096, 16)]


def test_the_command_refuses_runs_of_other_sizes_in_one_line(tmp_path, capsys):
    runs = [_run_dir(tmp_path, "a", 6), _run_dir(tmp_path, "b", 6, sizes=(8, 8192))]
    with pytest.raises(SystemExit) as exc:
        rotate_pool.main(runs + ["--out", str(tmp_path / "pool")])
    message = str(exc.value.code)
    assert message.startswith("rotate_pool: %s has sizes [8,8192], %s has [8,4096]" % (runs[1], runs[0]))
    assert "\n" not in message and not (tmp_path / "pool").exists()
    with pytest.raises(SystemExit) as exc:
        rotate_pool.main([runs[0], "--placements", "random"])
    assert str(exc.value.code) == "rotate_pool: %s: no random placement (it has block)" % runs[0]
