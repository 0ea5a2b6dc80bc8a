"""Open MPI transport settings of the job-routing benches (issue 15; docs/jobroute-rate.md, "The
2-cycle stall: where the control message waits").

One named place: ``TRANSPORTS`` holds the settings, ``--mpi-transport NAME`` picks one
(bench_jobroute_mininet.py, jobroute_rate.py; default DEFAULT_TRANSPORT), the same for every
routing policy and every mpirun of the bench (the profiling run too), recorded in results.json
as ``mpi_transport``. ``--ompi-mca`` entries replace a transport entry of the same name.

``bounded`` (why, measured in docs/jobroute-rate.md): over the tcp BTL, Open MPI 4.1's ob1 sends
a message above the eager limit (64 KiB) by rendezvous and, with the BTL's emulated PUT, as one
put fragment of the whole message, after the receiver's control message. The BTL sends the
fragments of one connection in order, and a pair of ranks that send to each other (a 2-cycle of a
permutation) share one connection, so a rank's control message to its peer can wait behind its
own whole message (megabytes: one transfer time, 4 s at 5 Mbit/s) while the peer idles. Bounding
the socket buffers alone does not help (the message waits in the BTL's queue, not in the
socket). ``bounded`` sends by the send/receive pipeline instead (no PUT flag: ob1 schedules
fragments of btl_tcp_max_send_size, 3 in flight, as their predecessors leave for the socket), so
the control message waits behind at most 3 x 16 KiB plus the socket's unsent bytes (Linux sizes
the send buffer from the congestion window: a few bandwidth-delay products, tens of KB at 5-40
Mbit/s and RTTs of ms). Small PUT fragments instead are worse: each needs a control message and
a completion message, which then wait behind data too (measured: 55 % per flow).

``--mca-variant NAME:K=V[,K=V...]`` (bench/jobroute_rate.py) runs every MPI kind once per
variant in each round, interleaved, its results under KIND+NAME: the way to compare transport
settings on the same fabric, placement and routes.
"""
import re

from bench_cli import parse_mca

VARIANT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
# btl_tcp_flags without PUT (0x2): send 0x1, inplace 0x8, need-ack 0x10, need-csum 0x20,
# hetero-rdma 0x100 (Open MPI 4.1's default is the same plus PUT: 0x13b)
TCP_FLAGS_NO_PUT = "0x139"
TRANSPORTS = {
    "default": ((), "Open MPI's own settings"),
    "bounded": ((("btl_tcp_flags", TCP_FLAGS_NO_PUT), ("btl_tcp_max_send_size", "16384")),
                "rendezvous control messages wait behind tens of KB, not a whole message: the tcp BTL's "
                "send/receive pipeline (no PUT), 16 KiB fragments; the same for every policy"),
}
DEFAULT_TRANSPORT = "bounded"


def add_arguments(parser):
    parser.add_argument("--mpi-transport", choices=sorted(TRANSPORTS), default=DEFAULT_TRANSPORT,
                        help="Open MPI transport settings of every mpirun (bench/mpi_transport.py; recorded): "
                             + "; ".join("%s: %s" % (k, v[1]) for k, v in sorted(TRANSPORTS.items())))


def merged(base, over):
    """[(K, V)]: ``base`` with the entries of ``over`` replacing those of the same K, then the rest
    of ``over`` (Open MPI would merge two --mca values of one name into a list)."""
    names = {k for k, _v in over}
    return [(k, v) for k, v in base if k not in names] + list(over)


def transport_mca(args):
    """The [(K, V)] of every mpirun: args.mpi_transport's settings (DEFAULT_TRANSPORT if the
    namespace has none) with args.mca (--ompi-mca) over them."""
    return merged(TRANSPORTS[getattr(args, "mpi_transport", DEFAULT_TRANSPORT)][0], getattr(args, "mca", ()))


def record(args):
    """results.json's ``mpi_transport``: the name, its settings, what was run and why."""
    name = getattr(args, "mpi_transport", DEFAULT_TRANSPORT)
    return {"name": name, "settings": dict(TRANSPORTS[name][0]), "mca": dict(transport_mca(args)),
            "why": TRANSPORTS[name][1]}


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
