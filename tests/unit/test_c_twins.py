"""Constants that C and Python each keep: the Python side must name what the C side accepts.

The bench checks its options in Python before it starts a Mininet job, so a name or limit that the
C program changed and Python did not would fail only minutes into a run (or never be offered).
These read the C sources, so they fail as soon as the two drift apart.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import bench_jobroute_mininet  # noqa: E402
import bench_limits  # noqa: E402


def _source(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


def _c_table(source, name):
    """The string names of a C array of structs `name[] = { {"a", ...}, ... };`, in order."""
    body = re.search(r"\b%s\[\]\s*=\s*\{(.*?)\n\};" % re.escape(name), source, re.S)
    assert body, "no table %s[] in the C source" % name
    return tuple(re.findall(r'\{\s*"([^"]+)"', body.group(1)))


def _c_define(source, name):
    m = re.search(r"^#define\s+%s\s+(\d+)\b" % re.escape(name), source, re.M)
    assert m, "no #define %s in the C source" % name
    return int(m.group(1))


def test_sdn_algs_are_coll_bench_alg_names():
    assert bench_limits.SDN_ALGS == _c_table(_source("bench", "coll_bench_algs.c"), "alg_names")


def test_c_table_reader_sees_a_changed_table():
    source = 'static const struct { const char *name; int path; } alg_names[] = {\n' \
             '    {"rd", 2}, {"new", 9},\n};\n'
    assert _c_table(source, "alg_names") == ("rd", "new")
    assert _c_table(source, "alg_names") != bench_limits.SDN_ALGS


def test_max_window_is_traffic_patterns_limit():
    limit = _c_define(_source("libsdnmpi", "tests", "traffic_patterns.c"), "MAX_WINDOW")
    assert bench_jobroute_mininet.MAX_WINDOW == limit
    assert 1 <= bench_jobroute_mininet.WINDOW <= limit


def test_bcast_trees_default_is_the_librarys():
    assert bench_limits.LIB_BCAST_TREES == _c_define(_source("libsdnmpi", "src", "env.h"),
                                                     "SDNMPI_BCAST_DEFAULT_TREES")
