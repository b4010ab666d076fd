#!/usr/bin/env python3
"""
heat's benchmarks in one command: named cases at several process counts, against NumPy /
scikit-learn, torch, HeAT 1.8 and Dask, written as JSON, a Markdown report and PNG plots.

Usage::

    python benchmarks/run.py --procs 1,2 --suite core|algorithms|io|linalg|training|all \\
        [--anchor-python /tmp/heat-anchor/bin/python] [--dask] [--cases NAME,...] \\
        [--size small|default] [--out DIR] [--repeats 5]

    python benchmarks/run.py --suite all --list      # the cases

See ``benchmarks/harness/`` for the method (harness/worker.py) and the report (harness/report.py).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.runner import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
