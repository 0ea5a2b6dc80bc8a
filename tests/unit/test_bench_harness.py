"""bench/: the harness's pure parts (planned jobs, options, route switching, job summaries, CPU
and parallel-load checks). No Mininet, no MPI, no root."""
import json
import os
import subprocess

import pytest

from bench_setup import small_fabric

import bench_cli
import bench_common
import bench_fabric
import bench_flows
import bench_jobs
import bench_limits
import bench_sampling
import benchcore
from sdnmpi.mininet_topos.polling import poll_until


@pytest.fixture
def fab():
    return small_fabric()


# --- the harness's pure parts ---------------------------------------------------------------

def test_cookie_and_priority_constants_match_the_controller():
    from sdnmpi.controller import constants as C
    assert bench_common.COOKIE_JOB == C.COOKIE_JOB and bench_common.COOKIE_KIND_MASK == C.COOKIE_KIND_MASK
    assert bench_common.PRIORITY_ROUTE == C.PRIORITY_ROUTE
    assert bench_common.PRIORITY_JOB_ROUTE == C.PRIORITY_JOB_ROUTE and bench_common.PRIORITY_JOB_MULTICAST == C.PRIORITY_JOB_MULTICAST
    # the override flows sit above every job route (2000 + job id mod 1000) and below control flows,
    # and carry a cookie of no kind the controller uses
    assert C.PRIORITY_JOB_ROUTE + 999 < bench_flows.PRIORITY_OVERRIDE < C.PRIORITY_CONTROL
    kinds = {c & C.COOKIE_KIND_MASK for c in (C.COOKIE_CONTROL, C.COOKIE_ROUTE, C.COOKIE_JOB)}
    assert bench_flows.BENCH_COOKIE & C.COOKIE_KIND_MASK not in kinds


def test_planned_jobs_quick_full_and_16_hosts():
    quick = bench_limits.plan_jobs(bench_cli.parse_args(["--quick"]), benchcore.Fabric(), True)
    kinds = [(j["collective"], j["routing"], j["placement"], j["nprocs"]) for j in quick]
    assert ("allreduce", "single", "random", 8) in kinds and ("bcast", "dmodk", "block", 4) in kinds
    assert {j["routing"] for j in quick} == {"single", "dmodk", "ecmp"}
    assert all(j["timeout_s"] > j["work"] for j in quick)
    full = bench_limits.plan_jobs(bench_cli.parse_args([]), benchcore.Fabric(), True)
    assert {j["nprocs"] for j in full if j["collective"] == "bcast"} == {2, 4, 8}
    assert all(j["sizes"] == [65536 << i for i in range(7)] for j in full if j["collective"] == "bcast")
    assert all(j["sizes"] == [4096 << i for i in range(11)] for j in full if j["collective"] == "allreduce")
    args = bench_cli.parse_args(["--leaves", "4", "--hosts-per-leaf", "4"])
    big = bench_limits.plan_jobs(args, benchcore.Fabric(2, 4, 4), False)
    assert {j["nprocs"] for j in big if j["collective"] == "bcast"} == {2, 4, 8, 16}
    assert all(j["nimpl"] == 1 for j in big if j["collective"] == "bcast")
    assert bench_common.parse_nprocs("pow2", 8) == [2, 4, 8] and bench_common.parse_nprocs("3,all", 8) == [3, 8]
    with pytest.raises(ValueError):
        bench_common.parse_nprocs("9", 8)
    assert bench_cli.main(["--quick", "--dry-run"]) == 0


