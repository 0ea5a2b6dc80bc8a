"""The route pass after a topology change counts as done only once every switch confirmed it:
GET /sdnmpi/stats "routes_pending" is what tests and operators wait on after a link fails, instead
of the topology view (which changes before any route does)."""
import types

from sdnmpi.controller import app
from sdnmpi.controller.rpc import ConfirmError
from sdnmpi.primitives import fattree


class Confirmer:
    """Records each batch; raises ConfirmError while ``fail`` is set (a switch that never answers)."""

    def __init__(self, sim):
        self.sim, self.fail, self.batches = sim, False, []

    def confirm(self, msgs):
        self.batches.append(list(msgs))
        if self.fail:
            raise ConfirmError("no barrier reply from switch 0000000000000201 within 5.0 s")
        self.sim.run(msgs)


def _app(sim):
    replans = []
    holder = types.SimpleNamespace(core=sim.core, confirmer=Confirmer(sim),
                                   rpc=types.SimpleNamespace(replan=lambda: replans.append(sim.core.routes_pending())))
    return holder, replans


def _pass(holder):
    return app.SdnMpiApp._update_routes(holder)


def _discovered(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 2, 1))
    sim.connect_all()
    sim.probe_round()
    sim.probe_round()
    sim.advertise_all()
    return sim


def test_routes_are_pending_from_a_link_failure_until_every_switch_confirmed_the_new_pass(make_fabric):
    sim = _discovered(make_fabric)
    holder, replans = _app(sim)
    assert sim.core.stats_json()["routes_pending"] is True       # discovered, not routed yet
    assert _pass(holder) == []
    assert sim.core.stats_json()["routes_pending"] is False
    assert replans == [True]        # the jobs are re-planned before the pass counts as confirmed
    assert holder.confirmer.batches[0] and all(m.datapath.id in sim.switch_ids for m in holder.confirmer.batches[0])

    sim.cut_link(0x201, 0x101)
    assert sim.core.stats_json()["routes_pending"] is True       # the link is gone, routes not yet
    _pass(holder)
    assert sim.core.stats_json()["routes_pending"] is False
    assert len(holder.confirmer.batches) == 2 and holder.confirmer.batches[1]
    for src in sim.hosts():   # and the confirmed routes reach every host, none over the dead link
        for dst in sim.hosts():
            if src != dst:
                outcomes = sim.trace(src, sim.host_ip[dst])
                assert outcomes and all(out == ("host", dst) for out, _hops in outcomes), outcomes


def test_an_unconfirmed_pass_stays_pending_until_a_later_pass_is_confirmed(make_fabric, caplog):
    sim = _discovered(make_fabric)
    holder, replans = _app(sim)
    holder.confirmer.fail = True
    _pass(holder)
    assert sim.core.stats_json()["routes_pending"] is True
    assert replans == [True]                                     # the jobs are re-planned anyway
    assert "not confirmed" in caplog.text
    _pass(holder)                                                # nothing changed: no new pass
    assert len(holder.confirmer.batches) == 1 and sim.core.stats_json()["routes_pending"] is True

    holder.confirmer.fail = False
    sim.cut_link(0x202, 0x102)
    _pass(holder)
    assert sim.core.stats_json()["routes_pending"] is False
    assert sim.core.stats_json()["route_recomputes"] == 2
