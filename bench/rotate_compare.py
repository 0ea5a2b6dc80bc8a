"""--rotate-routings, the pure part: the schedule of routing blocks, and sdnmpi against the best of
Open MPI's routings per size, measured in one job (issue 17's "never slower than the best of Open
MPI under dmodk, ecmp and single").

A job's repetitions are blocks; each block runs under one default routing and holds every size, both
implementations alternating call by call as in every allreduce job. A round is one block of every
routing (``block // len(routings)``). The comparison resamples whole rounds (paired: a drawn round
brings its blocks of both implementations, so a busy spell of the machine hits both sides of a ratio).

Three views of "the best routing" (``compare``):

- every routing: Open MPI's median under each routing / sdnmpi's median (all its blocks), each with
  its interval. sdnmpi is slower than the best beyond the noise if any routing's interval lies wholly
  below 1. Three tests at 95 % each: this rule errs towards "slower".
- min of three: the fastest routing's Open MPI median / sdnmpi's, no interval. A minimum of three
  noisy medians is biased low (towards "slower"), the more so the closer the routings are.
- cross-fitted: the rounds split into two halves (even, odd); the routing fastest for Open MPI in one
  half is compared in the other, both ways, and the two ratios' geometric mean is the estimate. Its
  interval resamples the rounds within each half and repeats the selection in every draw, so it holds
  the selection's noise too. The selection never sees the data it is judged on, so no minimum's bias.

A fourth, the deployed view (``row["deployed"]``): sdnmpi's median in the blocks of the controller's
default routing (``DEFAULT_ROUTING``, controller/options.py) against the cross-fitted best routing's
Open MPI, as above. Under the default routing sdnmpi's routes coincide with the default ones in the
bench's runs (none installed), so the harness's switch between the implementations changes no flow
there: those calls are what sdnmpi sees deployed, where it runs under the default routing with no switch.

Pooled (``pool``, ``compare_pooled``): several jobs' rounds keyed (job, round); every draw resamples
each job's rounds within the job (stratified), and the halves of the cross-fit are each job's even and
odd rounds, so a job's busy spell or its own level of the machine stays inside its stratum. A pooled
median is each job's median, their geometric mean weighted by the job's rounds (``_median``): a ratio
is then the weighted geometric mean of the jobs' own paired ratios.
"""
import math
import random
import statistics

IMPLS = ("openmpi", "sdnmpi")
LEVEL = 0.95
DRAWS = 2000
MIN_ROUNDS = 5     # rounds a side of a resampled ratio needs for an interval (benchcore.INTERVAL_MIN_SAMPLES)
DEFAULT_ROUTING = "dmodk"    # controller/options.py --sdnmpi-default-routing


