"""The numbers read from input files and command lines (scenario and GraphML topology files, counter
logs, traces, flow models, sdnmpi-sim's options), checked in one place.

Each check returns the number, or raises ``error``, the caller's own error class (ScenarioError,
TopologyError, ...), with the one-line message ``<what> must be <kind>, got <value>``: ``what``
names the value as the caller's other messages do (its file, place and key; empty for an option's
value, which argparse names). By default only an int
or a float is a number (JSON's and YAML's; not a bool, not a string); ``convert=True`` also reads
what ``float()`` reads (a GraphML attribute, a command-line word, a numpy scalar), and a value it
cannot read is ``<what> <value> is not a number``. An integer beyond floats reads as infinite.
"""
import math


def is_number(value):
    """True for an int or a float, not a bool (a number of JSON or YAML)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def within(value, low, high):
    """True for a finite number (`is_number`) in [``low``, ``high``]."""
    if not is_number(value):
        return False
    return low <= value <= high and (isinstance(value, int) or math.isfinite(value))


def finite(value, what, error, convert=False):
    """``value`` as a finite float."""
    return _checked(value, what, error, convert, "a finite number", lambda x: True)


def positive(value, what, error, convert=False):
    """``value`` as a finite float above 0."""
    return _checked(value, what, error, convert, "a positive finite number", lambda x: x > 0)


def non_negative(value, what, error, convert=False):
    """``value`` as a finite float of at least 0."""
    return _checked(value, what, error, convert, "a non-negative finite number", lambda x: x >= 0)


def whole(value, what, error, least=0, convert=False):
    """``value`` as an int of at least ``least``: an int, or a float with no fraction (8.0); with
    ``convert`` also an integer's text, read exactly ("18446744073709551615"), or a float's ("8.0")."""
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif convert and isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            pass
    if number is None:
        real = _real(value, what, error, convert)
        number = int(real) if real is not None and math.isfinite(real) and real == int(real) else None
    if number is None or number < least:
        raise error(_message(what, f"must be an integer of at least {least}, got {value!r:.40}"))
    return number


def _checked(value, what, error, convert, kind, fits):
    number = _real(value, what, error, convert)
    if number is None or not math.isfinite(number) or not fits(number):
        raise error(_message(what, f"must be {kind}, got {value!r:.40}"))
    return number


def _real(value, what, error, convert):
    """``value`` as a float (inf for an int beyond floats), or None if it is no number."""
    if not convert and not is_number(value):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf
    except (TypeError, ValueError):
        raise error(_message(what, f"{value!r:.40} is not a number")) from None


def _message(what, text):
    return f"{what} {text}" if what else text
