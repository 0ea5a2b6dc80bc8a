#!/usr/bin/env python3
"""The ACK rule (flows/acks.py, the controller's `_data_pairs`) on counter logs recorded on Mininet
(bench/bench_flowdetect.py's counters/), offline: per poll, the busy pairs (>= 1 % of the link)
split into data and ACK streams, compared with what the pattern program sent. No lock needed.

    .venv/bin/python bench/flowdetect_acks.py DIR [DIR ...] [--polls] [--json]

DIR: a results folder (its counters/) or a folder of *.jsonl[.gz] logs. The truth comes from the
log header's ``steps`` (libsdnmpi/tests/traffic_patterns.c; rank r on host r + 1, 10.0.0.(r+1), as
the bench's mpirun places them): the pairs a step sends on carry data, their reverse pairs only ACKs
unless they send too (halo, alltoall: every pair both). A pair that sends in one step and only
carries ACKs in another (a program of several steps), or in none (MPI's barrier and set-up
chatter), has no truth: counted as unknown. Per log: the busy pair-polls, the true ACK streams and
data pairs among them, the payload rule's errors both ways (data called ACK: left out of the
routing choice and the mismatch check; ACK called data: scored as a flow), the busy pairs it
judged by the byte ratio (no packet count: every one of a version 1 log), and the byte-ratio
rule's errors on the same polls. ``--polls`` lists every poll's split (errors marked ``!``);
``--payload-share S`` tries the payload rule with another payload floor than the controller's.
"""
import argparse
import json
import os
import sys

import benchcore  # noqa: F401  (puts the tree on sys.path)
import jobroute_report

from sdnmpi.flows import acks, counterlog
from sdnmpi.primitives.fattree import host_ip
from sdnmpi.simulator import counterlogs

RANKS = 16            # the bench's k=4 fat-tree: 16 hosts, one rank each
ARGS = {"shift": 2, "perm": 2, "halo2d": 1, "halo3d": 1, "alltoall": 1, "phase": 1, "pause": 1, "skew": 1,
        "hold": 1}


def dims_create(n, ndims):
    """MPI_Dims_create(n, ndims) with every dimension free: as balanced as possible, non-increasing."""
    dims, left, f = [1] * ndims, n, 2
    factors = []
    while left > 1:
        while left % f == 0:
            factors.append(f)
            left //= f
        f += 1
    for f in sorted(factors, reverse=True):
        dims[dims.index(min(dims))] *= f
    return sorted(dims, reverse=True)


def halo(n, ndims):
    """traffic_patterns' halo on a periodic grid (row-major ranks): each rank's distinct neighbours."""
    dims = dims_create(n, ndims)
    out = set()
    for r in range(n):
        coords, x = [], r
        for d in reversed(dims):
            coords.insert(0, x % d)
            x //= d
        for axis in range(ndims):
            for step in (-1, 1):
                c = list(coords)
                c[axis] = (c[axis] + step) % dims[axis]
                j = 0
                for d, v in zip(dims, c):
                    j = j * d + v
                if j != r:
                    out.add((r, j))
    return out


def step_pairs(steps, n=RANKS):
    """[set of (src rank, dst rank)] of each sending step of a traffic_patterns command line."""
    out, i = [], 0
    while i < len(steps):
        name = steps[i]
        if name not in ARGS:
            raise ValueError(f"unknown step {name!r}")
        a = steps[i + 1:i + 1 + ARGS[name]]
        i += 1 + ARGS[name]
        if name == "shift":
            d = int(a[0]) % n
            out.append({(r, (r + d) % n) for r in range(n)} if d else set())
        elif name == "perm":
            p = jobroute_report.pattern_perm(int(a[0]), n)
            out.append({(r, p[r]) for r in range(n) if p[r] != r})
        elif name in ("halo2d", "halo3d"):
            out.append(halo(n, 2 if name == "halo2d" else 3))
        elif name == "alltoall":
            out.append({(r, j) for r in range(n) for j in range(n) if r != j})
    return out