def block_schedule(routings, rounds):
    """The routing of each block: ``rounds`` rounds, each every routing once. The rounds cycle
    through the rotations of the order, then of the reversed order (with 3 routings: sde des esd
    eds dse sed), so that over 2n rounds every routing is in every position equally often and
    follows every other routing equally often, and no two consecutive blocks share a routing.
    With fewer than 3 routings the order simply repeats (a rotation would repeat a routing at the
    rounds' seam)."""
    routings = list(routings)
    if len(set(routings)) != len(routings) or not routings:
        raise ValueError("block_schedule wants distinct routings, got %s" % routings)
    if rounds < 1:
        raise ValueError("block_schedule wants at least one round, got %d" % rounds)
    n = len(routings)
    out = []
    for r in range(rounds):
        if n < 3:
            out += routings
            continue
        base = routings if (r // n) % 2 == 0 else routings[::-1]
        shift = r % n
        out += base[shift:] + base[:shift]
    return out


def rounds_of(records, nroutings):
    """{(placement, bytes): {impl: {routing: {round: [seconds]}}}} of the allreduce records of a
    rotation (each with "rotation_blocks": the block of each sample)."""
    out = {}
    for rec in records:
        if rec.get("collective") != "allreduce" or rec.get("impl") not in IMPLS or not rec.get("rotation_blocks"):
            continue
        per = out.setdefault((rec["placement"], rec["bytes"]), {}).setdefault(rec["impl"], {}) \
            .setdefault(rec["routing"], {})
        for t, block in zip(rec["samples_s"], rec["rotation_blocks"]):
            per.setdefault(block // nroutings, []).append(t)
    return out


def complete_rounds(data):
    """The rounds in which every routing has samples of both implementations."""
    sets = [set(by_round) for impl in IMPLS for by_round in (data.get(impl) or {}).values()]
    routings = {impl: set(data.get(impl) or {}) for impl in IMPLS}
    if not sets or routings["openmpi"] != routings["sdnmpi"]:
        return []
    return sorted(set.intersection(*sets))


def strata_of(rounds):
    """The rounds grouped by job, in order: pooled rounds are (job, round) keys, one job's are plain
    round numbers (one stratum)."""
    if not rounds:
        return []
    if not isinstance(rounds[0], tuple):
        return [list(rounds)]
    jobs = {}
    for key in rounds:
        jobs.setdefault(key[0], []).append(key)
    return [jobs[j] for j in sorted(jobs)]


def _halves(strata):
    """The cross-fit's halves, each a list of its part of every job: each job's even and odd rounds."""
    return [s[0::2] for s in strata], [s[1::2] for s in strata]


def _draw(rng, parts):
    """One bootstrap draw: every part (a job's rounds) resampled within itself."""
    out = []
    for part in parts:
        out += rng.choices(part, k=len(part))
    return out


def _flat(parts):
    return [key for part in parts for key in part]


def _median(data, impl, routings, rounds):
    """``impl``'s level under ``routings`` on ``rounds`` (repeats count): one job's, the median of its
    samples; pooled, each job's median, their geometric mean weighted by the job's rounds, so that jobs
    on different levels of the machine do not put a pooled median in the gap between them."""
    medians = []
    for job_rounds in strata_of(rounds):
        values = [t for r in routings for rnd in job_rounds for t in data[impl][r][rnd]]
        if not values:
            return None
        medians.append((len(job_rounds), statistics.median(values)))
    if len(medians) < 2:
        return medians[0][1] if medians else None
    return math.exp(sum(n * math.log(m) for n, m in medians) / sum(n for n, _m in medians))


def _ratio(data, routing, rounds, sdn=None):
    """Open MPI's median under ``routing`` / sdnmpi's over the routings ``sdn`` (None: every
    routing), on ``rounds``."""
    o = _median(data, "openmpi", [routing], rounds)
    s = _median(data, "sdnmpi", sdn or sorted(data["sdnmpi"]), rounds)
    return o / s if o and s else None


def _best(data, rounds):
    """The routing with the lowest Open MPI median on ``rounds`` (ties: the name first in order)."""
    return min(sorted(data["openmpi"]), key=lambda r: _median(data, "openmpi", [r], rounds))


def _interval(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    tail = (1.0 - LEVEL) / 2.0
    return values[int(tail * len(values))], values[min(len(values) - 1, int((1.0 - tail) * len(values)))]


def cross_fit(data, rounds, sdn=None):
    """(geometric mean of the two halves' ratios, [the routing chosen on each half]); sdnmpi's side
    over the routings ``sdn`` (None: every routing)."""
    halves = [_flat(h) for h in _halves(strata_of(rounds))] if rounds else [[], []]
    ratios, chosen = [], []
    if not all(halves):
        return None, chosen
    for select, judge in (halves, halves[::-1]):
        best = _best(data, select)
        chosen.append(best)
        ratios.append(_ratio(data, best, judge, sdn))
    if any(r is None for r in ratios):
        return None, chosen
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios)), chosen


def compare_row(data, seed=1, draws=DRAWS, default=DEFAULT_ROUTING):
    """One (placement, size): see the module's docstring. Ratios are Open MPI / sdnmpi (> 1: sdnmpi
    faster). Intervals are None with fewer than MIN_ROUNDS rounds (per half for the cross-fitted one).
    ``data`` is rounds_of's (one job) or pool's (rounds of several jobs, resampled within each)."""
    rounds = complete_rounds(data)
    routings = sorted(data.get("openmpi") or {})
    row = {"rounds": len(rounds), "routings": routings, "sdnmpi_median_s": None, "openmpi_median_s": {},
           "sdnmpi_by_routing_s": {}, "every": {}, "min_of_three": None, "best_by_medians": None,
           "cross_fit": None, "cross_fit_chosen": [], "cross_fit_interval": None, "deployed": None}
    if not rounds:
        return row
    row["sdnmpi_median_s"] = _median(data, "sdnmpi", routings, rounds)
    for r in routings:
        row["openmpi_median_s"][r] = _median(data, "openmpi", [r], rounds)
        row["sdnmpi_by_routing_s"][r] = _median(data, "sdnmpi", [r], rounds)
    best = _best(data, rounds)
    row["best_by_medians"] = best
    row["min_of_three"] = _ratio(data, best, rounds)
    row["cross_fit"], row["cross_fit_chosen"] = cross_fit(data, rounds)
    deployed = [default] if default in routings else None
    rng = random.Random(seed)
    every_draws = {r: [] for r in routings}
    fit_draws, deployed_draws = [], []
    strata = strata_of(rounds)
    halves = _halves(strata)
    for _ in range(draws):
        drawn = _draw(rng, strata)
        for r in routings:
            every_draws[r].append(_ratio(data, r, drawn))
        if min(len(_flat(h)) for h in halves) >= MIN_ROUNDS:
            # each half resampled within itself (and within each job); the rounds keep their half, so
            # the selection is redone; the deployed view uses the same draw (paired with the others)
            drawn_halves = [_draw(rng, [p for p in h if p]) for h in halves]
            fit_draws.append(_cross_fit_draw(data, drawn_halves))
            if deployed:
                deployed_draws.append(_cross_fit_draw(data, drawn_halves, deployed))
    for r in routings:
        interval = _interval(every_draws[r]) if len(rounds) >= MIN_ROUNDS else None
        row["every"][r] = {"ratio": _ratio(data, r, rounds), "interval": interval}
    row["cross_fit_interval"] = _interval(fit_draws) if fit_draws else None
    if deployed:
        ratio, chosen = cross_fit(data, rounds, deployed)
        row["deployed"] = {"routing": default, "sdnmpi_median_s": _median(data, "sdnmpi", deployed, rounds),
                           "ratio": ratio, "chosen": chosen,
                           "interval": _interval(deployed_draws) if deployed_draws else None}
    return row


def _cross_fit_draw(data, halves, sdn=None):
    ratios = []
    for select, judge in (halves, halves[::-1]):
        ratio = _ratio(data, _best(data, select), judge, sdn)
        if ratio is None:
            return None
        ratios.append(ratio)
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


def verdict(row, threshold=1.0):
    """Whether sdnmpi is slower than the best routing's Open MPI beyond the noise at ``threshold``:
    {"every": True if some routing's interval lies wholly below it, "cross_fit": True if the
    cross-fitted interval does}; None where there is no interval."""
    intervals = [v["interval"] for v in row["every"].values()]
    every = None if not intervals or any(i is None for i in intervals) else any(i[1] < threshold for i in intervals)
    fit = row["cross_fit_interval"]
    return {"every": every, "cross_fit": None if fit is None else fit[1] < threshold}


def deployed_verdict(row, threshold=1.0):
    """The deployed view's: "slower" if its interval lies wholly below ``threshold`` (sdnmpi under the
    default routing slower than the best routing's Open MPI beyond the noise), "faster" if wholly
    above 1, "within" otherwise; None without an interval."""
    interval = (row.get("deployed") or {}).get("interval")
    if interval is None:
        return None
    if interval[1] < threshold:
        return "slower"
    return "faster" if interval[0] > 1.0 else "within"


def compare(records, nroutings, seed=1, draws=DRAWS):
    """{(placement, bytes): compare_row} over a rotation's allreduce records."""
    return {key: compare_row(data, seed=seed, draws=draws)
            for key, data in sorted(rounds_of(records, nroutings).items())}


def pool(jobs):
    """One data set per (placement, bytes) from several jobs' rounds_of (``jobs``, in order): their
    rounds keyed (job's index, round). Raises ValueError, naming the first job that differs, unless
    every job has the same (placement, bytes) rows and the same routings."""
    if not jobs:
        raise ValueError("nothing to pool")
    first = jobs[0]
    out = {}
    for j, job in enumerate(jobs):
        if set(job) != set(first):
            raise ValueError("job %d has the rows %s, job 0 %s: pool runs of the same sizes and placements"
                             % (j, _rows_text(job), _rows_text(first)))
        for key, data in job.items():
            routings = {impl: sorted(data.get(impl) or {}) for impl in IMPLS}
            if routings != {impl: sorted(first[key].get(impl) or {}) for impl in IMPLS}:
                raise ValueError("job %d's routings at %s/%d B are %s, job 0's %s" % (
                    j, key[0], key[1], routings["openmpi"], sorted(first[key].get("openmpi") or {})))
            into = out.setdefault(key, {})
            for impl, by_routing in data.items():
                for routing, by_round in by_routing.items():
                    dest = into.setdefault(impl, {}).setdefault(routing, {})
                    for rnd, samples in by_round.items():
                        dest[(j, rnd)] = samples
    return out


def _rows_text(job):
    return ", ".join("%s/%d B" % key for key in sorted(job)) or "none"


def compare_pooled(jobs_records, nroutings, seed=1, draws=DRAWS):
    """{(placement, bytes): compare_row} over several rotation jobs' records ([records of a job]),
    pooled by rounds (``pool``)."""
    pooled = pool([rounds_of(records, nroutings) for records in jobs_records])
    return {key: compare_row(data, seed=seed, draws=draws) for key, data in sorted(pooled.items())}
