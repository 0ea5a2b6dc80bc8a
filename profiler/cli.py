"""``sdnmpi-prof``: look at traffic traces of the profiler (or of PFProf).

    sdnmpi-prof show TRACE [--phase K] [--top N]
    sdnmpi-prof plot TRACE -o tm.png [--phase K]

TRACE is a <job>.tar.gz, a directory of oxton-result<rank>.json files, or one such file. Bad input
gives one line on stderr naming the file, and exit code 2.
"""
import argparse
import logging
import sys

from sdnmpi import pipes, traces

from . import summary

LOG = logging.getLogger(__name__)


def _parser():
    parser = argparse.ArgumentParser(prog="sdnmpi-prof", description="Summarise or plot an MPI traffic trace.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print a summary of a trace")
    show.add_argument("trace", help="<job>.tar.gz, a directory of oxton-result<rank>.json, or one file")
    show.add_argument("--phase", type=int, default=0, help="phase to summarise (0 = the whole run)")
    show.add_argument("--top", type=int, default=10, help="how many of the heaviest pairs to list")
    plot = sub.add_parser("plot", help="draw the traffic matrix as a heat map")
    plot.add_argument("trace", help="<job>.tar.gz, a directory of oxton-result<rank>.json, or one file")
    plot.add_argument("-o", "--output", required=True, help="image file to write (png, pdf, svg, ...)")
    plot.add_argument("--phase", type=int, default=0, help="phase to draw (0 = the whole run)")
    return parser


def _fail(message):
    print("sdnmpi-prof: %s" % message, file=sys.stderr)
    return 2


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        trace = traces.load(args.trace)
    except traces.TraceError as exc:
        return _fail(str(exc))
    try:
        summary.phase_of(trace, args.phase)
    except ValueError as exc:
        return _fail("%s: %s" % (args.trace, exc))
    if args.command == "show":
        if args.top < 0:
            return _fail("--top must be >= 0")
        try:
            print("\n".join(summary.report(trace, args.phase, args.top)), flush=True)
        except BrokenPipeError:  # stdout closed early (``| head``): stop quietly
            pipes.silence()
            return 1
        return 0
    from . import plot  # matplotlib only when drawing

    try:
        plot.heat_map(trace, args.phase, args.output)
    except (OSError, ValueError) as exc:
        return _fail("%s: cannot write the plot (%s)" % (args.output, " ".join(str(exc).split())))
    LOG.info("wrote %s", args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
