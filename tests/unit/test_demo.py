"""make demo's collectives step: its options, the two bench jobs it plans on the demo's fabric, the
table it prints and when it fails. Pure: no Mininet, no MPI, no root."""
import pytest

from sdnmpi.mininet_topos import demo

MIB = 1 << 20


@pytest.fixture(scope="module")
def run():
    return demo.load_bench()


def demo_jobs(run, argv=(), have_sdn_bcast=True):
    args = demo.parse_args(list(argv))
    bargs = run.parse_args(demo.bench_argv(args, 6799))
    fab = run.benchcore.Fabric(args.spines, args.leaves, args.hosts_per_leaf, args.host_bw, args.fabric_bw)
    return bargs, run.plan_jobs(bargs, fab, have_sdn_bcast)


def record(run, collective, impl, samples, hosts, root=None, **extra):
    fab = run.benchcore.Fabric(2, 4, 2, 40, 20)
    limit = (run.benchcore.allreduce_limit(fab, hosts, MIB) if collective == "allreduce"
             else run.benchcore.bcast_limit(fab, hosts, root, MIB))
    placement = "random" if collective == "allreduce" else "block"
    return run.benchcore.make_record(collective, impl, "dmodk", placement, len(hosts), MIB, root,
                                     samples, limit, **extra)


# --- planning ---------------------------------------------------------------------------------

def test_default_demo_plans_one_allreduce_and_one_bcast_job_on_all_hosts(run):
    bargs, jobs = demo_jobs(run)
    assert [(j["collective"], j["routing"], j["placement"], j["nprocs"]) for j in jobs] == [
        ("allreduce", "dmodk", "random", 8), ("bcast", "dmodk", "block", 8)]
    assert all(j["sizes"] == [MIB] and j["reps"] == 3 for j in jobs)
    assert jobs[1]["roots"] == [0]                        # bcast from rank 0 only
    assert sorted(jobs[0]["hosts"]) == list(range(1, 9)) and jobs[0]["hosts"] != list(range(1, 9))
    assert jobs[0]["tiny_reps"] == 0                      # no 8-byte calls, no route switches for them
    assert bargs.planner_max_hosts == 0 and bargs.iperf_seconds == 0
    assert bargs.rpc_port == 6799 and bargs.ofp_port == 6653 and bargs.wsapi_port == 8080
    # the demo's 30/15 fabric (the bench's): sdnmpi's bcast paces each of its 2 trees at the 15 Mbit/s links
    assert run.sdn_env(bargs)["SDN_MPI_BCAST_RATE_MBPS"] == "15"
    # a few minutes, not the bench's hour
    assert sum(j["work"] for j in jobs) < 120


def test_demo_options_reach_the_bench_jobs(run):
    bargs, jobs = demo_jobs(run, ["--routing", "ecmp", "--leaves", "2", "--coll-size", "256k",
                                  "--coll-reps", "5", "--host-bw", "0", "--fabric-bw", "10"])
    assert [(j["routing"], j["nprocs"], j["sizes"], j["reps"]) for j in jobs] == [
        ("ecmp", 4, [256 * 1024], 5), ("ecmp", 4, [256 * 1024], 5)]
    assert bargs.host_bw == 0 and bargs.fabric_bw == 10
    # without an SDN_MPI_Bcast in the library the bcast job measures Open MPI only
    assert [j["nimpl"] for j in demo_jobs(run, have_sdn_bcast=False)[1]] == [2, 1]


def test_bad_collective_options_are_refused_before_anything_starts(capsys):
    for argv in (["--coll-size", "1m,2m"], ["--coll-size", "lots"], ["--coll-size", "0"],
                 ["--coll-reps", "0"]):
        with pytest.raises(SystemExit):
            demo.parse_args(argv)
    assert "--coll-size" in capsys.readouterr().err
    # --no-collectives does not look at them at all
    assert demo.parse_args(["--no-collectives", "--coll-size", "lots"]).no_collectives


def test_no_collectives_leaves_only_the_collectives_step_out():
    names = [s.__name__ for s in demo.selected_steps(demo.parse_args([]))]
    assert names[-1] == "step_collectives" and names[:-1] == [s.__name__ for s in demo.STEPS[:-1]]
    assert "step_collectives" not in [s.__name__ for s in demo.selected_steps(
        demo.parse_args(["--no-collectives"]))]


def test_bcast_roots_option(run):
    fab = run.benchcore.Fabric(2, 4, 2, 40, 20)
    assert run.bcast_roots("auto", fab, [1, 2, 3, 4]) == [0, 2]
    assert run.bcast_roots("0", fab, [1, 2, 3, 4]) == [0]
    assert run.bcast_roots("3,1", fab, [1, 2, 3, 4]) == [3, 1]
    for bad in ("4", "-1", ""):
        with pytest.raises(ValueError):
            run.bcast_roots(bad, fab, [1, 2, 3, 4])


# --- the table --------------------------------------------------------------------------------

