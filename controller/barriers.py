"""Sends OpenFlow messages and waits until every switch involved has confirmed them: a barrier
request after the messages, and its reply, with no OpenFlow error for any of them in between."""
import logging

from ryu.lib import hub

from . import ofmsgs
from .rpc import ConfirmError

LOG = logging.getLogger(__name__)


class Confirmer:
    def __init__(self, timeout):
        self.timeout = timeout
        self._barriers = {}   # (dpid, xid) -> hub.Event
        self._watched = {}    # (dpid, xid) -> list collecting errors of this batch

    def confirm(self, msgs):
        """Sends ``msgs`` and returns once each switch answered its barrier; raises ConfirmError."""
        by_dp = {}
        for msg in msgs:
            by_dp.setdefault(msg.datapath.id, (msg.datapath, []))[1].append(msg)
        errors, waits, keys = [], [], []
        try:
            for dpid, (dp, batch) in sorted(by_dp.items()):
                for msg in batch:
                    dp.set_xid(msg)
                    keys.append((dpid, msg.xid))
                    self._watched[(dpid, msg.xid)] = errors
                    if not dp.send_msg(msg):
                        raise ConfirmError("switch %016x is disconnected" % dpid)
                barrier = ofmsgs.barrier(dp)
                dp.set_xid(barrier)
                event = hub.Event()
                self._barriers[(dpid, barrier.xid)] = event
                keys.append((dpid, barrier.xid))
                waits.append((dpid, event))
                if not dp.send_msg(barrier):
                    raise ConfirmError("switch %016x is disconnected" % dpid)
            for dpid, event in waits:
                if not event.wait(timeout=self.timeout):
                    raise ConfirmError("no barrier reply from switch %016x within %.1f s" % (dpid, self.timeout))
            if errors:
                raise ConfirmError("; ".join(errors))
        finally:
            for key in keys:
                self._barriers.pop(key, None)
                self._watched.pop(key, None)

    def barrier_reply(self, dpid, xid):
        event = self._barriers.get((dpid, xid))
        if event is not None:
            event.set()

    def error(self, dpid, xid, err_type, code):
        """An OpenFlow error; True if it belonged to a batch being confirmed."""
        errors = self._watched.get((dpid, xid))
        if errors is None:
            return False
        errors.append("switch %016x rejected a message (type %d code %d)" % (dpid, err_type, code))
        return True
