"""The web view's page in headless Chromium against the real handlers on a simulated fabric (no
Mininet): a 3-tier fat-tree drawn in its tiers, a job's per-step and tree highlights equal to its
plan, and odd topologies (a host without an IP address on a spine, a switch with no links)
drawn without a console error. tests/integration/test_webview_mininet.py tests the page on OVS."""
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from browser import chromium, console_errors, halo_ends
from operator_harness import Operated, Served
from sdnmpi.primitives import fattree

SPINE = 0x301


@pytest.fixture(scope="module")
def page():
    op = Operated.with_job(fattree.kary(4), link_capacity=10e6)
    served = Served(op)
    with chromium() as driver:
        driver.get(served.url + "/")
        op.driver = driver
        yield op
    served.close()


def wait(driver, predicate, what, timeout=10):
    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda _d: predicate(), "timed out: " + what)


def css(driver, selector):
    return driver.find_elements(By.CSS_SELECTOR, selector)


def test_three_tiers_and_every_link(page):
    d = page.driver
    wait(d, lambda: len(css(d, "#fabric g.switch")) == 20, "20 switches")
    tiers = [g.get_attribute("class") for g in css(d, "#fabric g.switch")]
    assert sorted(tiers) == ["switch tier0"] * 8 + ["switch tier1"] * 8 + ["switch tier2"] * 4
    assert len(css(d, '#fabric line.link[data-kind="fabric"]')) == 32
    assert len(css(d, "#fabric g.host")) == 16
    ys = {g.get_attribute("class"): float(g.get_attribute("transform").split(",")[1].rstrip(")"))
          for g in css(d, "#fabric g.switch")}
    assert ys["switch tier2"] < ys["switch tier1"] < ys["switch tier0"], "cores on top, edges at the bottom"
    assert console_errors(d) == []


def test_step_and_tree_highlights_follow_the_plan(page):
    d, op = page.driver, page
    wait(d, lambda: css(d, '#jobs li[data-job="%d"]' % op.job), "the job")[0].click()
    job = op.rpc.jobs.jobs[op.job]
    wait(d, lambda: halo_ends(d) == {"%016x:%d" % (dp, port) for (dp, _s, _t), port in job.flows().items()}
         | {"%016x:%d" % (dp, p) for t in job.trees.values() for dp, ports in t.out_ports.items() for p in ports},
         "all of the job's routes and its tree")
    for i, step in enumerate(job.plans[0].steps):
        pairs = {pair for pair, _count in step}
        want = {"%016x:%d" % (dp, port) for (dp, s, t), port in job.flows().items() if (s, t) in pairs}
        css(d, "#job-steps button")[i + 1].click()
        wait(d, lambda want=want: halo_ends(d) == want, "step %d" % (i + 1))
    tree, = job.trees.values()
    css(d, "#job-trees button")[0].click()
    wait(d, lambda: halo_ends(d) == {"%016x:%d" % (dp, p) for dp, ports in tree.out_ports.items() for p in ports}, "the tree")
    assert "tree %s:%d" % (tree.group_ip, tree.udp_port) in d.find_element(By.ID, "job-mode").text
    assert console_errors(d) == []


def test_odd_topologies_draw_without_errors(page):
    d, op = page.driver, page
    topo = op.core.topology
    topo.add_switch(0x999, {1: "0a:00:00:00:09:01"})                       # a switch with no links
    topo.learn_host("02:00:00:00:00:aa", None, SPINE, 9, "arp", op.now)    # IP-less host on a core's port
    topo.switches[SPINE][9] = "0a:00:00:00:03:09"
    topo.learn_host("02:00:00:00:00:aa", None, SPINE, 9, "arp", op.now)
    assert "02:00:00:00:00:aa" in topo.hosts
    wait(d, lambda: len(css(d, "#fabric g.switch")) == 21, "the new switch")
    assert d.find_element(By.ID, "status").text == "live"
    assert console_errors(d) == []
