"""sdnmpi.controller: the Ryu application. Launch: ``ryu-manager [ryu flags] sdnmpi.controller``.

Ryu loads the RyuApp subclass *defined in* the module it is given, hence the one-line class here;
the code is in app.py (Ryu glue) and core.py (logic).
"""
import logging

from .app import SdnMpiApp

LOG = logging.getLogger(__name__)


class SdnMpiController(SdnMpiApp):
    """The sdnmpi controller application (see controller/app.py)."""
