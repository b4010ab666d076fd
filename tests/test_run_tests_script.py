"""
Tests of scripts/run_tests.py: its hang report, the one line per rank under the summary table that
says where each rank stood when a test timed out (the tail of a CI log is often all there is),
and the environment of its mpiexec runs. Pure text processing; every process checks the same
thing.
"""

import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SPEC = importlib.util.spec_from_file_location(
    "run_tests_script", os.path.join(ROOT, "scripts", "run_tests.py")
)
run_tests = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = run_tests  # its dataclasses look their module up
_SPEC.loader.exec_module(run_tests)

# pytest-timeout's thread method: every thread, oldest call first, each frame with its source
PYTEST_TIMEOUT_DUMP = """
+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++
~~~~~~~~~~~~~~~~~~~~~~~~~ Stack of heat-node-sums (1405) ~~~~~~~~~~~~~~~~~~~~~~~~~
  File "/usr/lib/python3.11/threading.py", line 1002, in _bootstrap
    self._bootstrap_inner()
  File "/ci/work/main/heat/core/communication/shared_memory.py", line 240, in _run
    summer, offset, values, scale = self._tasks.get()
~~~~~~~~~~~~~~~~~~~~~~~~~~~~ Stack of MainThread (1406) ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  File "/venv/lib/python3.11/site-packages/_pytest/python.py", line 187, in pytest_pyfunc_call
    result = testfunction(**testargs)
  File "/ci/work/main/tests/nn/test_pipeline.py", line 336, in test_stashed
    collective_assert(difference < 1e-10, "parameters differ")
  File "/ci/work/main/tests/helpers.py", line 54, in collective_assert
    all_ok = ht.MPI_WORLD.allreduce(bool(ok), op=ht.MPI.LAND)
  File "/ci/work/main/heat/core/communication/communicator.py", line 340, in allreduce
    return self.handle.allreduce(obj, op=op)
+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++
"""

# faulthandler (SIGUSR1, or heat's report of a process that waits at its end): most recent first
FAULTHANDLER_DUMP = """
Thread 0x00007f41556696c0 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 331 in wait
  File "/usr/lib/python3.11/threading.py", line 1399 in run

Current thread 0x00007f417d9cab80 (most recent call first):
  File "/ci/work/main/heat/nn/pipeline_transport.py", line 170 in receive
  File "/ci/work/main/heat/nn/pipeline.py", line 990 in _run
  File "/ci/work/main/tests/nn/test_pipeline.py", line 330 in test_stashed
  File "/venv/lib/python3.11/site-packages/_pytest/python.py", line 187 in pytest_pyfunc_call
"""

WAITING_AT_THE_END = """
Current thread 0x00007fc34e2a6b80 (most recent call first):
  File "/ci/work/main/heat/core/communication/process.py", line 338 in _wait_for_the_others
  File "/ci/work/main/heat/core/communication/process.py", line 363 in _finish_with_the_others
"""


def site(dump):
    return run_tests.innermost_test_frame(run_tests.own_frames(dump.splitlines()))


def test_pytest_timeout_dump_names_the_test_line_and_the_blocking_call():
    assert site(PYTEST_TIMEOUT_DUMP) == (
        "tests/helpers.py:54 in collective_assert "
        "(all_ok = ht.MPI_WORLD.allreduce(bool(ok), op=ht.MPI.LAND)) -> "
        "heat/core/communication/communicator.py:340 in allreduce"
    )


def test_faulthandler_dump_is_read_most_recent_call_first():
    assert site(FAULTHANDLER_DUMP) == (
        "tests/nn/test_pipeline.py:330 in test_stashed -> heat/nn/pipeline_transport.py:170 in receive"
    )


def test_a_process_outside_the_tests_shows_its_innermost_heat_frame():
    assert site(WAITING_AT_THE_END) == (
        "heat/core/communication/process.py:338 in _wait_for_the_others"
    )
    assert site("nothing dumped here") == "no heat or test frame"


def test_the_summary_lists_every_rank_of_a_stopped_run(capsys):
    result = run_tests.RunResult(procs=2, part="distributed", returncode=1, timed_out=True)
    result.hang_sites = ["rank 0: tests/a.py:1 in test_a", "rank 1: no stack dump"]
    run_tests.print_summary([result])
    lines = capsys.readouterr().out.splitlines()
    where = lines.index("where each rank was when mpiexec -n 2 (distributed) was stopped:")
    assert lines[where + 1 : where + 3] == [f"  {s}" for s in result.hang_sites]
    assert lines[-1] == "0 passed, 1 failed, 0 skipped"


def test_child_environment_heavy_yield_only_for_an_oversubscribed_distributed_part(
    tmp_path, monkeypatch
):
    monkeypatch.delenv(run_tests.HEAVY_YIELD, raising=False)
    monkeypatch.setattr(run_tests, "usable_cpus", lambda: 2)
    distributed = run_tests.child_environment(4, tmp_path, "distributed")
    assert distributed[run_tests.HEAVY_YIELD] == "1"
    assert distributed["OMP_NUM_THREADS"] == "1" and distributed["HEAT_TEST_NPROCS"] == "4"
    assert run_tests.HEAVY_YIELD not in run_tests.child_environment(4, tmp_path, "main")
    assert run_tests.HEAVY_YIELD not in run_tests.child_environment(2, tmp_path, "distributed")
    monkeypatch.setenv(run_tests.HEAVY_YIELD, "0")  # the caller's choice stands
    assert run_tests.child_environment(4, tmp_path, "distributed")[run_tests.HEAVY_YIELD] == "0"
