"""TCP ACK streams among busy host pairs (issue 16, docs/flows.md "ACK streams"): a busy pair carries
data when its payload in the interval, its bytes less ACK_FRAME (the largest pure ACK) per packet, alone
reaches PAYLOAD_SHARE of the link (half the busy line); else it carries only the ACKs of its reverse pair's
data. Without a packet count, the byte ratio: it carries data when its bytes reach ACK_SHARE of its
reverse pair's. The controller's rule (controller/flowdetect.py `_data_pairs`) and the offline
check on recorded counters (`split_polls`, `compare`; bench/flowdetect_acks.py). Pure numpy."""
import math

import numpy as np

ACK_FRAME = 94       # bytes of the largest pure TCP ACK as the switch counts it (Ethernet 14, IPv4 20,
                     # TCP 20 + 40 of options: timestamps and SACK blocks); a bare one is 66. Pure ACKs
                     # after a loss or a reordering (a route change) carry SACK blocks: at 66, 29 of
                     # 431 ACK stream-polls of the 5/5 Mbit/s runs of 2026-11-29 22:00 read as data
                     # (0.5-0.6 % "payload"), 0 at 94; on the 30 logs before it, 1 more data pair-poll
                     # of 73391 reads as ACKs (docs/flows.md "ACK streams")
BUSY_SHARE = 0.01    # a pair sending this share of its link in an interval is busy
PAYLOAD_SHARE = 0.005  # a busy pair whose payload reaches this share of its link carries data: half
                     # the busy line, since a data pair just over that line loses 0.1-0.3 % of the
                     # link to headers (on the counter logs of 2026-11-29, 70 of 3654 busy data
                     # pair-polls fell under a payload line at BUSY_SHARE, 0 under this one; ACK
                     # streams' payload stayed under 0.18 %: docs/flows-history.md "ACK rule on recorded
                     # counters")
ACK_SHARE = 0.1      # no packet counts: a busy pair sending under this share of its reverse pair's
                     # bytes carries its TCP ACKs (2-5 % of them), not data
RULES = ("payload", "bytes")


def carries_data(nbytes, packets, reverse_bytes, floor):
    """True when a busy pair's interval (``nbytes``, ``packets``: None when unknown) carries data:
    payload >= ``floor``; without packets, bytes >= ACK_SHARE x its reverse pair's bytes."""
    if packets is None:
        return nbytes >= ACK_SHARE * reverse_bytes
    return nbytes - ACK_FRAME * packets >= floor


def split_polls(pairs, counts, packets, link_bytes, rule="payload", payload_share=PAYLOAD_SHARE):
    """Per interval (column of ``counts``, pairs x intervals, bytes; ``packets`` the same shape, NaN
    where unknown), the busy pairs (>= BUSY_SHARE of ``link_bytes``) split into data and ACK
    streams: [{"data": [pair, ...], "acks": [...], "unknown_packets": [busy pairs judged by the byte
    ratio]}, ...]. ``rule`` "payload": `carries_data` (the controller's rule) with a payload of
    ``payload_share`` of the link (the controller's: PAYLOAD_SHARE); "bytes": the byte ratio for every
    pair (a switch without packet counts)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r} (one of {', '.join(RULES)})")
    counts = np.asarray(counts, dtype=float)
    packets = np.asarray(packets, dtype=float)
    index = {p: i for i, p in enumerate(pairs)}
    reverse = [index.get(p[::-1]) for p in pairs]
    floor = BUSY_SHARE * link_bytes
    out = []
    for t in range(counts.shape[1]):
        poll = {"data": [], "acks": [], "unknown_packets": []}
        for i in np.nonzero(counts[:, t] >= floor)[0]:
            n = packets[i, t]
            known = rule == "payload" and not math.isnan(n)
            if not known:
                poll["unknown_packets"].append(pairs[i])
            back = counts[reverse[i], t] if reverse[i] is not None else 0.0
            data = carries_data(counts[i, t], n if known else None, back, payload_share * link_bytes)
            poll["data" if data else "acks"].append(pairs[i])
        out.append(poll)
    return out


def compare(polls, truth):
    """`split_polls`'s ``polls`` against ``truth`` {pair: True when it carries data, False when only
    ACKs}, pair-intervals counted: {busy, data, acks (as the rule split them), true_data, true_acks,
    unknown (busy pairs without a truth), data_as_acks, acks_as_data (the rule's errors),
    unknown_packets (judged by the byte ratio)}."""
    out = dict.fromkeys(("busy", "data", "acks", "true_data", "true_acks", "unknown", "data_as_acks",
                         "acks_as_data", "unknown_packets"), 0)
    for poll in polls:
        out["unknown_packets"] += len(poll["unknown_packets"])
        for called, key in ((True, "data"), (False, "acks")):
            for pair in poll[key]:
                out["busy"] += 1
                out[key] += 1
                real = truth.get(pair)
                if real is None:
                    out["unknown"] += 1
                    continue
                out["true_data" if real else "true_acks"] += 1
                if real != called:
                    out["data_as_acks" if real else "acks_as_data"] += 1
    return out
