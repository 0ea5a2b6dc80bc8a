"""sdnmpi-ctl on bad input and output: URLs urllib cannot use, operator tokens no header can carry,
times the clocks cannot take, stdout closed early (``| head``). One line on stderr and exit 2 (bad
usage) or 1 (a token that cannot be used), or, for a closed pipe, a quiet exit; never a traceback."""
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from ctl_fakes import FakeServer, assert_one_error_line, json_answer, real_answers, requests_of, run
from sdnmpi.ctl.client import UsageError, check_url

ROUTING = {"routing": "dmodk", "policies": ["dmodk", "ecmp", "single"]}
QUICK = settings(max_examples=100, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SCRIPT = os.path.join(os.path.dirname(sys.executable), "sdnmpi-ctl")


@pytest.fixture(scope="module")
def dead_port():
    """A port on 127.0.0.1 that refuses connections (bound, not listening)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """GET /sdnmpi/routing as the controller answers it; PUT: 401, wrong token."""
    fake = FakeServer(lambda method, _path: json_answer(ROUTING) if method == "GET" else
                      json_answer({"error": "wrong operator token"}, "401 Unauthorized"))
    yield fake
    fake.close()


@pytest.mark.parametrize("url", [
    "http://[::1",                        # ValueError: Invalid IPv6 URL
    "http://[::1]:99999",                 # a port out of range
    "http://a..b:1",                      # an empty label: the resolver's IDNA encoding fails
    "http://%s:1" % ("a" * 64),           # a label over 63 letters
    "http://127.0.0.1:1/a b",             # http.client: InvalidURL
    "http://127.0.0.1:1/x\ny",            # urlsplit drops the newline; http.client would not
    "http://127.0.0.1:1/\u00e9",          # not ASCII: http.client cannot encode the path
    "http://127.0.0.1:1/\x7f",
])
def test_bad_urls_are_usage_errors(url, monkeypatch):
    result = run("--url", url, "jobs")
    assert_one_error_line(result, 2)
    assert result[2].startswith("sdnmpi-ctl: error: bad "), result
    monkeypatch.setenv("SDNMPI_URL", url)
    assert_one_error_line(run("routing"), 2)


@QUICK
@given(url=st.text(max_size=40) | st.text(max_size=30).map("http://".__add__))
@example(url="http://[::1")
@example(url="http://[")
def test_check_url_takes_any_text(url):
    try:
        checked = check_url(url)
    except UsageError:
        return
    assert url.startswith(checked)


@QUICK
@given(path=st.text(max_size=30))
def test_any_path_in_the_url_is_one_line(dead_port, path):
    """After "http://127.0.0.1:PORT/" any text stays in the path: the host and port do not change."""
    result = run("--url", "http://127.0.0.1:%d/%s" % (dead_port, path), "--timeout", "5", "jobs")
    assert_one_error_line(result, result[0])
    assert result[0] in (1, 2), result
    if result[0] == 1:
        assert result[2].startswith("sdnmpi-ctl: cannot reach the controller at http://127.0.0.1:%d" % dead_port)
    else:
        assert result[2].startswith("sdnmpi-ctl: error: bad controller URL "), result


def _set_routing(server, tmp_path, monkeypatch, content):
    """``routing set ecmp`` with a token file holding ``content``: (result, the file)."""
    monkeypatch.delenv("SDNMPI_TOKEN", raising=False)
    token_file = tmp_path / "token"
    token_file.write_bytes(content)
    server.requests.clear()
    return run("--url", server.url, "routing", "set", "ecmp", "--token-file", str(token_file)), token_file


@pytest.mark.parametrize("content", [
    b"\xff\xfe not UTF-8",
    b"abcdefgh\nijklmnopq\n",         # a newline inside: http.client: Invalid header value
    b"two words",
    b"nul\x00inside",
    "t\u00f6k\u00e9n".encode(),       # UTF-8, not ASCII: http.client cannot encode the header
])
def test_a_token_no_header_can_carry_is_one_line(server, tmp_path, monkeypatch, content):
    result, token_file = _set_routing(server, tmp_path, monkeypatch, content)
    assert_one_error_line(result, 1)
    assert result[2] == "sdnmpi-ctl: the operator token in %s is not one word of printable ASCII\n" % token_file
    assert server.requests == [("GET", "/sdnmpi/routing")], "nothing was sent with the token"


def test_a_token_from_the_environment_is_checked_too(server, monkeypatch):
    monkeypatch.setenv("SDNMPI_TOKEN", "two words")
    result = run("--url", server.url, "routing", "set", "ecmp")
    assert_one_error_line(result, 1)
    assert result[2] == "sdnmpi-ctl: the operator token in $SDNMPI_TOKEN is not one word of printable ASCII\n"


@QUICK
@given(content=st.binary(max_size=40))
def test_any_token_file_is_one_line(server, tmp_path, monkeypatch, content):
    """The fake controller refuses every token (401): whatever the file holds, one line, exit 1."""
    result, _ = _set_routing(server, tmp_path, monkeypatch, content)
    assert_one_error_line(result, 1)
    sent = ("PUT", "/sdnmpi/routing") in server.requests
    assert sent == (result[2] == "sdnmpi-ctl: /sdnmpi/routing: HTTP 401: wrong operator token\n"), result


@pytest.mark.parametrize("argv", [
    ["--timeout", "1e10", "jobs"],                                   # the socket's clock overflows
    ["--timeout", "inf", "jobs"],
    ["watch", "--count", "2", "--interval", "1e300"],                # so does time.sleep's
])
def test_times_over_a_day_are_usage_errors(dead_port, argv):
    result = run("--url", "http://127.0.0.1:%d" % dead_port, *argv)
    assert_one_error_line(result, 2)
    assert result[2].endswith(" is more than a day (see sdnmpi-ctl --help)\n"), result


@pytest.fixture(scope="module")
def controller():
    """A fake controller answering what the real one answers."""
    answers, job = real_answers()
    fake = FakeServer(lambda method, path: json_answer(answers[(method, path)]))
    fake.job = job
    assert requests_of("watch", job)[0] in answers
    yield fake
    fake.close()


@pytest.mark.parametrize("argv", [["routing"], ["topology"], ["topology", "--json"],
                                  ["watch", "--count", "3", "--interval", "0.01"]])
def test_a_closed_pipe_ends_quietly(controller, argv):
    """``sdnmpi-ctl ... | head`` when head has already gone: no traceback, no "Exception ignored"."""
    read_end, write_end = os.pipe()
    os.close(read_end)   # closed before sdnmpi-ctl writes: its first write fails (EPIPE)
    try:
        res = subprocess.run([SCRIPT, "--url", controller.url] + argv, stdout=write_end, stderr=subprocess.PIPE,
                             text=True, timeout=60, check=False)
    finally:
        os.close(write_end)
    assert (res.returncode, res.stderr) == (1, ""), res


def test_an_open_pipe_still_gets_everything(controller):
    with mock.patch.dict(os.environ, {"SDNMPI_URL": controller.url}):
        res = subprocess.run([SCRIPT, "routing"], capture_output=True, text=True, timeout=60, check=False)
    assert (res.returncode, res.stdout, res.stderr) == (0, "default routing: dmodk (policies: dmodk, ecmp, single)\n",
                                                        ""), res


def test_ctrl_c_while_waiting_ends_quietly():
    """SIGINT while the controller has not answered yet: exit 130, nothing on stderr. The request's
    own timeout is set far beyond the test (a day), so only the signal can end the wait. The script
    starts with SIGINT at its default, as from a terminal: a suite run in the background (`make test
    &`, as CI runs it) inherits SIGINT ignored, Python then installs no handler, and the signal did
    nothing (the fresh-clone CI at 761d08a: the wait ran into the test's 30 s)."""
    release = threading.Event()

    def hang(_method, _path):
        release.wait(60)
        return b""
    hanging = FakeServer(hang)
    try:
        proc = subprocess.Popen([SCRIPT, "--url", hanging.url, "--timeout", "86400", "jobs"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 30
        while not hanging.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        assert hanging.requests == [("GET", "/sdnmpi/jobs")]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        release.set()
        hanging.close()
    assert (proc.returncode, out, err) == (130, "", "")
