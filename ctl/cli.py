"""sdnmpi-ctl: what the controller knows and does, from a terminal.

    sdnmpi-ctl [--url URL] topology [--json]      switches (with tier), links, hosts
    sdnmpi-ctl jobs [--json]                      MPI jobs
    sdnmpi-ctl job ID [--json]                    one job: hosts and ranks, plans, trees, flows per switch
    sdnmpi-ctl links [--top N] [--json]           the busiest links now
    sdnmpi-ctl routing [--json]                   the default routing policy
    sdnmpi-ctl routing set POLICY [--token-file F] make POLICY the default (operator only)
    sdnmpi-ctl watch [--interval S] [--count N]   a refreshing summary

The controller's URL comes from --url, else $SDNMPI_URL, else http://127.0.0.1:8080. Setting the
routing needs the operator's token: $SDNMPI_TOKEN, else the file --token-file (default: the
controller's default, /etc/sdnmpi/operator-token). Errors are one line on stderr; exit codes:
0 ok, 1 the controller is unreachable or answered an error or something that is not the JSON
expected (a wrong token, too), 2 bad usage (an unknown policy, too), 130 Ctrl-C. Output into a
closed pipe (``| head``) ends quietly. Every answer's shape is checked before it is rendered
(ctl/shapes.py), so an error while rendering is a bug of sdnmpi-ctl's own: it is not caught, and
Python prints its traceback (exit code 1).
"""
import argparse
import json
import logging
import os
import sys
import time

from .. import pipes
from . import render, shapes
from .client import DEFAULT_TOKEN_FILE, DEFAULT_URL, ApiError, Client, UsageError, check_token

LOG = logging.getLogger(__name__)
PROG = "sdnmpi-ctl"
EXIT_OK, EXIT_API, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130   # Ctrl-C, as shells report SIGINT
CLEAR = "\033[H\033[2J"
MAX_SECONDS = 86400.0   # a longer timeout or interval overflows the socket's and sleep's clocks
MAX_MESSAGE = 300       # characters of an error line


