"""The bench targets' arguments, as make expands them, parse by their scripts' own parsers."""
import os
import shlex
import subprocess

import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import bench_flowdetect
import bench_jobroute_mininet
import prof_overhead

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def script_args(target, script):
    """The arguments `make -n TARGET` passes to bench/SCRIPT (the first such command)."""
    out = subprocess.run(["make", "-s", "-n", "-C", ROOT, target], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        words = shlex.split(line)
        path = "bench/" + script
        if path in words:
            return words[words.index(path) + 1:]
    raise AssertionError(f"make -n {target} runs no {path}:\n{out}")


def parses(parse, argv):
    try:
        parse(argv)
    except SystemExit as e:
        return e.code in (0, None)
    return True


@pytest.mark.parametrize("target, script, parse", [
    ("bench-prof", "prof_overhead.py", lambda argv: prof_overhead.build_parser().parse_args(argv)),
    ("bench-jobroute", "bench_jobroute_mininet.py", bench_jobroute_mininet.parse_args),
    ("bench-flowdetect", "bench_flowdetect.py", bench_flowdetect.parse_args),
])
def test_target_arguments_parse(target, script, parse):
    assert parses(parse, script_args(target, script))


def test_a_wrong_argument_is_caught():
    assert not parses(lambda argv: prof_overhead.build_parser().parse_args(argv), ["--rates", "link-bound"])
