"""
The API reference (docs/) builds without a single warning and documents every public name.

Sphinx runs as a developer runs it, ``python -m sphinx -W --keep-going -b html docs OUT``, in a
fresh interpreter (it imports heat at one process), on a copy of docs/ in a temporary folder
(the build rewrites docs/api/generated/). It starts its own interpreter, so it runs only in the
1-process run of the suite, like tests/test_cli.py. The build has 240 s, inside this module's
pytest-timeout of 300 s, so a slow or hung build fails with Sphinx's output (on cores shared with
other jobs the build has taken over 110 s). It is serial: on two idle cores it takes
about 38 s (``-j auto``: 33 s, but a third more CPU time, which costs more on busy cores).

The object inventory the build writes (objects.inv) then says which names have a page: every name
a namespace exports (``__all__``, else its public non-module attributes) and every public member
of DNDarray must be there.
"""

import os
import shutil
import signal
import subprocess
import sys
import types

import pytest

import heat as ht
from tests.helpers import fresh_job_environment  # a fresh singleton's environment

# starts its own jobs or interpreters: pytest -m "not slow" skips the module
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
BUILD_SECONDS = 240

#: documented prefix -> the namespace whose public names must all be documented under it
NAMESPACES = {
    "heat": ht,
    "heat.linalg": ht.linalg,
    "heat.random": ht.random,
    "heat.fft": ht.fft,
    "heat.signal": ht.signal,
    "heat.sparse": ht.sparse,
    "heat.cluster": ht.cluster,
    "heat.decomposition": ht.decomposition,
    "heat.regression": ht.regression,
    "heat.naive_bayes": ht.naive_bayes,
    "heat.classification": ht.classification,
    "heat.spatial": ht.spatial,
    "heat.graph": ht.graph,
    "heat.datasets": ht.datasets,
    "heat.preprocessing": ht.preprocessing,
    "heat.utils.data": ht.utils.data,
    "heat.nn": ht.nn,
    "heat.optim": ht.optim,
}

#: exported, documented in prose only (heat.optim's docstring): torch's lr_scheduler module
NOT_DOCUMENTED = {"heat.optim.lr_scheduler"}


def public_names(namespace):
    """What a namespace exports: ``__all__``, else its public attributes that are not modules."""
    if hasattr(namespace, "__all__"):
        return list(namespace.__all__)
    return [
        name
        for name, value in vars(namespace).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    ]


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    """The HTML of a copy of docs/, built with -W; the completed Sphinx process."""
    if ht.MPI_WORLD.size != 1:
        pytest.skip("starts its own interpreter: runs only at MPI size 1")
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    folder = tmp_path_factory.mktemp("docs")
    source = folder / "source"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build", "generated"))
    html = folder / "html"
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-q",
        "-b",
        "html",
        str(source),
        str(html),
    ]
    # its own session, so that a timeout ends the build with every process it started
    process = subprocess.Popen(
        command,
        env=fresh_job_environment(),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=BUILD_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"the docs build took over {BUILD_SECONDS} s:\n{stdout}\n{stderr[-12000:]}")
    done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    return html, done


def test_docs_build_without_warnings(built_docs):
    html, done = built_docs
    assert done.returncode == 0 and "WARNING" not in done.stderr, (
        f"sphinx exited with {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-12000:]}"
    )
    assert (html / "index.html").is_file()
    assert (html / "api" / "generated" / "heat.DNDarray.html").is_file()


def test_every_public_name_has_a_page(built_docs):
    from sphinx.util.inventory import InventoryFile

    html, done = built_docs
    assert done.returncode == 0, done.stderr[-12000:]
    inventory = InventoryFile.loads((html / "objects.inv").read_bytes(), uri="")
    documented = {name for objects in inventory.data.values() for name in objects}
    missing = []
    for prefix, namespace in NAMESPACES.items():
        for name in public_names(namespace):
            full = f"{prefix}.{name}"
            value = getattr(namespace, name)
            if prefix == "heat" and isinstance(value, types.ModuleType):
                continue  # ht.linalg etc. have their own entry; ht.arithmetics etc. are internal
            if full not in documented and full not in NOT_DOCUMENTED:
                missing.append(full)
    members = [name for name in dir(ht.DNDarray) if not name.startswith("_")]
    missing += [
        f"heat.DNDarray.{name}" for name in members if f"heat.DNDarray.{name}" not in documented
    ]
    assert not missing, (
        f"{len(missing)} public names have no page; add each to the right docs/api/*.rst: {missing}"
    )
    for prefix in NAMESPACES:
        assert prefix == "heat" or prefix in documented, f"no page for the module {prefix}"


def test_a_page_shows_the_numpydoc_sections(built_docs):
    """numpydoc rendered the sections (a plain autodoc build would print 'Parameters' as text)."""
    html, done = built_docs
    assert done.returncode == 0, done.stderr[-12000:]
    page = (html / "api" / "generated" / "heat.sum.html").read_text(encoding="utf-8")
    assert 'class="field-list' in page and "Examples" in page and "heat.sum" in page
