"""Bad REST input gets a clear one-line answer, never a 500 (audit 44): job ids of non-ASCII digits
or thousands of digits, and a routing body of deeply nested JSON. The real handlers of
controller/rest.py and controller/web.py, served on loopback (operator_harness.Served)."""
import json
import urllib.error
import urllib.request

import pytest

from operator_harness import OPERATOR_TOKEN, Operated, Served


@pytest.fixture(scope="module")
def served():
    op = Operated()
    op.job = op.register()
    srv = Served(op)
    srv.op = op
    yield srv
    srv.close()


def request(srv, method, path, body=None):
    req = urllib.request.Request(srv.url + path, data=body, method=method,
                                 headers={"Authorization": "Bearer " + OPERATOR_TOKEN})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@pytest.mark.parametrize("job", ["%C2%B2", "%EF%BC%91", "%D9%A1", "1" * 5000, "-1", "1%200"])
def test_view_ignores_a_job_that_is_not_ascii_digits(served, job):
    """'²', fullwidth '１' and Arabic-Indic '١' pass str.isdigit() but not int(); 5000 digits pass
    neither int() nor the job-id range. Like ?job=abc, the view then has no job detail."""
    status, body = request(served, "GET", "/sdnmpi/view?job=" + job)
    assert status == 200 and json.loads(body)["job"] is None


def test_view_still_shows_a_job_given_in_ascii_digits(served):
    status, body = request(served, "GET", "/sdnmpi/view?job=%d" % served.op.job)
    assert status == 200 and json.loads(body)["job"]["job"] == served.op.job


@pytest.mark.parametrize("method,path", [("GET", "/sdnmpi/jobs/"), ("DELETE", "/sdnmpi/jobs/")])
@pytest.mark.parametrize("job", ["1" * 5000, "1" * 10, "%C2%B2"])
def test_a_job_id_out_of_range_is_not_found(served, method, path, job):
    status, _body = request(served, method, path + job)
    assert status == 404
    assert served.op.job in served.op.rpc.jobs.jobs


@pytest.mark.parametrize("body", [b"[" * 3000, b"[" * 4096, b'{"routing":' + b"[" * 4000])
def test_deeply_nested_routing_body_is_a_400_with_a_one_line_error(served, body):
    status, answer = request(served, "PUT", "/sdnmpi/routing", body)
    assert status == 400, answer[:200]
    assert json.loads(answer) == {"error": 'the body must be JSON {"routing": NAME}'}
    assert served.op.core.routing == "dmodk" and not served.op.core.routes_dirty
    status, answer = request(served, "PUT", "/sdnmpi/routing", b'{"routing": "dmodk"}')
    assert status == 200 and json.loads(answer)["changed"] is False
