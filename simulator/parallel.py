"""Running many scenarios: in this process, in N local processes, or on a Dask distributed cluster.

Scenarios are split into interleaved batches; each batch runs in one process with one memo of
topologies, traces and routed placements (scenario._Loader). Every scenario's randomness comes
from its own seeded streams, so the results do not depend on where or in which batch it ran.
"""
import concurrent.futures
import logging

from . import scenario

LOG = logging.getLogger(__name__)


class ClusterError(RuntimeError):
    """The Dask scheduler could not be reached or failed; the message is one line."""


def run_batch(specs):
    """Runs ``specs`` in order with one shared memo; returns their Results."""
    loader = scenario._Loader()
    return [scenario.run(spec, loader) for spec in specs]


def _batches(specs, n):
    return [b for b in (specs[i::n] for i in range(n)) if b]


def _reorder(specs, batches, results):
    by_id = {}
    for batch, out in zip(batches, results):
        for spec, result in zip(batch, out):
            by_id[spec.id] = result
    return [by_id[spec.id] for spec in specs]


def run_all(specs, jobs=1, scheduler=None):
    """The Results of ``specs`` (in their order): here (``jobs`` = 1), in ``jobs`` processes, or
    on the Dask scheduler at ``scheduler`` (``tcp://host:port``), ``jobs`` batches per worker."""
    specs = list(specs)
    if scheduler is not None:
        return _on_dask(specs, jobs, scheduler)
    if jobs <= 1 or len(specs) <= 1:
        return run_batch(specs)
    batches = _batches(specs, jobs)
    with concurrent.futures.ProcessPoolExecutor(len(batches)) as pool:
        results = list(pool.map(run_batch, batches))
    return _reorder(specs, batches, results)


def _on_dask(specs, jobs, scheduler):
    try:
        import distributed
    except ImportError:
        raise ClusterError("--scheduler needs the 'distributed' package (pip install dask[distributed])") from None
    try:
        client = distributed.Client(scheduler, timeout=15) if isinstance(scheduler, str) else scheduler
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler {scheduler}: {' '.join(str(exc).split())}") from None
    try:
        workers = max(len(client.scheduler_info().get("workers", {})), 1)
        batches = _batches(specs, max(jobs, 1) * workers)
        futures = client.map(run_batch, batches, pure=False)
        results = client.gather(futures)
    finally:
        if client is not scheduler:
            client.close()
    return _reorder(specs, batches, results)
