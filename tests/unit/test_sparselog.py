"""controller/sparselog.py: the one cadence every refusal a flood can cause is logged at (the
callers' floods are tested in test_topology.py and test_hostile_audit44.py)."""
import logging

from sdnmpi.controller import sparselog

LOG = logging.getLogger("sdnmpi.controller.test_sparselog")


def test_the_first_hundred_then_every_hundredth_are_due():
    due = [n for n in range(1, 1001) if sparselog.due(n)]
    assert due == list(range(1, sparselog.EVERY + 1)) + list(range(2 * sparselog.EVERY, 1001, sparselog.EVERY))
    assert len(due) == 109 and sparselog.EVERY == 100


def test_warn_logs_one_line_on_the_callers_logger_only_when_due(caplog):
    caplog.set_level(logging.WARNING, logger=LOG.name)
    for n in (1, 100, 101, 150, 199, 200, 201, 1000):
        sparselog.warn(LOG, n, "things refused", "thing %s at %d", "x", n)
    lines = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert lines == [(LOG.name, logging.WARNING, "things refused (%d so far): thing x at %d" % (n, n))
                     for n in (1, 100, 200, 1000)]


def test_warn_formats_its_arguments_only_when_due(caplog):
    class Loud:
        formatted = 0

        def __str__(self):
            Loud.formatted += 1
            return "loud"

    caplog.set_level(logging.WARNING, logger=LOG.name)
    for n in range(101, 200):
        sparselog.warn(LOG, n, "things refused", "%s", Loud())
    assert Loud.formatted == 0 and not caplog.records
