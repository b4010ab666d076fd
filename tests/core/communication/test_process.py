"""
Tests of process.py: per-process setup at import.

Run under 1-4 MPI processes: ``python scripts/run_tests.py --procs 1,3 tests/core/communication``.
Every test computes its outcome on each rank and asserts it on all ranks (``agree``).
"""

import os
import re
import subprocess
import sys
import time

import pytest
import torch
from mpi4py import MPI

from heat.core import communication as hc
from tests.helpers import fresh_job_environment
from tests.core.communication.comm_helpers import (
    SIZE,
    agree,
)


def test_setup_effects():
    ok = os.environ.get("THP_MEM_ALLOC_ENABLE") is not None
    # the hook may since have been wrapped by others (pytest plugins, torch.distributed)
    hooked = hc.process._ABORT_HOOK_INSTALLED
    wanted = SIZE > 1 and os.environ.get("HEAT_ABORT_ON_EXCEPTION", "1") != "0"
    ok = ok and bool(hooked) == wanted
    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    local = node.Get_size()
    node.Free()
    if not os.environ.get("OMP_NUM_THREADS") and not os.environ.get("MKL_NUM_THREADS"):
        ok = ok and torch.get_num_threads() <= max(1, (os.cpu_count() or 1) // local)
    before = sys.excepthook
    hc.process._setup_process()  # idempotent: no second hook
    ok = ok and sys.excepthook is before
    agree(ok, (torch.get_num_threads(), hooked))


ABORT_SCRIPT = """
import sys, time
from heat.core import communication as module
comm = module.MPI_WORLD
flags = comm.allgather(getattr(sys.excepthook, "_heat_abort_hook", False))
if comm.rank == 0:
    print("hooked", flags, flush=True)
if comm.rank == 1:
    time.sleep(0.5)
    sys.stderr.write("raising at %.3f\\n" % time.time())
    sys.stderr.flush()
    raise RuntimeError("boom on rank 1")
comm.Barrier()  # never matched: only the abort ends this process
"""


@pytest.mark.skipif(SIZE > 1, reason="starts its own 2-process job; runs in the 1-process suite")
def test_uncaught_exception_aborts_job():
    script = ABORT_SCRIPT
    try:
        done = subprocess.run(
            ["mpiexec", "-n", "2", sys.executable, "-c", script],
            env=fresh_job_environment(),
            capture_output=True,
            text=True,
            timeout=50,
        )
    except subprocess.TimeoutExpired as error:  # pragma: no cover - the failure this test guards
        pytest.fail(f"the job did not end after an uncaught exception: {error}")
    ended = time.time()
    assert done.returncode != 0, done
    raised = re.search(r"raising at ([0-9.]+)", done.stderr)
    assert raised, done.stderr
    # measured from the exception, so a slow start of the job on a busy machine does not count
    assert ended - float(raised.group(1)) < 20, (ended, raised.group(1))
    assert "[rank 1/2]" in done.stderr and "boom on rank 1" in done.stderr, done.stderr
    assert "hooked [True, True]" in done.stdout, done.stdout


def test_abort_hook_switch(monkeypatch):
    monkeypatch.delenv("HEAT_ABORT_ON_EXCEPTION", raising=False)
    default = (hc.process._wants_abort_hook(1), hc.process._wants_abort_hook(2))
    monkeypatch.setenv("HEAT_ABORT_ON_EXCEPTION", "0")
    disabled = hc.process._wants_abort_hook(4)
    monkeypatch.setenv("HEAT_ABORT_ON_EXCEPTION", "1")
    enabled = hc.process._wants_abort_hook(4)
    hook = hc.process._abort_on_exception_hook(sys.__excepthook__)
    agree(default == (False, True) and not disabled and enabled and hook._heat_abort_hook)
