"""``python -m sdnmpi.ctl`` runs sdnmpi-ctl."""
import sys

from .cli import main

sys.exit(main())
