"""Refusals logged sparsely: a host flooding forged or excess packets makes the controller log
little, yet the first refusals of each kind, and a line every so often after, say what goes on."""

EVERY = 100   # the first EVERY refusals of a kind are logged, then every EVERY-th


def due(count):
    """True if the ``count``-th refusal of a kind (counting from 1) is logged."""
    return count <= EVERY or count % EVERY == 0


def warn(log, count, what, why, *args):
    """Logs ``what (count so far): why % args`` at WARNING on ``log`` (the caller's logger) if the
    ``count``-th refusal of its kind is `due`; ``why`` is formatted only then."""
    if due(count):
        log.warning("%s (%d so far): " + why, what, count, *args)
