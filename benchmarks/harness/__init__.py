"""
The benchmark harness behind ``benchmarks/run.py``.

- :mod:`stats`: the arithmetic of the method and the report (median, efficiency, ratios,
  fractions of the machine's limits), pure functions without MPI;
- :mod:`libs`: the library adapters (heat, HeAT 1.8, NumPy / scikit-learn, torch, Dask);
- :mod:`cases`: the registry of named cases, grouped in suites;
- :mod:`worker`: the measuring process, run under ``mpiexec`` (or alone, for Dask);
- :mod:`runner`: starts the workers at every process count, runs the external scripts and
  measures the machine's limits;
- :mod:`report`: the Markdown report and the PNG scaling plots.

The package imports neither heat nor torch at import time, so that a worker can run under the
HeAT 1.8 interpreter and import that release's heat instead of this repository's.
"""
