#!/usr/bin/env python3
"""
Build the HeAT 1.8 environment that the benchmarks compare against ("the anchor"): a virtual
environment holding the released ``heat==1.8.0`` from PyPI, beside this repository's heat.

Usage::

    python benchmarks/build_anchor_env.py                 # into $TMPDIR/heat-anchor (default)
    python benchmarks/build_anchor_env.py /scratch/anchor --torch 2.13.0
    python benchmarks/build_anchor_env.py --dry-run       # print the steps, change nothing

then pass ``--anchor-python DIR/bin/python`` to ``run.py``, ``run_algorithms.py`` and
``streaming.py`` (``$TMPDIR/heat-anchor/bin/python`` is their default).

It downloads about 1 GB from PyPI (torch and its dependencies), so it never runs by itself: not
in the test suite, and not where ``CI`` is set unless ``--allow-ci`` says so. The steps:

1. ``python -m venv DIR`` with the interpreter running this script;
2. ``pip install torch==T numpy h5py scipy mpi4py mpich``: T defaults to the torch version of
   this interpreter (without a local tag such as ``+cpu``), so both heats run on the same torch;
   ``--index-url`` points pip elsewhere (e.g. PyTorch's CPU wheels);
3. ``pip install --no-deps heat==1.8.0`` (its own pins would replace that torch);
4. HeAT 1.8 imports ``torchvision`` when it is imported (``heat.utils.vision_transforms`` and
   ``heat.utils.data.mnist``); where no torchvision wheel fits that torch, a stand-in package with
   the few names used at import is written into the environment. Nothing the benchmarks measure
   (arrays, linear algebra, clustering, the HDF5 dataset) uses it;
5. a check: the environment's Python imports heat 1.8.0 from its own site-packages.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from typing import Dict, List, Optional, Sequence

HEAT_VERSION = "1.8.0"
DEPENDENCIES = ("numpy", "h5py", "scipy", "mpi4py", "mpich")
DEFAULT_DIR = os.path.join(os.environ.get("TMPDIR", "/tmp"), "heat-anchor")

#: the torchvision stand-in: the modules and names HeAT 1.8 touches when it is imported
TORCHVISION_STAND_IN: Dict[str, str] = {
    "torchvision/__init__.py": (
        '"""Stand-in for torchvision, written by benchmarks/build_anchor_env.py: only the names'
        ' that HeAT 1.8 touches when it is imported."""\n'
        "from . import datasets, transforms\n"
    ),
    "torchvision/transforms/__init__.py": (
        "from . import transforms\n\n\n"
        "class _Unavailable:\n"
        '    """A transform of the stand-in: it can be built, not applied."""\n\n'
        "    def __init__(self, *args, **kwargs):\n"
        "        self.args, self.kwargs = args, kwargs\n\n"
        "    def __call__(self, *args, **kwargs):\n"
        '        raise NotImplementedError("torchvision is a stand-in in this environment")\n\n\n'
        "Compose = Normalize = ToTensor = _Unavailable\n"
    ),
    "torchvision/transforms/transforms.py": "__all__ = []\n",
    "torchvision/datasets.py": (
        "class MNIST:\n"
        '    """The base class of heat.utils.data.mnist.MNISTDataset; not usable here."""\n\n'
        "    def __init__(self, *args, **kwargs):\n"
        '        raise NotImplementedError("torchvision is a stand-in in this environment")\n'
    ),
}


def default_torch_version() -> Optional[str]:
    """This interpreter's torch version without its local tag ("2.13.0+cpu" -> "2.13.0")."""
    try:
        import torch
    except ImportError:
        return None
    return torch.__version__.split("+")[0]


def install_commands(
    directory: str, torch_version: Optional[str], index_url: str
) -> List[List[str]]:
    """The pip commands of steps 2 and 3, for the environment in ``directory``."""
    pip = [os.path.join(directory, "bin", "python"), "-m", "pip", "install", "--quiet"]
    if index_url:
        pip += ["--index-url", index_url]
    torch_requirement = f"torch=={torch_version}" if torch_version else "torch"
    return [
        pip + [torch_requirement, *DEPENDENCIES],
        pip + ["--no-deps", f"heat=={HEAT_VERSION}"],
    ]


def write_torchvision_stand_in(site_packages: str) -> List[str]:
    """Write the stand-in package into ``site_packages``; returns the files written."""
    written = []
    for relative, text in TORCHVISION_STAND_IN.items():
        path = os.path.join(site_packages, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        written.append(path)
    return written


def _run(command: Sequence[str], dry_run: bool, **kwargs) -> subprocess.CompletedProcess:
    print("$ " + " ".join(shlex.quote(part) for part in command), flush=True)
    if dry_run:
        return subprocess.CompletedProcess(command, 0, "", "")
    return subprocess.run(command, check=True, **kwargs)


def _python_says(python: str, code: str) -> str:
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, env=_clean_env())
    return done.stdout.strip() if done.returncode == 0 else ""


def _clean_env() -> Dict[str, str]:
    """The environment for the anchor's Python: without PYTHONPATH (this repository's heat)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def build(directory: str, torch_version: Optional[str], index_url: str, dry_run: bool) -> str:
    """Steps 1 to 5; returns the environment's Python."""
    python = os.path.join(directory, "bin", "python")
    _run([sys.executable, "-m", "venv", directory], dry_run)
    for command in install_commands(directory, torch_version, index_url):
        _run(command, dry_run, env=_clean_env())
    if dry_run:
        print("(then the torchvision stand-in where `import torchvision` fails, and the check)")
        return python
    if not _python_says(python, "import torchvision; print('ok')"):
        site_packages = _python_says(
            python, "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        )
        for path in write_torchvision_stand_in(site_packages):
            print(f"wrote {path}")
    found = _python_says(
        python, "import heat, os; print(heat.__version__, os.path.dirname(heat.__file__))"
    )
    version, _, location = found.partition(" ")
    if version != HEAT_VERSION or not location.startswith(os.path.abspath(directory)):
        raise SystemExit(
            f"the environment does not import HeAT {HEAT_VERSION} from itself: {found!r}"
        )
    print(f"HeAT {version} ready: {python} (from {location})")
    return python


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("directory", nargs="?", default=DEFAULT_DIR, help=f"default {DEFAULT_DIR}")
    parser.add_argument(
        "--torch", default=default_torch_version(), help="torch version (default: this one's)"
    )
    parser.add_argument("--index-url", default="", help="pip's --index-url (default: pip's)")
    parser.add_argument("--dry-run", action="store_true", help="print the steps, change nothing")
    parser.add_argument("--allow-ci", action="store_true", help="run even where CI is set")
    args = parser.parse_args(argv)
    if os.environ.get("CI") and not (args.allow_ci or args.dry_run):
        parser.error("CI is set: this downloads about 1 GB from PyPI; --allow-ci builds anyway")
    if args.torch is not None and not re.fullmatch(r"[0-9][0-9A-Za-z.]*", args.torch):
        parser.error(f"--torch must be a version such as 2.13.0, not {args.torch!r}")
    build(os.path.abspath(args.directory), args.torch, args.index_url, args.dry_run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
