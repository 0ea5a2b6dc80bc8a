"""bench/bench_flowdetect.py without a fabric: the perm-phases pattern (its program arguments, and
that D-mod-K collides in every phase where SDN-optimal does not), the run order with and without
--interleave, --dry-run, and the ratio lines with their bootstrap interval."""
import collections

import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import bench_flowdetect
import flowdetect_fabric
import jobroute_report

from sdnmpi.primitives import PAIR_ROUTERS, fattree, pairs


def _perm_phase_pairs():
    """Per phase of perm-phases, the (rank, peer) pairs that send (fixed points send nothing)."""
    steps = bench_flowdetect.patterns(1234)["perm-phases"]
    out = []
    for k in range(0, len(steps), 3):
        perm = jobroute_report.pattern_perm(int(steps[k + 1]), flowdetect_fabric.HOSTS)
        out.append({(r, perm[r]) for r in range(flowdetect_fabric.HOSTS) if perm[r] != r})
    return out


def test_perm_phases_is_the_programs_perm_step_once_per_seed():
    steps = bench_flowdetect.patterns(3 << 20)["perm-phases"]
    assert steps == ["perm", "51", "3145728", "perm", "18", "3145728", "perm", "41", "3145728",
                     "perm", "24", "3145728"]
    assert [int(s) for s in steps[1::3]] == list(bench_flowdetect.PERM_PHASES)
    assert "perm-phases" not in bench_flowdetect.DEFAULT_PATTERNS
    assert bench_flowdetect.patterns(7)["perm-phases-paused"] == ["perm", "51", "7", "pause", "8000", "perm", "18", "7",
                                                                  "pause", "8000", "perm", "41", "7"]
    assert bench_flowdetect.PAUSE_MS / 1000 > 5 + 2     # jobidle's quiet time and one port-stats poll
    args = bench_flowdetect.parse_args(["--patterns", "perm-phases", "--interleave", "--reps", "1"])
    assert args.patterns == ["perm-phases"] and args.interleave and args.reps == 1


def test_every_perm_phase_collides_on_d_mod_k_and_not_under_sdn_optimal():
    """Ranks in host order (the bench's mpirun), k=4 fat-tree: D-mod-K puts 3 flows on a link in
    each phase, SDN-optimal 1; and each phase is a new set of pairs (at most 2 shared with another)."""
    graph = fattree.kary(4)
    macs = [fattree.host_mac(h) for h in range(1, flowdetect_fabric.HOSTS + 1)]
    phases = _perm_phase_pairs()
    for ranks in phases:
        demand = [pairs.Flow(macs[a], macs[b], 1) for a, b in sorted(ranks)]
        loads = {r: pairs.link_load(graph, demand, PAIR_ROUTERS[r](graph, demand)).max_flows()
                 for r in ("dmodk", "sdn-optimal")}
        assert loads == {"dmodk": 3, "sdn-optimal": 1}, loads
    for i, a in enumerate(phases):
        assert len(a) >= 15 and all(len(a & b) <= 2 for b in phases[i + 1:])


def test_schedule_by_default_groups_by_set_up_and_interleaved_rotates_the_first_mode():
    modes, pats = ["threshold", "learned", "hints", "none"], ["shift", "perm-phases"]
    blocks = bench_flowdetect.schedule(modes, pats, 2)
    assert [d for d, _ in blocks] == [["threshold"], ["learned"], ["none"]]
    assert blocks[2][1] == [(1, "shift", "hints"), (1, "shift", "none"), (1, "perm-phases", "hints"),
                            (1, "perm-phases", "none"), (2, "shift", "hints"), (2, "shift", "none"),
                            (2, "perm-phases", "hints"), (2, "perm-phases", "none")]
    ((setups, runs),) = bench_flowdetect.schedule(modes, pats, 5, interleave=True)
    assert setups == ["threshold", "learned", "none"]
    assert len(runs) == 5 * 2 * 4 and len(set(runs)) == len(runs)
    for rep in range(1, 6):
        for p in pats:
            order = [m for r, q, m in runs if r == rep and q == p]
            assert sorted(order) == sorted(modes) and order[0] == modes[(rep - 1) % 4]
    for p in pats:                   # per pattern, each mode first about equally often
        mine = [m for _r, q, m in runs if q == p]
        firsts = collections.Counter(mine[k] for k in range(0, len(mine), 4))
        assert set(firsts) == set(modes) and max(firsts.values()) - min(firsts.values()) <= 1
    assert bench_flowdetect.schedule(modes, pats, 0, interleave=True) == []