def test_mca_option_is_validated_and_recorded():
    args = bench_cli.parse_args(["--ompi-mca", "coll_tuned_use_dynamic_rules=1",
                           "--ompi-mca", "OMPI_MCA_coll_tuned_allreduce_algorithm=4"])
    assert args.mca == [("coll_tuned_use_dynamic_rules", "1"), ("coll_tuned_allreduce_algorithm", "4")]
    for bad in ("novalue", "btl=tcp,self,vader", "mpi_yield_when_idle=0", "=1", "a b=1"):
        with pytest.raises(ValueError):
            bench_cli.parse_mca([bad])
    with pytest.raises(SystemExit):
        bench_cli.parse_args(["--ompi-mca", "btl_tcp_if_include=lo"])
    fixed = bench_common.coll_tuned_note({"coll_tuned_use_dynamic_rules": "false"})
    assert "fixed decision rules" in fixed
    forced = bench_common.coll_tuned_note({"coll_tuned_use_dynamic_rules": "true", "coll_tuned_allreduce_algorithm": "ring",
                                  "coll_tuned_bcast_algorithm": "ignore"},
                                 [("coll_tuned_use_dynamic_rules", "1")])
    assert "forced: allreduce ring, bcast ignore" in forced and "--ompi-mca coll_tuned_use_dynamic_rules=1" in forced


def test_bcast_rate_is_each_trees_share_of_its_slowest_link_unless_given():
    # 2 trees (one per spine): a fabric link carries one, every host link on the tree both
    assert bench_limits.bcast_rate("auto", 30, 15, trees=2) == 15        # the bench's default fabric
    assert bench_limits.bcast_rate("auto", 40, 20, trees=2) == 20        # the demo's
    assert bench_limits.bcast_rate("auto", 30, 30, trees=2) == 15        # 1:1: the host link is the limit
    assert bench_limits.bcast_rate("auto", 30, 30, trees=1) == 30
    assert bench_limits.bcast_rate("auto", 25, 0, trees=2) == 12         # rounded down
    assert bench_limits.bcast_rate("auto", 40, 10) == 10
    assert bench_limits.bcast_rate("auto", 0, 0) is None
    assert bench_limits.bcast_rate("lib", 40, 20) is None
    assert bench_limits.bcast_rate("30", 40, 20) == 30
    with pytest.raises(ValueError):
        bench_limits.bcast_rate("0", 40, 20)
    assert bench_limits.bcast_trees(2) == bench_limits.LIB_BCAST_TREES == 2
    assert bench_limits.bcast_trees(1) == 1                               # one spine, one tree
    assert bench_limits.bcast_trees(4, ["SDN_MPI_BCAST_TREES=3", "SDN_MPI_VERBOSE=1"]) == 3
    assert bench_limits.bcast_trees(2, ["SDN_MPI_BCAST_TREES=1"]) == 1
    assert bench_limits.parse_sdn_env(None) == {}
    assert bench_limits.parse_sdn_env(["A=1", "B=x=y", "A=2", "C"]) == {"A": "2", "B": "x=y", "C": ""}
    args = bench_cli.parse_args(["--fabric-bw", "10"])
    assert bench_jobs.sdn_env(args) == {"SDN_MPI_TIMEOUT_MS": "30000", "SDN_MPI_BCAST_RATE_MBPS": "10"}
    assert bench_jobs.sdn_env(bench_cli.parse_args(["--host-bw", "40", "--fabric-bw", "20"]))["SDN_MPI_BCAST_RATE_MBPS"] == "20"
    one_tree = bench_cli.parse_args(["--fabric-bw", "30", "--sdn-env", "SDN_MPI_BCAST_TREES=1"])
    assert bench_jobs.sdn_env(one_tree)["SDN_MPI_BCAST_RATE_MBPS"] == "30"
    assert "SDN_MPI_BCAST_RATE_MBPS" not in bench_jobs.sdn_env(bench_cli.parse_args(["--sdn-bcast-rate", "lib"]))
    with pytest.raises(SystemExit):
        bench_cli.parse_args(["--sdn-env", "SDN_MPI_BCAST_TREES=two"])


