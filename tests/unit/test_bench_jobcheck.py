"""The per-job bottleneck check (bench/bench_jobcheck.py) and the sampler figures it reads."""
import copy

import bench_setup  # noqa: F401 (bench/ on sys.path)

import bench_jobcheck
import bench_limits
import bench_sampling
import report
import report_bounds

MB = 10 ** 6


def recorded_job(name, link, switch, link_bytes=4243249933, spine=(89801512, 89894516, 240883940, 235899190)):
    """A job record as results.json keeps it (figures of run 20261129-052947, 16 hosts, 30/15)."""
    return {"name": name, "collective": "allreduce", "hosts": list(range(1, 17)),
            "cpu": {"busiest_link_weighted_pct": link, "ovs_main_runnable_weighted_pct": switch,
                    "ovs_main_run_weighted_pct": switch - 8, "ovs_main_wait_weighted_pct": 8,
                    "link_bytes_total": link_bytes, "foreign_cpu_pct_of_one_cpu": {"median": 1.0}},
            "routes": {"spine_tx_bytes": {"sdnmpi": {"bytes": {"bns1": spine[0], "bns2": spine[1]}},
                                          "openmpi": {"bytes": {"bns1": spine[2], "bns2": spine[3]}}}}}


def test_judge_thresholds():
    assert bench_jobcheck.judge(80.0, 99.0) == "links"
    assert bench_jobcheck.judge(79.9, 80.0) == "switch"
    assert bench_jobcheck.judge(64.0, 71.0) == "other"
    assert bench_jobcheck.judge(64.0, None) == "other"
    assert bench_jobcheck.judge(None, 95.0) is None


def test_crossings_from_old_records_and_from_the_sampler():
    job = recorded_job("a", 74.4, 90.6)
    # link counters count a byte per link used (2 within a leaf, 4 across), spines once per cross-leaf byte
    assert bench_jobcheck.crossing_bytes(job) == 4243249933 / 2.0 + (89801512 + 89894516 + 240883940 + 235899190)
    within, across = 100 * MB, 30 * MB
    synthetic = recorded_job("b", 70, 90, link_bytes=2 * within + 4 * across, spine=(across, 0, 0, 0))
    assert bench_jobcheck.crossing_bytes(synthetic) == within + 3 * across
    synthetic["cpu"]["crossing_bytes_total"] = 12345
    assert bench_jobcheck.crossing_bytes(synthetic) == 12345
    del job["routes"]
    assert bench_jobcheck.crossing_bytes(job) is None


def test_phases_judge_each_implementation_apart():
    job = recorded_job("a", 82.0, 85.0)   # the job as a whole looks link-bound ...
    assert bench_jobcheck.verdicts(job) == {"job": "links"}
    job["cpu"]["phases"] = {
        "start": {"link_bytes": 10, "busiest_link_weighted_pct": 5.0, "ovs_main_runnable_weighted_pct": 99.0},
        "openmpi": {"link_bytes": 3 * MB, "busiest_link_weighted_pct": 93.0, "ovs_main_runnable_weighted_pct": 84.0,
                    "crossing_mib_s_weighted": 20.0},
        "sdnmpi": {"link_bytes": MB, "busiest_link_weighted_pct": 66.0, "ovs_main_runnable_weighted_pct": 95.0,
                   "crossing_mib_s_weighted": 44.4}}
    # ... but sdnmpi's calls were not: only the implementations' phases count, "start" is left out
    assert bench_jobcheck.verdicts(job) == {"openmpi": "links", "sdnmpi": "switch"}
    for impl, want in (("openmpi", "links"), ("sdnmpi", "switch"), ("sdnmpi:hier-s8k", "switch"),
                       ("first:openmpi", "links"), ("first:sdnmpi:hier-s8k", "switch"), ("settle2:sdnmpi", "switch")):
        assert bench_jobcheck.record_verdict(job, impl) == want, impl
    assert bench_jobcheck.cell(job) == ("openmpi: links (link 93%, switch 84%, 20 MiB/s crossed); "
                                        "sdnmpi: switch (link 66%, switch 95%, 44 MiB/s crossed)")
    assert bench_jobcheck.switch_bound([job]) == [("a", "sdnmpi", 66.0, 95.0)]