def test_dry_run_prints_the_fabrics_and_the_runs_and_starts_nothing(capsys, monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a dry run started something")
    monkeypatch.setattr(bench_flowdetect.subprocess, "run", refuse)
    monkeypatch.setattr(bench_flowdetect, "Fabric", refuse)
    assert bench_flowdetect.main(["--dry-run", "--interleave", "--patterns", "perm-phases", "--modes",
                                  "threshold,learned", "--repeats", "2", "--reps", "1", "--bytes", "100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("fabrics at once: threshold (--sdnmpi-flow-detection threshold, prefix fd")
    assert "learned (--sdnmpi-flow-detection learned, prefix fe, management 172.27.0.0/16)" in out[0]
    assert out[1:] == ["  perm-phases %s #%d: traffic_patterns --reps 1 perm 51 100 perm 18 100 perm 41 100 "
                       "perm 24 100" % (m, r) for r, m in ((1, "threshold"), (1, "learned"), (2, "learned"),
                                                           (2, "threshold"))]


def _runs(*seconds):
    return [{"seconds": s, "detected": []} for s in seconds]


def test_ratio_lines_give_the_median_ratio_and_say_when_the_interval_excludes_1():
    results = {"p": {"learned": _runs(9.0, 9.2, 8.9, 9.1, 9.0), "threshold": _runs(10.0, 10.1, 9.9, 10.2, 10.0),
                     "hints": _runs(9.0, 9.3, 8.8, 9.1, 9.05)},
               "q": {"learned": _runs(5.0, 6.0), "threshold": _runs(6.0, 5.0)}}
    lines = bench_flowdetect.ratio_lines(results, ["p", "q"]).splitlines()
    assert lines[0].startswith("- p: learned / threshold median time 0.900 (-10.0 %; 5 and 5 runs), 95 % interval ")
    assert lines[0].endswith(": faster beyond the noise")
    lo, hi = (float(x) for x in lines[0].split("interval ")[1].split(":")[0].split("-"))
    assert lo <= 0.9 <= hi < 1
    assert lines[1].startswith("- p: learned / hints median time 0.994") and lines[1].endswith("not resolved")
    assert lines[2].startswith("- p: threshold / hints") and lines[2].endswith("slower beyond the noise")
    assert lines[3] == "- q: learned / threshold median time 1.000 (+0.0 %; 2 and 2 runs), no interval (under 5 runs a mode)"
    assert len(lines) == 4


class FakeFabric:
    """Stands for a controller and its fabric: records what starts, runs and closes."""
    log = []
    fail_at = None

    def __init__(self, args, detection, log_dir, prefix, mgmt_subnet):
        self.detection = detection
        FakeFabric.log.append(("start", detection, prefix, mgmt_subnet))

    def run(self, args, steps, hints, counters_to=None, tags=None):
        FakeFabric.log.append(("run", tags["mode"], tags["rep"]))
        self.last_exchanges = [0.5, 1.5]
        if len([e for e in FakeFabric.log if e[0] == "run"]) == FakeFabric.fail_at:
            raise RuntimeError("mpirun failed")
        return 2.0, []

    def close(self):
        FakeFabric.log.append(("close", self.detection))


def _schedule_run(monkeypatch, argv, fail_at=None, clock=None):
    FakeFabric.log, FakeFabric.fail_at = [], fail_at
    monkeypatch.setattr(bench_flowdetect, "Fabric", FakeFabric)
    if clock is not None:
        monkeypatch.setattr(bench_flowdetect.time, "monotonic", clock)
    args = bench_flowdetect.parse_args(argv)
    return bench_flowdetect.run_schedule(args, bench_flowdetect.patterns(10), "logs", "counters", 0.0)


def test_interleaved_runs_start_every_fabric_once_and_close_them_all(monkeypatch):
    results, failed, skipped, error, not_run = _schedule_run(
        monkeypatch, ["--interleave", "--patterns", "perm-phases", "--modes", "threshold,learned,hints", "--repeats", "2"])
    assert (failed, skipped, error, not_run) == ([], 0, None, 0)
    assert FakeFabric.log[:3] == [("start", "threshold", "fd", "172.30.0.0/16"), ("start", "learned", "fe", "172.27.0.0/16"),
                                  ("start", "none", "ff", "172.26.0.0/16")]
    assert [e[1:] for e in FakeFabric.log[3:9]] == [("threshold", 1), ("learned", 1), ("hints", 1),
                                                    ("learned", 2), ("hints", 2), ("threshold", 2)]
    assert sorted(FakeFabric.log[9:]) == [("close", "learned"), ("close", "none"), ("close", "threshold")]
    assert {m: [r["seconds"] for r in runs] for m, runs in results["perm-phases"].items()} == \
        {"threshold": [2.0, 2.0], "learned": [2.0, 2.0], "hints": [2.0, 2.0]}
    assert all(r["exchanges"] == [0.5, 1.5] for runs in results["perm-phases"].values() for r in runs)


def test_each_exchange_line_of_the_program_is_read():
    out = ("traffic_patterns: pattern=perm bytes=1048576 reps=1 ranks=16 seconds=2.5\n"
           "traffic_patterns: pattern=perm bytes=1048576 reps=1 ranks=16 seconds=3.25\n"
           "traffic_patterns: ranks=16 ok seconds=5.75 cpu_min=1.0 cpu_max=2.0\n")
    assert [float(x) for x in flowdetect_fabric.EXCHANGE_RE.findall(out)] == [2.5, 3.25]


def test_a_failed_run_is_recorded_and_the_schedule_goes_on(monkeypatch):
    results, failed, skipped, error, not_run = _schedule_run(
        monkeypatch, ["--interleave", "--patterns", "permutation", "--modes", "threshold,learned", "--repeats", "3"],
        fail_at=3)
    assert (skipped, error, not_run) == (0, None, 0)
    assert [(r["mode"], r["rep"], r["reason"]) for r in failed] == [("learned", 2, "RuntimeError: mpirun failed")]
    assert {m: [r["rep"] for r in runs] for m, runs in results["permutation"].items()} == \
        {"threshold": [1, 2, 3], "learned": [1, 3]}
    assert sorted(e for e in FakeFabric.log if e[0] == "close") == [("close", "learned"), ("close", "threshold")]


def test_stop_after_starts_no_run_past_its_time(monkeypatch):
    ticks = iter(range(0, 1000, 10))          # each clock reading 10 s later
    results, failed, skipped, error, not_run = _schedule_run(
        monkeypatch, ["--patterns", "shift", "--modes", "threshold,learned", "--repeats", "3", "--stop-after", "45"],
        clock=lambda: float(next(ticks)))
    assert (failed, error, not_run) == ([], None, 0)
    done = sum(len(runs) for runs in results["shift"].values())
    assert done + skipped == 6 and 0 < done < 6
    assert [e[1] for e in FakeFabric.log if e[0] == "start"] == ["threshold"]    # learned's block: past its time


def test_past_stop_is_never_without_stop_after_and_from_its_time_on_with_it(monkeypatch):
    monkeypatch.setattr(bench_flowdetect.time, "monotonic", lambda: 145.0)
    assert not bench_flowdetect.past_stop(bench_flowdetect.parse_args([]), 0.0)
    args = bench_flowdetect.parse_args(["--stop-after", "45"])
    assert bench_flowdetect.past_stop(args, 100.0) and not bench_flowdetect.past_stop(args, 100.5)


def test_host_tcp_options_default_to_the_machine_and_refuse_an_unknown_congestion_control():
    args = bench_flowdetect.parse_args([])
    assert args.cc is None and not args.preconnect and args.sockets_every == 0
    assert (args.ovs_sndbuf, args.ack_class) == (4 << 20, "on")  # the other benches' emulation choices
    assert bench_flowdetect.parse_args(["--ack-class", "off", "--ovs-sndbuf", "0"]).ack_class == "off"
    args = bench_flowdetect.parse_args(["--cc", "reno", "--preconnect", "--sockets-every", "1"])
    assert (args.cc, args.preconnect, args.sockets_every) == ("reno", True, 1.0)
    for bad in (["--cc", "vegas"], ["--sockets-every", "-1"], ["--queue-packets", "100"]):
        with pytest.raises(SystemExit):
            bench_flowdetect.parse_args(bad)