DUMP = """\
 cookie=0x5d4d504901000000, priority=60000,arp actions=CONTROLLER:65535
 cookie=0x5d4d504903000004, priority=3000,udp,nw_src=10.0.0.1,nw_dst=239.77.0.1,tp_dst=47001 actions=group:65536
 cookie=0x5d4d504903000001, priority=2001,ip,nw_src=10.0.0.1,nw_dst=10.0.0.5 actions=output:4
 cookie=0x5d4d504903000001, priority=2001,ip,nw_src=10.0.0.2,nw_dst=10.0.0.6 actions=output:4
 cookie=0x5d4d504903000001, priority=2001,ip,nw_src=10.0.0.3,nw_dst=10.0.0.9 actions=output:4
 cookie=0x5d4d504902000000, priority=1000,ip,nw_dst=10.0.0.5 actions=output:3
 cookie=0x5d4d504902000000, priority=1000,ip,nw_dst=10.0.0.6 actions=group:4097
 cookie=0x5d4d504901000000, priority=10,ip actions=CONTROLLER:65535
 priority=0 actions=drop
"""


def test_override_flows_copy_the_default_route_of_each_job_pair():
    flows, missing = bench_flows.override_flows(DUMP.splitlines())
    assert flows == [
        "cookie=0x%x,priority=%d,ip,nw_src=10.0.0.1,nw_dst=10.0.0.5,actions=output:3" % (bench_flows.BENCH_COOKIE, bench_flows.PRIORITY_OVERRIDE),
        "cookie=0x%x,priority=%d,ip,nw_src=10.0.0.2,nw_dst=10.0.0.6,actions=group:4097" % (bench_flows.BENCH_COOKIE, bench_flows.PRIORITY_OVERRIDE)]
    assert missing == ["ip,nw_src=10.0.0.3,nw_dst=10.0.0.9"]   # no default route to copy
    assert bench_flows.override_flows([l for l in DUMP.splitlines() if "priority=2001" not in l]) == ([], [])
    # a table-miss entry parses with no match fields; a line without a cookie is not a dump-flows line
    miss = " cookie=0x0, duration=1.2s, table=0, n_packets=0, n_bytes=0, priority=0 actions=drop"
    assert bench_flows.parse_flow(miss) == (0, 0, {}, "", "drop")
    assert bench_flows.parse_flow(" priority=0 actions=drop") is None


def request(tmp_path, seq, what):
    (tmp_path / "req.tmp").write_text("%d %s\n" % (seq, what))
    os.rename(tmp_path / "req.tmp", tmp_path / "req")
    ack = tmp_path / "ack"
    return poll_until(lambda: ack.exists() and ack.read_text().split() == [str(seq)], 10, "ack %d" % seq,
                      interval=0.005)


def test_route_switch_answers_requests_in_order_and_reads_the_plan_at_the_end(tmp_path):
    """The --toggle protocol without switches: every request is acknowledged, "end" runs on_end."""
    ended = []
    switch = bench_flows.RouteSwitch(str(tmp_path), bridges=[], spine_ports={}, hide=True,
                             on_end=lambda: ended.append(True), wait=lambda: (0.0, None))
    with switch:
        for seq, what in enumerate(["sdnmpi", "openmpi", "sdnmpi", "openmpi", "end"], start=1):
            assert request(tmp_path, seq, what)
            assert switch.state == what
    summary = switch.summary()
    assert summary["toggles"] == 4 and summary["ended"] and ended == [True]
    assert summary["hide_job_flows"] is True and summary["errors"] == []
    assert summary["revalidate_wait_s_total"] == 0.0   # no flow table changed, so no waiting


