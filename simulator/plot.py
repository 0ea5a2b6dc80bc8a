"""Plots (matplotlib, Agg): per-link load bars of one job, the congestion time series of scenarios."""
import logging

LOG = logging.getLogger(__name__)


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def link_loads(links, path, title=""):
    """Bars of bytes / capacity per directed switch-to-switch link (``job.link_report`` rows)."""
    plt = _pyplot()
    labels = [f"{r['src']}>{r['dst']}" for r in links]
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(labels) + 2), 4))
    ax.bar(range(len(labels)), [r["bytes"] for r in links], color="tab:blue")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=90, fontsize=7)
    ax.set_ylabel("bytes / capacity")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def congestion(results, path):
    """Step plot of the maximum congestion over time, one line per scenario."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for r in results:
        series = r.series["max_congestion"]
        if series:
            s = r.summary
            ax.step([t for t, _ in series], [v for _, v in series], where="post", linewidth=0.8,
                    label=f"{s['id']}: {s['host_selector']}/{s['process_mapper']}/{s['router']}")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("maximum congestion (bytes / capacity)")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
