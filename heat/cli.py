"""
The ``heat`` command: ``heat info`` (also ``heat -i`` and ``python -m heat info``) prints what a bug
report or a first check of a cluster needs to know -- the versions of heat and of everything it is
built on, the MPI library, whether h5py writes in parallel, which optional packages are present,
the GPUs torch sees and whether MPI can take GPU memory directly.

Every value is looked up on the calling process without communication, so ``heat info`` works
the same under ``mpiexec`` (rank 0 prints) as alone. Nothing is guessed: when the MPI library
cannot be asked whether it is CUDA-aware and no setting says so, the answer is "unknown".
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import sys
from typing import List, Optional, Sequence, Tuple

__all__ = ["collect_info", "format_info", "main", "mpi_cuda_support"]

#: Optional packages heat uses when present: (distribution name, import name, what heat uses it for)
OPTIONAL_PACKAGES: Tuple[Tuple[str, str, str], ...] = (
    ("netCDF4", "netCDF4", "ht.load/ht.save of netCDF files"),
    ("zarr", "zarr", "ht.load/ht.save of Zarr stores"),
    ("scikit-learn", "sklearn", "test oracle of the estimators"),
    ("tqdm", "tqdm", "progress bars of StreamingDataLoader"),
)

#: Environment variables that say how a CUDA-aware MPI is switched on, by library family.
_CUDA_HINTS: Tuple[Tuple[str, str], ...] = (
    ("MPICH_GPU_SUPPORT_ENABLED", "1"),  # Cray MPICH
    ("OMPI_MCA_opal_cuda_support", "true"),  # Open MPI
    ("MV2_USE_CUDA", "1"),  # MVAPICH2
)


def _version_of(distribution: str, module: str) -> Optional[str]:
    """The installed version of ``distribution`` (None when absent), without importing it."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        pass
    # installed without package metadata (e.g. a source tree on PYTHONPATH): import it
    try:
        imported = importlib.import_module(module)
    except Exception:
        return None
    return str(getattr(imported, "__version__", "version unknown"))


def mpi_cuda_support() -> Tuple[Optional[bool], str]:
    """
    Whether the MPI library accepts CUDA device memory, and how that was found out.

    Asked in this order: mpi4py's ``MPI.Query_cuda_support`` where mpi4py has it; the library's
    own ``MPIX_Query_cuda_support`` (Open MPI, MPICH >= 4), looked up in the loaded library; then
    the environment variables that switch CUDA support on in the common MPI families, which only
    hint at it. Without any of these the answer is ``None`` (unknown).

    Returns
    -------
    supported : bool or None
        True or False when the library answered, True when a switch is set, else None.
    how : str
        Where the answer came from, for the report.

    Examples
    --------
    >>> from heat.cli import mpi_cuda_support
    >>> supported, how = mpi_cuda_support()
    >>> supported in (True, False, None)
    True
    """
    from .core.communication.buffers import query_cuda_support

    supported, how = query_cuda_support()
    if supported is not None:
        return supported, how
    for name, value in _CUDA_HINTS:
        if os.environ.get(name, "").strip().lower() == value:
            return True, f"hint only: {name}={os.environ[name]}"
    return None, "the MPI library cannot be asked and no setting says so"


def _gpu_lines() -> List[Tuple[str, str]]:
    """torch's build (CPU, CUDA or ROCm), then the GPUs torch sees, one line each."""
    import torch

    if torch.version.cuda:
        build = f"CUDA {torch.version.cuda}"
    elif getattr(torch.version, "hip", None):
        build = f"ROCm/HIP {torch.version.hip}"
    else:
        build = "CPU only"
    lines = [("torch build", build)]
    if not torch.cuda.is_available():
        lines.append(("GPUs", "none seen by torch (torch.cuda.is_available() is False)"))
        return lines
    count = torch.cuda.device_count()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    suffix = f"; CUDA_VISIBLE_DEVICES={visible}" if visible is not None else ""
    lines.append(("GPUs", f"{count} seen by torch{suffix}"))
    for index in range(count):
        properties = torch.cuda.get_device_properties(index)
        memory = properties.total_memory / 2**30
        lines.append((f"GPU {index}", f"{properties.name} ({memory:.1f} GiB)"))
    return lines


def _threads_line() -> str:
    """torch's threads per process and how heat chose them at import (or that they changed)."""
    import torch

    from heat.core.communication.process import THREAD_CHOICE

    current = torch.get_num_threads()
    chosen, reason = THREAD_CHOICE["threads"], THREAD_CHOICE["reason"]
    if reason.startswith("heat:"):
        reason += "; OMP_NUM_THREADS chooses another count"
    if chosen is not None and chosen != current:
        reason = f"changed after import; heat chose {chosen}: {reason}"
    return f"{current} per process ({reason})"


