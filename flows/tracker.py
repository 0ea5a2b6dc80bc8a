"""Per-pair counter history for the controller: feed it each poll's cumulative ``byte_count``
readings, ask which pairs are newly elephants. Pure Python + numpy, no Ryu, no I/O.

    book = PairCounters(classifier)
    newly = book.poll({(a, b): byte_count, ...})   # -> {pair: delay in polls}

A pair missing from a poll counts 0 bytes in that interval (its entry may be gone); a reading lower
than the previous one (the entry was re-installed and its counter restarted) counts the new
reading as the interval's bytes. A pair is reported once, at the first poll that flags it, with
the polls from its first interval with bytes to that one, both counted (1: flagged at the first
poll that saw its bytes, as `detect.detection_delays`); `forget` drops pairs (job ended), `rearm`
lets pairs be flagged again (their routes were released) without counting their old bytes twice.
Given the poll's packet counts too (``book.poll(readings, packets)``), it counts each pair's packets
per interval by `packets_counted` (`latest_packets`: the TCP ACK rule's, controller/flowdetect.py).
Pairs are (source, destination) tuples: the endpoint totals a version 5 model needs
(`classify.endpoint_totals`) are summed over every pair of the poll, flagged ones included.
"""
import logging

import numpy as np

from .classify import endpoint_totals

LOG = logging.getLogger(__name__)


def interval_count(last, reading):
    """What a cumulative switch counter counted since its ``last`` reading: all of ``reading`` when
    there is none (None) or when it is lower (the entry was re-installed, its counter restarted)."""
    if last is None:
        return reading
    return reading - last if reading >= last else reading


def packets_counted(last, pair, reading):
    """The packets ``pair``'s cumulative packet counter counted in the latest interval, counted as
    `interval_count` counts bytes, or None when unknown: no ``reading`` (the switch reported none),
    or none at the reading before (its packets would span both intervals). ``last`` {pair: the last
    cumulative packet count read, None when that reading had none} is updated. One rule for the
    controller (PairCounters.poll with packets) and the counter logs (counterlog.read_packets)."""
    first, before = pair not in last, last.get(pair)
    last[pair] = reading
    if reading is None or (before is None and not first):
        return None
    return interval_count(before, reading)


class PairCounters:
    def __init__(self, classifier, history=None):
        self.classifier = classifier
        self.history = int(history or max(getattr(classifier, "window", 1), 1))
        self._last = {}      # pair -> last cumulative reading
        self._series = {}    # pair -> list of the last `history` interval byte counts
        self._age = {}       # pair -> polls since its first interval with bytes (None before)
        self._last_packets = {}   # pair -> last cumulative packet count read (None: that reading had none)
        self._packets = {}   # pair -> packets in the latest interval, where counted
        self.flagged = set()

    def _delta(self, pair, reading):
        last = self._last.get(pair)
        self._last[pair] = reading
        return interval_count(last, reading)

    def poll(self, readings, packets=None):
        """One poll: {pair: cumulative bytes}. Returns {pair: delay} for pairs flagged now for
        the first time (polls from its first bytes to now, both counted). ``packets``: {pair:
        cumulative packets} of the pairs whose switch reported a count; the latest interval's
        packets of the pairs of ``readings`` (`packets_counted`) are then `latest_packets`."""
        for pair, reading in readings.items():
            if reading < 0:
                raise ValueError(f"negative byte count {reading!r} for pair {pair!r}")
        self._packets = {}
        if packets is not None:
            counted = ((p, packets_counted(self._last_packets, p, packets.get(p))) for p in readings)
            self._packets = {p: n for p, n in counted if n is not None}
        pairs = sorted(set(self._series) | set(readings), key=repr)
        for pair in pairs:
            delta = float(self._delta(pair, readings[pair])) if pair in readings else 0.0
            series = self._series.setdefault(pair, [])
            series.append(delta)
            del series[:-self.history]
            age = self._age.get(pair)
            self._age[pair] = 0 if age is None and delta > 0 else (None if age is None else age + 1)
        candidates = [i for i, p in enumerate(pairs) if p not in self.flagged]
        if not candidates:
            return {}
        counts = np.zeros((len(pairs), self.history))
        for i, pair in enumerate(pairs):
            s = self._series[pair]
            counts[i, self.history - len(s):] = s
        totals = None
        if getattr(self.classifier, "needs_totals", False):   # over every pair, flagged ones too
            totals = endpoint_totals(counts, pairs)[candidates]
        now = self.classifier.flags(counts[candidates], totals)[:, -1]
        newly = {}
        for pair, hit in zip((pairs[i] for i in candidates), now.tolist()):
            if hit:
                self.flagged.add(pair)
                newly[pair] = self._age[pair] + 1
        if newly:
            LOG.debug("elephants: %s", newly)
        return newly

    def age(self, pair):
        """Polls from ``pair``'s first interval with bytes (since it was rearmed) to the latest
        poll: 0 at that interval, None before it (or for a pair without a history)."""
        return self._age.get(pair)

    def unflag(self, pairs):
        """The pairs may be flagged again at a later poll (a flag the caller did not take); unlike
        `rearm`, their history and age stay."""
        self.flagged.difference_update(pairs)

    def mark_flagged(self, pairs):
        """The pairs count as flagged (another book flagged them): not reported until rearmed."""
        self.flagged.update(pairs)

    def last_readings(self, pairs):
        """{pair: its last cumulative reading} of those of ``pairs`` that have one."""
        return {p: self._last[p] for p in pairs if p in self._last}

    def last_packet_readings(self, pairs):
        """{pair: its last cumulative packet count (None: that reading had none)} of those of
        ``pairs`` that have one."""
        return {p: self._last_packets[p] for p in pairs if p in self._last_packets}

    def count_from(self, readings, packets=None):
        """{pair: cumulative reading}: the next poll counts each pair's bytes from that reading, as
        if it had been this book's last one; ``packets`` ({pair: cumulative packets}) likewise."""
        self._last.update(readings)
        self._last_packets.update(packets or {})

    def rearm(self, pairs):
        """The pairs may be flagged again (their routes were released): history, age and flag
        go, the last reading stays so that the next poll counts only the bytes after it (the
        packets are counted on as before)."""
        for pair in pairs:
            self._series.pop(pair, None)
            self._age.pop(pair, None)
            self.flagged.discard(pair)

    def forget(self, pairs):
        for pair in pairs:
            for table in (self._last, self._series, self._age, self._last_packets):
                table.pop(pair, None)
            self.flagged.discard(pair)

    def latest(self):
        """{pair: bytes of the latest interval} of every pair with a history."""
        return {pair: series[-1] for pair, series in self._series.items() if series}

    def latest_packets(self):
        """{pair: packets of the latest interval} of the pairs counted at the latest poll with packets."""
        return self._packets

    def pairs(self):
        """Every pair with a history."""
        return set(self._series) | set(self._last)

    def __len__(self):
        return len(self._series)
