"""The reverse direction of a job's routed host pairs: where TCP's ACKs go (issue 15).

A TCP flow a -> b sends its ACKs b -> a: with delayed ACKs one 66-byte frame per two 1514-byte
segments, about 2.2 % of the flow's bytes, on every link of the reverse path. Pair routers route
the demand's pairs only; a reverse pair that is not in the demand takes the fabric's default
routes, and those can put two flows' ACK streams on a link that carries a third flow's data. That
flow then gets the link minus two ACK streams instead of one. Measured on Mininet (the k=4 bench
placement's shift under sdn-optimal, docs/jobroute-rate.md): D-mod-K's reverse routes gave 6
switch links one flow's data and two ACK streams, and the 5 flows on them were the slowest of
every round (by the model 91.6 % of the link in payload instead of 93.6 %).

Two pure steps, applied by the controller to every routed phase (controller/jobtraffic.py):

- ``symmetric``: a 2-cycle of the demand (a -> b and b -> a both routed) gets mutually reverse
  paths where some shortest path allows it without loading any link beyond the busiest link of
  the pair's old paths (in flows and in bytes, with the other jobs' ``load``); otherwise its paths
  stay.
- ``reverse_paths``: every routed (a, b) whose reverse is not routed gets the reverse of its path
  for (b, a), unless that stacks its ACKs on a link whose data already has an ACK stream (a routed
  2-cycle's: its ACKs ride on its own data paths); then another shortest path that stacks fewer,
  and if stacks remain, a bounded depth-first search over the shortest paths for a routing that
  has none.

Why that is enough: if at most one routed flow uses each directed link (a contention-free
permutation), the ACKs of a flow whose reverse is not routed use link (y, x) only where the flow's
data uses (x, y), so at most one such ACK stream uses a directed link; and the ACKs of a flow
whose reverse is routed follow that reverse's data path, which (symmetric) is the reverse of the
flow's own. So every directed link carries at most one flow's data and one flow's ACKs.
A 2-cycle ``symmetric`` could not turn has each direction's ACKs on the other's data path;
``reverse_paths`` then steers the other pairs' ACKs off those links where a shortest path allows.
"""
import collections

from . import pairs
from . import paths as paths_index


def reverse_paths(graph, paths, max_candidates=16):
    """{(dst, src): path} for every (src, dst) of ``paths`` ({(src, dst): host path}) whose
    reverse pair is not in ``paths``: the route of the pair's ACK stream. Each takes its pair's path
    reversed unless that puts it on a link that carries data and another ACK stream already (the
    ACKs of a routed 2-cycle ride on its data paths); then the first shortest path (at most
    ``max_candidates`` tried) that stacks fewer, reversed path on a tie. Deterministic (pairs in
    ``paths`` order)."""
    data, cycle_acks = _loads(graph, paths)
    acks = cycle_acks.copy()

    def stacked(path):
        return max((acks[l] for l in pairs.switch_links(graph, path) if data[l]), default=0)

    search = pairs.node_load([pairs.Flow(src, dst, 0) for src, dst in paths]) <= 1
    out = {}
    for (src, dst), path in paths.items():
        if (dst, src) in paths:
            continue
        best = list(reversed(path))
        if search and stacked(best) > 0:
            for other in paths_index.index(graph).host_paths(dst, src)[:max_candidates]:
                if stacked(other) < stacked(best):
                    best = other
        out[dst, src] = best
        acks.update(pairs.switch_links(graph, best))
    if search and any(acks[l] > 1 and data[l] for l in acks):
        out = _search(graph, paths, out, data, cycle_acks, max_candidates) or out
    return out


def _loads(graph, paths):
    """(data, acks): per directed switch link, the routed flows of ``paths`` whose data use it, and
    the ACK streams of the routed 2-cycles on it (each direction's ACKs follow the other's data)."""
    data, acks = collections.Counter(), collections.Counter()
    for (src, dst), path in paths.items():
        data.update(pairs.switch_links(graph, path))
        if (dst, src) in paths:
            acks.update(pairs.switch_links(graph, paths[dst, src]))
    return data, acks


