"""
Node topology: how the processes of a communicator sit on nodes (node-local and cross-node
communicators), real (shared-memory split) or emulated (``HEAT_RANKS_PER_NODE``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from mpi4py import MPI

if TYPE_CHECKING:  # only for annotations: the communicator is built from this module's part
    from .communicator import MPICommunication


@dataclass(frozen=True)
class NodeTopology:
    """
    How the processes of a communicator are placed on nodes.

    Attributes
    ----------
    node_comm : MPICommunication
        The processes on this node (ordered by rank in the parent communicator).
    node_index : int
        This node's number; nodes are numbered by the smallest world rank they contain.
    num_nodes : int
        Number of nodes.
    local_rank, local_size : int
        Rank and size within ``node_comm``.
    cross_node_comm : MPICommunication
        The processes with this ``local_rank`` on every node, ordered by node index.
    leader_comm : MPICommunication or None
        Local rank 0 of every node, ordered by node index; None on other processes.
    ranks_per_node : int or None
        The emulated node size (``HEAT_RANKS_PER_NODE``), None for the shared-memory split.
    """

    node_comm: "MPICommunication"
    node_index: int
    num_nodes: int
    local_rank: int
    local_size: int
    cross_node_comm: "MPICommunication"
    leader_comm: Optional["MPICommunication"]
    ranks_per_node: Optional[int] = None

    def free(self) -> None:
        """Free the communicators of an uncached topology (``node_topology(cached=False)``)."""
        for comm in (self.node_comm, self.cross_node_comm, self.leader_comm):
            if comm is not None:
                comm.Free()


class _NodeTopology:
    """Node topology of :class:`MPICommunication` (one of its parts)."""

    # set by MPICommunication.__init__
    handle: MPI.Intracomm
    rank: int
    size: int

    def node_topology(
        self, ranks_per_node: Optional[int] = None, cached: bool = True
    ) -> NodeTopology:
        """
        How this communicator's processes sit on nodes (collective on this communicator).

        Parameters
        ----------
        ranks_per_node : int, optional
            Emulate nodes of this many consecutive world ranks. Default: ``HEAT_RANKS_PER_NODE``
            when set, else the shared-memory split (``MPI.COMM_TYPE_SHARED``).
        cached : bool
            Reuse (and store) the topology computed for the same ``ranks_per_node``. With False a
            fresh topology is computed; the caller may ``free()`` it.

        Returns
        -------
        NodeTopology

        Raises
        ------
        ValueError
            If ``ranks_per_node`` (or ``HEAT_RANKS_PER_NODE``) is not a positive integer.

        Examples
        --------
        >>> topo = MPI_WORLD.node_topology(ranks_per_node=2)  # with 4 processes
        >>> topo.num_nodes, topo.local_size
        (2, 2)
        """
        if ranks_per_node is None:
            setting = os.environ.get("HEAT_RANKS_PER_NODE", "").strip()
            if setting:
                try:
                    ranks_per_node = int(setting)
                except ValueError:
                    raise ValueError(
                        f"HEAT_RANKS_PER_NODE must be a positive integer, got {setting!r}"
                    ) from None
                if ranks_per_node < 1:
                    raise ValueError(
                        f"HEAT_RANKS_PER_NODE must be a positive integer, got {setting!r}"
                    )
        else:
            if isinstance(ranks_per_node, bool) or not isinstance(ranks_per_node, int):
                raise TypeError(
                    f"ranks_per_node must be an int, got {type(ranks_per_node).__name__}"
                )
            if ranks_per_node < 1:
                raise ValueError(f"ranks_per_node must be positive, got {ranks_per_node}")
        if cached and ranks_per_node in self._topologies:
            return self._topologies[ranks_per_node]
        topology = self._compute_topology(ranks_per_node)
        if cached:
            self._topologies[ranks_per_node] = topology
        return topology

    def _compute_topology(self, ranks_per_node: Optional[int]) -> NodeTopology:
        world_rank = MPI.COMM_WORLD.Get_rank()
        if ranks_per_node is None:
            node_handle = self.handle.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        else:
            node_handle = self.handle.Split(world_rank // ranks_per_node, self.rank)
        node_comm = type(self)(node_handle)
        node_min = node_handle.allreduce(world_rank, op=MPI.MIN)
        node_mins = sorted(set(self.handle.allgather(node_min)))
        node_index = node_mins.index(node_min)
        cross_node_comm = self.Split(node_comm.rank, node_index)
        leader_comm = self.Split(0 if node_comm.rank == 0 else MPI.UNDEFINED, node_index)
        return NodeTopology(
            node_comm=node_comm,
            node_index=node_index,
            num_nodes=len(node_mins),
            local_rank=node_comm.rank,
            local_size=node_comm.size,
            cross_node_comm=cross_node_comm,
            leader_comm=leader_comm,
            ranks_per_node=ranks_per_node,
        )
