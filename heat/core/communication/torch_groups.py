"""
``torch.distributed`` process groups created from MPI: the default group over ``MPI.COMM_WORLD``
(its rendezvous, an address of rank 0's store that every process reaches, is found by the
``rendezvous`` module), groups of communicators that partition the world, and the node-local /
cross-node groups of a topology.
"""

from __future__ import annotations

import atexit
import datetime
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import torch
from mpi4py import MPI

from .communicator import sanitize_comm
from .rendezvous import Rendezvous, open_rendezvous
from .topology import NodeTopology


@dataclass(frozen=True)
class NodeProcessGroups:
    """``torch.distributed`` groups of a :class:`NodeTopology` (see ``node_process_groups``)."""

    node_group: Any
    cross_node_group: Any
    topology: NodeTopology


_TORCH_STORE: Any = None  # the rendezvous store; kept alive for the default process group
_RENDEZVOUS: Optional[Rendezvous] = None  # where the processes met (address, port, interface)
_TORCH_GROUPS: Dict[Tuple[int, ...], Any] = {}
_EXIT_PAUSE_SECONDS = 0.05  # see _destroy_torch_distributed


def _default_backend(world: Any) -> str:
    """
    gloo for CPU tensors; NCCL for CUDA tensors where every process of a node has a GPU of its
    own, else gloo for those too (NCCL refuses two processes on one GPU: "Duplicate GPU
    detected"; gloo moves CUDA tensors for all-reduce, broadcast and all-gather). Collective over
    ``world``, so that every process picks the same backend.
    """
    import torch.distributed as dist

    own_gpu = False
    if torch.cuda.is_available() and dist.is_nccl_available():
        node = world.Split_type(MPI.COMM_TYPE_SHARED, key=world.Get_rank())
        own_gpu = node.Get_size() <= torch.cuda.device_count()
        node.Free()
    if world.allreduce(own_gpu, op=MPI.LAND):
        return "cpu:gloo,cuda:nccl"
    return "gloo"


def _destroy_torch_distributed() -> None:
    """
    At exit, while the interpreter is still whole: destroy the process groups, then give gloo's
    worker threads a moment without the GIL. A worker drops its last finished operation, and with
    it a reference to a Python tensor, only after the caller's wait returned; if it gets to that
    only during interpreter finalization, taking the GIL ends the thread and the process aborts
    ("terminate called without an active exception"; seen in about 1 of 3 runs of 4 processes on
    2 cores with MPICH's ofi/tcp transport, none in 20 runs with this pause).
    """
    global _TORCH_STORE, _RENDEZVOUS
    import torch.distributed as dist

    try:
        if dist.is_initialized():
            dist.destroy_process_group()
            time.sleep(_EXIT_PAUSE_SECONDS)
    except Exception:  # exiting anyway; an error here must not hide the program's own outcome
        pass
    _TORCH_GROUPS.clear()
    _TORCH_STORE = _RENDEZVOUS = None


def _init_torch_distributed(backend: Optional[str], timeout: Optional[datetime.timedelta]) -> None:
    """Initialise the default process group over MPI.COMM_WORLD (collective on the world)."""
    global _TORCH_STORE, _RENDEZVOUS
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
    rendezvous = open_rendezvous(world, single_node, store_timeout)
    if rendezvous.interface is not None and not os.environ.get("GLOO_SOCKET_IFNAME"):
        # gloo picks its interface from the hostname, which on compute nodes often resolves to
        # loopback or nothing; bind it where this process reached rank 0 (every later group too)
        os.environ["GLOO_SOCKET_IFNAME"] = rendezvous.interface
    store = rendezvous.store
    kwargs = {} if timeout is None else {"timeout": timeout}
    hook = sys.excepthook
    dist.init_process_group(
        backend=backend or _default_backend(world),
        store=store,
        rank=rank,
        world_size=size,
        **kwargs,
    )
    _TORCH_STORE = store
    _RENDEZVOUS = rendezvous
    atexit.register(_destroy_torch_distributed)  # runs before mpi4py finalizes MPI
    if getattr(hook, "_heat_abort_hook", False):
        # torch wraps sys.excepthook to prefix ranks and captures its output in a buffer; ours
        # prefixes ranks already and must print before it aborts
        sys.excepthook = hook


def rendezvous_address() -> Optional[Tuple[str, int]]:
    """
    Where the processes met rank 0's ``torch.distributed`` store: ``(address, port)``, or None
    before :func:`torch_process_group` initialised ``torch.distributed`` (or when something else
    did). Frameworks that ask for a "main address" (e.g. Lightning's cluster environments) report
    this one.

    Examples
    --------
    >>> group = torch_process_group(MPI_WORLD)
    >>> address, port = rendezvous_address()
    """
    if _RENDEZVOUS is None:
        return None
    return _RENDEZVOUS.address, _RENDEZVOUS.port


def torch_process_group(
    comm: Any = None, backend: Optional[str] = None, timeout: Optional[datetime.timedelta] = None
):
    """
    The ``torch.distributed`` process group holding the processes of ``comm``.

    Initialises ``torch.distributed`` from MPI when needed (gloo on CPU, NCCL for CUDA tensors
    when available), so users never call ``init_process_group`` themselves. Rank 0 opens the
    rendezvous store on a free port and broadcasts its candidate addresses over MPI; the processes
    agree on one they all reach: ``MASTER_ADDR`` (and ``MASTER_PORT``) if set, else 127.0.0.1 on
    one node, else rank 0's interface addresses, so no configuration is needed across nodes
    either. Across nodes gloo is bound to the interface that reached rank 0
    (``GLOO_SOCKET_IFNAME``, unless set).

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
        ``"cpu:gloo,cuda:nccl"`` with CUDA where every process of a node has a GPU of its own,
        ``"gloo"`` for CUDA tensors too where processes share a GPU).
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
    RuntimeError
        On every process, if some process reaches rank 0's store at none of the addresses within
        ``HEAT_RENDEZVOUS_TIMEOUT`` seconds (default 30); the message says how to set
        ``MASTER_ADDR``.

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


def _torch_process_group_method(
    self, backend: Optional[str] = None, timeout: Optional[datetime.timedelta] = None
):
    """
    The ``torch.distributed`` group of this communicator; see :func:`torch_process_group`.

    Examples
    --------
    >>> group = MPI_WORLD.torch_process_group()
    """
    return torch_process_group(self, backend=backend, timeout=timeout)


_torch_process_group_method.__name__ = _torch_process_group_method.__qualname__ = (
    "torch_process_group"
)
