"""flows.PairCounters' interface for the books built on it (flows.sliding.SlidingCounters): a pair's
age, a flag not taken (`unflag`) or taken by another book (`mark_flagged`), and the last readings
that another book's next poll counts from (`last_readings`, `count_from`). Pure Python."""
from sdnmpi import flows
from sdnmpi.flows import sliding

LINK = 100.0
A, B = ("a", "b"), ("c", "d")


def threshold():
    """Flags a pair whose last interval carried 10 % of the link or more."""
    return flows.ThresholdClassifier(link_rate=LINK, interval=1.0, window=1, fraction=0.1)


def test_age_counts_the_polls_from_the_first_bytes():
    book = flows.PairCounters(threshold())
    assert book.age(A) is None
    ages = []
    for total in (0.0, 0.0, 5.0, 6.0, 6.0):
        book.poll({A: total})
        ages.append(book.age(A))
    assert ages == [None, None, 0, 1, 2]
    book.rearm([A])
    assert book.age(A) is None
    book.poll({A: 9.0})
    assert book.age(A) == 0


def test_unflag_judges_a_pair_again_with_its_history():
    book = flows.PairCounters(threshold())
    assert book.poll({A: 50.0}) == {A: 1}
    book.unflag([A])
    assert book.flagged == set() and book.age(A) == 0
    # flagged again at the next poll that reaches the threshold, its delay from its first bytes
    assert book.poll({A: 100.0}) == {A: 2}


def test_mark_flagged_keeps_a_pair_from_being_reported():
    book = flows.PairCounters(threshold())
    book.mark_flagged([A])
    assert book.poll({A: 50.0, B: 50.0}) == {B: 1}
    assert book.flagged == {A, B}
    book.rearm([A])
    assert book.poll({A: 100.0}) == {A: 1}


def test_count_from_another_books_last_readings():
    one, two = flows.PairCounters(threshold()), flows.PairCounters(threshold())
    one.poll({A: 40.0})
    two.poll({A: 10.0})
    assert one.last_readings([A, B]) == {A: 40.0}         # B has no reading
    two.count_from(one.last_readings([A, B]))
    two.poll({A: 45.0})
    assert two.latest() == {A: 5.0} and two.pairs() == {A}


class Public:
    """A book seen from outside: its public names only (a private one is an AttributeError)."""

    def __init__(self, book):
        self._book = book

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError("%s is PairCounters' own" % name)
        return getattr(self._book, name)


def test_the_sliding_book_reaches_no_private_field():
    """SlidingCounters works through that interface alone: with its books seen from outside
    (`Public`) it flags, drops a flag by the still rule, shares a flag with every phase, rearms and
    forgets as with the books themselves."""
    def run(public):
        book = sliding.SlidingCounters(threshold(), 2)
        if public:
            book.phases, book.each = [Public(b) for b in book.phases], Public(book.each)
        total, flags, windows = 0.0, [], []
        for t, share in enumerate([0.5, 0.5, 0.5, 0.19, 0.016, 0.5, 0.5]):
            total += share * LINK * 0.5
            flags.append(book.poll({A: total, B: 0.3 * total}))
            windows.append(book.latest()[A])
            if t == 2:
                book.rearm([A])
                assert all(inner.last_readings([A]) == {A: total} for inner in book.phases)
        book.forget([B])
        return flags, windows, book.flagged, book.pairs()
    flags, windows, flagged, pairs = run(True)
    assert (flags, windows, flagged, pairs) == run(False)
    assert flags[:2] == [{A: 1}, {B: 2}] and flagged == {A} and pairs == {A}
    # rearmed at poll 2: the window ending at poll 4 reaches the threshold (10) but poll 4 carried
    # under the still rule's 1 byte: dropped, and flagged at poll 5, 3 polls from its first bytes
    assert windows[4] > 10 and flags[3:] == [{}, {}, {A: 3}, {}]


def test_a_poll_without_packet_counts_leaves_no_packets_of_an_older_poll():
    book = flows.PairCounters(threshold())
    book.poll({A: 0.0}, {A: 0})
    book.poll({A: 50.0}, {A: 4})
    assert book.latest_packets() == {A: 4}
    book.poll({A: 90.0})                        # no packet counts this poll
    assert book.latest_packets() == {}


def test_count_from_carries_packet_readings_too():
    one, two = flows.PairCounters(threshold()), flows.PairCounters(threshold())
    for book in (one, two):
        book.poll({A: 0.0}, {A: 0})
    one.poll({A: 40.0}, {A: 10})
    assert one.last_packet_readings([A, B]) == {A: 10}
    two.count_from(one.last_readings([A]), one.last_packet_readings([A]))
    two.poll({A: 70.0}, {A: 16})
    assert two.latest() == {A: 30.0} and two.latest_packets() == {A: 6}
