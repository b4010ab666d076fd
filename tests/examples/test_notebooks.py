"""
The notebooks of examples/notebooks run as a user runs them: nbclient executes every cell in a
fresh Python kernel of this interpreter, and the notebook itself starts an ipyparallel cluster of
2 MPI engines (``mpiexec -n 2``) and stops it in its last cell. Like the example scripts, this
starts its own MPI job, so it runs only in the 1-process run of the suite.

Never a hang, never a stray engine:

- every cell has ``CELL_SECONDS`` (the cluster start is one cell, and waits for the engines at most
  60 s itself), the kernel ``KERNEL_START_SECONDS`` to start;
- a watchdog kills everything the notebook started after ``NOTEBOOK_SECONDS``, inside
  pytest-timeout's 120 s, so a stuck run fails with a message instead of ending the test process;
- every process the notebook starts (kernel, controller, mpiexec, engines) inherits a tag in its
  environment; whatever still carries it ``EXIT_GRACE_SECONDS`` after the run is killed, and the
  test fails if the notebook left anything running.
"""

import json
import os
import signal
import sys
import threading
import time
import uuid

import pytest

import heat as ht
from tests.examples.test_examples import MPIEXEC, ROOT, clean_environment

# starts its own jobs or interpreters: pytest -m "not slow" skips the module
pytestmark = pytest.mark.slow

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipyparallel")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = os.path.join(ROOT, "examples", "notebooks")
KERNEL_NAME = "heat-notebook-test"
CELL_SECONDS = 60
KERNEL_START_SECONDS = 60
NOTEBOOK_SECONDS = 90  # a killed kernel takes nbclient up to ~15 s to notice
EXIT_GRACE_SECONDS = 10  # stopped engines' helper processes (nannies) take a moment to exit
TAG_VARIABLE = "HEAT_NOTEBOOK_TEST_TAG"


def tagged_processes(tag):
    """PIDs of the processes whose environment carries ``TAG_VARIABLE=tag`` (read from /proc)."""
    marker = f"{TAG_VARIABLE}={tag}".encode()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if marker in environ.read().split(b"\0"):
                    pids.append(int(entry))
        except OSError:  # gone meanwhile, or not ours
            continue
    return pids


def kill_tagged(tag):
    """SIGKILL every process of this run; returns the command lines of those still running."""
    killed = []
    for pid in tagged_processes(tag):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                command = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
            os.kill(pid, signal.SIGKILL)
            killed.append(f"{pid}: {command}")
        except (OSError, ProcessLookupError):
            pass
    return killed


def write_kernelspec(folder):
    """A kernel of this very interpreter, so no user-level kernelspec is needed."""
    spec_folder = os.path.join(folder, KERNEL_NAME)
    os.makedirs(spec_folder)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "heat notebook test",
        "language": "python",
    }
    with open(os.path.join(spec_folder, "kernel.json"), "w") as f:
        json.dump(spec, f)


def cell_text(cell):
    """Everything a code cell wrote: streams and text/plain results, %%px's included."""
    parts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif "data" in output:
            parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)


@pytest.fixture(scope="module")
def executed_notebook(tmp_path_factory):
    """heat_on_mpi_engines.ipynb executed on 2 MPI engines, and the seconds it took."""
    if ht.MPI_WORLD.size != 1:
        pytest.skip("starts its own MPI engines: runs only at MPI size 1")
    if not os.path.exists(MPIEXEC):
        pytest.skip("no mpiexec beside the Python interpreter")
    folder = tmp_path_factory.mktemp("notebook")
    tag = uuid.uuid4().hex
    env = clean_environment(
        {
            TAG_VARIABLE: tag,
            "IPYTHONDIR": str(folder / "ipython"),  # the cluster's profile and files
            "JUPYTER_RUNTIME_DIR": str(folder / "runtime"),
            "MPLBACKEND": "Agg",  # the notebook's %matplotlib inline overrides it
        }
    )
    with open(os.path.join(NOTEBOOKS, "heat_on_mpi_engines.ipynb")) as f:
        notebook = nbformat.read(f, as_version=4)
    write_kernelspec(str(folder / "kernels"))
    client = nbclient.NotebookClient(
        notebook,
        kernel_name=KERNEL_NAME,
        timeout=CELL_SECONDS,
        startup_timeout=KERNEL_START_SECONDS,
        resources={"metadata": {"path": str(folder)}},
    )
    watchdog = threading.Timer(NOTEBOOK_SECONDS, kill_tagged, args=(tag,))
    watchdog.daemon = True
    start = time.monotonic()
    watchdog.start()
    try:
        with pytest.MonkeyPatch.context() as patch:  # where this process looks for kernels
            patch.setenv("JUPYTER_PATH", str(folder))
            patch.setenv("JUPYTER_RUNTIME_DIR", str(folder / "runtime"))
            client.execute(env=env)  # and shuts the kernel down
    finally:
        seconds = time.monotonic() - start
        watchdog.cancel()
        grace_end = time.monotonic() + EXIT_GRACE_SECONDS
        while tagged_processes(tag) and time.monotonic() < grace_end:
            time.sleep(0.2)
        leftovers = kill_tagged(tag)
    if seconds >= NOTEBOOK_SECONDS:
        pytest.fail(f"the notebook ran past {NOTEBOOK_SECONDS} s and was stopped")
    assert not leftovers, f"processes still running after the notebook: {leftovers}"
    return notebook, seconds


def test_committed_notebooks_have_no_outputs():
    names = sorted(f for f in os.listdir(NOTEBOOKS) if f.endswith(".ipynb"))
    assert names == ["heat_on_mpi_engines.ipynb"], f"a notebook without a test here: {names}"
    for name in names:
        with open(os.path.join(NOTEBOOKS, name)) as f:
            notebook = nbformat.read(f, as_version=4)
        nbformat.validate(notebook)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{name}: {cell.source}"


def test_heat_on_mpi_engines(executed_notebook):
    notebook, seconds = executed_notebook
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    text = "\n".join(cell_text(cell) for cell in code)
    assert "2 engines connected" in text, text
    # one MPI job of 2 processes, each with its block of the 300 rows
    assert "MPI rank 0 of 2" in text and "MPI rank 1 of 2" in text, text
    assert "rank 0: global shape (300, 4), my block (150, 4)" in text, text
    assert "rank 1: global shape (300, 4), my block (150, 4)" in text, text
    # the results gathered to the notebook agree with NumPy there
    assert "rows per engine: [150, 150]" in text, text
    assert "mean matches NumPy: True" in text, text
    assert "std matches NumPy: True" in text, text
    assert "PCA variances match NumPy: True" in text, text
    assert "k-means cluster sizes: [100, 100, 100]" in text, text
    assert any("image/png" in output.get("data", {}) for cell in code for output in cell.outputs)
    assert "cluster stopped" in cell_text(code[-1]), cell_text(code[-1])
    assert not any(output["output_type"] == "error" for cell in code for output in cell.outputs)
    print(f"notebook executed in {seconds:.1f} s")


def test_stop_cell_ends_quietly(executed_notebook):
    # issue 18, item 27: stopping the cluster killed the engines, and ipyparallel printed the
    # whole log of the killed MPI job (pages of engine tracebacks) into the last cell
    notebook, _ = executed_notebook
    stop = [cell for cell in notebook.cells if cell.cell_type == "code"][-1]
    text = cell_text(stop)
    assert "cluster stopped" in text, text
    for noise in ("Traceback", "Output for", "did not exit", "BAD TERMINATION", "Error"):
        assert noise not in text, text
    assert len(text.splitlines()) <= 10, text