def test_route_switch_waits_for_revalidation_only_after_a_change(tmp_path, monkeypatch):
    waits, calls = [], []

    def fake_ofctl(*argv, stdin=None):
        calls.append((argv, stdin))
        out = DUMP if argv[:2] == ("--no-stats", "dump-flows") else ""
        return subprocess.CompletedProcess(argv, 0, out, None)
    monkeypatch.setattr(bench_flows, "ofctl", fake_ofctl)
    switch = bench_flows.RouteSwitch(str(tmp_path), bridges=["bnl1", "bns1"], spine_ports={}, hide=True,
                             wait=lambda: waits.append(1) or (0.5, None))
    with switch:
        for seq, what in enumerate(["sdnmpi", "openmpi", "openmpi", "sdnmpi", "openmpi", "end"], start=1):
            assert request(tmp_path, seq, what)
    # hide (2 changes: one per switch), restore, hide, and "end" removes the overrides again
    assert len(waits) == 4 and switch.summary()["job_flows_hidden"] == 4
    adds = [c for c in calls if c[0][0] == "add-flows"]
    dels = [c for c in calls if c[0][0] == "del-flows"]
    assert len(adds) == 4 and all("priority=%d" % bench_flows.PRIORITY_OVERRIDE in c[1] for c in adds)
    assert len(dels) == 4 and all(c[0][2] == "cookie=0x%x/-1" % bench_flows.BENCH_COOKIE for c in dels)
    assert not switch.hidden


def test_summarize_jobs_and_disruption_reasons():
    jobs = [{"job": 3, "comms": {"0": {"planner": "balanced", "max_load": [0, 1, 1], "lower_bound": [0, 1, 1],
                                        "flows": 48}},
             "routes": [{}] * 48,
             "trees": [{"comm": 0, "root": "10.0.0.1", "members": ["a", "b"], "top": "0000000000000102",
                        "switches": {"x": [1], "y": [2]}}]}]
    class Topo:
        dpids = {"bns2": "0000000000000102"}
    out = bench_jobs.summarize_jobs(jobs, Topo())
    assert out["comm 0"]["max_load"] == [0, 1, 1] and out["routes"] == 48
    assert out["trees"] == [{"comm": 0, "root": "10.0.0.1", "members": 2, "top": "bns2", "switches": 2}]
    assert bench_jobs.disruption_reasons({"cpu": {"stalls": []}, "route_recomputes": 0}) == []
    reasons = bench_jobs.disruption_reasons({"cpu": {"stalls": [{"at_s": 20.0, "length_s": 65.4}]}, "route_recomputes": 2})
    assert len(reasons) == 2 and "65.4 s" in reasons[0] and "2 time(s)" in reasons[1]


def test_process_accounting_counts_only_foreign_processes():
    prev = {1: (0, 100), 2000: (1, 50), 2001: (2000, 10), 3000: (1, 5), 4000: (1, 7)}
    cur = {1: (0, 100), 2000: (1, 60), 2001: (2000, 30), 3000: (1, 25), 5000: (1, 4)}
    ours = bench_sampling.descendants(cur, 2000)
    assert ours == {2000, 2001}
    # 3000 grew by 20, 5000 is new (4 ticks); 4000 vanished; 1 did not grow; ours and 1 excluded
    assert bench_sampling.foreign_ticks(prev, cur, ours, excluded={1}) == 24
    assert bench_sampling.weighted_mean([100, 50], [3, 1]) == 87.5 and bench_sampling.weighted_mean([1], [0]) is None


def test_cpu_monitor_samples_this_machine():
    """Waits for the samples themselves, not a fixed time: on a loaded machine the sampler runs late."""
    with bench_sampling.CpuMonitor(interval=0.1, link_interval=0.05, links=[("lo", "tx", 1000.0)]) as mon:
        poll_until(lambda: len(mon.busy) >= 2 and len(mon.link_util) >= 4, 60, "2 CPU and 4 link samples",
                   interval=0.02)
    summary = mon.summary()
    assert summary["machine_busy_pct"]["samples"] >= 2
    # the sampler may really be held off for stall_s on a loaded machine: only the records' form is checked
    assert all(s["length_s"] >= 2.0 and s["at_s"] >= 0 for s in summary["stalls"])
    assert summary["foreign_cpu_pct_of_one_cpu"]["median"] >= 0
    assert summary["busiest_link_pct"]["samples"] >= 4


