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
from tests.core.communication.comm_helpers import (
    SIZE,
    agree,
)
from tests.helpers import fresh_job_environment


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
    ok = ok and bool(getattr(sys.exit, "_heat_exit", False)) == wanted
    before = sys.excepthook, sys.exit
    hc.process._setup_process()  # idempotent: no second hook
    ok = ok and (sys.excepthook, sys.exit) == before
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


@pytest.mark.slow
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


# ---------------------------------------------------------------------------------------------
# threads per process (issue 18, item 24)
# ---------------------------------------------------------------------------------------------
def test_choose_threads():
    choose = hc.process.choose_threads
    defaults = {1, 8, 16}
    node = "processes on this node"
    left, before = "is set: left to it", "before heat was imported: left as set"
    cases = [
        # cores / local processes, at least 1
        (({}, 16, defaults, 16, 4), (4, f"heat: 16 CPUs / 4 {node}")),
        (({}, 1, defaults, 16, 1), (16, "heat: 16 CPUs / 1 process on this node")),
        (({}, 16, defaults, 2, 4), (1, f"heat: 2 CPUs / 4 {node}")),
        # the user's choice stays
        (({"OMP_NUM_THREADS": "2"}, 2, defaults, 16, 4), (None, f"OMP_NUM_THREADS=2 {left}")),
        (({"MKL_NUM_THREADS": " 3 "}, 3, defaults, 16, 4), (None, f"MKL_NUM_THREADS=3 {left}")),
        (({}, 5, defaults, 16, 4), (None, f"torch.set_num_threads(5) {before}")),
        # an empty variable is no choice
        (({"OMP_NUM_THREADS": ""}, 16, defaults, 16, 2), (8, f"heat: 16 CPUs / 2 {node}")),
    ]
    wrong = [(args, choose(*args), want) for args, want in cases if choose(*args) != want]
    agree(not wrong, wrong)