def _search(graph, paths, greedy, data, cycle_acks, max_candidates, budget=20000):
    """The reverse pairs of ``greedy`` routed again by depth-first search so that no link with data
    carries more than one ACK stream (the routed 2-cycles' ACKs included), each pair's reversed
    path tried first; None if no such routing is found within ``budget`` tries (then the greedy
    one stays). The greedy pass leaves such stacks where an early pair's detour takes a later
    pair's only free path (on the bench's permutation: in 156 of 200 orders of its demand, every
    one of them solvable). ``data``, ``cycle_acks``: `_loads` of ``paths``."""
    acks = cycle_acks.copy()
    index = paths_index.index(graph)
    todo = list(greedy)
    options = []
    for src, dst in todo:
        turned = list(reversed(paths[dst, src]))
        ways = [turned] + [p for p in index.host_paths(src, dst)[:max_candidates] if p != turned]
        options.append([(p, [l for l in pairs.switch_links(graph, p) if data[l]]) for p in ways])
    order = sorted(range(len(todo)), key=lambda i: len(options[i]))
    picked = [-1] * len(order)          # per depth: the option index in use
    depth, tries = 0, 0
    while 0 <= depth < len(order):
        opts = options[order[depth]]
        if picked[depth] >= 0:            # back here: take the last choice off and try the next
            acks.subtract(opts[picked[depth]][1])
        nxt = picked[depth] + 1
        while nxt < len(opts) and not all(acks[l] == 0 for l in opts[nxt][1]):
            nxt += 1
        tries += nxt - picked[depth]
        if tries > budget:
            return None
        if nxt < len(opts):
            picked[depth] = nxt
            acks.update(opts[nxt][1])
            depth += 1
        else:
            picked[depth] = -1
            depth -= 1
    if depth < 0:
        return None
    return {todo[order[k]]: options[order[k]][picked[k]][0] for k in range(len(order))}


def symmetric(graph, demand, paths, load=None, max_candidates=16):
    """``paths`` (a router's {(src, dst): path} for ``demand``, pairs.Flow) with each 2-cycle's
    paths made mutual reverses where that loads no link beyond the busiest link of the pair's old
    paths (flows and bytes, the job's other flows and ``load`` included). Candidates for the
    heavier direction, first fit, the other direction taking the candidate reversed: its own path,
    the other direction's path reversed, then the shortest paths between the two hosts (at most
    ``max_candidates``). Only on a (partial) permutation (NL_D <= 1, where a
    2-cycle's two flows have their hosts' links to themselves); a denser demand's paths are kept, for
    the planner's time. A new dict; ``paths`` is not changed."""
    out = dict(paths)
    if pairs.node_load(demand) > 1:
        return out
    nbytes = {(f.src, f.dst): f.bytes for f in demand}
    total = pairs.link_load(graph, demand, out, base=load)
    done = set()
    for flow in demand:
        pair, back = (flow.src, flow.dst), (flow.dst, flow.src)
        if back not in out or pair in done:
            continue
        done.update((pair, back))
        if out[back] == list(reversed(out[pair])):
            continue
        old = {pair: out[pair], back: out[back]}
        bound = _worst(graph, total, old.values())
        for p, q in old.items():
            total.add_path(graph, q, -nbytes[p], flows=-1)
        for path in _candidates(graph, pair, old, max_candidates):
            new = {pair: path, back: list(reversed(path))}
            if all(_fits(graph, total, new[p], nbytes[p], bound) for p in new):
                break
        else:
            new = old
        for p, q in new.items():
            total.add_path(graph, q, nbytes[p])
            out[p] = q
    return out


def _candidates(graph, pair, old, limit):
    """Paths for ``pair`` whose reverse would serve the other direction: the two old paths
    turned, then shortest paths (at most ``limit``)."""
    yield old[pair]
    yield list(reversed(old[(pair[1], pair[0])]))
    yield from paths_index.index(graph).host_paths(pair[0], pair[1])[:limit]


def _worst(graph, total, paths):
    """(flows, bytes) of the busiest switch link of ``paths``."""
    links = [link for path in paths for link in pairs.switch_links(graph, path)]
    return (max((total.flows[l] for l in links), default=0), max((total.bytes[l] for l in links), default=0))


def _fits(graph, total, path, nbytes, bound):
    """True if a flow of ``nbytes`` added on ``path`` leaves each of its links within ``bound``."""
    for link in pairs.switch_links(graph, path):
        cap = graph.edges[link].get("capacity", 1)
        if total.flows[link] + 1 > bound[0] or total.bytes[link] + nbytes / cap > bound[1] + 1e-9:
            return False
    return True