def test_link_directions_cover_every_direction_of_every_link():
    from sdnmpi.mininet_topos.fattree import LeafSpineTopo
    bench = bench_fabric.Bench.__new__(bench_fabric.Bench)
    bench.topo = LeafSpineTopo(spines=2, leaves=4, hosts_per_leaf=2, host_bw=40, fabric_bw=20, prefix="zz")
    links = bench.link_directions()
    assert len(links) == 2 * (8 + 8) and len(set(links)) == len(links)
    assert ("zzl1-eth1", "tx", 40) in links and ("zzl1-eth1", "rx", 40) in links
    assert ("zzl1-eth3", "tx", 20) in links and ("zzs1-eth1", "tx", 20) in links


def verdict_results(iperf=19.0, parallel=142.0, foreign=1, disrupted=()):
    def job(name, collective="allreduce", **extra):
        return dict({"name": name, "collective": collective,
                     "cpu": {"machine_busy_pct": {"median": 100}, "steal_pct": {"median": 0},
                             "ovs_vswitchd_pct_of_one_core": {"median": 80},
                             "ovs_main_run_weighted_pct": 75, "ovs_main_wait_weighted_pct": 10,
                             "ovs_main_runnable_weighted_pct": 85, "busiest_link_weighted_pct": 80.0,
                             "foreign_cpu_pct_of_one_cpu": {"median": foreign}}}, **extra)
    jobs = [job("a"), job("b"), job("init", collective="init", disrupted=[])]
    jobs += [job(name, disrupted=["the machine stalled"]) for name in disrupted]
    jobs += [job("old", disrupted=["the machine stalled"], superseded=True)]
    flows = [{"client": "h%d" % (2 * k + 1), "server": "h3", "mbit_s": parallel / 8, "offered_mbit_s": 18.0,
              "fair_share_mbit_s": 20.0, "across_spines": k % 2 == 0} for k in range(8)]
    return {"fabric": {"fabric_bw_mbit": 20},
            "cpu_check": {"iperf": [{"client": "h1", "server": "h8", "seconds": 5, "mbit_s": iperf,
                                     "fraction_of_fabric_bw": iperf / 20, "foreign_cpu_pct": foreign}],
                          "parallel": {"protocol": "udp", "seconds": 5, "load": 0.9, "flows": flows,
                                       "mbit_s": parallel, "offered_mbit_s": 144.0,
                                       "fraction_received": parallel / 144.0,
                                       "cpu": {"foreign_cpu_pct_of_one_cpu": {"median": foreign}}}},
            "jobs": jobs}


def test_cpu_verdict():
    good = verdict_results()
    bench_limits.finish_cpu_check(good)
    check = good["cpu_check"]
    assert check["link_bound"] and "VERDICT: link-bound" in check["verdict"], check["verdict"]
    assert check["criteria"] == {"iperf": True, "parallel": True, "stable": True, "jobs": True}
    assert "1 attempt(s) re-run" in check["verdict"] and check["jobs_rerun"] == ["old"]
    assert "8 UDP flows at once (4 across the spines, 4 within leaves" in check["verdict"]
    assert "142.0 of the 144.0 Mbit/s offered arrived = 99%" in check["verdict"]
    for bad, failing in ((verdict_results(iperf=12.0), "iperf"), (verdict_results(parallel=100.0), "parallel"),
                         (verdict_results(disrupted=["c"]), "stable")):
        bench_limits.finish_cpu_check(bad)
        check = bad["cpu_check"]
        assert not check["link_bound"] and check["criteria"][failing] is False
        assert "VERDICT: NOT shown to be link-bound" in check["verdict"]
    assert "c: the machine stalled" in bad["cpu_check"]["verdict"]
    quiet_but_slow = verdict_results(parallel=100.0)
    bench_limits.finish_cpu_check(quiet_but_slow)
    assert "lower --host-bw/--fabric-bw" in quiet_but_slow["cpu_check"]["verdict"]
    shared = verdict_results(parallel=100.0, foreign=60)
    bench_limits.finish_cpu_check(shared)
    assert shared["cpu_check"]["machine_shared"] and "re-run on a quiet machine" in shared["cpu_check"]["verdict"]
    empty = {"fabric": {"fabric_bw_mbit": 20}, "cpu_check": {"iperf": []}, "jobs": []}
    bench_limits.finish_cpu_check(empty)
    assert not empty["cpu_check"]["link_bound"] and "no data for criterion iperf" in empty["cpu_check"]["verdict"]


