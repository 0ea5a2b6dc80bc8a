"""Read one job's trace: the per-rank ``oxton-result<rank>.json`` files of PFProf and of our profiler.

A trace is a gzip'd tar of those files (``.tar.gz`` / ``.tgz``), a directory of them, or one file
(a one-rank job). The format is described in ../shared/pfsim-data/README.md and docs/traces.md.
Every problem is a `TraceError` whose one-line message names the file at fault.
"""
import json
import logging
import os
import re
import tarfile
import zlib

import numpy as np

from .. import numeric

LOG = logging.getLogger(__name__)

RANK_FILE = re.compile(r"^oxton-result(\d+)\.json$")
_MATRICES = ("tx_bytes", "rx_bytes", "tx_messages", "rx_messages")
_SIZES = ("tx_message_sizes", "rx_message_sizes")
_COUNT_MAX = 2 ** 63 - 1   # a count must fit the int64 matrices


class TraceError(ValueError):
    """A trace that cannot be read; the message is one line and names the offending file."""


class Phase:
    """One phase's traffic: n x n ``numpy.int64`` matrices, row i = what rank i recorded.

    ``tx_bytes[i, j]`` bytes and ``tx_messages[i, j]`` messages rank i sent to rank j, ``rx_*``
    what rank i received from rank j; ``tx_message_sizes[i]`` / ``rx_message_sizes[i]``: rank i's
    message-size histogram as a list of ``(size, frequency)``; ``durations[i]``: seconds or None.
    """

    def __init__(self, n_procs):
        self.n_procs = n_procs
        for name in _MATRICES:
            setattr(self, name, np.zeros((n_procs, n_procs), dtype=np.int64))
        self.tx_message_sizes = [[] for _ in range(n_procs)]
        self.rx_message_sizes = [[] for _ in range(n_procs)]
        self.durations = [None] * n_procs

    def traffic_matrix(self):
        """PFSim's traffic matrix: ``tx_bytes`` where ``tx_messages > 0``, else 0 (rx is ignored)."""
        return np.where(self.tx_messages > 0, self.tx_bytes, 0)


class Trace(Phase):
    """A whole job. The whole-run matrices are this object's own (as in `Phase`); ``phases[0]`` is
    this object itself (the whole run), ``phases[k]`` the k-th ``MPI_Pcontrol`` phase when the
    files have phases. Also ``processor_names[i]``, ``n_events[i]`` and ``source`` (``"mpi_t"``,
    ``"pmpi"`` or None for PFProf's files), ``path``, and ``file_order``: the ranks in the order
    their files were read (archive member order; a directory's names sorted as strings), the
    order in which PFSim walks the rows of the matrix, which decides its ties."""

    def __init__(self, n_procs, path):
        super().__init__(n_procs)
        self.path = path
        self.processor_names = [None] * n_procs
        self.n_events = [0] * n_procs
        self.source = None
        self.phases = [self]
        self.file_order = list(range(n_procs))


def load(path):
    """Read the trace at ``path`` (tar.gz/tgz, a directory, or one json file) into a `Trace`."""
    path = os.fspath(path)
    if os.path.isdir(path):
        files = _from_directory(path)
    elif os.path.isfile(path):
        if path.endswith(".json"):
            files = {_rank_of(os.path.basename(path), path): (path, _read_bytes(path))}
        else:
            files = _from_tar(path)
    else:
        raise TraceError(f"{path}: no such trace file or directory")
    if not files:
        raise TraceError(f"{path}: no oxton-result<rank>.json files")
    records = {rank: (name, _parse(name, raw)) for rank, (name, raw) in files.items()}
    return _assemble(path, records)


def _rank_of(base, where):
    match = RANK_FILE.match(base)
    if not match:
        raise TraceError(f"{where}: not a rank file (expected oxton-result<rank>.json)")
    return int(match.group(1))


def _read_bytes(name):
    try:
        with open(name, "rb") as f:
            return f.read()
    except OSError as exc:
        raise TraceError(f"{name}: cannot read ({exc.strerror})") from None


def _from_directory(path):
    files = {}
    for base in sorted(os.listdir(path)):
        if RANK_FILE.match(base):
            name = os.path.join(path, base)
            files[_rank_of(base, name)] = (name, _read_bytes(name))
    return files


def _from_tar(path):
    files = {}
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                base = os.path.basename(member.name)
                if member.isfile() and RANK_FILE.match(base):
                    name = f"{path}:{member.name}"
                    rank = _rank_of(base, name)
                    if rank in files:
                        raise TraceError(f"{name}: rank {rank} appears twice in the archive")
                    files[rank] = (name, tar.extractfile(member).read())
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise TraceError(f"{path}: not a readable tar.gz trace ({_one_line(exc)})") from None
    return files


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def _parse(name, raw):
    try:
        record = json.loads(raw.decode("utf-8"))
    except ValueError as exc:   # not UTF-8, not JSON, an integer of over 4300 digits
        raise TraceError(f"{name}: not valid JSON, truncated? ({_one_line(exc)})") from None
    except RecursionError:
        raise TraceError(f"{name}: not a rank file (JSON nested too deeply)") from None
    if not isinstance(record, dict):
        raise TraceError(f"{name}: a rank file must hold a JSON object")
    return record


