"""The web view's JSON (controller/views.py through controller/web.py's real handlers) and its
static files; the page itself is tested in a browser (tests/integration/test_webview_mininet.py)."""
import json
import re
import urllib.error
import urllib.request

import pytest

from operator_harness import OPERATOR_TOKEN, Operated, Served
from sdnmpi.controller import web
from sdnmpi.primitives import fattree


def get(url):
    with urllib.request.urlopen(url, timeout=5) as resp:
        return resp.status, resp.headers["Content-Type"], resp.read()


@pytest.fixture(scope="module")
def kary():
    op = Operated.with_job(fattree.kary(4), link_capacity=20e6)
    served = Served(op)
    op.url = served.url
    yield op
    served.close()


def test_view_has_the_fabric_in_tiers_with_every_link_once(kary):
    view = json.loads(get(kary.url + "/sdnmpi/view")[2])
    tiers = {s["dpid"]: s["tier"] for s in view["switches"]}
    assert sorted(tiers.values()) == [0] * 8 + [1] * 8 + [2] * 4
    assert all(tiers["%016x" % d] == 2 for d in range(0x301, 0x305))
    kinds = [l["kind"] for l in view["links"]]
    assert (kinds.count("fabric"), kinds.count("host"), len(view["hosts"])) == (32, 16, 16)
    assert len({l["id"] for l in view["links"]}) == 48
    assert view["routing"] == "dmodk" and view["counters"]["rpc"]["jobs_registered"] == 1
    assert view["jobs"] == [{"job": kary.job, "hosts": kary.ips, "ranks": {ip: [r] for r, ip in enumerate(kary.ips)},
                             "comms": [0], "trees": 1, "flows": len(kary.rpc.jobs.jobs[kary.job].flows())}]


def test_job_steps_are_paths_along_the_links_and_cover_the_jobs_flows(kary):
    detail = json.loads(get(kary.url + "/sdnmpi/jobs/%d" % kary.job)[2])
    topo, job = kary.core.topology, kary.rpc.jobs.jobs[kary.job]
    seen = set()
    steps = detail["comms"]["0"]["steps"]
    assert len(steps) == 4
    for step in steps:
        for pair in step:
            hops = [(int(h["dpid"], 16), h["port"]) for h in pair["hops"]]
            src, dst = topo.host_by_ip(pair["src"]), topo.host_by_ip(pair["dst"])
            if src.dpid == dst.dpid:
                assert hops == [], "pairs on one leaf use the default route"
                continue
            assert hops[0][0] == src.dpid and hops[-1] == (dst.dpid, dst.port)
            for (here, port), (there, _port) in zip(hops, hops[1:]):
                assert topo.links[(here, port)].dpid == there
            seen.update((d, pair["src"], pair["dst"], p) for d, p in hops)
    assert seen == {(d, s, t, p) for (d, s, t), p in job.flows().items()}
    tree, = detail["trees"]
    assert tree["comm"] == 1 and tree["root"] == kary.ips[3] and len(tree["switches"]) >= 3


def test_unknown_job_is_a_json_404(kary):
    with pytest.raises(urllib.error.HTTPError) as err:
        get(kary.url + "/sdnmpi/jobs/77")
    assert err.value.code == 404 and json.loads(err.value.read()) == {"error": "unknown job 77"}


def test_page_and_assets_come_from_the_controller_only(kary):
    status, ctype, body = get(kary.url + "/")
    html = body.decode()
    assert status == 200 and ctype.startswith("text/html")
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert refs and all(r.startswith("/web/") or r.startswith("data:") for r in refs), refs
    for ref in refs:
        if ref.startswith("/web/"):
            status, ctype, body = get(kary.url + ref)
            assert status == 200 and body
            assert ctype.split(";")[0] == {"js": "application/javascript", "css": "text/css"}[ref.rsplit(".", 1)[1]]
            body = body.replace(b'"http://www.w3.org/2000/svg"', b"")   # a namespace name, not a URL to load
            assert b"http://" not in body and b"https://" not in body, "%s loads nothing from elsewhere" % ref


@pytest.mark.parametrize("path", ["/web/missing.js", "/web/..%2Fweb.py", "/web/.hidden.js", "/web/web.py", "/web/"])
def test_nothing_else_is_served_from_the_package(kary, path):
    with pytest.raises(urllib.error.HTTPError) as err:
        get(kary.url + path)
    assert err.value.code == 404


def test_every_asset_is_packaged():
    """setup.py's package_data globs cover each file of the web directory."""
    import fnmatch  # pylint: disable=import-outside-toplevel
    import os  # pylint: disable=import-outside-toplevel
    setup_py = open(os.path.join(os.path.dirname(web.__file__), "..", "setup.py")).read()
    globs = re.search(r'"sdnmpi\.controller": \[([^\]]*)\]', setup_py.split("package_data", 1)[1]).group(1)
    patterns = re.findall(r'"([^"]+)"', globs)
    for name in os.listdir(web.STATIC_DIR):
        assert any(fnmatch.fnmatch("web/" + name, p) for p in patterns), name


def test_view_carries_the_selected_jobs_detail_or_none_once_it_is_gone(kary):
    with_job = json.loads(get(kary.url + "/sdnmpi/view?job=%d" % kary.job)[2])
    detail = json.loads(get(kary.url + "/sdnmpi/jobs/%d" % kary.job)[2])
    assert with_job["job"] == detail
    for query in ("", "?job=4242", "?job=abc"):
        assert json.loads(get(kary.url + "/sdnmpi/view" + query)[2])["job"] is None


def test_routing_over_rest_is_read_by_anyone_and_set_by_the_operator_only():
    op = Operated()
    served = Served(op)
    url = served.url + "/sdnmpi/routing"

    def put(body, token=OPERATOR_TOKEN):
        headers = {"Authorization": "Bearer " + token} if token else {}
        req = urllib.request.Request(url, data=body, method="PUT", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    try:
        assert json.loads(get(url)[2]) == {"routing": "dmodk", "policies": ["dmodk", "ecmp", "single"]}
        assert put(b'{"routing": "ecmp"}', token=None)[0] == 401
        assert put(b'{"routing": "ecmp"}', token="x" * 20)[0] == 401
        assert put(b'{"routing": "nope"}') == (400, {"error": "unknown routing policy 'nope' (choose from dmodk, ecmp, single)"})
        for bad in (b"not json", b'{"policy": "ecmp"}', b'{"routing": 3}', b"[]", b"\xff"):
            assert put(bad)[0] == 400, bad
        assert put(b"{" + b" " * 5000 + b"}")[0] == 413
        assert op.core.routing == "dmodk" and not op.core.routes_dirty
        assert put(b'{"routing": "ecmp"}') == (200, {"routing": "ecmp", "previous": "dmodk", "changed": True})
        assert json.loads(get(served.url + "/sdnmpi/stats")[2])["routing"] == "ecmp"
        assert json.loads(get(served.url + "/sdnmpi/view")[2])["routing"] == "ecmp"
    finally:
        served.close()
    # The next route pass moves every switch to the new policy's routes, in place.
    op.fab.recompute()
    op.fab.check_tables_consistent()
    for src in op.fab.hosts():
        for dst in op.fab.hosts():
            if src != dst:
                outcomes = {outcome for outcome, _hops in op.fab.trace(src, op.fab.host_ip[dst])}
                assert outcomes == {("host", dst)}
