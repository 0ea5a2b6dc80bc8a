"""``sdnmpi-prof plot``: the traffic matrix of one phase as a heat map (log colour scale)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend choice)
from matplotlib.colors import LogNorm  # noqa: E402
import numpy as np  # noqa: E402


def heat_map(trace, k, out):
    """Writes phase k's traffic matrix (bytes, row = sender) of `trace` to the image `out`."""
    phase = trace.phases[k]
    matrix = phase.traffic_matrix().astype(float)
    shown = np.ma.masked_where(matrix <= 0, matrix)
    fig, ax = plt.subplots(figsize=(6.4, 5.4))
    try:
        if shown.count() > 0:
            image = ax.imshow(shown, norm=LogNorm(vmin=shown.min(), vmax=max(shown.max(), shown.min() * 1.001)),
                              cmap="viridis", interpolation="nearest")
            fig.colorbar(image, ax=ax, label="bytes (log scale)")
        else:
            ax.imshow(np.zeros_like(matrix), cmap="Greys", vmin=0, vmax=1)
        ax.set_xlabel("receiver rank")
        ax.set_ylabel("sender rank")
        title = "phase %d" % k if k else "whole run"
        ax.set_title("%s: %d ranks, %s" % (title, trace.n_procs, trace.source or "PFProf"))
        fig.tight_layout()
        fig.savefig(out)
    finally:
        plt.close(fig)