def _assemble(path, records):
    ranks = sorted(records)
    first_name, first = records[ranks[0]]
    n_procs = _int_field(first_name, first, "n_procs")
    for rank in ranks:
        name, record = records[rank]
        if _int_field(name, record, "n_procs") != n_procs:
            raise TraceError(f"{name}: n_procs {record['n_procs']} disagrees with {n_procs} in "
                             f"{first_name}")
        if _int_field(name, record, "rank") != rank:
            raise TraceError(f"{name}: holds rank {record['rank']}, its name says {rank}")
    if n_procs < 1:
        raise TraceError(f"{first_name}: n_procs must be at least 1")
    extra = [r for r in ranks if r >= n_procs]
    if extra:
        raise TraceError(f"{records[extra[0]][0]}: rank {extra[0]} but n_procs is {n_procs}")
    if len(ranks) < n_procs:   # ranks are distinct and below n_procs: the first gap is among the first len+1
        first = next(r for r in range(len(ranks) + 1) if r not in records)
        raise TraceError(f"{path}: rank file oxton-result{first}.json missing "
                         f"({n_procs - len(ranks)} of {n_procs} ranks absent)")
    trace = Trace(n_procs, path)
    trace.file_order = list(records)
    n_phases = None
    sources = set()
    for rank in ranks:
        name, record = records[rank]
        _fill(trace, rank, name, record)
        for key in ("processor_name", "source"):
            if not isinstance(record.get(key), (str, type(None))):
                raise TraceError(f"{name}: '{key}' must be a string")
        if not _count(record.get("n_events", 0)):
            raise TraceError(f"{name}: 'n_events' must be a non-negative integer")
        trace.processor_names[rank] = record.get("processor_name")
        trace.n_events[rank] = record.get("n_events", 0)
        sources.add(record.get("source"))
        phases = record.get("phases")
        if phases is None:
            count = 1
        elif isinstance(phases, list) and phases:
            count = len(phases)
        else:
            raise TraceError(f"{name}: 'phases' must be a non-empty list")
        if n_phases is None:
            n_phases = count
        elif count != n_phases:
            raise TraceError(f"{name}: {count} phases, other ranks have {n_phases}")
    if len(sources) > 1:
        raise TraceError(f"{path}: ranks disagree on 'source' ({sorted(map(str, sources))})")
    trace.source = sources.pop()
    for k in range(1, n_phases):
        phase = Phase(n_procs)
        for rank in ranks:
            name, record = records[rank]
            _fill(phase, rank, f"{name} phase {k}", record["phases"][k])
        trace.phases.append(phase)
    LOG.debug("%s: %d ranks, %d phases", path, n_procs, n_phases)
    return trace


def _int_field(name, record, key):
    value = record.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise TraceError(f"{name}: missing or non-integer '{key}'")
    return value


def _count(value):
    return type(value) is int and 0 <= value <= _COUNT_MAX


def _fill(phase, rank, name, record):
    if not isinstance(record, dict):
        raise TraceError(f"{name}: a phase must be a JSON object")
    for key in _MATRICES:
        values = _row(record.get(key), phase.n_procs)
        if values is None:
            raise TraceError(f"{name}: '{key}' must be a list of {phase.n_procs} non-negative integers")
        getattr(phase, key)[rank] = values
    for key in _SIZES:
        entries = record.get(key, [])
        if not isinstance(entries, list):
            raise TraceError(f"{name}: '{key}' must be a list of {{message_size, frequency}}")
        getattr(phase, key)[rank] = [_size(name, key, entry) for entry in entries]
    duration = record.get("duration")
    if duration is not None:
        numeric.non_negative(duration, f"{name}: 'duration'", TraceError)
    phase.durations[rank] = duration


def _row(row, n):
    """``row`` as n counts (numpy, fitting int64), or None: not a list of n non-negative integers."""
    if not isinstance(row, list) or len(row) != n:
        return None
    try:
        values = np.asarray(row)
    except (ValueError, TypeError, OverflowError, RecursionError):  # ragged or nested rows
        return None
    if values.shape != (n,) or values.dtype.kind not in "iu" or (values < 0).any() \
            or (n and values.max() > _COUNT_MAX):
        return None
    return values


def _size(name, key, entry):
    """(message_size, frequency) of a histogram entry: non-negative integers (2.0 reads as 2)."""
    try:
        pair = (entry["message_size"], entry["frequency"])
    except (TypeError, KeyError, IndexError):
        pair = None
    out = []
    for value in pair or ():
        if not numeric.within(value, 0, _COUNT_MAX) or value != int(value):
            break
        out.append(int(value))
    if len(out) != 2:
        raise TraceError(f"{name}: '{key}' entries need message_size and frequency, non-negative integers")
    return tuple(out)
