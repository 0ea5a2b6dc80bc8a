"""sdnmpi-ctl against the controller's real REST and operator handlers (operator_harness.Served)
on a simulated fabric with a planned job and a loaded link."""
import io
import json
import os
import socket
import subprocess
import sys

import pytest

from operator_harness import OPERATOR_TOKEN, Operated, Served
from sdnmpi.ctl import cli

LEAF1, LEAF4, SPINE1 = 0x201, 0x204, 0x101
UPLINK = 3   # leaf 1's port to spine 1


@pytest.fixture(scope="module")
def controller():
    op = Operated(link_capacity=10e6)
    # 10 ranks, hosts 1-2 twice; the plans name only the job's hosts (the controller refuses others)
    op.job = op.register(owner="ctl-test", hosts=op.ips + op.ips[:2])
    assert op.plan_allreduce(op.job, ranks=op.ips)["status"] == "ok"
    assert op.call("plan_bcast", owner="ctl-test", job=op.job, comm=0, root=op.ips[0], members=op.ips)["status"] == "ok"
    op.answer_table_stats()
    op.port_samples(LEAF1, UPLINK, rx_bytes=250_000, tx_bytes=1_000_000)     # 8 Mbit/s up, 2 down
    op.port_samples(LEAF4, 1, rx_bytes=0, tx_bytes=125_000)                   # 1 Mbit/s to host 7
    served = Served(op)
    op.url = served.url
    yield op
    served.close()


def run(*argv, env_url=None):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_topology_table_and_json(controller):
    code, out, err = run("--url", controller.url, "topology")
    assert (code, err) == (0, "")
    assert "Switches (6)" in out and "Links (8)" in out and "Hosts (8)" in out
    spine_rows = [l for l in out.splitlines() if l.startswith("0000000000000101")]
    assert spine_rows and spine_rows[0].split()[1] == "1", "spines are tier 1"
    code, out, _ = run("--url", controller.url, "topology", "--json")
    data = json.loads(out)
    assert code == 0
    assert len(data["switches"]) == 6 and len(data["links"]) == 8 and len(data["hosts"]) == 8
    sw = {s["dpid"]: s for s in data["switches"]}["%016x" % LEAF1]
    assert (sw["tier"], sw["flows"], sw["groups"]) == (0, len(controller.fab.switches[LEAF1].flows),
                                                       len(controller.fab.switches[LEAF1].groups))


def test_jobs_and_one_job_with_flows_per_switch(controller):
    code, out, _ = run("--url", controller.url, "jobs")
    row = [l.split() for l in out.splitlines() if l.split() and l.split()[0] == str(controller.job)]
    job = controller.rpc.jobs.jobs[controller.job]
    assert code == 0 and row == [[str(controller.job), "10", "8", "1", "1", str(len(job.flows())), "60", "s"]]
    code, out, _ = run("--url", controller.url, "job", str(controller.job))
    assert code == 0
    assert "Job %d: 10 ranks on 8 hosts" % controller.job in out
    assert "%s  0,8" % controller.ips[0] in out          # ranks 0 and 8 share host 1
    per_switch = {}
    for (dpid, src, dst), port in job.flows().items():
        per_switch.setdefault("%016x" % dpid, set()).add("%s -> %s  output:%d" % (src, dst, port))
    tree, = job.trees.values()
    for dpid, ports in tree.out_ports.items():
        per_switch.setdefault("%016x" % dpid, set()).add("udp %s -> %s:%d  group:%d (ALL) output:%s" % (
            tree.root, tree.group_ip, tree.udp_port, tree.group_id, ",".join(map(str, ports))))
    lines = out.splitlines()
    for dpid, flows in per_switch.items():
        head = lines.index("%s  %d flows" % (dpid, len(flows)))
        assert {l.strip() for l in lines[head + 1:head + 1 + len(flows)]} == flows
    code, out, _ = run("--url", controller.url, "job", str(controller.job), "--json")
    detail = json.loads(out)
    steps = detail["comms"]["0"]["steps"]
    assert code == 0 and len(steps) == 3 and all(len(step) == 8 for step in steps)


def test_unknown_job_is_an_api_error_in_one_line(controller):
    code, out, err = run("--url", controller.url, "job", "999")
    assert (code, out) == (1, "")
    assert err == "sdnmpi-ctl: /sdnmpi/jobs/999: HTTP 404: unknown job 999\n"


def test_links_top_n_busiest_first(controller):
    code, out, _ = run("--url", controller.url, "links", "--top", "2", "--json")
    links = json.loads(out)
    assert code == 0 and len(links) == 2
    # The link's smaller end (spine 1, port 1) has no sample: its rates come from the leaf's port.
    assert (links[0]["a"], links[0]["b"]) == ({"dpid": "%016x" % SPINE1, "port": 1}, {"dpid": "%016x" % LEAF1, "port": UPLINK})
    assert links[0]["bps"] == [2e6, 8e6] and links[0]["utilization"] == pytest.approx(0.8)
    assert links[1]["b"] == {"host": controller.fab.host_at[(LEAF4, 1)]} and links[1]["bps"] == [1e6, 0]
    code, out, _ = run("--url", controller.url, "links")
    rows = out.splitlines()[2:]
    assert code == 0 and len(rows) == 10
    assert rows[0].split()[:6] == ["%016x:1" % SPINE1, "%016x:%d" % (LEAF1, UPLINK), "2.0", "Mbit/s", "8.0", "Mbit/s"]
    assert rows[0].split()[-1] == "80.0%"


