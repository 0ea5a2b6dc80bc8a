"""The README's CI lines quote the last fresh-clone run recorded in docs/ci-history.md."""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROW = re.compile(r"^\| ([0-9a-f]{7,40}) \| (\d+) \| (\d+) \| (\d+) \| [^|]+ \|$")
# The status list near the top, and the Quick start's paragraph on the suite.
README_LINES = (
    re.compile(r"latest fresh-clone `\.ci/run`, at (\w+) \([\d-]+\): (\d+) passed in (\d+) s"),
    re.compile(r"the latest, at (\w+) on [\d-]+, (\d+) passed in (\d+) s"),
)


def runs(text, green_only=True):
    """(commit, passed, seconds) of every row of the history's table, in order; only the runs
    without a failed test unless ``green_only`` is False."""
    rows = [m.groups() for m in map(ROW.match, text.splitlines()) if m]
    return [(c, p, s) for c, p, failed, s in rows if not green_only or failed == "0"]


def quoted(text):
    """(commit, passed, seconds) of each README CI line, None where the line is missing."""
    flat = " ".join(text.split())
    found = []
    for pattern in README_LINES:
        m = pattern.search(flat)
        found.append(m.groups() if m else None)
    return found


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def test_history_rows_parse_and_grow():
    rows = runs(read("docs", "ci-history.md"), green_only=False)
    assert len(rows) >= 2
    assert len({r[0] for r in rows}) == len(rows), "a commit recorded twice"
    assert all(int(passed) > 0 and int(seconds) > 0 for _, passed, seconds in rows)


@pytest.mark.parametrize("index", range(len(README_LINES)))
def test_readme_quotes_the_last_run(index):
    last = runs(read("docs", "ci-history.md"))[-1]
    assert quoted(read("README.md"))[index] == last


def test_a_stale_readme_line_is_caught():
    history = ("| abc1234 | 10 | 0 | 100 | def5678 |\n| 1234567 | 12 | 0 | 90 | 89abcde |\n"
               "| 7654321 | 11 | 1 | 95 | a note |\n")
    readme = ("the latest fresh-clone `.ci/run`, at\n  abc1234 (2026-12-01): 10 passed in 100 s. "
              "Quick start: the latest, at 1234567 on 2026-12-01, 12 passed in 90 s")
    last = runs(history)[-1]
    assert last == ("1234567", "12", "90") and runs(history, green_only=False)[-1][0] == "7654321"
    assert quoted(readme) == [("abc1234", "10", "100"), last]
    assert quoted(readme)[0] != last
    assert quoted("no CI line here") == [None, None]
