"""``python -m heat info`` (or ``python -m heat -i``): the ``heat`` command, see :mod:`heat.cli`."""

import sys

from heat.cli import main

if __name__ == "__main__":
    sys.exit(main())
