"""The job-routing benches' options for the per-flow rate (issue 15): the pattern program's
--wait-sleep and pattern subsets (bench/bench_jobroute_mininet.py), the rate bench's wait modes,
ranks' CPU line and iperf3 control on the bench placement's pairs (bench/jobroute_rate.py,
bench/jobroute_iperf.py). Pure Python: nothing runs on Mininet here."""
import json
import os
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench"))

import bench_jobroute_mininet as jbm  # noqa: E402
import jobroute_iperf  # noqa: E402
import jobroute_rate  # noqa: E402
import jobroute_rate_md  # noqa: E402
import jobroute_report  # noqa: E402


def k4_spec(args):
    return jbm.fabric_spec("k4", args)


def test_pattern_argv_whole_program_keeps_the_phases_and_adds_wait_sleep_only_when_asked():
    args = jbm.parse_args(["--wait-sleep", "0"])
    spec = k4_spec(args)
    argv = [str(a) for a in jbm.pattern_argv(spec, args)]
    assert argv == [jbm.PATTERNS, "--reps", "2", "phase", "1", "shift", str(spec["shift"]), str(1 << 20),
                    "phase", "2", "perm", str(spec["perm"]), str(1 << 20), "phase", "3", "halo2d", str(256 << 10),
                    "phase", "4", "halo3d", str(256 << 10), "phase", "5", "alltoall", str(64 << 10), "phase", "0"]
    args = jbm.parse_args(["--wait-sleep", "1000", "--patterns", "perm,shift"])
    argv = [str(a) for a in jbm.pattern_argv(spec, args)]
    # a subset: the order and the phase numbers of the whole program, the option before the steps
    assert argv == [jbm.PATTERNS, "--wait-sleep", "1000", "--reps", "2", "phase", "1", "shift", str(spec["shift"]),
                    str(1 << 20), "phase", "2", "perm", str(spec["perm"]), str(1 << 20), "phase", "0"]
    args = jbm.parse_args(["--patterns", "alltoall"])
    assert [str(a) for a in jbm.pattern_argv(spec, args)][-6:] == ["phase", "5", "alltoall", str(64 << 10),
                                                                     "phase", "0"]


def test_the_bench_records_its_wait_mode():
    assert jbm.parse_args([]).wait_sleep == jbm.WAIT_SLEEP_US


