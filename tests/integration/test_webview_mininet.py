"""The live web view in a real browser (headless Chromium under Selenium) with the controller and
the Mininet fabric up: the right numbers of switches, hosts and links; a link's colour under iperf3
load and back; a job appearing on register with its highlighted routes equal to the way OVS
forwards its planned pairs (all of them, and per Allreduce step: its job flows where installed, the
default routes where elided, tests/integration/ovs_routes.py), disappearing on release; the page carrying on through a
controller restart on the same ports; no errors in the browser console. Screenshots go to
$SDNMPI_ARTIFACTS (else test-artifacts/ in the checkout)."""
import contextlib
import os
import random
import subprocess
import sys
import types

import pytest
from selenium.webdriver.common.by import By

from sdnmpi.mininet_topos import controller_proc, demo, procs
from sdnmpi.mininet_topos.fattree import LeafSpineTopo
from sdnmpi.primitives import schedule

import ofdump
import ovs_routes
from fabric_helpers import HPL, LEAVES, N, SPINES, bridge, ip, leaf_dpid, leaf_spine_fabric
from operator_helpers import (RPC_ALLOW_LOCAL, RpcClient, artifacts_dir, chromium, console_errors, halo_ends,
                              job_out_ports, route_port, wait_until)

IDLE = "#9aa5b1"   # controller/web/app.js: an idle link's colour
LINK_BPS = 20e6
CONTROLLER_ARGS = ("--sdnmpi-stats-interval", "1", "--sdnmpi-link-capacity", "%g" % LINK_BPS) + RPC_ALLOW_LOCAL


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    topo = LeafSpineTopo(spines=SPINES, leaves=LEAVES, hosts_per_leaf=HPL, host_bw=20, fabric_bw=20)
    tmp = tmp_path_factory.mktemp("webview")
    args = CONTROLLER_ARGS + ("--sdnmpi-operator-token-file", str(tmp / "operator-token"))
    with leaf_spine_fabric("dmodk", tmp, topo=topo, extra_args=args) as (ctl, fab):
        state = types.SimpleNamespace(ctl=ctl, fab=fab, tmp=tmp, args=args, restarted=[])
        try:
            with chromium() as driver:
                state.driver = driver
                driver.get(ctl.url("/"))
                yield state
        finally:
            for new in state.restarted:
                new.stop()


def css(driver, selector):
    return driver.find_elements(By.CSS_SELECTOR, selector)