def collect_info() -> List[Tuple[str, str]]:
    """
    What ``heat info`` reports, as (label, value) pairs in print order.

    Local to the calling process: no communication, so any process may call it alone.

    Returns
    -------
    list of (str, str)

    Examples
    --------
    >>> from heat.cli import collect_info
    >>> dict(collect_info())["heat"].split()[0] == ht.__version__
    True
    """
    import h5py
    import mpi4py
    import numpy
    import torch
    from mpi4py import MPI

    import heat
    from heat.core.communication import CUDA_AWARE_MPI

    location = os.path.dirname(os.path.abspath(heat.__file__))
    implementation = platform.python_implementation()
    standard = ".".join(str(v) for v in MPI.Get_version())
    library = MPI.Get_library_version().strip().splitlines()
    library = " ".join(library[0].split()) if library else "unknown"  # its first line, squeezed
    h5py_config = h5py.get_config()
    lines: List[Tuple[str, str]] = [
        ("heat", f"{heat.__version__} ({location})"),
        ("Python", f"{platform.python_version()} ({implementation}, {sys.executable})"),
        ("platform", platform.platform()),
        ("torch", f"{torch.__version__} ({torch.get_num_threads()} threads)"),
        ("compute threads", _threads_line()),
        ("NumPy", numpy.__version__),
        ("mpi4py", mpi4py.__version__),
        ("MPI library", f"{library} (MPI {standard})"),
        ("MPI processes", f"{MPI.COMM_WORLD.Get_size()}"),
        (
            "h5py",
            f"{h5py.version.version} (HDF5 {h5py.version.hdf5_version}, "
            f"built with MPI: {'yes' if h5py_config.mpi else 'no'})",
        ),
    ]
    for distribution, module, purpose in OPTIONAL_PACKAGES:
        version = _version_of(distribution, module)
        lines.append((distribution, f"{version} ({purpose})" if version else "not installed"))
    lines.extend(_gpu_lines())
    supported, how = mpi_cuda_support()
    answer = {True: "yes", False: "no", None: "unknown"}[supported]
    lines.append(("CUDA-aware MPI", f"{answer} ({how})"))
    # what heat's communication layer decided at import (the environment variable overrides)
    override = os.environ.get("HEAT_CUDA_AWARE_MPI")
    setting = f"HEAT_CUDA_AWARE_MPI={override}" if override else "HEAT_CUDA_AWARE_MPI=0/1 decides"
    route = "handed to MPI directly" if CUDA_AWARE_MPI else "staged through host memory"
    lines.append(("heat GPU buffers", f"{route} ({setting})"))
    return lines


def format_info(lines: Sequence[Tuple[str, str]]) -> str:
    """
    The report: one ``label: value`` line per entry, values aligned.

    Examples
    --------
    >>> from heat.cli import format_info
    >>> print(format_info([("heat", "1.0"), ("NumPy", "2.0")]))
    heat:  1.0
    NumPy: 2.0
    """
    width = max((len(label) for label, _ in lines), default=0) + 1
    return "\n".join(f"{label + ':':<{width}} {value}" for label, value in lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heat",
        description="heat: distributed tensor computing on MPI and PyTorch.",
        epilog="Run `heat info` (or `heat -i`) and paste its output into bug reports.",
    )
    parser.add_argument(
        "-i", "--info", action="store_true", help="print versions and the MPI/GPU setup (= info)"
    )
    parser.add_argument("--version", action="store_true", help="print heat's version and exit")
    parser.add_argument("--json", action="store_true", help="the report as one JSON object")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    info = commands.add_parser("info", help="print versions and the MPI/GPU setup")
    # SUPPRESS: `heat --json info` keeps the top-level value instead of the subparser's default
    info.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="one JSON object"
    )
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """
    Entry point of the ``heat`` console script and of ``python -m heat``.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0; 141 (as for SIGPIPE) when the reader of the output went away early
        (``heat -i | head -3``), without a traceback; argparse exits with 2 for a usage error.

    Examples
    --------
    >>> from heat.cli import main
    >>> main(["info"])  # doctest: +SKIP
    heat:  0.1.0 (/path/to/heat)
    ...
    """
    parser = _parser()
    arguments = parser.parse_args(argv)
    from mpi4py import MPI

    # every process computes nothing collective; only rank 0 prints, so `mpiexec -n 4 heat -i`
    # shows one report
    printing = MPI.COMM_WORLD.Get_rank() == 0
    try:
        if arguments.version:
            import heat

            if printing:
                print(heat.__version__)
            return 0
        if arguments.command == "info" or arguments.info:
            lines = collect_info()
            if printing:
                if arguments.json:
                    print(json.dumps(dict(lines), indent=1))
                else:
                    print(format_info(lines))
                sys.stdout.flush()  # a closed pipe shows here, not at exit
            return 0
        if printing:
            parser.print_help()
            sys.stdout.flush()
        return 0
    except BrokenPipeError:
        return _reader_went_away()


def _reader_went_away() -> int:
    """
    The reader of stdout closed it early (``heat -i | head -3``): end quietly, as Unix tools do.
    What is still buffered goes to /dev/null (Python's flush at exit would raise again), and the
    exit status is that of a process ended by SIGPIPE (128 + 13).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # no file descriptor (e.g. a test's buffer)
        pass
    return 141


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
