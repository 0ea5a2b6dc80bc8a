"""results.md's "The first call after a route switch" (bench/README.md, "How a point is measured"):
with --settle-calls N (default 1), every timed call of allreduce, allgather, reduce and alltoall
that follows a route switch comes after N calls of the same variant and size, each timed as well
(records "first:IMPL", "settle2:IMPL", ...). This section puts the first calls next to the samples
of the same job and row, per variant, and the speedup either way."""
import math
import statistics

import benchcore

FIRST = "first:"


def _rows(records):
    rows = {}
    for rec in records:
        if rec.get("superseded") or not rec.get("median_s"):
            continue
        rows.setdefault(benchcore.row_key(rec) + (rec.get("job"),), {})[rec["impl"]] = rec
    return rows


def first_call_ratios(records):
    """[(row key, variant, first-call median / sample median, first calls, samples)] of every row
    and variant with both; the row key is benchcore.row_key's fields plus the job."""
    out = []
    for key, row in sorted(_rows(records).items(), key=lambda kv: tuple(str(v) for v in kv[0])):
        for impl in sorted(i for i in row if i.startswith(FIRST)):
            sample = row.get(impl[len(FIRST):])
            if sample:
                out.append((key, impl[len(FIRST):], row[impl]["median_s"] / sample["median_s"],
                            len(row[impl]["samples_s"]), len(sample["samples_s"])))
    return out


def _geomean(values):
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def section(results):
    """Markdown lines (empty without first-call records)."""
    ratios = first_call_ratios(results.get("records", []))
    if not ratios:
        return []
    rows = _rows(results.get("records", []))
    out = ["", "## The first call after a route switch", "",
           "Each timed call above followed %s call(s) of the same variant and size after every route switch "
           "(--settle-calls). \"first / sample\" = the median of those first calls / the median of the samples "
           "of the same row; the speedup as the tables give it (samples) and as the first calls alone would "
           "give it." % (results.get("method", {}).get("settle_calls") or "?"), "",
           "| collective | routing | placement | p | size | variant | first / sample | n first / samples | "
           "speedup: samples | first calls |", "|---|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for key, impl, ratio, n_first, n_samples in ratios:
        row = rows[key]
        cells = ["-", "-"]
        if impl == "sdnmpi":
            cells = ["%.2f" % s if s else "-" for s in (
                benchcore.speedup(row.get("openmpi"), row.get("sdnmpi")),
                benchcore.speedup(row.get(FIRST + "openmpi"), row.get(FIRST + "sdnmpi")))]
        out.append("| %s | %s | %s | %s | %s | %s | %.3f | %d / %d | %s | %s |" % (
            key[0], key[1], key[2], key[3], benchcore.fmt_bytes(key[4]), impl, ratio, n_first, n_samples, *cells))
    by_impl = {}
    for _key, impl, ratio, _n, _m in ratios:
        by_impl.setdefault(impl, []).append(ratio)
    out += ["", "Geometric mean of first / sample: %s." % "; ".join(
        "%s %.3f over %d rows" % (impl, _geomean(vals), len(vals)) for impl, vals in sorted(by_impl.items()))]
    return out
