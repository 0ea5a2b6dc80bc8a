"""mininet_topos.polling.poll_until: the one wait-on-a-condition loop of the demo, tests and bench."""
import itertools

import pytest

from sdnmpi.mininet_topos.polling import poll_until


def test_returns_the_first_truthy_value():
    values = iter([0, None, "", [], {"ready": 1}, "later"])
    assert poll_until(lambda: next(values), 5, "a value", interval=0.001) == {"ready": 1}


def test_tolerated_errors_count_as_not_yet():
    calls = itertools.count()

    def flaky():
        if next(calls) < 3:
            raise ConnectionRefusedError("starting")
        return "up"
    assert poll_until(flaky, 5, "the server", interval=0.001, tolerate=(OSError,)) == "up"


def test_other_errors_propagate_at_once():
    calls = itertools.count()

    def dead():
        next(calls)
        raise RuntimeError("the process died")
    with pytest.raises(RuntimeError, match="died"):
        poll_until(dead, 5, "the server", interval=0.001, tolerate=(OSError,))
    assert next(calls) == 1


def test_timeout_names_what_and_the_last_state():
    with pytest.raises(TimeoutError, match=r"waiting for the links, last seen links=3"):
        poll_until(lambda: False, 0.05, "the links", interval=0.001, describe=lambda: "last seen links=3")
    with pytest.raises(TimeoutError, match=r"waiting for the API, last error: refused"):
        poll_until(lambda: (_ for _ in ()).throw(OSError("refused")), 0.05, "the API", interval=0.001,
                   tolerate=(OSError,))
    with pytest.raises(TimeoutError, match=r"waiting for nothing$"):
        poll_until(lambda: None, 0.0, "nothing")
