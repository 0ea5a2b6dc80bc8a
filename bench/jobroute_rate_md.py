"""The tables of bench/jobroute_rate.py (pure): per rate and measurement kind, the shift's and the
permutation's share of the rate per round, the median streams and TCP retransmits of the iperf3
kinds, the emulation choices, and per sampled MPI run (--links) each exchange's busiest link."""
import statistics

KINDS = ("mpi-sdn-optimal", "mpi-sdn-optimal-host-order", "mpi-dmodk-host-order", "mpi-dmodk", "iperf3-sdn-optimal",
         "iperf3-dmodk", "iperf3-dmodk-host-order", "iperf3-single")
IDLE_SHOWN_S = 0.5      # links table: a sender idle (jobroute_links.idle_senders) at least this long


def markdown(results):
    """One row per rate and measurement (KIND, KIND+sleep): the shift's and the permutation's share
    of the rate per round and their median (iperf3 kinds: the slowest stream's, the median stream's),
    the machine's CPU busy share, ovs-vswitchd's cores and the ranks' CPU seconds, medians."""
    lines = ["| Mbit/s | measurement | shift: rounds (median) | perm: rounds (median) | CPU busy | "
             "ovs-vswitchd cores | rank CPU s (least-most) |", "|---|---|---|---|---|---|---|"]

    def pct(v):
        return "-" if v is None else "%.0f%%" % (100 * v)

    medians = []
    for rate, rounds in sorted(results["rates"].items(), key=lambda kv: float(kv[0])):
        keys = sorted({k for r in rounds for k, v in r.items() if isinstance(v, dict)},
                      key=lambda k: (KINDS.index(k.split("+")[0]) if k.split("+")[0] in KINDS else len(KINDS), k))
        for key in keys:
            def vals(field, key=key):
                return [r[key].get(field) for r in rounds if isinstance(r.get(key), dict)]

            def med(field):
                got = [v for v in vals(field) if v is not None]
                return statistics.median(got) if got else None

            def cell(field):
                got = vals(field)
                if not any(v is not None for v in got):
                    return "-"
                return "%s (%s)" % (", ".join(pct(v) for v in got), pct(med(field)))
            shift, perm = ("min", "median") if key in ("iperf3-dmodk-host-order", "iperf3-single") else ("shift", "perm")
            cpu = "-" if med("rank_cpu_max_s") is None else "%.1f-%.1f" % (med("rank_cpu_min_s"), med("rank_cpu_max_s"))
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                rate, key, cell(shift), cell(perm), pct(med("cpu_busy")),
                "-" if med("ovs_cores") is None else "%.2f" % med("ovs_cores"), cpu))
            if key in ("iperf3-sdn-optimal", "iperf3-dmodk"):
                retrans = ["/".join(str(sum(n or 0 for n in (r[key].get("retransmits") or {}).get(x) or []))
                                    for x in ("shift", "perm")) for r in rounds if isinstance(r.get(key), dict)]
                medians.append("| %s | %s | %s | %s | %s |" % (key, rate, cell("shift_median"), cell("perm_median"),
                                                              ", ".join(retrans)))
    done = ", ".join("%s: %d" % (rate, len(rounds)) for rate, rounds in results["rates"].items())
    text = "\n".join(lines) + "\n\n%s: rounds measured (Mbit/s: rounds) %s; %% of the rate (payload); %g s per " \
        "exchange at line rate. iperf3-dmodk-host-order and iperf3-single: the slowest and the median stream " \
        "in the shift and perm columns; iperf3-sdn-optimal, iperf3-dmodk: the slowest stream of each exchange " \
        "(the median stream's in the next table).\n" % (results.get("fabric", "k4"), done, results["seconds"])
    if medians:
        text += "\n| measurement | Mbit/s | median stream, shift: rounds (median) | perm: rounds (median) | " \
            "TCP retransmits, shift/perm: rounds |\n|---|---|---|---|---|\n" + "\n".join(medians) + "\n\n"
    transport = results.get("mpi_transport")
    if transport:
        text += "Open MPI transport: %s (MCA %s); variants (KIND+NAME, on top of it): %s.\n" % (
            transport["name"], ", ".join("%s=%s" % kv for kv in sorted(transport["mca"].items())) or "none",
            "; ".join("%s: %s" % (n, ", ".join("%s=%s" % kv for kv in sorted(m.items())) or "none")
                      for n, m in sorted((results.get("mca_variants") or {}).items())) or "none")
    emu = results.get("emulation")
    if emu:
        text += "Emulation choices: ovs-vswitchd send buffer %s; ACK class %s.\n" % (
            emu["ovs_sndbuf"], emu["ack_class"])
    return text + links_markdown(results)


def links_markdown(results):
    """Per MPI run sampled (--links): each exchange's busiest switch link (in flows) and when the
    receiving hosts got their first and last bytes (seconds from the exchange's first bytes), and the
    senders idle >= IDLE_SHOWN_S while the others sent."""
    rows = []
    for rate, rounds in sorted(results["rates"].items(), key=lambda kv: float(kv[0])):
        for rnd, rec in enumerate(rounds, 1):
            for kind in sorted(k for k, v in rec.items() if isinstance(v, dict)):
                links = rec[kind].get("links")
                if not links:
                    continue
                for name, ex in zip(("shift", "perm"), links["exchanges"]):
                    idle = {h: s for h, s in (ex.get("idle_senders_s") or {}).items() if s >= IDLE_SHOWN_S}
                    rows.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                        rate, rnd, kind, name, "-" if ex["max_link_flows"] is None else "%.2f" % ex["max_link_flows"],
                        ", ".join("%s %.2f" % kv for kv in ex["links_over_1_2"].items()) or "-",
                        "%.1f-%.1f" % tuple(ex["host_start_s"]) if ex["host_start_s"] else "-",
                        "%.1f-%.1f" % tuple(ex["host_done_s"]) if ex["host_done_s"] else "-",
                        ", ".join("%s %.1f" % kv for kv in sorted(idle.items())) or "none"))
    if not rows:
        return ""
    return ("\n| Mbit/s | round | kind | exchange | max flows on a switch link | links > 1.2 flows | "
            "hosts' first bytes (s) | hosts 98 % done (s) | senders idle while the others sent (s) |\n"
            "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