def truth(steps, n=RANKS):
    """{(src ip, dst ip): True (carries data), False (only the ACKs of its reverse pair's data)} of
    the pairs whose role is the same in every step that involves them."""
    roles = {}
    for sent in step_pairs(steps, n):
        for pair in sent:
            roles.setdefault(pair, set()).add(True)
        for src, dst in sent:
            if (dst, src) not in sent:
                roles.setdefault((dst, src), set()).add(False)
    return {(host_ip(a + 1), host_ip(b + 1)): r.pop() for (a, b), r in roles.items() if len(r) == 1}


def check(lines, n=RANKS, payload_share=acks.PAYLOAD_SHARE):
    """(header, {rule: `acks.compare` counts}, per-poll splits of the payload rule, truth) of one log;
    ``payload_share``: the payload rule's share of the link (the controller's: acks.PAYLOAD_SHARE).
    A header whose steps it cannot take is a `counterlog.CounterLogError`, as a line it cannot read."""
    header, pairs, counts, packets = counterlog.read_packets(lines)
    link_bytes = header["link_rate_Bps"] * header["interval_s"]
    try:
        known = truth(header.get("steps") or [], n)
    except ValueError as exc:                     # a step it does not know, an argument not a number
        raise counterlog.CounterLogError(str(exc)) from None
    out, polls = {}, None
    for rule in acks.RULES:
        split = acks.split_polls(pairs, counts, packets, link_bytes, rule, payload_share)
        out[rule] = acks.compare(split, known)
        polls = split if rule == "payload" else polls
    return header, out, polls, known


def _logs(folder):
    found = counterlogs.log_files(counterlogs.counters_folder(folder))
    if not found:
        raise counterlog.CounterLogError(f"{folder}: no counter logs (*.jsonl, *.jsonl.gz)")
    return found


def _poll_lines(name, polls, known):
    for t, poll in enumerate(polls):
        if not poll["data"] and not poll["acks"]:
            continue

        def show(pairs, called):
            return " ".join("%s>%s%s" % (s.rsplit(".", 1)[1], d.rsplit(".", 1)[1],
                                         "!" if known.get((s, d), called) != called else "") for s, d in pairs)
        print(f"{name} poll {t}: data {show(poll['data'], True) or '-'} | acks {show(poll['acks'], False) or '-'}")


ROW = ("busy", "true_acks", "true_data", "unknown", "data_as_acks", "acks_as_data", "unknown_packets")


def table(rows):
    """The markdown table of [(name, {rule: counts})], a total row last."""
    out = ["| log | busy pair-polls | ACK streams (truth) | data (truth) | no truth | payload rule: data called ACK "
           "| ACK called data | judged without packets | byte ratio: data called ACK | ACK called data |",
           "|" + "---|" * 10]
    total = {rule: dict.fromkeys(ROW, 0) for rule in acks.RULES}
    for name, res in rows + [("total", total)]:
        if name != "total":
            for rule in acks.RULES:
                for k in ROW:
                    total[rule][k] += res[rule][k]
        p, b = res["payload"], res["bytes"]
        out.append("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |" % (
            name, p["busy"], p["true_acks"], p["true_data"], p["unknown"], p["data_as_acks"], p["acks_as_data"],
            p["unknown_packets"], b["data_as_acks"], b["acks_as_data"]))
    return "\n".join(out)


def build_parser():
    p = argparse.ArgumentParser(prog="bench/flowdetect_acks.py", description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="+", metavar="DIR")
    p.add_argument("--polls", action="store_true", help="list every poll's busy pairs, split (errors: !)")
    p.add_argument("--json", action="store_true", help="the counts per log as JSON instead of the table")
    p.add_argument("--ranks", type=int, default=RANKS, help="ranks of the pattern program (host r + 1)")
    p.add_argument("--payload-share", type=float, default=acks.PAYLOAD_SHARE,
                   help="a busy pair carries data when its payload reaches this share of the link (the "
                        "controller's rule: half the busy floor, %(default)g)")
    return p


def main(argv=None):
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    rows = []
    try:
        for folder in args.dirs:
            for path in _logs(folder):
                _header, res, polls, known = counterlog.from_file(
                    path, lambda lines: check(lines, args.ranks, args.payload_share))
                name = os.path.join(os.path.basename(os.path.dirname(os.path.dirname(path))), os.path.basename(path))
                if args.polls:
                    _poll_lines(name, polls, known)
                rows.append((name, res))
    except counterlog.CounterLogError as exc:
        print(f"flowdetect_acks: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(dict(rows), indent=1) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