def test_table_has_one_row_per_collective_with_medians_speedup_and_fractions_of_the_limit(run):
    random_hosts = run.benchcore.placement_hosts("random", 8, 8, 7)
    block = list(range(1, 9))
    records = [record(run, "allreduce", "openmpi", [2.0, 1.9, 2.4], random_hosts),
               record(run, "allreduce", "sdnmpi", [1.0, 1.2, 0.9], random_hosts),
               record(run, "bcast", "openmpi", [0.5, 0.6, 0.55], block, root=0),
               record(run, "bcast", "sdnmpi", [1.1, 1.0, 1.2], block, root=0),
               run.benchcore.make_record("init", "sdnmpi", "dmodk", "random", 8, 8, None, [0.1], None,
                                         metric="sdn_init")]
    lines = run.report.text_table(records)
    assert len(lines) == 3                                   # header + 2 rows, no init row
    head, allreduce, bcast = (line.split("  ") for line in lines)
    cells = [[c.strip() for c in row if c.strip()] for row in (head, allreduce, bcast)]
    assert cells[0] == ["collective", "size", "p", "routing/placement", "Open MPI", "sdnmpi", "speedup",
                        "limit", "Open MPI/limit", "sdnmpi/limit"]
    ar_limit = records[0]["limit_s"]
    assert cells[1][:7] == ["allreduce", "1 MiB", "8", "dmodk/random", "2.00 s", "1.00 s", "2.00"]
    assert cells[1][7:] == [run.benchcore.fmt_seconds(ar_limit), "%.0f%%" % (100 * ar_limit / 2.0),
                            "%.0f%%" % (100 * ar_limit / 1.0)]
    # bcast: 1 MiB from rank 0 over 2 spines of 20 Mbit/s = 0.21 s; sdnmpi slower here
    assert cells[2] == ["bcast root 0", "1 MiB", "8", "dmodk/block", "550.0 ms", "1.10 s", "0.50 (slower)",
                        "209.7 ms", "38%", "19%"]
    # the columns line up: every cell starts where its heading does
    for heading in cells[0][1:]:
        col = lines[0].index(heading)
        assert all(line[col - 2:col] == "  " and line[col] != " " for line in lines[1:]), heading


def test_table_leaves_superseded_attempts_out_and_marks_disrupted_rows(run):
    hosts = list(range(1, 9))
    records = [record(run, "bcast", "openmpi", [9.0], hosts, root=0, superseded=True),
               record(run, "bcast", "sdnmpi", [9.0], hosts, root=0, superseded=True),
               record(run, "bcast", "openmpi", [0.6], hosts, root=0, disrupted=True),
               record(run, "bcast", "sdnmpi", [0.3], hosts, root=0, disrupted=True)]
    lines = run.report.text_table(records)
    assert len(lines) == 2 and "9.00 s" not in lines[1]
    assert lines[1].startswith("bcast root 0 !") and "2.00" in lines[1]
    assert run.report.text_table(records[:2]) is None


def test_table_without_sdnmpi_bcast_shows_dashes(run):
    hosts = list(range(1, 9))
    lines = run.report.text_table([record(run, "bcast", "openmpi", [0.6], hosts, root=0)])
    cells = [c for c in lines[1].split("  ") if c.strip()]
    assert [c.strip() for c in cells[4:7]] == ["600.0 ms", "-", "-"] and cells[-1].strip() == "-"


# --- failing the step -------------------------------------------------------------------------

def test_job_failures():
    ok = {"name": "allreduce-dmodk-random-p8", "rc": 0,
          "program": [{"bench": "meta"}, {"bench": "check", "collective": "allreduce", "ok": True}]}
    assert demo.job_failures({"jobs": [ok]}) == []
    assert demo.job_failures({"jobs": []}) == ["no job ran"]
    superseded = dict(ok, rc=1, superseded=True)           # a disrupted attempt that ran again
    assert demo.job_failures({"jobs": [superseded, ok]}) == []
    bad = {"name": "bcast-dmodk-block-p8", "rc": 0,
           "program": [{"bench": "check", "collective": "bcast", "ok": False, "bad": 2}]}
    timed_out = dict(ok, rc=-15, timed_out=True)
    crashed = dict(ok, rc=1)
    assert demo.job_failures({"jobs": [bad, timed_out, crashed]}) == [
        "bcast-dmodk-block-p8: bcast result check failed", "allreduce-dmodk-random-p8 timed out",
        "allreduce-dmodk-random-p8 exited with 1"]


def test_printed_legend_says_what_is_missing_or_suspect(capsys):
    demo.print_collectives(["collective ...", "bcast root 0 !  1 MiB ..."], have_sdn_bcast=False)
    out = capsys.readouterr().out
    assert out.startswith("collective ...\nbcast root 0 !")
    assert "no SDN_MPI_Bcast" in out and "times are suspect" in out
    demo.print_collectives(["collective ...", "allreduce  1 MiB ..."], have_sdn_bcast=True)
    out = capsys.readouterr().out
    assert "speedup = Open MPI / sdnmpi" in out
    assert "SDN_MPI_Bcast" not in out and "suspect" not in out
    demo.print_collectives(None, have_sdn_bcast=True)
    assert capsys.readouterr().out.startswith("(no timed calls)")