def test_criterion_flags_the_recorded_16_host_jobs_and_not_the_8_host_ones():
    sixteen = [recorded_job("allreduce-dmodk-random-p16", 74.4, 90.6),
               recorded_job("allreduce-dmodk-block-p16", 64.1, 84.9)]
    ok, text = bench_jobcheck.criterion(sixteen + [dict(recorded_job("init", 10, 99), collective="init"),
                                                   dict(recorded_job("old", 10, 99), superseded=True)])
    assert not ok
    assert "2 job(s)" in text and "allreduce-dmodk-random-p16 (link 74%, switch 91%)" in text
    assert "init" not in text.split(":", 2)[2] and "old" not in text
    eight = [recorded_job("allreduce-dmodk-random-p8", 88.0, 88.0),
             recorded_job("allreduce-dmodk-block-p8", 59.0, 78.0)]
    ok, text = bench_jobcheck.criterion(eight)
    assert ok and text.startswith("(4) per job: no job")


def verdict_input(jobs):
    flows = [{"client": "h1", "server": "h3", "mbit_s": 13.5, "across_spines": k % 2 == 0} for k in range(8)]
    return {"fabric": {"fabric_bw_mbit": 15},
            "cpu_check": {"iperf": [{"client": "h1", "server": "h16", "seconds": 3, "mbit_s": 14.3,
                                     "fraction_of_fabric_bw": 14.3 / 15}],
                          "parallel": {"seconds": 3, "load": 0.9, "flows": flows, "mbit_s": 108.0,
                                       "offered_mbit_s": 108.0, "fraction_received": 1.0}},
            "jobs": jobs}


def test_run_verdict_fails_on_a_switch_bound_job_on_a_quiet_machine():
    results = verdict_input([recorded_job("allreduce-dmodk-random-p16", 74.4, 90.6)])
    bench_limits.finish_cpu_check(results)
    check = results["cpu_check"]
    assert check["criteria"] == {"iperf": True, "parallel": True, "stable": True, "jobs": False}
    assert not check["link_bound"] and "VERDICT: NOT shown to be link-bound" in check["verdict"]
    assert "switch was busy" in check["verdict"] and "lower --host-bw/--fabric-bw" in check["verdict"]
    fine = verdict_input([recorded_job("allreduce-dmodk-random-p16", 91.0, 90.0)])
    bench_limits.finish_cpu_check(fine)
    assert fine["cpu_check"]["link_bound"] and fine["cpu_check"]["criteria"]["jobs"] is True


def test_bound_table_and_jobs_table_mark_switch_bound_rows():
    def rec(job, impl, median):
        return {"collective": "allreduce", "impl": impl, "routing": "dmodk", "placement": "block", "nprocs": 16,
                "bytes": 1 << 20, "root": None, "samples_s": [median], "median_s": median, "job": job,
                "bound_s": {"host": 0.5243, "cut": 0.2796, "bound": 0.5243}}
    results = {"fabric": {"spines": 2, "leaves": 4, "hosts_per_leaf": 4, "host_bw_mbit": 30, "fabric_bw_mbit": 15},
               "jobs": [recorded_job("sw", 64.1, 84.9)],
               "records": [rec("sw", "openmpi", 1.7457), rec("sw", "sdnmpi", 0.9910)]}
    table = report_bounds.bound_table(results)
    assert "| 3.33x † | 1.89x † |" in table, table
    linked = copy.deepcopy(results)
    linked["jobs"][0]["cpu"]["busiest_link_weighted_pct"] = 90.0
    assert "| 3.33x | 1.89x |" in report_bounds.bound_table(linked)
    jobs = report.jobs_table(results["jobs"])
    assert jobs.splitlines()[0].endswith("| bound by (links / switch / other; bench/README.md) |")
    assert jobs.splitlines()[2].endswith("| switch (link 64%, switch 85%) |")