class OutputError(Exception):
    """The answer has characters the output cannot take (exit code 1)."""


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (argparse prints the usage too) and exit code 2."""

    def error(self, message):
        raise UsageError("%s (see %s --help)" % (message, PROG))


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text) from None
    if value < 1:
        raise argparse.ArgumentTypeError("%d is not positive" % value)
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text) from None
    if not value > 0:
        raise argparse.ArgumentTypeError("%s is not positive" % text)
    if value > MAX_SECONDS:
        raise argparse.ArgumentTypeError("%s is more than a day" % text)
    return value


def build_parser():
    parser = _Parser(prog=PROG, description="Query the sdnmpi controller's REST API.",
                     epilog="URL default: $SDNMPI_URL, else %s" % DEFAULT_URL)
    parser.add_argument("--url", default=os.environ.get("SDNMPI_URL") or DEFAULT_URL,
                        help="the controller's web address (REST API port)")
    parser.add_argument("--timeout", type=_positive_float, default=5.0, help="seconds per request (default 5)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    cmd = sub.add_parser("topology", help="switches, links and hosts")
    cmd.add_argument("--json", action="store_true", help="JSON instead of tables")
    cmd = sub.add_parser("jobs", help="the MPI jobs")
    cmd.add_argument("--json", action="store_true")
    cmd = sub.add_parser("job", help="one job: hosts and ranks, plans, trees, flows per switch")
    cmd.add_argument("job_id", type=_positive_int, metavar="ID")
    cmd.add_argument("--json", action="store_true")
    cmd = sub.add_parser("links", help="the busiest links now")
    cmd.add_argument("--top", type=_positive_int, default=10, help="how many (default 10)")
    cmd.add_argument("--json", action="store_true")
    cmd = sub.add_parser("routing", help="show (or set) the default routing policy")
    cmd.add_argument("--json", action="store_true")
    action = cmd.add_subparsers(dest="routing_action", metavar="set", parser_class=_Parser)
    setter = action.add_parser("set", help="make POLICY the default routing policy (operator only)")
    setter.add_argument("policy", metavar="POLICY")
    setter.add_argument("--token-file", default=None,
                        help="file with the operator's token (default: $SDNMPI_TOKEN, else %s)" % DEFAULT_TOKEN_FILE)
    setter.add_argument("--json", action="store_true")
    cmd = sub.add_parser("watch", help="a refreshing summary (Ctrl-C ends it)")
    cmd.add_argument("--interval", type=_positive_float, default=1.0, help="seconds between refreshes")
    cmd.add_argument("--count", type=_positive_int, default=None, help="stop after this many refreshes")
    cmd.add_argument("--top", type=_positive_int, default=5, help="busiest links shown (default 5)")
    return parser


def _get(client, path, shape):
    """The answer to ``GET path``, checked against ``shape`` (shapes.BadAnswer if it differs)."""
    return shapes.check(client.get(path), shape)


def _topology(client, _args):
    view = _get(client, "/sdnmpi/view", shapes.TOPOLOGY)
    data = {"switches": view["switches"], "links": [l for l in view["links"] if l["kind"] == "fabric"],
            "hosts": view["hosts"]}
    return data, render.topology(view)


def _jobs(client, _args):
    jobs = _get(client, "/sdnmpi/jobs", shapes.JOBS)
    return jobs, render.jobs(jobs)


def _job(client, args):
    detail = _get(client, "/sdnmpi/jobs/%d" % args.job_id, shapes.JOB)
    return detail, render.job(detail)


def _links(client, args):
    links = render.busiest(_get(client, "/sdnmpi/linkload", shapes.LINKS), args.top)
    return links, ["Busiest links"] + render.table(render.LINK_HEADERS, render.link_rows(links))


def _routing(client, args):
    if args.routing_action == "set":
        return _set_routing(client, args)
    answer = _get(client, "/sdnmpi/routing", shapes.ROUTING)
    return answer, render.routing(answer)


def _operator_token(args):
    if args.token_file is None and os.environ.get("SDNMPI_TOKEN"):
        return check_token(os.environ["SDNMPI_TOKEN"].strip(), "$SDNMPI_TOKEN")
    path = args.token_file or DEFAULT_TOKEN_FILE
    try:
        with open(path, "rb") as src:
            token = src.read().strip().decode("ascii")
    except OSError as err:
        raise ApiError("cannot read the operator token: %s" % err) from None
    except UnicodeDecodeError:
        raise ApiError("the operator token in %s is not one word of printable ASCII" % path) from None
    return check_token(token, path)


def _set_routing(client, args):
    policies = _get(client, "/sdnmpi/routing", shapes.ROUTING)["policies"]
    if args.policy not in policies:
        raise UsageError("unknown routing policy %r (choose from %s)" % (args.policy, ", ".join(policies)))
    answer = shapes.check(client.put("/sdnmpi/routing", {"routing": args.policy}, _operator_token(args)),
                          shapes.ROUTING_SET)
    if answer["changed"]:
        line = "default routing: %s (was %s)" % (answer["routing"], answer["previous"])
    else:
        line = "default routing: %s (unchanged)" % answer["routing"]
    return answer, [line]


COMMANDS = {"topology": _topology, "jobs": _jobs, "job": _job, "links": _links, "routing": _routing}


def _watch(client, args, out):
    shown = 0
    clear = CLEAR if out.isatty() else ""
    try:
        while True:
            try:
                lines = render.watch(_get(client, "/sdnmpi/view", shapes.WATCH), top=args.top)
            except ApiError as err:  # the controller may be restarting: keep watching
                lines = ["%s: %s" % (PROG, one_line(err))]
            _write(out, clear + "\n".join([time.strftime("%H:%M:%S")] + lines) + "\n\n")
            shown += 1
            if args.count is not None and shown >= args.count:
                return EXIT_OK
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return EXIT_OK


def _run(argv, out):
    args = build_parser().parse_args(argv)
    client = Client(args.url, timeout=args.timeout)
    if args.command == "watch":
        return _watch(client, args, out)
    data, lines = COMMANDS[args.command](client, args)
    _write(out, (json.dumps(data, indent=2) if args.json else "\n".join(lines)) + "\n")
    return EXIT_OK


def _write(out, text):
    try:
        out.write(text)
    except UnicodeEncodeError as err:   # a host name with a lone surrogate on a UTF-8 stdout
        raise OutputError("the answer has characters the output cannot take (%s: %s)" % (type(err).__name__, err)) \
            from None
    out.flush()   # a closed pipe fails here, not at exit


def one_line(message):
    """``message`` as one line: control characters escaped, cut to MAX_MESSAGE characters."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(message))
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + "..."


def _say(err, message):
    err.write("%s: %s\n" % (PROG, one_line(message)))


def main(argv=None, out=None, err=None):
    out, err = out or sys.stdout, err or sys.stderr
    try:
        return _run(argv, out)
    except UsageError as exc:
        _say(err, "error: %s" % exc)
        return EXIT_USAGE
    except ApiError as exc:
        _say(err, exc)
        return EXIT_USAGE if exc.status == 400 else EXIT_API
    except BrokenPipeError:
        pipes.silence(out)
        return EXIT_API
    except KeyboardInterrupt:   # Ctrl-C while waiting for the controller (watch returns 0 itself)
        return EXIT_INTERRUPTED
    except shapes.BadAnswer as exc:   # checked before rendering: what render raises on checked data is a bug
        _say(err, "unexpected answer from the controller (%s)" % exc)
        return EXIT_API
    except OutputError as exc:
        _say(err, exc)
        return EXIT_API
