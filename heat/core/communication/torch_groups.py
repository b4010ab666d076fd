"""
``torch.distributed`` process groups created from MPI: the rendezvous (rank 0 opens a store and
broadcasts its address over MPI), the default group over ``MPI.COMM_WORLD``, groups of
communicators that partition the world, and the node-local / cross-node groups of a topology.
"""

from __future__ import annotations

import datetime
import os
import socket
import sys
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import torch
from mpi4py import MPI

from .communicator import sanitize_comm
from .topology import NodeTopology


@dataclass(frozen=True)
class NodeProcessGroups:
    """``torch.distributed`` groups of a :class:`NodeTopology` (see ``node_process_groups``)."""

    node_group: Any
    cross_node_group: Any
    topology: NodeTopology


_TORCH_STORE: Any = None  # the rendezvous store; kept alive for the default process group
_TORCH_GROUPS: Dict[Tuple[int, ...], Any] = {}


def _default_backend() -> str:
    import torch.distributed as dist

    if torch.cuda.is_available() and dist.is_nccl_available():
        return "cpu:gloo,cuda:nccl"
    return "gloo"


def _rendezvous_address(single_node: bool) -> str:
    address = os.environ.get("MASTER_ADDR", "").strip()
    if address:
        return address
    if single_node:
        return "127.0.0.1"
    try:
        address = socket.gethostbyname(socket.gethostname())
    except OSError:
        address = ""
    if not address or address.startswith("127."):
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:  # no packet is sent: this only asks the kernel which interface routes outwards
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
        except OSError:
            address = "127.0.0.1"
        finally:
            probe.close()
    return address


def _init_torch_distributed(backend: Optional[str], timeout: Optional[datetime.timedelta]) -> None:
    """Initialise the default process group over MPI.COMM_WORLD (collective on the world)."""
    global _TORCH_STORE
    import torch.distributed as dist

    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    if dist.is_initialized():
        consistent = dist.get_world_size() == size and dist.get_rank() == rank
        if not world.allreduce(consistent, op=MPI.LAND):
            raise RuntimeError(
                "torch.distributed was initialised with ranks that differ from MPI.COMM_WORLD"
            )
        return
    store_timeout = timeout or datetime.timedelta(minutes=30)
    single_node = len(set(world.allgather(MPI.Get_processor_name()))) == 1
    store, info = None, None
    if rank == 0:
        try:
            address = _rendezvous_address(single_node)
            port = int(os.environ.get("MASTER_PORT", "0") or 0)
            # port 0: the store binds to a free port, so no other process can take it in between
            store = dist.TCPStore(
                address, port, size, is_master=True, timeout=store_timeout, wait_for_workers=False
            )
            info = ("ok", address, store.port)
        except Exception as error:  # report to everybody instead of leaving them waiting
            info = ("error", f"{type(error).__name__}: {error}")
    info = world.bcast(info, root=0)
    if info[0] == "error":
        raise RuntimeError(f"could not start the torch.distributed rendezvous on rank 0: {info[1]}")
    _, address, port = info
    if rank != 0:
        store = dist.TCPStore(address, port, size, is_master=False, timeout=store_timeout)
    kwargs = {} if timeout is None else {"timeout": timeout}
    hook = sys.excepthook
    dist.init_process_group(
        backend=backend or _default_backend(), store=store, rank=rank, world_size=size, **kwargs
    )
    _TORCH_STORE = store
    if getattr(hook, "_heat_abort_hook", False):
        # torch wraps sys.excepthook to prefix ranks and captures its output in a buffer; ours
        # prefixes ranks already and must print before it aborts
        sys.excepthook = hook


