"""sdnmpi-ctl: the operator's command-line client over the controller's REST API (ctl/cli.py)."""
import logging

LOG = logging.getLogger(__name__)
