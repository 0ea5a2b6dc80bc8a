"""The simulator's side of the job-routing bench (issue 15): the same profiled traces, fabrics,
rank placement and policies as bench/bench_jobroute_mininet.py, through sdnmpi-sim's job model
(simulator/job.py: host demand, pair router, max-min time model), and whether the time model
ranks the policies as the Mininet measurements do. Pure (no Mininet, no MPI); tested by
tests/unit/test_jobroute_bench.py.

The policies map to the simulator's routers: D-mod-K `dmodk`, ECMP `ecmp` (one hashed path per
host pair), SDN-greedy/-optimal/-adaptive the `PAIR_ROUTERS` of the same name.
"""
import itertools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from sdnmpi import traces  # noqa: E402
from sdnmpi.primitives import fattree  # noqa: E402
from sdnmpi.simulator import job as simjob  # noqa: E402
from sdnmpi.simulator import topology as simtopo  # noqa: E402

POLICIES = ("dmodk", "ecmp", "sdn-greedy", "sdn-optimal", "sdn-adaptive")

# libsdnmpi's SDN_MPI_TRAFFIC_MIN_SHARE default: a trace's host pairs below this percentage of
# their phase's heaviest are not sent (they stay on the default routes). The simulation leaves
# them out for every policy (a few bytes each: they do not change the completion time).
MIN_SHARE = 1
# Two simulated times closer than this (relative) are a tie: the ranking check ignores the pair.
SIM_TIE = 0.05
# Two measured medians closer than this (relative) are a tie (within the bench's noise).
MEASURED_TIE = 0.05


def heavy(demand, flows, min_share=MIN_SHARE):
    """The pairs libsdnmpi sends (traffic.c, sdnmpi_traffic_heavy): bytes >= min_share % of the
    heaviest pair's."""
    if not demand or min_share <= 0:
        return demand, flows
    least = max(f.bytes for f in demand) * min_share / 100.0
    kept = [f for f in demand if f.bytes >= least]
    return kept, {(f.src, f.dst): flows[(f.src, f.dst)] for f in kept}


def phase_demand(trace, phase, host_numbers, min_share=0):
    """(demand, flows) of one phase of a loaded trace for ranks on hosts ``host_numbers`` (rank r
    on fabric host host_numbers[r], 1-based, the MAC numbering of primitives/fattree); with
    ``min_share``, only the heavy pairs (`heavy`)."""
    if trace.n_procs != len(host_numbers):
        raise ValueError("the trace has %d ranks, the placement %d" % (trace.n_procs, len(host_numbers)))
    rank_host = [fattree.host_mac(n) for n in host_numbers]
    ph = trace.phases[phase]
    demand, flows = simjob.host_demand(ph.traffic_matrix(), ph.tx_messages > 0, rank_host, trace.file_order)
    return heavy(demand, flows, min_share)


def simulate(trace_path, topology_spec, host_numbers, policies=POLICIES, phases=None, min_share=MIN_SHARE):
    """{phase: {policy: {"completion_s", "max_link_flows", "max_link_bytes", "host_pairs"}}} for
    every phase of the trace (phase 0 only when it has no phases; else phases 1..K, or
    ``phases``), on the heavy pairs the library sends (``min_share``)."""
    graph = simtopo.from_spec(topology_spec)
    trace = traces.load(trace_path)
    if phases is None:
        phases = range(1, len(trace.phases)) if len(trace.phases) > 1 else [0]
    out = {}
    for k in phases:
        demand, flows = phase_demand(trace, k, host_numbers, min_share)
        row = {}
        for policy in policies:
            if not demand:
                row[policy] = {"completion_s": 0.0, "max_link_flows": 0, "max_link_bytes": 0.0, "host_pairs": 0}
                continue
            routed = simjob.route(graph, demand, flows, policy, seed=0)
            max_bytes, max_flows = simjob.maxima(graph, routed.link_bytes, routed.link_flows)
            row[policy] = {"completion_s": routed.completion_s(), "max_link_flows": int(max_flows),
                           "max_link_bytes": float(max_bytes), "host_pairs": len(demand)}
        out[k] = row
    return out


def _order(a, b, tie):
    """-1 if a is clearly smaller than b, 1 if clearly larger, 0 within ``tie`` (relative)."""
    if a is None or b is None:
        return None
    scale = max(abs(a), abs(b), 1e-12)
    if abs(a - b) <= tie * scale:
        return 0
    return -1 if a < b else 1


def ranking_agreement(simulated, measured, sim_tie=SIM_TIE, measured_tie=MEASURED_TIE):
    """Compares two {policy: seconds} maps pair by pair. A pair counts when the simulator orders
    it (not a tie); it agrees when the measurement orders it the same way, and contradicts when
    the measurement orders it the other way (beyond ``measured_tie``); a measured tie is neither.
    Returns {"pairs", "agree", "contradict", "measured_tie", "contradictions": [(a, b)],
    "sim_order", "measured_order"}."""
    policies = [p for p in simulated if p in measured and measured[p] is not None]
    agree = contradict = ties = 0
    bad = []
    for a, b in itertools.combinations(policies, 2):
        s = _order(simulated[a], simulated[b], sim_tie)
        if not s:
            continue
        m = _order(measured[a], measured[b], measured_tie)
        if m == s:
            agree += 1
        elif m == 0:
            ties += 1
        else:
            contradict += 1
            bad.append((a, b))
    return {"pairs": agree + contradict + ties, "agree": agree, "contradict": contradict, "measured_tie": ties,
            "contradictions": bad,
            "sim_order": sorted(policies, key=lambda p: simulated[p]),
            "measured_order": sorted(policies, key=lambda p: measured[p])}