@pytest.mark.parametrize("module, argv", [
    (jbm, ["--wait-sleep", "-1"]), (jbm, ["--wait-sleep", "2000000"]), (jbm, ["--patterns", "spiral"]),
    (jobroute_rate, ["--waits", "nap"]), (jobroute_rate, ["--sleep-us", "0"]),
    (jobroute_rate, ["--kinds", "mpi-ecmp"]),
])
def test_bad_options_exit_2(module, argv, capsys):
    with pytest.raises(SystemExit) as exc:
        module.parse_args(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_rate_wait_modes_keys_and_program_options():
    args = jobroute_rate.parse_args(["--waits", "spin,sleep", "--sleep-us", "500"])
    assert args.waits == ["spin", "sleep"] and args.sleep_us == 500
    assert jobroute_rate.wait_args("spin", 500) == []
    assert jobroute_rate.wait_args("sleep", 500) == ["--wait-sleep", 500]
    assert jobroute_rate.run_key("mpi-sdn-optimal", "spin") == "mpi-sdn-optimal"
    assert jobroute_rate.run_key("mpi-sdn-optimal", "sleep") == "mpi-sdn-optimal+sleep"


def test_rank_cpu_reads_the_programs_final_line():
    out = ("traffic_patterns: pattern=shift bytes=10 reps=2 ranks=16 seconds=1.5\n"
           "traffic_patterns: ranks=16 ok seconds=1.500000 cpu_min=0.125 cpu_max=3.250\n")
    assert jobroute_rate.rank_cpu(out) == (0.125, 3.25)
    assert jobroute_rate.rank_cpu("traffic_patterns: ranks=16 ok seconds=1.5\n") == (None, None)
    assert jobroute_rate.rank_cpu(None) == (None, None)


def test_pattern_pairs_are_the_programs_pairs_on_the_placement():
    placement = jobroute_report.bench_placement(16)
    shift = jobroute_iperf.pattern_pairs(placement, shift=9)
    assert len(shift) == 16 and sorted(s for s, _ in shift) == list(range(1, 17))
    assert all(d == placement[(placement.index(s) + 9) % 16] for s, d in shift)
    perm = jobroute_report.pattern_perm(12, 16)
    pairs = jobroute_iperf.pattern_pairs(placement, perm=perm)
    assert pairs == [(placement[r], placement[perm[r]]) for r in range(16) if perm[r] != r]
    assert jobroute_iperf.pattern_pairs([3, 1, 2], perm=[0, 2, 1]) == [(1, 2), (2, 1)]   # rank 0: a fixed point


def test_receiver_mbit_reads_iperf3_json_or_none():
    doc = {"end": {"sum_received": {"bits_per_second": 4.5e6}}}
    assert jobroute_iperf.receiver_mbit(json.dumps(doc)) == 4.5
    assert jobroute_iperf.receiver_mbit("iperf3: error - unable to connect") is None
    assert jobroute_iperf.receiver_mbit(json.dumps({"error": "x"})) is None


def test_markdown_rows_per_measurement_with_rounds_and_medians():
    rec = {"mpi-sdn-optimal": {"shift": 0.8, "perm": 0.7, "cpu_busy": 0.99, "ovs_cores": 0.8},
           "mpi-sdn-optimal+sleep": {"shift": 0.92, "perm": 0.91, "cpu_busy": 0.7, "ovs_cores": 0.9,
                                     "rank_cpu_min_s": 0.5, "rank_cpu_max_s": 1.5},
           "iperf3-sdn-optimal": {"shift": 0.9, "perm": 0.88, "cpu_busy": 0.6, "ovs_cores": 0.9},
           "iperf3-single": {"min": 0.96, "median": 0.96}, "interfaces_changed": 64}
    second = json.loads(json.dumps(rec))
    second["mpi-sdn-optimal+sleep"]["shift"] = 0.94
    text = jobroute_rate_md.markdown({"rates": {"5.0": [rec, second]}, "seconds": 10, "fabric": "k4"})
    rows = {ln.split("|")[2].strip(): ln for ln in text.splitlines() if ln.startswith("| 5.0 |")}
    assert list(rows) == ["mpi-sdn-optimal", "mpi-sdn-optimal+sleep", "iperf3-sdn-optimal", "iperf3-single"]
    assert "92%, 94% (93%)" in rows["mpi-sdn-optimal+sleep"] and "0.5-1.5" in rows["mpi-sdn-optimal+sleep"]
    assert "96%, 96% (96%)" in rows["iperf3-single"]


def test_window_option_goes_to_the_program_for_every_policy_and_is_recorded():
    spec = k4_spec(jbm.parse_args([]))
    assert jbm.parse_args([]).window == jbm.WINDOW
    argv = [str(a) for a in jbm.pattern_argv(spec, jbm.parse_args(["--window", "4", "--patterns", "shift"]))]
    assert argv[:5] == [jbm.PATTERNS, "--reps", "2", "--window", "4"] and argv[5:7] == ["phase", "1"]
    assert "--window" not in [str(a) for a in jbm.pattern_argv(spec, jbm.parse_args(["--window", "1"]))]


@pytest.mark.parametrize("module,argv", [(jbm, ["--window", "0"]), (jbm, ["--window", "1025"]),
                                         (jobroute_rate, ["--windows", "0"]), (jobroute_rate, ["--windows", "4,4"]),
                                         (jobroute_rate, ["--windows", "x"])])
def test_bad_windows_exit_2(module, argv, capsys):
    with pytest.raises(SystemExit) as exc:
        module.parse_args(argv)
    assert exc.value.code == 2 and "error:" in capsys.readouterr().err


def test_rate_windows_keys_and_program_options():
    args = jobroute_rate.parse_args(["--windows", "1,4"])
    assert args.windows == [1, 4]
    assert jobroute_rate.parse_args([]).windows == [jbm.WINDOW]
    assert jobroute_rate.wait_args("spin", 500, 4) == ["--window", 4]
    assert jobroute_rate.wait_args("sleep", 500, 4) == ["--wait-sleep", 500, "--window", 4]
    assert jobroute_rate.run_key("mpi-sdn-optimal", "spin", window=4) == "mpi-sdn-optimal+w4"
    assert jobroute_rate.run_key("mpi-dmodk", "sleep", "buf", 8) == "mpi-dmodk+sleep+w8+buf"
    assert jobroute_rate.run_key("mpi-dmodk", "spin", "", 1) == "mpi-dmodk"


def test_rate_measure_runs_each_window_with_its_option(monkeypatch):
    seen = []

    def fake_run(bench, hosts, argv, env, lib, options=(), mca=None):
        seen.append(list(options))
        return 1, "", 1.0

    monkeypatch.setattr(jobroute_rate, "pattern_run", fake_run)
    bench = types.SimpleNamespace(spec={"hosts": 16, "name": "k4", "shift": 9, "perm": 12}, ports={"rpc": 1},
                                  fabric=types.SimpleNamespace(mgmt=types.SimpleNamespace(root_ip="172.31.0.1")),
                                  mca=[])
    args = jobroute_rate.parse_args(["--kinds", "mpi-sdn-optimal", "--windows", "1,4"])
    out = jobroute_rate.measure(bench, 5.0, {"bench": "t.tar.gz"}, args)
    assert seen == [[], ["--window", 4]]
    assert sorted(out) == ["mpi-sdn-optimal", "mpi-sdn-optimal+w4"] and out["mpi-sdn-optimal+w4"]["window"] == 4


def test_reverse_routes_option_reaches_the_controller_and_is_recorded():
    from ryu import cfg
    from sdnmpi.controller import options
    assert jbm.parse_args([]).reverse_routes == "on" and jbm.controller_options(jbm.parse_args([])) == ()
    off = jbm.controller_options(jbm.parse_args(["--reverse-routes", "off"]))
    assert off == ("--nosdnmpi-traffic-reverse-routes",)
    conf = cfg.ConfigOpts()                          # the flag is the controller's own (oslo.config's --noNAME)
    conf.register_cli_opts(options.OPTS)
    conf(list(off), project="sdnmpi-test")
    assert conf.sdnmpi_traffic_reverse_routes is False
    conf([], project="sdnmpi-test")
    assert conf.sdnmpi_traffic_reverse_routes is True


def test_bad_reverse_routes_value_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        jbm.parse_args(["--reverse-routes", "maybe"])
    assert exc.value.code == 2 and "error:" in capsys.readouterr().err