def text(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def fabric_counts(driver):
    return (len(css(driver, "#fabric g.switch")), len(css(driver, "#fabric g.host")),
            len(css(driver, '#fabric line.link[data-kind="fabric"]')), len(css(driver, '#fabric line.link[data-kind="host"]')))


def wait_live_fabric(driver, timeout=30):
    want = (SPINES + LEAVES, N, SPINES * LEAVES, N)
    wait_until(lambda: fabric_counts(driver) == want and text(driver, "status") == "live", timeout,
               "the page to show %s switches, hosts, switch links, host links" % (want,))


SETTLED_JS = """
const probe = document.createElement("span");
document.body.appendChild(probe);
const settled = Array.from(document.querySelectorAll("#fabric line.link")).every((line) => {
  probe.style.color = line.getAttribute("stroke");
  return getComputedStyle(line).stroke === getComputedStyle(probe).color;
});
probe.remove();
return settled;
"""
# While traffic flows the page recolours the loaded links at every update (once a second) and
# fades each new colour in over 0.8 s (style.css), so "every link shows its colour" holds only
# between a fade's end and the next update. For a picture of the current colours the fades are
# switched off while it is taken (one script: no update comes between the switch and the check).
NO_FADE_JS = """
const style = document.createElement("style");
style.id = "test-no-fade";
style.textContent = "#fabric line.link { transition: none !important; }";
document.head.appendChild(style);
""" + SETTLED_JS
FADE_JS = 'document.getElementById("test-no-fade")?.remove();'
LINK_JS = """
const line = document.querySelector(arguments[0]);
return line && [line.getAttribute("data-util"), line.getAttribute("stroke")];
"""


def colours_settled(driver):
    """Every link is drawn in its current colour (the page fades colours in)."""
    return driver.execute_script(SETTLED_JS)


def screenshot(driver, path):
    """The page with every link in the colour of the latest update, not halfway through a fade."""
    try:
        settled = driver.execute_script(NO_FADE_JS)
        driver.save_screenshot(path)
    finally:
        driver.execute_script(FADE_JS)
    assert settled, "without fades, every link is drawn in its colour at once"


@contextlib.contextmanager
def traffic(fab, client, server, seconds=120):
    """iperf3 from ``client`` to ``server`` (Mininet host names), flowing when this returns (the
    server listens before the client starts) and stopped on leaving; ``seconds`` outlasts every
    wait made inside. Yields a function: whether the client still runs."""
    hosts = fab.net
    srv = procs.popen_in_host(hosts.get(server), ["iperf3", "-s", "-1", "-p", demo.IPERF_PORT])
    cli = None
    try:
        demo._wait_listening(hosts.get(server), demo.IPERF_PORT)  # pylint: disable=protected-access
        cli = procs.popen_in_host(hosts.get(client), ["iperf3", "-c", hosts.get(server).IP(), "-p", demo.IPERF_PORT,
                                                      "-t", seconds])
        yield lambda: cli.poll() is None
    finally:
        procs.terminate([cli, srv], timeout=5)


def test_page_shows_the_fabric(env):
    d = env.driver
    wait_live_fabric(d)
    assert text(d, "summary") == "%d switches \u00b7 %d links \u00b7 %d hosts \u00b7 0 jobs" % (SPINES + LEAVES, SPINES * LEAVES, N)
    assert text(d, "routing") == "routing: dmodk"
    tiers = {g.get_attribute("data-dpid"): g.get_attribute("class") for g in css(d, "#fabric g.switch")}
    assert sorted(tiers.values()) == ["switch tier0"] * LEAVES + ["switch tier1"] * SPINES
    assert console_errors(d) == []


def test_link_colour_follows_iperf3_load(env):
    d, fab = env.driver, env.fab
    end = "%s:%d" % (leaf_dpid(1), route_port(fab, bridge(fab, leaf_dpid(1)), ip(N)))
    selector = '#fabric line.link[data-a="%s"], #fabric line.link[data-b="%s"]' % (end, end)
    link = lambda: d.execute_script(LINK_JS, selector)  # noqa: E731  [data-util, stroke] read in one go
    wait_until(lambda: link()[1] == IDLE, 20, "the uplink %s to be idle" % end)
    with traffic(fab, "h1", "h%d" % N) as flowing:

        def loaded():
            util, colour = link()
            return util and float(util) > 0.5 and (float(util), colour)
        util, colour = wait_until(loaded, 9, "the uplink to be shown more than half loaded")
        assert colour.startswith("hsl("), "a loaded link is drawn in a hue, not %s" % colour
        hue = int(colour[len("hsl("):].split(",")[0])
        assert hue < 60, "a busy link is drawn orange to red, not %s" % colour
        assert abs(hue - 120 * (1 - min(util, 1))) <= 1, "utilisation %.3f drawn as %s" % (util, colour)
        screenshot(d, os.path.join(artifacts_dir(env.tmp), "webview-iperf3.png"))
        assert flowing(), "the iperf3 ran until stopped: the checks above saw it flowing"
    wait_until(lambda: link()[1] == IDLE and colours_settled(d), 10,
               "the uplink's colour to return to idle, and every colour to settle (nothing changes them now)")
    assert console_errors(d) == []


def test_job_appears_its_routes_match_ovs_and_it_goes_on_release(env, tmp_path):
    d, fab, ctl = env.driver, env.fab, env.ctl
    ips = [ip(n) for n in range(1, N + 1)]
    random.Random(18).shuffle(ips)   # ranks placed at random
    client = RpcClient(ctl.rpc_port)
    try:
        job = client.register_and_plan(ips)
        item = '#jobs li[data-job="%d"]' % job
        wait_until(lambda: css(d, item), 5, "job %d in the list" % job)[0].click()
        ways = ovs_routes.check_job(ctl, fab, job)     # OVS holds the installed hops, forwards all as planned
        ovs = ovs_routes.ends(ways)
        assert ovs, "the plan routes pairs across leaves"
        wait_until(lambda: halo_ends(d) == ovs, 5, "the highlighted routes to equal the OVS forwarding of job %d" % job)
        assert text(d, "summary").endswith("1 jobs")
        # The picture for the README: the job's routes with a loaded link next to them.
        with traffic(fab, "h1", "h%d" % N) as flowing:
            wait_until(lambda: any(float(l.get_attribute("data-util") or 0) > 0.5 for l in css(d, "#fabric line.link")),
                       6, "a loaded link")
            screenshot(d, os.path.join(artifacts_dir(env.tmp), "webview-job.png"))
            assert flowing(), "the iperf3 ran until stopped: the picture shows it flowing"
        # Per step: the highlight is the way OVS forwards that step's host pairs.
        steps = schedule.host_steps(schedule.recursive_doubling_steps(N), ips)
        ways = ovs_routes.check_job(ctl, fab, job)
        for i, step in enumerate(steps):
            pairs = {pair for pair, _count in step}
            want = ovs_routes.ends(ways, pairs)
            css(d, "#job-steps button")[i + 1].click()
            wait_until(lambda want=want: halo_ends(d) == want, 5, "step %d's highlight" % (i + 1))
            d.save_screenshot(os.path.join(artifacts_dir(env.tmp), "webview-job-step%d.png" % (i + 1)))
        # A Bcast tree: its highlight is the output ports of its ALL groups in the switches (the
        # only ALL groups there: default routes use SELECT groups or none).
        client.call("plan_bcast", job=job, comm=1, root=ips[0], members=sorted(ips))
        wait_until(lambda: css(d, "#job-trees button"), 5, "the tree in the job's details")[0].click()
        want = {"%s:%d" % (sw.dpid, port) for sw in fab.net.switches
                for kind, ports in ofdump.groups(sw.name).values() if kind == "all" for port in ports}
        assert len(want) >= N, "the tree reaches every member host"
        wait_until(lambda: halo_ends(d) == want, 5, "the tree's highlight to equal its groups in OVS")
        client.call("release", job=job)
        wait_until(lambda: not css(d, item) and not css(d, "#halos line.halo"), 5, "job %d to disappear" % job)
        assert not d.find_element(By.ID, "job-detail").is_displayed()
        assert job_out_ports(fab, job) == set()
    finally:
        client.close()
    assert console_errors(d) == []


def select_groups(fab):
    return {sw.name: [g for g, (kind, _ports) in ofdump.groups(sw.name).items() if kind == "select"]
            for sw in fab.net.switches}


def test_routing_set_by_sdnmpi_ctl_reaches_the_switches_and_the_page(env):
    d, fab, ctl = env.driver, env.fab, env.ctl
    ctl_cmd = [os.path.join(os.path.dirname(sys.executable), "sdnmpi-ctl"), "--url", ctl.url(""), "routing", "set"]
    token = ["--token-file", str(env.tmp / "operator-token")]
    res = subprocess.run(ctl_cmd + ["ecmp"] + token, capture_output=True, text=True, timeout=60)
    assert (res.returncode, res.stdout, res.stderr) == (0, "default routing: ecmp (was dmodk)\n", "")
    wait_until(lambda: text(d, "routing") == "routing: ecmp", 5, "the page to show the new policy")
    wait_until(lambda: all(select_groups(fab)[leaf] for leaf in fab.topo.leaf_names), 15,
               "SELECT groups on every leaf")
    res = subprocess.run(ctl_cmd + ["dmodk"] + token, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    wait_until(lambda: not any(select_groups(fab).values()), 15, "the ECMP groups to go")
    wait_until(lambda: text(d, "routing") == "routing: dmodk", 5, "the page to show dmodk again")
    bad = subprocess.run(ctl_cmd + ["ecmp", "--token-file", os.devnull], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and bad.stderr.startswith("sdnmpi-ctl: ") and bad.stderr.count("\n") == 1
    assert console_errors(d) == []


def test_page_keeps_working_through_a_controller_restart(env):
    d, old = env.driver, env.ctl
    wait_live_fabric(d)
    old.stop()
    wait_until(lambda: text(d, "status") == "reconnecting", 10, "the page to notice the controller is gone")
    assert fabric_counts(d)[0] == SPINES + LEAVES, "the last picture stays while the controller is away"
    new = controller_proc.start_controller(
        old.ofp_port, old.wsapi_port, routing="dmodk", log_path=str(env.tmp / "ryu-restarted.log"),
        extra_args=("--sdnmpi-rpc-host", "0.0.0.0", "--sdnmpi-rpc-port", str(old.rpc_port)) + env.args)
    env.restarted.append(new)
    wait_live_fabric(d, timeout=90)
    away = console_errors(d)
    assert away, "the page kept polling while the controller was away (each failed poll is logged by Chromium)"
    unexpected = [e for e in away if not ("/sdnmpi/" in e["message"] and "net::ERR_" in e["message"])]
    assert unexpected == [], "only the failed polls while the controller was away may be reported"
    # Polling goes on cleanly afterwards: a later update, and no new errors.
    first = d.find_element(By.ID, "status").get_attribute("title")
    wait_until(lambda: d.find_element(By.ID, "status").get_attribute("title") != first, 5, "another update")
    assert console_errors(d) == []