def test_sampler_counts_crossings_and_splits_by_phase():
    state = {"now": "openmpi"}
    mon = bench_sampling.CpuMonitor(links=[("s1-eth1", "tx", 8.0), ("s1-eth1", "rx", 8.0), ("s2-eth1", "tx", 8.0)],
                                    phase=lambda: state["now"])
    mon._ovs_pid = None   # schedstat of this machine's ovs-vswitchd is not part of the test
    # 8 Mbit/s = 1 MB/s per direction; 1 s intervals: (time, [byte counters], schedstat, [tx packet
    # counters]); the sdnmpi interval's bytes in 1000-byte packets, openmpi's in 100-byte ones
    mon._account_links((0.0, [0, 0, 0], (0, 0), [0, None, 0]),
                       (1.0, [MB, MB // 2, MB // 4], (800000000, 100000000), [MB // 100, None, MB // 400]))
    state["now"] = "sdnmpi"
    mon._account_links((1.0, [MB, MB // 2, MB // 4], None, [MB // 100, None, MB // 400]),
                       (2.0, [MB + MB // 2, MB // 2, MB // 4], None, [MB // 100 + MB // 2000, None, MB // 400]))
    summary = mon.summary()
    # tx entries only: a byte leaves each switch it crosses by one port; rx is the host injecting it
    assert summary["crossing_bytes_total"] == MB + MB // 4 + MB // 2
    assert summary["crossing_packets_total"] == MB // 100 + MB // 400 + MB // 2000
    openmpi, sdnmpi = summary["phases"]["openmpi"], summary["phases"]["sdnmpi"]
    assert openmpi["link_bytes"] == MB + MB // 2 + MB // 4 and openmpi["crossing_bytes"] == MB + MB // 4
    assert openmpi["busiest_link_weighted_pct"] == 100.0
    assert abs(openmpi["crossing_mib_s_weighted"] - (MB + MB // 4) / float(1 << 20)) < 1e-9
    assert abs(openmpi["ovs_main_runnable_weighted_pct"] - 90.0) < 1e-9
    assert sdnmpi["busiest_link_weighted_pct"] == 50.0 and sdnmpi["ovs_main_runnable_weighted_pct"] is None
    assert sdnmpi["seconds"] == 1.0
    assert openmpi["crossing_packets"] == MB // 100 + MB // 400 and sdnmpi["crossing_packets"] == MB // 2000
    assert abs(openmpi["crossing_bytes_per_packet"] - 100.0) < 0.1
    assert abs(sdnmpi["crossing_bytes_per_packet"] - 1000.0) < 1


def _fed_monitor(labels):
    """A CpuMonitor fed one link interval per label (None: no phase callable), with uneven loads."""
    state = {"now": labels[0]}
    mon = bench_sampling.CpuMonitor(links=[("s1-eth1", "tx", 8.0), ("s1-eth1", "rx", 8.0), ("s2-eth1", "tx", 8.0)],
                                    phase=None if labels[0] is None else (lambda: state["now"]))
    mon._ovs_pid = None
    counters, t, ns = [0, 0, 0], 0.0, (0, 0)
    for k, label in enumerate(labels):
        state["now"] = label
        step = [(k % 3 + 1) * MB // 4, (k % 2) * MB // 3, (k % 4) * MB // 5]
        dt = 0.25 + 0.05 * (k % 3)
        nxt = [c + d for c, d in zip(counters, step)]
        ns_next = (ns[0] + (k % 5 + 1) * 40000000, ns[1] + (k % 2) * 30000000)
        mon._account_links((t, counters, ns, [c // 1000 for c in counters]),
                           (t + dt, nxt, ns_next, [c // 1000 for c in nxt]))
        counters, t, ns = nxt, t + dt, ns_next
    return mon


def test_sampler_names_the_busiest_link_with_or_without_phases():
    """The link most often busiest is part of every summary with links (the rate probe reads it
    from a monitor without phases), not only of those that read Open vSwitch's counters."""
    for labels in ([None] * 4, ["openmpi", "sdnmpi", "openmpi", "sdnmpi"]):
        mon = _fed_monitor(labels)
        mon.ovs_counters = None   # as without ovs-vswitchd
        assert mon.summary()["busiest_link_most_often"] == "s1-eth1 tx"


def test_sampler_phase_figures_come_from_the_job_samples():
    """The per-phase sums are made from the same interval records as the whole job's lists: over all
    phases they add up to the job's totals, and one phase spanning the job gives the job's figures."""
    mon = _fed_monitor(["openmpi", "sdnmpi", "sdnmpi", "openmpi", "sdnmpi", "openmpi", "openmpi"])
    summary = mon.summary()
    phases = summary["phases"]
    assert sorted(phases) == ["openmpi", "sdnmpi"]
    assert sum(p["link_bytes"] for p in phases.values()) == summary["link_bytes_total"] == sum(mon.link_bytes)
    assert sum(p["crossing_bytes"] for p in phases.values()) == summary["crossing_bytes_total"]
    assert sum(p["crossing_packets"] for p in phases.values()) == summary["crossing_packets_total"] > 0
    assert abs(sum(p["seconds"] for p in phases.values()) - sum(s.dt for s in mon.link_samples)) < 0.02
    weighted = sum(p["busiest_link_weighted_pct"] * p["link_bytes"] for p in phases.values()) / summary["link_bytes_total"]
    assert abs(weighted - summary["busiest_link_weighted_pct"]) < 1e-9
    rate = sum(p["crossing_mib_s_weighted"] * p["link_bytes"] for p in phases.values()) / summary["link_bytes_total"]
    assert abs(rate - summary["crossing_mib_s_weighted"]) < 1e-9
    one = _fed_monitor(["sdnmpi"] * 5).summary()
    assert list(one["phases"]) == ["sdnmpi"]
    assert one["phases"]["sdnmpi"]["busiest_link_weighted_pct"] == one["busiest_link_weighted_pct"]
    assert one["phases"]["sdnmpi"]["crossing_mib_s_weighted"] == one["crossing_mib_s_weighted"]
    unlabelled = _fed_monitor([None] * 5)
    assert unlabelled.phases == {} and "phases" not in unlabelled.summary()
    assert unlabelled.link_util == [s.util for s in unlabelled.link_samples] and len(unlabelled.link_util) == 5


def test_init_and_startup_jobs_are_not_labelled_by_their_links():
    cpu = {"busiest_link_weighted_pct": 6.0, "ovs_main_runnable_weighted_pct": 90.0}
    startup = {"name": "startup-dmodk-p8-warm1", "collective": "startup", "cpu": cpu}
    data = {"name": "allreduce-dmodk-block-p8", "collective": "allreduce", "cpu": cpu}
    assert bench_jobcheck.cell(startup) == "- (latency)"
    assert bench_jobcheck.cell(data).startswith("switch (link 6%")
    assert [name for name, *_ in bench_jobcheck.switch_bound([startup, data])] == ["allreduce-dmodk-block-p8"]


def test_link_sample_reads_every_links_bytes_and_tx_packets_in_one_read(monkeypatch):
    """One read of /proc/net/dev a link interval (jobroute_links.proc_net_dev's columns): every entry's
    bytes in its direction, the packets of "tx" entries only, None for an interface it does not list."""
    reads = []
    dev = {"s1-eth1": [11, 12, 0, 0, 0, 0, 0, 0, 18, 19, 0, 0, 0, 0, 0, 0],
           "s2-eth1": [21, 22, 0, 0, 0, 0, 0, 0, 28, 29, 0, 0, 0, 0, 0, 0]}
    monkeypatch.setattr(bench_sampling, "proc_net_dev", lambda: reads.append(1) or dev)
    mon = bench_sampling.CpuMonitor(links=[("s1-eth1", "tx", 8.0), ("s1-eth1", "rx", 8.0), ("s2-eth1", "tx", 8.0),
                                           ("gone", "tx", 8.0)])
    mon._ovs_pid = None
    _t, nbytes, sched, packets = mon._link_sample()
    assert nbytes == [18, 11, 28, None] and packets == [19, None, 29, None] and sched is None
    assert reads == [1]
