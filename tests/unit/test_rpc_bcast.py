"""plan_bcast with several trees (issue 17): one tree per spine, each reaching every member once,
cached, re-planned after a link failure, shrunk, released; the single-tree reply stays as it was."""
import pytest

from rpc_helpers import IPS, call
from test_rpc import bcast_walk, register, service  # noqa: F401 (the fixture)


def walks(service, root, reply):
    return [bcast_walk(service, service.switches, root, t["group"]) for t in reply["trees"]]


def test_two_trees_one_per_spine_each_reaching_every_member_once(service):
    job = register(service)
    members = IPS + IPS[:2]
    r = call(service, "plan_bcast", job=job, comm=0, root=IPS[2], members=members, trees=4)
    assert r["status"] == "ok", r
    assert len(r["trees"]) == 2                                  # two spines: two trees
    assert {t["top"] for t in r["trees"]} == {"%016x" % 0x101, "%016x" % 0x102}
    assert len({(t["group"], t["port"]) for t in r["trees"]}) == 2
    assert (r["group"], r["port"], r["top"]) == tuple(r["trees"][0][k] for k in ("group", "port", "top"))
    assert walks(service, IPS[2], r) == [{ip: 1 for ip in IPS if ip != IPS[2]}] * 2
    again = call(service, "plan_bcast", job=job, comm=0, root=IPS[2], members=members, trees=4)
    assert again["cached"] and again["trees"] == r["trees"]
    assert [t["tree"] for t in service.jobs_json()[0]["trees"]] == [0, 1]
    # Asking for one tree now: the second one's entries go, the first keeps its group.
    one = call(service, "plan_bcast", job=job, comm=0, root=IPS[2], members=members, trees=1)
    assert not one["cached"] and len(one["trees"]) == 1 and one["group"] == r["group"]
    second = r["trees"][1]["group"]
    assert not any(key[2] == second for t in service.switches.tables.values() for key in t if len(key) == 3)
    assert call(service, "release", job=job)["status"] == "ok"
    assert all(not g for g in service.switches.groups.values())


def test_one_tree_by_default_as_before(service):
    job = register(service)
    r = call(service, "plan_bcast", job=job, comm=0, root=IPS[0], members=IPS)
    assert len(r["trees"]) == 1 and r["trees"][0]["group"] == r["group"]


def test_trees_after_a_spine_link_fails(service):
    job = register(service)
    r = call(service, "plan_bcast", job=job, comm=0, root=IPS[0], members=IPS, trees=2)
    leaf = 0x203
    port = next(p for (d, p), end in service.core.topology.links.items() if d == leaf and end.dpid == 0x102)
    service.core.topology.port_down(leaf, port)
    service.replan()
    trees = [t for t in service.jobs_json()[0]["trees"]]
    assert len(trees) == 1 and trees[0]["top"] == "%016x" % 0x101   # only spine 1 reaches every leaf
    assert bcast_walk(service, service.switches, IPS[0], r["trees"][0]["group"]) == {ip: 1 for ip in IPS[1:]}
    assert bcast_walk(service, service.switches, IPS[0], r["trees"][1]["group"]) == {}


@pytest.mark.parametrize("trees", [0, 9, "2", 1.5, True])
def test_trees_must_be_a_small_integer(service, trees):
    job = register(service)
    r = call(service, "plan_bcast", job=job, comm=0, root=IPS[0], members=IPS, trees=trees)
    assert r["status"] == "error" and "trees must be" in r["error"], r
