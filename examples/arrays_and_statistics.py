"""
Distributed arrays and statistics, checked against NumPy.

    mpiexec -n 2 python examples/arrays_and_statistics.py          # or without mpiexec
    mpiexec -n 2 python examples/arrays_and_statistics.py --small  # CI size (also an env
                                                                    # variable: see --help)

Every process runs this same script. A heat array (``ht.DNDarray``) is split along one axis:
each process holds a block of rows (``split=0``) or columns (``split=1``) as a torch tensor, and
operations that need the whole array (sums, sorting, percentiles) communicate behind the scenes.
Rank 0 gathers the results and compares them with NumPy on the same data.
"""

import argparse
import os

import numpy as np

import heat as ht

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--small", action="store_true", help="CI sizes (also HEAT_EXAMPLES_SMALL=1)")
args = parser.parse_args()
small = args.small or os.environ.get("HEAT_EXAMPLES_SMALL") == "1"
rows, columns = (1_001, 7) if small else (200_003, 16)

comm = ht.MPI_WORLD  # all processes of the job
say = print if comm.rank == 0 else (lambda *a, **k: None)  # only rank 0 talks

# -- creating split arrays -------------------------------------------------------------------
# ht.random is seeded once and gives the same global array on any number of processes.
ht.random.seed(42)
x = ht.random.randn(rows, columns, dtype=ht.float64, split=0)  # rows spread over the processes
say(f"x: global shape {x.shape}, split along axis {x.split}, {comm.size} process(es)")
# each process sees only its block: x.lshape is its shape, x.larray the torch tensor
print(f"  rank {comm.rank} holds rows of shape {tuple(x.lshape)}", flush=True)

# A copy of x split along the columns instead (one all-to-all). Both give the same answers.
x_by_columns = ht.resplit(x, axis=1)

# -- arithmetic: elementwise, no communication ------------------------------------------------
y = 3 * x**2 - 2 * x + 1
z = ht.exp(-ht.abs(x)) + ht.sqrt(ht.abs(x_by_columns))  # operands of different splits also work

# -- reductions: local partial results, then one all-reduce ----------------------------------
results = {
    "sum of y": y.sum(),
    "mean per column": ht.mean(x, axis=0),
    "std per column": ht.std(x, axis=0),
    "max per row": ht.max(x_by_columns, axis=1),
    "argmin per column": ht.argmin(x, axis=0),
    "sum of z": z.sum(),
    # -- sorting and order statistics: data moves between processes --------------------------
    "column 0 sorted": ht.sort(x[:, 0]),
    "median per column": ht.median(x, axis=0),
    "percentiles 5/50/95 per column": ht.percentile(x, [5, 50, 95], axis=0),
}

# -- the same with NumPy ------------------------------------------------------------------------
# .numpy() gathers a whole array on every process: fine for checking a small example, avoid it
# for data that only fits in memory when distributed.
xn = x.numpy()
gathered = {name: value.numpy() for name, value in results.items()}  # every process gathers
yn = 3 * xn**2 - 2 * xn + 1
expected = {
    "sum of y": yn.sum(),
    "mean per column": xn.mean(axis=0),
    "std per column": xn.std(axis=0),
    "max per row": xn.max(axis=1),
    "argmin per column": xn.argmin(axis=0),
    "sum of z": (np.exp(-np.abs(xn)) + np.sqrt(np.abs(xn))).sum(),
    "column 0 sorted": np.sort(xn[:, 0]),
    "median per column": np.median(xn, axis=0),
    "percentiles 5/50/95 per column": np.percentile(xn, [5, 50, 95], axis=0),
}
if comm.rank == 0:
    mismatches = []
    for name, value in gathered.items():
        same = np.allclose(value, expected[name], rtol=1e-10, atol=1e-10)
        shown = np.asarray(value).ravel()[:3].round(4)
        print(f"  {name:<32} {'ok' if same else 'DIFFERS'}  first values {shown}")
        if not same:
            mismatches.append(name)
    if mismatches:
        raise SystemExit(f"results differ from NumPy: {mismatches}")
    print(f"all {len(gathered)} results match NumPy")
