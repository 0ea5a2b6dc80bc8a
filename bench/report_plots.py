"""The PNG plots of a bench report (report.py writes them next to results.md)."""
import os

import benchcore
from benchcore import fmt_bytes


# --- plots ----------------------------------------------------------------------------------

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _legend(ax, size):
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=size)


TIME_LABEL = "time (s), median with min-max"


def _save(plt, fig, ax, out_dir, name, xlabel, ylabel, title, legend_size=7, logy=True):
    """Log-2 x axis (log y unless ``logy`` is false), labels, grid and legend; writes ``name``
    into ``out_dir`` and closes the figure. Returns ``name``."""
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    _legend(ax, legend_size)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)
    return name


def _errorbar(ax, recs, label, x_key="bytes", **kw):
    """Median with min-max bars of ``recs`` against their ``x_key``."""
    recs = sorted(recs, key=lambda r: r[x_key])
    x = [r[x_key] for r in recs]
    y = [r["median_s"] for r in recs]
    lo = [r["median_s"] - r["min_s"] for r in recs]
    hi = [r["max_s"] - r["median_s"] for r in recs]
    ax.errorbar(x, y, yerr=[lo, hi], label=label, marker="o", capsize=3, **kw)


def plot_all(results, out_dir):
    """Writes the PNGs; returns their file names."""
    plt = _plt()
    records = [r for r in results.get("records", []) if r.get("median_s") and not r.get("superseded")]
    files = []
    styles = {"openmpi": "-", "sdnmpi": "--"}
    colors = {"block": "tab:blue", "random": "tab:orange"}

    # allreduce: time vs size per routing
    ar = [r for r in records if r["collective"] == "allreduce" and r["bytes"] >= 1024]
    for routing in sorted({r["routing"] for r in ar}, key=lambda x: benchcore.ROUTING_ORDER.get(x, 9)):
        fig, ax = plt.subplots(figsize=(7, 5))
        sub = [r for r in ar if r["routing"] == routing]
        for placement in sorted({r["placement"] for r in sub}):
            for p in sorted({r["nprocs"] for r in sub if r["placement"] == placement}):
                for impl in benchcore.IMPLS:
                    recs = [r for r in sub if r["placement"] == placement and r["nprocs"] == p and r["impl"] == impl]
                    if recs:
                        _errorbar(ax, recs, "%s %s p=%d" % (impl, placement, p), linestyle=styles[impl],
                                  color=colors.get(placement))
                lim = sorted({(r["bytes"], r["limit_s"]) for r in sub if r["placement"] == placement
                              and r["nprocs"] == p and r.get("limit_s")})
                if lim:
                    ax.plot([b for b, _ in lim], [l for _, l in lim], ":", color=colors.get(placement),
                            label="limit %s p=%d" % (placement, p))
        files.append(_save(plt, fig, ax, out_dir, "allreduce_time_%s.png" % routing, "message size (bytes)",
                           TIME_LABEL, "Allreduce, default routing %s" % routing))

    # speedup vs size (allreduce and, if present, bcast)
    for collective in ("allreduce", "bcast"):
        pairs = [(o, s) for o, s in benchcore.pair_records(records, collective) if o and s]
        if not pairs:
            continue
        fig, ax = plt.subplots(figsize=(7, 5))
        groups = {}
        for o, s in pairs:
            if collective == "allreduce" and o["bytes"] < 1024:
                continue
            key = (o["routing"], o["placement"], o["nprocs"], o.get("root"))
            groups.setdefault(key, []).append((o["bytes"], benchcore.speedup(o, s)))
        for key in sorted(groups, key=lambda k: (benchcore.ROUTING_ORDER.get(k[0], 9), k[1], k[2], k[3] or 0)):
            pts = sorted(groups[key])
            label = "%s %s p=%d" % key[:3] + ("" if key[3] is None else " root %d" % key[3])
            ax.plot([b for b, _ in pts], [v for _, v in pts], marker="o", label=label)
        ax.axhline(1.0, color="black", linewidth=1)
        files.append(_save(plt, fig, ax, out_dir, "%s_speedup.png" % collective, "message size (bytes)",
                           "speedup (Open MPI median / sdnmpi median)",
                           "%s speedup of sdnmpi" % collective.capitalize(), logy=False))

    # bcast: time vs size per routing, and time vs p
    bc = [r for r in records if r["collective"] == "bcast"]
    for routing in sorted({r["routing"] for r in bc}, key=lambda x: benchcore.ROUTING_ORDER.get(x, 9)):
        fig, ax = plt.subplots(figsize=(7, 5))
        sub = [r for r in bc if r["routing"] == routing]
        for key in sorted({(r["placement"], r["nprocs"], r["root"], r["impl"]) for r in sub}):
            recs = [r for r in sub if (r["placement"], r["nprocs"], r["root"], r["impl"]) == key]
            _errorbar(ax, recs, "%s %s p=%d root %s" % (key[3], key[0], key[1], key[2]), linestyle=styles[key[3]])
        files.append(_save(plt, fig, ax, out_dir, "bcast_time_%s.png" % routing, "message size (bytes)",
                           TIME_LABEL, "Bcast, default routing %s" % routing, legend_size=6))
    if bc:
        sizes = sorted({r["bytes"] for r in bc})
        size = 1 << 20 if (1 << 20) in sizes else sizes[-1]
        fig, ax = plt.subplots(figsize=(7, 5))
        sub = [r for r in bc if r["bytes"] == size and r["root"] == 0]
        for key in sorted({(r["routing"], r["placement"], r["impl"]) for r in sub},
                          key=lambda k: (benchcore.ROUTING_ORDER.get(k[0], 9), k[1], k[2])):
            recs = [r for r in sub if (r["routing"], r["placement"], r["impl"]) == key]
            _errorbar(ax, recs, "%s %s %s" % (key[2], key[0], key[1]), x_key="nprocs", linestyle=styles[key[2]])
        lim = sorted({(r["nprocs"], r["limit_s"]) for r in sub if r.get("limit_s") is not None})
        if lim:
            ax.plot([p for p, _ in lim], [l for _, l in lim], ":", color="black", label="limit")
        files.append(_save(plt, fig, ax, out_dir, "bcast_time_vs_p.png", "processes p", TIME_LABEL,
                           "Bcast of %s from rank 0 vs p" % fmt_bytes(size), logy=False))

    ps = results.get("planner_scale") or []
    if ps:
        fig, ax = plt.subplots(figsize=(7, 5))
        for key in sorted({(r["kind"], r["planner"], r["placement"]) for r in ps}):
            rows = sorted([r for r in ps if (r["kind"], r["planner"], r["placement"]) == key], key=lambda r: r["hosts"])
            ax.plot([r["hosts"] for r in rows], [r["plan_s"] for r in rows], marker="o",
                    linestyle="-" if key[1] == "balanced" else "--", label="%s %s %s" % key)
        files.append(_save(plt, fig, ax, out_dir, "planner_scale.png", "hosts (p = all hosts)", "planner time (s)",
                           "Allreduce planner time"))
    return files
