"""The one runner of libsdnmpi's C check programs (allreduce_check, bcast_check, coll_check,
planahead_check): the program under mpirun, a clean exit, and its summary line."""
from pathlib import Path

import libsdnmpi_harness as harness


def number(text):
    """A summary field: an int when it is one, else a float."""
    return int(text) if text.isdigit() else float(text)


def run_check(np, argv, summary, env=None, *, timeout, netns=None):
    """``argv`` (the check program and its options) with ``np`` ranks under mpirun (see
    libsdnmpi_harness.mpirun). Asserts a zero exit and the program's summary line: ``summary``, a
    regex with named groups, among them ``p`` (the ranks, == np) and ``failures`` (== 0), and
    ``cases`` (> 0) if the program counts cases. Returns the named fields as numbers, with the
    ranks' ``stderr``, the ``stdout`` and the run's ``seconds``."""
    res, seconds = harness.mpirun(np, argv, env, timeout=timeout, netns=netns)
    assert res.returncode == 0, "%s -np %d failed (rc %d, %.1fs):\n%s\n%s" % (
        Path(argv[0]).name, np, res.returncode, seconds, res.stdout[-3000:], res.stderr[-8000:])
    match = summary.search(res.stdout)
    assert match, res.stdout
    out = {key: number(value) for key, value in match.groupdict().items()}
    assert out["p"] == np and out["failures"] == 0, match.group(0)
    assert out.get("cases", 1) > 0, match.group(0)
    return dict(out, stderr=res.stderr, stdout=res.stdout, seconds=seconds)