def torch_process_group(
    comm: Any = None, backend: Optional[str] = None, timeout: Optional[datetime.timedelta] = None
):
    """
    The ``torch.distributed`` process group holding the processes of ``comm``.

    Initialises ``torch.distributed`` from MPI when needed (rank 0 opens a rendezvous store on a
    free port and broadcasts its address over MPI; gloo on CPU, NCCL for CUDA tensors when
    available), so users never call ``init_process_group`` themselves.

    **Collective over MPI.COMM_WORLD:** ``torch.distributed.new_group`` must be entered by every
    process in the same order. So every world process calls this function at the same time, each
    with *its own* communicator, and those communicators must partition the world (e.g. the pieces
    of one ``Split``, or ``MPI_WORLD`` on everybody). All groups of the partition are created on
    every process, in the order of their smallest world rank, and cached.

    Parameters
    ----------
    comm : MPICommunication, MPI.Intracomm or None
        This process's piece of the partition (default: the default communicator).
    backend : str, optional
        Backend for initialisation and new groups (default ``"gloo"`` on CPU,
        ``"cpu:gloo,cuda:nccl"`` with CUDA).
    timeout : datetime.timedelta, optional

    Returns
    -------
    torch.distributed.ProcessGroup
        ``torch.distributed.group.WORLD`` when ``comm`` holds all processes. Group ranks follow the
        world ranks (ascending), which is the rank order of ``comm`` when it was split with
        ``key=rank``.

    Raises
    ------
    ValueError
        On every process, if the communicators passed do not partition the world.

    Examples
    --------
    >>> import torch.distributed as dist
    >>> group = torch_process_group(MPI_WORLD)
    >>> x = torch.ones(2)
    >>> dist.all_reduce(x, group=group)
    >>> x  # with 2 processes
    tensor([2., 2.])
    """
    import torch.distributed as dist

    if not dist.is_available():
        raise RuntimeError("torch.distributed is not available in this torch build")
    comm = sanitize_comm(comm)
    _init_torch_distributed(backend, timeout)
    world_size = MPI.COMM_WORLD.Get_size()
    pieces = MPI.COMM_WORLD.allgather(tuple(sorted(comm.world_ranks())))
    distinct = sorted(set(pieces))
    members = sorted(r for piece in distinct for r in piece)
    if members != list(range(world_size)):
        raise ValueError(
            "comm: the communicators passed by the processes must partition MPI.COMM_WORLD, got "
            f"{distinct}"
        )
    mine = pieces[MPI.COMM_WORLD.Get_rank()]
    if len(mine) == world_size:
        return dist.group.WORLD
    kwargs = {}
    if backend is not None:
        kwargs["backend"] = backend
    if timeout is not None:
        kwargs["timeout"] = timeout
    for piece in distinct:  # same order everywhere
        if piece not in _TORCH_GROUPS:
            _TORCH_GROUPS[piece] = dist.new_group(ranks=list(piece), **kwargs)
    return _TORCH_GROUPS[mine]


def node_process_groups(
    comm: Any = None,
    backend: Optional[str] = None,
    timeout: Optional[datetime.timedelta] = None,
    ranks_per_node: Optional[int] = None,
) -> NodeProcessGroups:
    """
    ``torch.distributed`` groups for hierarchical communication: this node's processes, and the
    processes with this local rank on every node (for local rank 0: the node leaders).

    Collective over MPI.COMM_WORLD (see :func:`torch_process_group`); normally every process
    passes ``MPI_WORLD``.

    Parameters
    ----------
    comm : MPICommunication, optional
    backend : str, optional
    timeout : datetime.timedelta, optional
    ranks_per_node : int, optional
        Passed to ``comm.node_topology``.

    Returns
    -------
    NodeProcessGroups
        ``node_group``, ``cross_node_group`` and the ``topology`` they come from.

    Examples
    --------
    >>> groups = node_process_groups(ranks_per_node=2)  # 4 processes: 2 emulated nodes
    >>> x = torch.ones(1)
    >>> torch.distributed.all_reduce(x, group=groups.cross_node_group)
    >>> x
    tensor([2.])
    """
    comm = sanitize_comm(comm)
    topology = comm.node_topology(ranks_per_node=ranks_per_node)
    node_group = torch_process_group(topology.node_comm, backend=backend, timeout=timeout)
    cross_group = torch_process_group(topology.cross_node_comm, backend=backend, timeout=timeout)
    return NodeProcessGroups(node_group=node_group, cross_node_group=cross_group, topology=topology)
