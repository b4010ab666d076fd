"""
:class:`HeatEnvironment`: Lightning's view of the MPI job, taken from heat's communicator.
"""

from __future__ import annotations

from typing import Any, Optional

from ...core.communication import (
    MPI_WORLD,
    MPICommunication,
    rendezvous_address,
    sanitize_comm,
    torch_process_group,
    verdicts,
)
from ._imports import ClusterEnvironment

__all__ = ["HeatEnvironment"]


def check_world(comm: Any, owner: str) -> MPICommunication:
    """
    ``comm`` as an :class:`MPICommunication` that holds every process of the MPI job (``ht.MPI_WORLD``)
    (Lightning's ranks are world ranks), else the same ValueError on every process.
    """
    comm = sanitize_comm(comm)

    def check():
        world_size = MPI_WORLD.size
        if comm.size != world_size:
            raise ValueError(
                f"{owner}: comm must hold every process of the MPI job ({world_size}), got a "
                f"communicator of {comm.size}; Lightning's ranks are the job's ranks"
            )

    verdicts.agree(MPI_WORLD, check)
    return comm


class HeatEnvironment(ClusterEnvironment):
    """
    A Lightning cluster environment from heat's communicator: the ranks are the MPI ranks, the
    node layout is heat's node topology (shared-memory nodes, or emulated ones with
    ``HEAT_RANKS_PER_NODE``), and ``torch.distributed`` is initialised from MPI through heat's
    rendezvous, so ``mpiexec -n 8 python fit.py`` needs no ``MASTER_ADDR``, ``MASTER_PORT``,
    ``RANK`` or ``WORLD_SIZE``.

    Constructing it is collective over the MPI job (it computes the node topology and initialises
    ``torch.distributed``); every process constructs it at the same time, usually through a
    strategy (:class:`DASOStrategy`, :class:`HeatDataParallelStrategy`). With it, Lightning's own
    strategies find ``torch.distributed`` initialised and use it as it is.

    Parameters
    ----------
    comm : MPICommunication, optional
        Must hold every process of the job (default: heat's default communicator).

    Raises
    ------
    ValueError
        On every process, if ``comm`` does not hold every process of the job.

    Examples
    --------
    >>> from heat.nn.lightning import HeatEnvironment
    >>> env = HeatEnvironment()
    >>> env.global_rank(), env.world_size(), env.local_rank(), env.node_rank()  # rank 1 of 4, 2 per node
    (1, 4, 1, 0)
    >>> strategy = lightning.pytorch.strategies.DDPStrategy(cluster_environment=env)
    """

    def __init__(self, comm: Optional[MPICommunication] = None):
        self.comm = check_world(comm, "HeatEnvironment")
        self.topology = self.comm.node_topology()
        torch_process_group(self.comm)  # torch.distributed from MPI, no MASTER_ADDR
        self._address = rendezvous_address()

    @property
    def creates_processes_externally(self) -> bool:
        """True: mpiexec (or srun) started the processes."""
        return True

    @property
    def main_address(self) -> str:
        """The address where the processes met rank 0's ``torch.distributed`` store."""
        return self._address[0] if self._address is not None else "127.0.0.1"

    @property
    def main_port(self) -> int:
        """The port of rank 0's ``torch.distributed`` store."""
        return self._address[1] if self._address is not None else 0

    @staticmethod
    def detect() -> bool:
        """Whether the process runs under MPI with more than one process."""
        return MPI_WORLD.size > 1

    def world_size(self) -> int:
        return self.comm.size

    def set_world_size(self, size: int) -> None:
        """Ignored: the MPI job decides the number of processes."""

    def global_rank(self) -> int:
        return self.comm.rank

    def set_global_rank(self, rank: int) -> None:
        """Ignored: the MPI job decides the ranks."""

    def local_rank(self) -> int:
        """The rank inside the (possibly emulated) node."""
        return self.topology.local_rank

    def node_rank(self) -> int:
        """The node's number (nodes are numbered by their smallest rank)."""
        return self.topology.node_index

    @property
    def num_nodes(self) -> int:
        return self.topology.num_nodes

    @property
    def local_size(self) -> int:
        """Processes on this node."""
        return self.topology.local_size

    def validate_settings(self, num_devices: int, num_nodes: int) -> None:
        """Nothing to check: the layout comes from the MPI job, not from the Trainer's flags."""
