"""results.md's "Open vSwitch's counters per implementation" (bench/ovs_counters.py, issue 17): per
job and implementation, what the userspace datapath did with the packets (upcalls, flows set up,
EMC share) and how they arrived (packets per receive batch, per wakeup of the forwarding thread,
main-loop poll registrations per packet), next to the thread's time per packet."""

from ovs_counters import derived

IMPLS = ("sdnmpi", "openmpi")


def _num(value, fmt="%.2f"):
    return "-" if value is None else fmt % value


def rows(jobs):
    """[(job, implementation, figures)] of every job whose sampler read the counters per phase."""
    out = []
    for job in jobs:
        cpu = job.get("cpu") or {}
        ovs = (cpu.get("ovs_counters") or {}).get("phases") or {}
        for impl in IMPLS:
            acc, link = ovs.get(impl), (cpu.get("phases") or {}).get(impl) or {}
            if not acc or not acc.get("pmd"):
                continue
            d = derived(acc, link.get("crossing_bytes"))   # from the raw deltas, as today's derived() has them
            packets, busy = d.get("datapath_packets"), link.get("ovs_main_runnable_weighted_pct")
            us = d.get("thread_busy_us_per_packet")   # exact (schedstat at each switch), else from the sampler's %
            if us is None and packets and busy is not None:
                us = busy / 100.0 * acc["seconds"] / packets * 1e6
            out.append((job.get("name"), impl, {
                "seconds": acc["seconds"], "mib": (link.get("crossing_bytes") or 0) / float(1 << 20),
                "mib_s": link.get("crossing_mib_s_weighted"), "busy": busy, "packets": packets, "us": us,
                "upcalls": d.get("upcalls"), "upcalls_per_mib": d.get("upcalls_per_mib"),
                "flow_put": (acc.get("coverage") or {}).get("dpif_flow_put", 0), "flows_max": acc.get("dp_flows_max"),
                "lost": (acc.get("dp") or {}).get("lost", 0), "emc": d.get("emc_share_of_hits"),
                "per_batch": d.get("packets_per_rx_batch"), "per_wakeup": d.get("packets_per_wakeup"),
                "polls": d.get("poll_nodes_per_packet")}))
    return out


def section(results):
    """The section's lines ([] if no job has the counters)."""
    table = rows(results.get("jobs", []))
    if not table:
        return []
    out = ["", "## Open vSwitch's counters per implementation", "",
           "Read at every route switch (bench/ovs_counters.py): datapath packets and upcalls "
           "(`dpif-netdev/pmd-stats-show`), lost and the most datapath flows at a switch (`dpctl/show`), "
           "flows set up (coverage dpif_flow_put), packets per receive batch (coverage netdev_received), "
           "per wakeup of the forwarding thread (its voluntary context switches) and the main loop's poll "
           "registrations per packet (coverage poll_create_node). Coverage counts reach the totals about "
           "once a second, so they blur across route switches; the rest are exact at each switch. "
           "Thread µs a packet: the forwarding thread's run + wait time (schedstat at each switch) / the "
           "phase's datapath packets (in runs before schedstat was read there: its traffic-weighted run + wait % "
           "x the phase's seconds, which counts idle moments as busy).", "",
           "| job | implementation | seconds | crossings MiB (MiB/s) | thread busy | datapath packets | thread µs a "
           "packet | upcalls (per MiB) | flows set up | most flows | lost | EMC share of hits | packets a receive "
           "batch | packets a wakeup | poll registrations a packet |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, impl, f in table:
        out.append("| %s | %s | %.1f | %.0f (%s) | %s | %s | %s | %s (%s) | %d | %s | %d | %s | %s | %s | %s |" % (
            name, impl, f["seconds"], f["mib"], _num(f["mib_s"], "%.1f"), _num(f["busy"], "%.0f%%"),
            _num(f["packets"], "%d"), _num(f["us"], "%.1f"), _num(f["upcalls"], "%d"),
            _num(f["upcalls_per_mib"], "%.2f"), f["flow_put"], _num(f["flows_max"], "%d"), f["lost"],
            _num(f["emc"] and 100 * f["emc"], "%.0f%%"), _num(f["per_batch"]), _num(f["per_wakeup"], "%.0f"),
            _num(f["polls"], "%.1f")))
    return out