def test_routing_and_url_from_the_environment(controller, monkeypatch):
    monkeypatch.setenv("SDNMPI_URL", controller.url)
    assert run("routing") == (0, "default routing: dmodk (policies: dmodk, ecmp, single)\n", "")
    assert json.loads(run("routing", "--json")[1]) == {"routing": "dmodk", "policies": ["dmodk", "ecmp", "single"]}


@pytest.fixture
def settable(tmp_path, monkeypatch):
    """A controller of its own (the test changes its policy) and a token file."""
    monkeypatch.delenv("SDNMPI_TOKEN", raising=False)
    op = Operated()
    served = Served(op)
    op.url = served.url
    op.token_file = tmp_path / "token"
    op.token_file.write_text(OPERATOR_TOKEN + "\n")
    yield op
    served.close()


def test_routing_set_with_the_operator_token(settable, monkeypatch):
    op = settable
    code, out, err = run("--url", op.url, "routing", "set", "ecmp", "--token-file", str(op.token_file))
    assert (code, out, err) == (0, "default routing: ecmp (was dmodk)\n", "")
    assert op.core.routing == "ecmp" and op.core.routes_dirty
    op.fab.recompute()
    op.fab.check_tables_consistent()
    assert any(sw.groups for sw in op.fab.switches.values()), "ecmp routes use SELECT groups"
    monkeypatch.setenv("SDNMPI_TOKEN", OPERATOR_TOKEN)
    assert run("--url", op.url, "routing", "set", "ecmp") == (0, "default routing: ecmp (unchanged)\n", "")
    code, out, _ = run("--url", op.url, "routing", "set", "single", "--json")
    assert code == 0 and json.loads(out) == {"routing": "single", "previous": "ecmp", "changed": True}
    op.fab.recompute()
    op.fab.check_tables_consistent()
    assert not any(sw.groups for sw in op.fab.switches.values()), "the ECMP groups are gone"


def test_routing_set_refusals(settable, tmp_path, monkeypatch):
    op = settable
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-operator-token\n")
    cases = [
        (["routing", "set", "ecmp", "--token-file", str(wrong)], 1,
         "sdnmpi-ctl: /sdnmpi/routing: HTTP 401: wrong operator token\n"),
        (["routing", "set", "ecmp", "--token-file", str(tmp_path / "missing")], 1,
         "sdnmpi-ctl: cannot read the operator token: [Errno 2] No such file or directory: '%s'\n" % (tmp_path / "missing")),
        (["routing", "set", "fastest", "--token-file", str(op.token_file)], 2,
         "sdnmpi-ctl: error: unknown routing policy 'fastest' (choose from dmodk, ecmp, single)\n"),
        (["routing", "set"], 2, None),
        (["routing", "frob"], 2, None),
    ]
    for argv, want_code, want_err in cases:
        code, out, err = run("--url", op.url, *argv)
        assert (code, out) == (want_code, ""), argv
        assert err.count("\n") == 1 and (want_err is None or err == want_err), (argv, err)
    assert op.core.routing == "dmodk"
    monkeypatch.setenv("SDNMPI_TOKEN", "also-wrong")
    assert run("--url", op.url, "routing", "set", "ecmp")[0] == 1


def test_the_clients_default_token_file_is_the_controllers():
    from sdnmpi.controller import auth  # pylint: disable=import-outside-toplevel
    from sdnmpi.ctl import client  # pylint: disable=import-outside-toplevel
    assert client.DEFAULT_TOKEN_FILE == auth.DEFAULT_TOKEN_FILE


def test_watch_refreshes_count_times(controller):
    code, out, _ = run("--url", controller.url, "watch", "--count", "2", "--interval", "0.01")
    assert code == 0
    assert out.count("routing dmodk   switches 6  links 8  hosts 8  jobs 1") == 2
    assert "Busiest links" in out


def test_watch_keeps_going_while_the_controller_is_away():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = "http://127.0.0.1:%d" % s.getsockname()[1]
        code, out, err = run("--url", dead, "watch", "--count", "2", "--interval", "0.01")
    assert (code, err) == (0, "")
    assert out.count("sdnmpi-ctl: cannot reach the controller at %s" % dead) == 2


def test_unreachable_controller_and_bad_usage_exit_codes():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = "http://127.0.0.1:%d" % s.getsockname()[1]   # bound, not listening: refused
        code, out, err = run("--url", dead, "jobs")
    assert (code, out) == (1, "") and err.startswith("sdnmpi-ctl: cannot reach the controller at ")
    assert err.count("\n") == 1
    for argv in (["frobnicate"], ["links", "--top", "0"], ["job", "x"], ["--url", "ftp://h", "jobs"], [],
                 ["--url", "http://h:99999", "jobs"], ["watch", "--interval", "-1"]):
        code, out, err = run(*argv)
        assert code == 2 and out == "" and err.startswith("sdnmpi-ctl: error: ") and err.count("\n") == 1, argv


def test_console_script_and_module_entry(controller):
    script = os.path.join(os.path.dirname(sys.executable), "sdnmpi-ctl")
    res = subprocess.run([script, "--url", controller.url, "routing"], capture_output=True, text=True, timeout=60)
    assert (res.returncode, res.stderr) == (0, "") and res.stdout.startswith("default routing: dmodk ")
    res = subprocess.run([sys.executable, "-m", "sdnmpi.ctl", "job", "0"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr
