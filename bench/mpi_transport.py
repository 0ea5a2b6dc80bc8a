"""Open MPI transport settings of the job-routing benches (issue 15; docs/jobroute-rate.md, "The
2-cycle stall: where the control message waits").

``--mca-variant NAME:K=V[,K=V...]`` (bench/jobroute_rate.py) runs every MPI kind once per
variant in each round, interleaved, its results under KIND+NAME: the way to compare transport
settings on the same fabric, placement and routes.
"""
import re

from bench_cli import parse_mca

VARIANT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")


def parse_variant(text):
    """'NAME:K=V[,K=V...]' (or 'NAME:' for Open MPI's defaults) -> (NAME, [(K, V)]); ValueError
    for a malformed name or entry (parse_mca's rules: no reserved MCA name)."""
    name, sep, rest = text.partition(":")
    name = name.strip()
    if not sep or not VARIANT_NAME.match(name):
        raise ValueError("--mca-variant wants NAME:K=V[,K=V...] (NAME: a-z, 0-9, -), got %r" % text)
    return name, parse_mca([item for item in rest.split(",") if item.strip()])


def parse_variants(items, base=()):
    """[(NAME, [(K, V)])] of repeated --mca-variant options; [("", [])] when none (one run per
    kind, no suffix). ValueError for a repeated NAME, or a parameter given twice in one variant
    or also in ``base`` (--ompi-mca's: Open MPI would merge the two values into a list)."""
    out = [parse_variant(item) for item in items]
    names = [name for name, _mca in out]
    if len(set(names)) != len(names):
        raise ValueError("--mca-variant: every NAME once, got %s" % ", ".join(names))
    fixed = {k for k, _v in base}
    for name, mca in out:
        keys = [k for k, _v in mca]
        if len(set(keys)) != len(keys) or fixed & set(keys):
            raise ValueError("--mca-variant %s: a parameter given twice (in it or in --ompi-mca)" % name)
    return out or [("", [])]
