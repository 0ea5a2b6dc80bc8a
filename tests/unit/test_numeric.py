"""sdnmpi/numeric.py: the checks of numbers read from input files and command lines. Each tool's
own error class and one-line messages are tested with the tool (test_scenario_audit44.py,
test_simtopology_audit44.py, test_counterlog_audit44.py, test_traces_audit44.py, test_flows.py)."""
import argparse
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdnmpi import numeric


class InputError(ValueError):
    """A caller's own error class."""


def error_of(check, value, *args, **kwargs):
    with pytest.raises(InputError) as err:
        check(value, "f.yml: key", InputError, *args, **kwargs)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_is_number_is_an_int_or_a_float_not_a_bool():
    assert all(numeric.is_number(v) for v in (0, -3, 10 ** 400, 1.5, math.nan, math.inf))
    assert not any(numeric.is_number(v) for v in (True, False, None, "1", [1], {"a": 1}))


@pytest.mark.parametrize("value, inside", [
    (0, True), (10, True), (2 ** 64, True), (2.5, True), (2 ** 64 + 1, False), (-1, False), (-0.5, False),
    (10 ** 400, False), (math.nan, False), (math.inf, False), (True, False), ("5", False), (None, False),
])
def test_within_a_range(value, inside):
    assert numeric.within(value, 0, 2 ** 64) is inside


def test_within_an_open_top_takes_any_integer():
    assert numeric.within(10 ** 400, 0, math.inf) and not numeric.within(math.inf, 0, math.inf)


@pytest.mark.parametrize("check, good, bad, kind", [
    (numeric.finite, [-2, 0, 3.5], [math.nan, math.inf, -math.inf, 10 ** 400], "a finite number"),
    (numeric.positive, [1, 0.25, 10 ** 300], [0, -1, math.nan, math.inf, 10 ** 400], "a positive finite number"),
    (numeric.non_negative, [0, 0.0, 7], [-1, -0.5, math.nan, math.inf], "a non-negative finite number"),
])
def test_real_checks_return_a_float_or_raise_the_callers_error(check, good, bad, kind):
    for value in good:
        number = check(value, "f.yml: key", InputError)
        assert type(number) is float and number == float(value)
    for value in bad + [True, None, "1", [1]]:   # without convert only JSON's and YAML's numbers are numbers
        assert error_of(check, value) == f"f.yml: key must be {kind}, got {value!r:.40}"


def test_convert_reads_text_and_numpy_scalars():
    assert numeric.positive("2.5", "capacity", InputError, convert=True) == 2.5
    assert numeric.positive(np.int64(3), "rate", InputError, convert=True) == 3.0
    assert numeric.finite(" -1e3 ", "x", InputError, convert=True) == -1000.0
    assert error_of(numeric.positive, "abc", convert=True) == "f.yml: key 'abc' is not a number"
    assert error_of(numeric.positive, None, convert=True) == "f.yml: key None is not a number"
    assert error_of(numeric.positive, "nan", convert=True) == "f.yml: key must be a positive finite number, got 'nan'"
    assert error_of(numeric.positive, "1e400", convert=True).endswith("got '1e400'")


def test_a_long_value_is_cut_to_one_short_line():
    message = error_of(numeric.finite, "x" * 10000)
    assert message == "f.yml: key must be a finite number, got '" + "x" * 39 and len(message) < 100


def test_an_empty_what_lets_argparse_name_the_option():
    with pytest.raises(argparse.ArgumentTypeError, match="^must be a positive finite number, got 'inf'$"):
        numeric.positive("inf", "", argparse.ArgumentTypeError, convert=True)
    with pytest.raises(argparse.ArgumentTypeError, match="^'x' is not a number$"):
        numeric.positive("x", "", argparse.ArgumentTypeError, convert=True)


@pytest.mark.parametrize("value, least, number", [
    (8, 1, 8), (8.0, 1, 8), (0, 0, 0), ("8", 1, 8), ("8.0", 1, 8), (" 3 ", 1, 3),
    ("18446744073709551615", 0, 2 ** 64 - 1),   # a 64-bit dpid, exactly (a float would round it)
    (True, 1, 1),                               # with convert, as float() reads it
])
def test_whole_with_convert(value, least, number):
    got = numeric.whole(value, "f.graphml: port", InputError, least, convert=True)
    assert type(got) is int and got == number


@pytest.mark.parametrize("value", [0, -1, 1.5, "1.5", "nan", "inf", math.inf, "0"])
def test_whole_refuses_fractions_and_numbers_below_least(value):
    assert error_of(numeric.whole, value, 1, convert=True) == \
        f"f.yml: key must be an integer of at least 1, got {value!r:.40}"


def test_whole_without_convert_takes_only_numbers():
    assert numeric.whole(4.0, "k", InputError, 1) == 4
    for value in ("4", True, None):
        assert error_of(numeric.whole, value, 1) == f"f.yml: key must be an integer of at least 1, got {value!r}"
    assert error_of(numeric.whole, "x", 1, convert=True) == "f.yml: key 'x' is not a number"


anything = st.none() | st.booleans() | st.integers(-10 ** 400, 10 ** 400) | st.floats() | st.text(max_size=6) \
    | st.lists(st.integers(), max_size=2)


@settings(derandomize=True, deadline=None, max_examples=300)
@given(anything, st.booleans())
def test_any_value_is_a_number_that_fits_or_one_line_of_the_callers_error(value, convert):
    for check, fits in ((numeric.finite, lambda x: True), (numeric.positive, lambda x: x > 0),
                        (numeric.non_negative, lambda x: x >= 0)):
        try:
            number = check(value, "where", InputError, convert=convert)
        except InputError as err:
            assert str(err).startswith("where ") and "\n" not in str(err)
        else:
            assert type(number) is float and math.isfinite(number) and fits(number)
    try:
        number = numeric.whole(value, "where", InputError, 1, convert=convert)
    except InputError as err:
        assert str(err).startswith("where ") and "\n" not in str(err)
    else:
        assert type(number) is int and number >= 1