def test_threads_on_a_node_with_hyperthreads(monkeypatch):
    # torch's default on a node with 2 hardware threads per core is the number of physical
    # cores, which is neither 1 nor the CPU count: it was left as it was, and 4 processes ran
    # 8 threads each on 16 CPUs (the oversubscription of issue 18, item 24)
    process = hc.process
    calls = []
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    monkeypatch.setattr(process.torch, "get_num_threads", lambda: 8 if not calls else calls[-1])
    monkeypatch.setattr(process.torch, "set_num_threads", calls.append)
    monkeypatch.setattr(process.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(process, "_usable_cpus", lambda: list(range(16)))
    monkeypatch.setattr(process, "_physical_cores", lambda cpus: len(cpus) // 2)
    monkeypatch.setattr(process, "_local_process_count", lambda: 4)
    monkeypatch.setattr(process, "THREAD_CHOICE", {"threads": None, "reason": ""})
    process._configure_threads()
    agree(calls == [4], calls)
    wanted = {"threads": 4, "reason": "heat: 16 CPUs / 4 processes on this node"}
    agree(process.THREAD_CHOICE == wanted, process.THREAD_CHOICE)
    # with OMP_NUM_THREADS set, nothing is changed and no process count is needed
    calls.clear()
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    monkeypatch.setattr(process, "_local_process_count", lambda: pytest.fail("counted processes"))
    process._configure_threads()
    agree(
        calls == [] and process.THREAD_CHOICE["reason"] == "OMP_NUM_THREADS=8 is set: left to it",
        (calls, process.THREAD_CHOICE),
    )


def test_physical_cores_and_usable_cpus():
    cpus = hc.process._usable_cpus()
    cores = hc.process._physical_cores(cpus)
    ok = cpus and set(cpus) <= set(range(os.cpu_count() or 1)) and 1 <= cores <= len(cpus)
    agree(ok, (cpus, cores))


THREADS_SCRIPT = """
import torch
{before}
import heat
from heat.core.communication.process import THREAD_CHOICE
# one writer: lines of several ranks interleave in mpiexec's forwarded output
mine = (heat.MPI_WORLD.rank, torch.get_num_threads(), THREAD_CHOICE["reason"])
everyone = heat.MPI_WORLD.gather(mine)
if heat.MPI_WORLD.rank == 0:
    for line in everyone:
        print("threads %d %d %s" % line, flush=True)
"""


@pytest.mark.skipif(SIZE > 1, reason="starts its own jobs; runs in the 1-process suite")
@pytest.mark.parametrize(
    "processes, before, environment, expected",
    [
        (2, "", {}, "heat: {cpus} CPUs / 2 processes on this node"),
        (1, "", {}, "heat: {cpus} CPUs / 1 process on this node"),
        (2, "", {"OMP_NUM_THREADS": "3"}, "OMP_NUM_THREADS=3 is set: left to it"),
        (
            2,
            "torch.set_num_threads(7)",
            {},
            "torch.set_num_threads(7) before heat was imported: left as set",
        ),
    ],
)
@pytest.mark.slow
def test_threads_at_import(processes, before, environment, expected):
    cpus = len(hc.process._usable_cpus())
    env = fresh_job_environment(**environment)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if variable not in environment:
            env.pop(variable, None)
    done = subprocess.run(
        [
            "mpiexec",
            "-n",
            str(processes),
            sys.executable,
            "-c",
            THREADS_SCRIPT.format(before=before),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    lines = sorted(
        line.split(" ", 3)[1:] for line in done.stdout.splitlines() if line.startswith("threads")
    )
    assert [(rank, reason) for rank, _, reason in lines] == [
        (str(r), expected.format(cpus=cpus)) for r in range(processes)
    ], done.stdout
    if not environment:  # with OMP_NUM_THREADS, torch (and MKL) decide the count themselves
        want = max(1, cpus // processes) if not before else 7
        assert all(count == str(want) for _, count, _ in lines), done.stdout


def test_abort_hook_switch(monkeypatch):
    monkeypatch.delenv("HEAT_ABORT_ON_EXCEPTION", raising=False)
    default = (hc.process._wants_abort_hook(1), hc.process._wants_abort_hook(2))
    monkeypatch.setenv("HEAT_ABORT_ON_EXCEPTION", "0")
    disabled = hc.process._wants_abort_hook(4)
    monkeypatch.setenv("HEAT_ABORT_ON_EXCEPTION", "1")
    enabled = hc.process._wants_abort_hook(4)
    hook = hc.process._abort_on_exception_hook(sys.__excepthook__)
    agree(default == (False, True) and not disabled and enabled and hook._heat_abort_hook)


def test_caught_system_exit_is_not_the_exit_status():
    # a SystemExit that a test (or a program) catches must not count at exit: only one that
    # ends the program aborts the job when it is non-zero
    noted = []
    recording = hc.process._recording_exit(sys.exit)
    previous = hc.process._LAST_EXIT
    try:
        with pytest.raises(SystemExit):
            recording(3)
        noted.append(hc.process._LAST_EXIT)
        try:
            recording("a message")
        except SystemExit:
            pass
        noted.append(hc.process._LAST_EXIT)
        status = hc.process._exit_status()
    finally:
        hc.process._LAST_EXIT = previous
    ok = [e.code for e in noted] == [3, "a message"] and status == 0
    ok = ok and not any(hc.process._ended_the_program(e) for e in noted)
    agree(ok, ([e.code for e in noted], status))


# Each job starts 3 processes: 3 makes rank 1 neither the first nor the last. The scenarios run
# as concurrent jobs: each takes 5-20 s on a loaded 2-core machine, mostly starting up.
EXIT_SCRIPT = """
import os, sys, time
import heat as ht
comm = ht.MPI_WORLD
mode = sys.argv[1]
if mode == "one-nonzero":  # rank 1 exits with 3 while the others wait for it in a barrier
    if comm.rank == 1:
        time.sleep(0.5)
        sys.stderr.write("exiting at %.3f\\n" % time.time())
        sys.stderr.flush()
        sys.exit(3)
    comm.handle.Barrier()  # never matched: only the abort ends these processes
elif mode == "all-nonzero":  # every process fails alike (a bad argument): no abort, status 2
    try:
        sys.exit(5)  # caught: does not count
    except SystemExit:
        pass
    comm.handle.Barrier()
    exit(2)
elif mode == "one-zero":  # rank 1 ends first; the others still communicate for a while
    others = comm.handle.Split(0 if comm.rank != 1 else ht.MPI.UNDEFINED)
    if comm.rank == 1:
        sys.exit(0)
    for _ in range(4):
        others.Barrier()
        time.sleep(1)
    # one write of the whole line: print's separate writes of text and newline may interleave
    # with another process's in the launcher's output
    os.write(1, b"rank %d ended\\n" % comm.rank)
"""


def _exit_jobs(folder):
    script = os.path.join(folder, "exit_job.py")
    with open(script, "w") as f:
        f.write(EXIT_SCRIPT)
    env = fresh_job_environment(HEAT_EXIT_REPORT_SECONDS="1")
    jobs = {
        mode: subprocess.Popen(
            ["mpiexec", "-n", "3", sys.executable, script, mode],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for mode in ("one-nonzero", "all-nonzero", "one-zero")
    }
    results, deadline = {}, time.monotonic() + 80
    for mode, job in jobs.items():
        try:
            out, err = job.communicate(timeout=max(1.0, deadline - time.monotonic()))
            results[mode] = (job.returncode, out, err, time.time())
        except subprocess.TimeoutExpired:
            job.terminate()  # mpiexec then ends the job's processes
            try:
                out, err = job.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                job.kill()
                out, err = job.communicate()
            results[mode] = (None, out, err, time.time())
    return results


@pytest.mark.slow
@pytest.mark.timeout(110)
@pytest.mark.skipif(SIZE > 1, reason="starts its own 3-process jobs; runs in the 1-process suite")
def test_exit_on_one_process_ends_or_reports(tmp_path):
    results = _exit_jobs(str(tmp_path))

    # sys.exit(3) on rank 1: the job ends within seconds with status 3, naming rank 1
    status, out, err, ended = results["one-nonzero"]
    assert status is not None, f"the job hung after sys.exit(3) on one process:\n{err}"
    assert status == 3, (status, out, err)
    exited = re.search(r"exiting at ([0-9.]+)", err)
    assert exited, err
    assert ended - float(exited.group(1)) < 20, (ended, exited.group(1))
    assert "[rank 1/3] exited with status 3" in err and "aborting the MPI job" in err, err

    # every process exits with 2: the job ends with 2, nobody aborts, a caught exit is ignored
    status, out, err, _ = results["all-nonzero"]
    assert status == 2, (status, out, err)
    assert "aborting" not in err, err

    # sys.exit(0) on rank 1 while the others go on: reported after 1 s, and the job ends well
    status, out, err, _ = results["one-zero"]
    assert status == 0, (status, out, err)
    assert "rank 0 ended" in out and "rank 2 ended" in out, out
    report = "[rank 1/3] this process reached its end"
    assert report in err and "but process 0 has not ended yet" in err, err