CPU_CHECK_KEYS = ["iperf", "parallel", "jobs_machine_busy_pct_median", "jobs_steal_pct_median",
                  "jobs_ovs_vswitchd_pct_median", "jobs_ovs_vswitchd_pct_max", "jobs_ovs_main_run_weighted_pct_median",
                  "jobs_ovs_main_wait_weighted_pct_median", "jobs_ovs_main_runnable_weighted_pct_median",
                  "jobs_busiest_link_weighted_pct_median", "jobs_foreign_cpu_pct_median", "jobs_foreign_cpu_pct_max",
                  "jobs_disrupted", "jobs_rerun", "thresholds", "criteria", "link_bound", "machine_shared",
                  "verdict", "note"]


def test_cpu_verdict_text_and_figures_are_pinned():
    """The whole verdict and results["cpu_check"] (keys in results.json's order) for a shared machine,
    a failed parallel check and a disrupted job: pinned word for word, as results.md prints them."""
    results = verdict_results(parallel=100.0, foreign=60, disrupted=["c"])
    bench_limits.finish_cpu_check(results)
    check = results["cpu_check"]
    assert list(check) == CPU_CHECK_KEYS
    assert {k: check[k] for k in CPU_CHECK_KEYS[2:14]} == {
        "jobs_machine_busy_pct_median": 100, "jobs_steal_pct_median": 0, "jobs_ovs_vswitchd_pct_median": 80,
        "jobs_ovs_vswitchd_pct_max": 80, "jobs_ovs_main_run_weighted_pct_median": 75,
        "jobs_ovs_main_wait_weighted_pct_median": 10, "jobs_ovs_main_runnable_weighted_pct_median": 85,
        "jobs_busiest_link_weighted_pct_median": 80.0, "jobs_foreign_cpu_pct_median": 60,
        "jobs_foreign_cpu_pct_max": 60, "jobs_disrupted": ["c"], "jobs_rerun": ["old"]}
    assert check["criteria"] == {"iperf": True, "parallel": False, "stable": False, "jobs": True}
    assert (check["link_bound"], check["machine_shared"]) == (False, True)
    assert check["verdict"] == (
        "(1) one TCP flow across the spines (iperf3 h1->h8, 5 s): 19.0 Mbit/s = 95% of the 20 Mbit/s fabric links "
        "(needs >= 85%); other processes used 60% of a CPU meanwhile; (2) 8 UDP flows at once (4 across the spines, "
        "4 within leaves, 5 s), each at 90% of its fair share of the links: 100.0 of the 144.0 Mbit/s offered "
        "arrived = 69% (needs >= 95%; per flow 12.5/12.5/12.5/12.5 Mbit/s across, 12.5/12.5/12.5/12.5 within); "
        "other processes used 60% of a CPU meanwhile; (3) 1 job(s) disrupted even after re-running: c: the machine "
        "stalled (1 attempt(s) re-run after a disruption); (4) per job: no job ran its busiest link below 80% of its "
        "rate while ovs-vswitchd's forwarding thread was busy >= 80% (Jobs table, \"bound by\"); while the MPI jobs "
        "moved data, the busiest link ran at 80% of its rate (traffic-weighted, median over 3 jobs; range 80-80%; "
        "gaps between an algorithm's steps keep this below 100%); ovs-vswitchd's forwarding thread ran 75% and "
        "waited for a CPU 10% of that time (traffic-weighted medians; busiest job 85%); other processes on the "
        "machine (not the bench, not Open vSwitch) used 60% of one CPU during the jobs (median; highest job 60%; "
        + "%d CPUs in all)" % os.cpu_count() +
        ", steal time 0%; machine CPU busy 100% (MPI ranks poll while they wait, so this is always "
        "high during a job). VERDICT: NOT shown to be link-bound (the links do not reach their rates all at once; "
        "jobs were disrupted). The times include CPU effects of the emulation; compare the implementations with "
        "care. Other processes used 60% of a CPU: re-run on a quiet machine before concluding that the link rates "
        "are too high.")
    good = verdict_results()
    bench_limits.finish_cpu_check(good)
    assert good["cpu_check"]["verdict"].endswith(
        "machine CPU busy 100% (MPI ranks poll while they wait, so this is always high during a job). "
        "VERDICT: link-bound. The emulated links, not the CPU, limit the transfers.")
    empty = {"fabric": {"fabric_bw_mbit": 20}, "cpu_check": {"iperf": [], "parallel": {"error": "no iperf3"}},
             "jobs": []}
    bench_limits.finish_cpu_check(empty)
    assert empty["cpu_check"]["criteria"] == {"iperf": None, "parallel": None, "stable": True}
    assert empty["cpu_check"]["verdict"] == (
        "(1) no single-flow iperf3 result; (2) no parallel iperf3 result: no iperf3; (3) no job was disrupted. "
        "VERDICT: NOT shown to be link-bound (no data for criterion iperf; no data for criterion parallel). The "
        "times include CPU effects of the emulation; compare the implementations with care.")


