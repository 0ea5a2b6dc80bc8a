"""Fakes for sdnmpi-ctl's failure tests: an HTTP-ish server on 127.0.0.1 that answers whatever bytes
a test sets, the real controller's answers to copy and spoil, and checks of the one-line errors.

Used by test_ctl_answers.py and test_ctl_input.py.
"""
import io
import json
import socketserver
import threading

from operator_harness import OPERATOR_TOKEN, Operated, Served
from sdnmpi.ctl import cli
from sdnmpi.ctl.client import Client
from sdnmpi.primitives import fattree

PROG_PREFIX = cli.PROG + ": "
LEAF1, UPLINK = 0x201, 3


def run(*argv, out=None):
    """sdnmpi-ctl in this process: (exit code, stdout, stderr); an uncaught exception fails the test."""
    out = out if out is not None else io.StringIO()
    err = io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, (out.getvalue() if isinstance(out, io.StringIO) else None), err.getvalue()


def assert_one_error_line(result, code):
    got_code, out, err = result
    assert got_code == code, result
    assert out in ("", None), result
    assert err.startswith(PROG_PREFIX) and err.count("\n") == 1 and err.endswith("\n"), result
    assert "Traceback" not in err


def http_answer(body, status="200 OK", headers=b""):
    """A complete HTTP/1.1 answer carrying ``body`` (bytes)."""
    return b"HTTP/1.1 %s\r\nContent-Length: %d\r\n%s\r\n" % (status.encode(), len(body), headers) + body


def json_answer(value, status="200 OK"):
    return http_answer(json.dumps(value).encode(), status, b"Content-Type: application/json\r\n")


class _Handler(socketserver.StreamRequestHandler):
    def handle(self):
        request = self.rfile.readline(65537).split()
        length = 0
        while True:
            line = self.rfile.readline(65537)
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        self.rfile.read(length)
        method, path = (part.decode() for part in (request + [b"", b""])[:2])
        self.server.requests.append((method, path))
        answer = self.server.answer
        if callable(answer):
            answer = answer(method, path)
        self.wfile.write(answer)


class FakeServer(socketserver.ThreadingTCPServer):
    """Reads each request and answers ``answer``: bytes, or ``answer(method, path)`` -> bytes; then
    closes the connection. ``requests`` lists (method, path) as they came."""
    daemon_threads = True

    def __init__(self, answer=b""):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.requests = []
        self.url = "http://127.0.0.1:%d" % self.server_address[1]
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.shutdown()
        self.server_close()
        self.thread.join()


# What each command asks for (the commands fetch these and nothing else).
COMMANDS = {
    "topology": [("GET", "/sdnmpi/view")],
    "jobs": [("GET", "/sdnmpi/jobs")],
    "job": [("GET", "/sdnmpi/jobs/%d")],
    "links": [("GET", "/sdnmpi/linkload")],
    "routing": [("GET", "/sdnmpi/routing")],
    "routing set": [("GET", "/sdnmpi/routing"), ("PUT", "/sdnmpi/routing")],
    "watch": [("GET", "/sdnmpi/view")],
}


def argv_of(command, job, json_too=False):
    """The command line of ``command`` (a key of COMMANDS) for job ``job``."""
    argv = {"job": ["job", str(job)], "routing set": ["routing", "set", "ecmp"],
            "watch": ["watch", "--count", "1", "--interval", "0.01"]}.get(command, [command])
    return argv + (["--json"] if json_too and command != "watch" else [])


def requests_of(command, job):
    """[(method, path)] that ``command`` sends for job ``job``."""
    return [(method, path % job if "%d" in path else path) for method, path in COMMANDS[command]]


def real_answers():
    """({(method, path): JSON} as the real REST API answers every request of COMMANDS, the job's id):
    a leaf-spine fabric with a job (an Allreduce plan and a Bcast tree) and a loaded link."""
    op = Operated.with_job(fattree.leaf_spine(2, 4, 2), link_capacity=10e6)
    op.answer_table_stats()
    op.port_samples(LEAF1, UPLINK, rx_bytes=250_000, tx_bytes=1_000_000)
    served = Served(op)
    try:
        client, answers = Client(served.url), {}
        for method, path in sorted({r for command in COMMANDS for r in requests_of(command, op.job)}):
            answers[(method, path)] = (client.get(path) if method == "GET" else
                                       client.put(path, {"routing": "ecmp"}, OPERATOR_TOKEN))
    finally:
        served.close()
    return answers, op.job
