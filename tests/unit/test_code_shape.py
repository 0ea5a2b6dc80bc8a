"""The style rules that a machine can check: no code file over 500 lines anywhere in the project,
and no line over 120 characters in the product's own packages (tests and benchmarks are held to the
file length only)."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_LINES = 500
MAX_WIDTH = 120
CODE = ("*.py", "*.c", "*.h")
PRODUCT = ("controller", "primitives", "simulator", "traces", "flows", "ctl", "profiler", "mininet_topos",
           "sdnmpi", "libsdnmpi/src", "lldpd")


def tracked(*paths):
    """Tracked code files under PATHS (the whole project without any), results folders left out."""
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--", *[os.path.join(p, c) if p else c
                                                                        for p in (paths or ("",)) for c in CODE]],
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.split("\0") if f and not f.startswith("bench/results/")]


def lines(path):
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def too_long(files, limit):
    return ["%s: %d lines" % (f, n) for f in files for n in [len(lines(f))] if n > limit]


def too_wide(files, limit):
    return ["%s:%d: %d characters" % (f, i, len(line)) for f in files
            for i, line in enumerate(lines(f), 1) if len(line) > limit]


def test_the_lists_find_the_code():
    every = tracked()
    assert "controller/rpc.py" in every and "libsdnmpi/src/init.c" in every and "tests/unit/test_docs_true.py" in every
    assert set(tracked(*PRODUCT)) <= set(every) and "tests/unit/test_docs_true.py" not in tracked(*PRODUCT)


def test_no_code_file_over_500_lines():
    assert not too_long(tracked(), MAX_LINES)


@pytest.mark.parametrize("package", PRODUCT)
def test_no_product_line_over_120_characters(package):
    assert tracked(package), package
    assert not too_wide(tracked(package), MAX_WIDTH)


def test_the_checks_can_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(__import__(__name__), "ROOT", str(tmp_path))
    (tmp_path / "x.py").write_text("a = 1\n" * 3 + "b = '" + "x" * 130 + "'\n")
    assert too_long(["x.py"], 3) == ["x.py: 4 lines"]
    assert too_wide(["x.py"], 120) == ["x.py:4: 136 characters"]
