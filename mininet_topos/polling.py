"""Waiting on a condition instead of sleeping: one poll loop for the demo, the tests and the bench."""
import time

DEFAULT_INTERVAL = 0.25


def poll_until(predicate, timeout, what, interval=DEFAULT_INTERVAL, tolerate=(), describe=None):
    """``predicate()``'s first truthy value, polled every ``interval`` s for ``timeout`` s.

    ``tolerate``: exception types that count as "not yet" (e.g. a server still starting); any
    other exception propagates at once (e.g. "the process died"). After the deadline: TimeoutError
    naming ``what``, with ``describe()`` (the last state seen) or the last tolerated error.
    """
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = predicate()
        except tolerate as err:  # pylint: disable=catching-non-exception  # () catches nothing
            value, last_error = None, err
        if value:
            return value
        if time.monotonic() >= deadline:
            seen = describe() if describe else (last_error and "last error: %s" % last_error)
            raise TimeoutError("timed out after %ss waiting for %s%s" % (timeout, what, ", %s" % seen if seen else ""))
        time.sleep(interval)
