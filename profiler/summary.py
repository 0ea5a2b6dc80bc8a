"""What ``sdnmpi-prof show`` reports about one phase of a trace: totals, the heaviest pairs, how dense
the traffic matrix is, and the message-size histogram (pure functions of `sdnmpi.traces` objects)."""
import numpy as np


def phase_of(trace, k):
    """Phase k of the trace (0 = the whole run); ValueError if there is no such phase."""
    if not 0 <= k < len(trace.phases):
        raise ValueError("phase %d does not exist (the trace has phases 0..%d)" % (k, len(trace.phases) - 1))
    return trace.phases[k]


def top_pairs(phase, count):
    """The `count` heaviest (src, dst, bytes, messages) of the traffic matrix, heaviest first;
    ties by (src, dst)."""
    matrix = phase.traffic_matrix()
    src, dst = np.nonzero(matrix)
    order = sorted(zip(-matrix[src, dst], src, dst))[:count]
    return [(int(i), int(j), int(-neg), int(phase.tx_messages[i, j])) for neg, i, j in order]


def density(phase):
    """Share of the ordered pairs (i != j) that exchanged at least one message."""
    n = phase.n_procs
    if n < 2:
        return 0.0
    used = phase.tx_messages > 0
    np.fill_diagonal(used, False)
    return float(used.sum()) / (n * (n - 1))


def size_histogram(phase):
    """Sent messages by size class: [(low, high, messages)] for the classes [0, 1), [1, 2), [2, 4),
    ... that hold any, from every rank's tx_message_sizes."""
    counts = {}
    for sizes in phase.tx_message_sizes:
        for size, freq in sizes:
            bucket = 0 if size <= 0 else int(size).bit_length()
            counts[bucket] = counts.get(bucket, 0) + freq
    rows = []
    for bucket in sorted(counts):
        low = 0 if bucket == 0 else 1 << (bucket - 1)
        high = 1 if bucket == 0 else 1 << bucket
        rows.append((low, high, counts[bucket]))
    return rows


def human_bytes(n):
    """1536 -> '1.5 KiB'."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return ("%d %s" % (value, unit)) if unit == "B" else ("%.1f %s" % (value, unit))
        value /= 1024
    return "%d B" % n  # not reached


def report(trace, k=0, top=10):
    """The summary's lines for phase k."""
    phase = phase_of(trace, k)
    matrix = phase.traffic_matrix()
    total, messages = int(matrix.sum()), int(np.where(phase.tx_messages > 0, phase.tx_messages, 0).sum())
    lines = [
        "trace      %s" % trace.path,
        "source     %s" % (trace.source or "PFProf (no source field)"),
        "ranks      %d" % trace.n_procs,
        "phases     %d (showing phase %d%s)" % (len(trace.phases), k, ", the whole run" if k == 0 else ""),
        "bytes      %d (%s) in %d messages" % (total, human_bytes(total), messages),
        "density    %.1f %% of rank pairs exchanged messages" % (100 * density(phase)),
    ]
    durations = [d for d in phase.durations if d is not None]
    if durations:
        lines.append("duration   %.3f s (longest rank)" % max(durations))
    lines.append("top pairs  (src -> dst: bytes, messages)")
    for i, j, nbytes, msgs in top_pairs(phase, top):
        lines.append("  %5d -> %-5d %14d  %8d" % (i, j, nbytes, msgs))
    lines.append("message sizes (sent, all ranks)")
    hist = size_histogram(phase)
    if not hist:
        lines.append("  (none recorded)")
    for low, high, count in hist:
        lines.append("  [%s, %s)  %d" % (human_bytes(low), human_bytes(high), count))
    return lines