def test_parallel_check_pairs_load_every_first_host_link_and_one_flow_per_fabric_link():
    fab = benchcore.Fabric(host_bw=40, fabric_bw=20)
    pairs = bench_limits.parallel_pairs(fab)
    assert pairs == [(1, 3, 20.0), (2, 1, 20.0), (3, 5, 20.0), (4, 3, 20.0), (5, 7, 20.0), (6, 5, 20.0),
                     (7, 1, 20.0), (8, 7, 20.0)]
    for leaf in range(1, 5):   # one flow up and one down per leaf across the spines
        assert sum(1 for s, d, _ in pairs if fab.leaf_of(s) == leaf and fab.leaf_of(d) != leaf) == 1
        assert sum(1 for s, d, _ in pairs if fab.leaf_of(d) == leaf and fab.leaf_of(s) != leaf) == 1
    wide = bench_limits.parallel_pairs(benchcore.Fabric(spines=2, leaves=2, hosts_per_leaf=2, host_bw=40, fabric_bw=40))
    assert [r for _s, _d, r in wide] == [20.0, 20.0, 20.0, 20.0]
    thin = bench_limits.parallel_pairs(benchcore.Fabric(host_bw=40, fabric_bw=10))
    assert {r for _s, _d, r in thin} == {10.0, 30.0}
    assert bench_limits.parallel_pairs(benchcore.Fabric(leaves=1, hosts_per_leaf=2, host_bw=40)) == [(2, 1, 40.0)]
    default = bench_cli.parse_args([])
    assert (default.host_bw, default.fabric_bw) == (benchcore.Fabric().host_bw, benchcore.Fabric().fabric_bw) == (30, 15)
    assert default.bcast_rate_mbps == 15
    assert bench_common.mbit("20") == 20 and bench_common.mbit("2.5") == 2.5
    assert bench_limits.udp_received_mbit(json.dumps({"end": {"sum": {"bits_per_second": 18e6, "lost_percent": 10.0}}})) \
        == pytest.approx(16.2)
    assert bench_limits.udp_received_mbit(json.dumps({"end": {"sum": {"bits_per_second": 18e6, "lost_percent": 10.0},
                                                     "sum_received": {"bits_per_second": 17e6}}})) == pytest.approx(17)
