"""
The one door to MPI and to ``torch.distributed``.

Everything in heat that communicates asks an :class:`MPICommunication` object (usually ``x.comm``)
for it. This package provides

* buffer collectives on ``torch.Tensor`` objects of every heat dtype (``Allreduce``, ``Bcast``,
  ``Allgatherv``, ...), contiguous or not, on CPU or GPU (staged through host memory unless the MPI
  library is CUDA-aware), with counts beyond ``2**31`` elements; each also non-blocking
  (``Iallreduce``, ``Ibcast``, ``Iallgatherv``, ...), returning a :class:`Request`. A DNDarray
  passed as a buffer stands for its local block;
* tensor-level conveniences that algorithm code should normally use (``allreduce_tensor``,
  ``allgather_tensors``, ``alltoallv_tensors``, ...): they exchange shapes themselves, accept empty
  and uneven blocks, and raise the same exception on every rank for a bad call;
* the node topology (node-local and cross-node communicators) and ``torch.distributed`` process
  groups created from MPI;
* the default communicator (``get_comm``, ``use_comm``, ``sanitize_comm``);
* verdicts (:mod:`.verdicts`): a step that failed on some processes ends with the same
  exception on every process, and settings that must agree are agreed once;
* per-process setup at import: abort the whole job on an uncaught exception, a fair share of
  compute threads per process, and transparent huge pages for torch's CPU allocator.

Import from here (``heat.core.communication.X``, or ``ht.X`` for the public names), not from the
modules; their names are private. The modules, each importing only those above it in this list:

==================== ==============================================================================
datatypes            the wire type of each torch dtype; MPI reductions for them (half types through
                     user-defined operations, bool logically)
buffers              limits of one MPI call, CUDA awareness, argument checks, staging through
                     contiguous or host memory, derived datatypes for long and strided tensors
requests             ``Request``: a pending non-blocking operation that keeps its buffers alive
                     and completes into the receive tensor; how one implementation serves the
                     blocking and the non-blocking form of a collective
verdicts             the same exception on every process after a step that failed on some
                     (``raise_if_any``, ``PendingVerdict``, ``agree``, ``root_decides``,
                     ``any_true``); collective over any communicator
reductions           ``Allreduce``, ``Reduce``, ``Scan``, ``Exscan``
collectives          ``Bcast``, point-to-point, ``Allgather``, ``Gather``, ``Scatter``, ``Alltoall``
vector_collectives   ``Allgatherv``, ``Gatherv``, ``Scatterv``, ``Alltoallv``, ``Alltoallw``
tensors              tensor-level conveniences (``allreduce_tensor``, ``allgather_tensors``, ...)
topology             ``NodeTopology`` and ``MPICommunication.node_topology``
communicator         ``MPICommunication``, composed of the parts above (each module holds one
                     mixin class of its methods); ``MPI_WORLD``, ``MPI_SELF``, the default
                     communicator
rendezvous           where the processes meet rank 0's ``torch.distributed`` store: the candidate
                     addresses (``MASTER_ADDR``, loopback, rank 0's interfaces), agreed over MPI
torch_groups         ``torch.distributed`` process groups from MPI communicators
node_groups          the groups and ``torch.distributed`` collectives of data-parallel training
                     (``NodeGroups``, ``CrossNodeSum``, ``all_reduce_async``, ``broadcast_tensors``)
shared_memory        sums over a node's processes through one shared-memory segment (CPU tensors)
node_slots           one slot per process of a node in a shared-memory segment: each writes its own,
                     all read any after a barrier (an all-to-all inside a node without MPI moving
                     the bytes; the streaming loader's exchange)
process              the per-process setup, run once when this package is imported
==================== ==============================================================================

Each collective in reductions, collectives and vector_collectives sits beside its non-blocking
form (``Iallreduce`` ... ``Ialltoallw``): one implementation with a ``blocking`` switch, so both
check their arguments and stage their buffers alike.

Notes
-----
MPI has no ``float16``/``bfloat16`` datatypes: such tensors travel as 16-bit integers and are
reduced by user-defined MPI operations that compute with torch. ``bool`` tensors travel as bytes;
reductions of booleans are logical (``SUM``/``MAX`` mean "any", ``PROD``/``MIN`` mean "all").
"""

from mpi4py import MPI

from . import verdicts  # noqa: F401 - heat.core.communication.verdicts
from .buffers import CUDA_AWARE_MPI
from .communicator import (
    MPI_SELF,
    MPI_WORLD,
    Communication,
    MPICommunication,
    get_comm,
    sanitize_comm,
    use_comm,
)
from .process import _setup_process
from .requests import Request
from .topology import NodeTopology
from .torch_groups import (
    NodeProcessGroups,
    node_process_groups,
    rendezvous_address,
    torch_process_group,
)
from .torch_groups import _torch_process_group_method

# MPICommunication.torch_process_group lives in torch_groups (a module above communicator, which
# must not import it back); installed here, where both are complete
MPICommunication.torch_process_group = _torch_process_group_method

#: HeAT's name of :class:`Request` (its ``MPIRequest`` wrapped the pending mpi4py request)
MPIRequest = Request
#: HeAT's ``ht.comm``: the communicator of all processes (there the bare ``MPI.COMM_WORLD``;
#: heat's :class:`MPICommunication` answers ``rank``, ``size``, ``Barrier()``, ``allreduce()`` ...
#: and passes every other mpi4py method on to ``MPI.COMM_WORLD``)
comm = MPI_WORLD

__all__ = [
    "MPI",
    "Communication",
    "MPICommunication",
    "MPI_WORLD",
    "MPI_SELF",
    "NodeTopology",
    "NodeProcessGroups",
    "Request",
    "MPIRequest",
    "comm",
    "CUDA_AWARE_MPI",
    "get_comm",
    "use_comm",
    "sanitize_comm",
    "torch_process_group",
    "rendezvous_address",
    "node_process_groups",
]

_setup_process()
