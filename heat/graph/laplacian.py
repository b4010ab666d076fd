"""
Graph Laplacians of similarity graphs over distributed samples.
"""

from __future__ import annotations

import numbers
from typing import Callable, Tuple

import torch

import heat as ht

__all__ = ["Laplacian"]

_DEFINITIONS = ("norm_sym", "simple")
_MODES = ("fully_connected", "eNeighbour")
_THRESHOLD_KEYS = ("upper", "lower")


class Laplacian:
    """
    The Laplacian of the similarity graph of a set of samples (HeAT's interface): the samples
    are the nodes, ``similarity(X)`` gives the edge weights ``W`` (self-loops removed), and
    with the degrees ``D = diag(W 1)``

    * ``definition="simple"``: ``L = D - W``;
    * ``definition="norm_sym"``: ``L = I - D^-1/2 W D^-1/2`` (isolated nodes: ``L_ii = 1``).

    The matrix is built distributed, in the layout of the similarity matrix (split along its
    rows when the samples are split along theirs); nothing is gathered. Memory: the ``n x n``
    matrix (one copy besides the similarity matrix).

    Parameters
    ----------
    similarity : callable
        ``similarity(X)`` returns the ``n x n`` similarity (or distance, with
        ``mode="eNeighbour"``) matrix of the ``n`` samples ``X``, e.g.
        ``lambda x: ht.spatial.rbf(x, sigma=1.0)``.
    weighted : bool
        With ``mode="eNeighbour"``: the edges keep their similarity as weight (True) or get
        weight 1 (False). A fully connected graph is always weighted.
    definition : {"norm_sym", "simple"}
        The symmetric normalized Laplacian or the unnormalized one.
    mode : {"fully_connected", "eNeighbour"}
        "fully_connected": every pair of samples is connected with its similarity as weight.
        "eNeighbour": only pairs whose similarity is below (``threshold_key="upper"``) or above
        (``"lower"``) ``threshold_value`` are connected.
    threshold_key : {"upper", "lower"}
        Whether ``threshold_value`` bounds the connected similarities from above or below.
    threshold_value : float
        The threshold of "eNeighbour".
    neighbours : int
        Accepted for HeAT compatibility (the k-nearest-neighbour graph HeAT reserves it for is
        not offered there either); must be a positive integer.

    Raises
    ------
    TypeError
        If ``similarity`` is not callable, ``weighted`` is not a bool, ``threshold_value`` is
        not a real number or ``neighbours`` not an integer.
    ValueError
        If ``definition``, ``mode`` or ``threshold_key`` is not one of the allowed values, or
        ``neighbours`` < 1.

    Examples
    --------
    >>> x = ht.array([[0.0], [0.1], [5.0]], split=0)
    >>> laplacian = ht.graph.Laplacian(lambda x: ht.spatial.cdist(x), definition="simple",
    ...                                mode="eNeighbour", threshold_key="upper",
    ...                                threshold_value=1.0, weighted=False)
    >>> laplacian.construct(x)
    DNDarray([[ 1., -1.,  0.],
              [-1.,  1.,  0.],
              [ 0.,  0.,  0.]], dtype=ht.float32, device=cpu:0, split=0)
    """

    def __init__(
        self,
        similarity: Callable,
        weighted: bool = True,
        definition: str = "norm_sym",
        mode: str = "fully_connected",
        threshold_key: str = "upper",
        threshold_value: float = 1.0,
        neighbours: int = 10,
    ):
        if not callable(similarity):
            raise TypeError(f"similarity must be callable, but was {type(similarity).__name__}")
        if not isinstance(weighted, bool):
            raise TypeError(f"weighted must be a bool, but was {type(weighted).__name__}")
        for name, value, allowed in (
            ("definition", definition, _DEFINITIONS),
            ("mode", mode, _MODES),
            ("threshold_key", threshold_key, _THRESHOLD_KEYS),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, but was {value!r}")
        if isinstance(threshold_value, bool) or not isinstance(threshold_value, numbers.Real):
            raise TypeError(
                f"threshold_value must be a real number, but was {type(threshold_value).__name__}"
            )
        if isinstance(neighbours, bool) or not isinstance(neighbours, numbers.Integral):
            raise TypeError(f"neighbours must be an integer, but was {type(neighbours).__name__}")
        if neighbours < 1:
            raise ValueError(f"neighbours must be >= 1, but was {neighbours}")
        self.similarity_metric = similarity
        self.weighted = weighted
        self.definition = definition
        self.mode = mode
        self.epsilon = (threshold_key, float(threshold_value))
        self.neighbours = int(neighbours)

    @property
    def threshold_key(self) -> str:
        """Whether the threshold bounds the connected similarities from above or below."""
        return self.epsilon[0]

    @property
    def threshold_value(self) -> float:
        """The threshold of ``mode="eNeighbour"``."""
        return self.epsilon[1]

    def construct(self, X: ht.DNDarray) -> ht.DNDarray:
        """
        The Laplacian of the similarity graph of the samples ``X``. Collective.

        Parameters
        ----------
        X : DNDarray
            The samples, as ``similarity`` takes them (usually ``n x f``, split along the rows).

        Returns
        -------
        DNDarray
            The ``n x n`` Laplacian, floating point (float32 for an integer similarity), in the
            layout of the similarity matrix.

        Raises
        ------
        ValueError
            If the similarity matrix is not square.

        Examples
        --------
        >>> x = ht.random.randn(10, 3, split=0)
        >>> L = ht.graph.Laplacian(lambda x: ht.spatial.rbf(x, sigma=1.0)).construct(x)
        >>> L.shape, L.split
        ((10, 10), 0)
        """
        weights = self.similarity_metric(X)
        if not isinstance(weights, ht.DNDarray):
            raise TypeError(
                f"similarity must return a DNDarray, but returned {type(weights).__name__}"
            )
        if weights.ndim != 2 or weights.shape[0] != weights.shape[1]:
            raise ValueError(
                f"similarity must return a square matrix, but returned shape {weights.shape}"
            )
        dtype = weights.dtype
        if not ht.types.heat_type_is_realfloating(dtype):
            dtype = ht.types.promote_types(dtype, ht.float32)
        block = weights.larray.to(dtype.torch_type())
        if self.mode == "eNeighbour":
            key, value = self.epsilon
            connected = block < value if key == "upper" else block > value
            edges = block if self.weighted else torch.ones_like(block)
            block = torch.where(connected, edges, torch.zeros_like(block))
        else:
            block = block.clone()
        row0, col0 = _block_offsets(weights)
        diagonal = _local_diagonal(block, row0, col0)
        block[diagonal] = 0  # no self-loops
        degrees = block.sum(dim=1)
        comm = weights.comm
        if weights.split == 1 and comm.size > 1:
            degrees = comm.allreduce_tensor(degrees)  # every process has all rows, partly
        elif weights.split == 0 and comm.size > 1:
            degrees = comm.allgather_tensors(degrees, axis=0)
        rows = slice(row0, row0 + block.shape[0])
        cols = slice(col0, col0 + block.shape[1])
        if self.definition == "simple":
            laplacian = -block + 0.0  # + 0.0: no negative zeros for missing edges
            laplacian[diagonal] = degrees[rows][diagonal[0]]
        else:
            scale = torch.where(degrees > 0, degrees.rsqrt(), torch.zeros_like(degrees))
            laplacian = -(block * scale[rows].unsqueeze(1) * scale[cols].unsqueeze(0)) + 0.0
            laplacian[diagonal] = 1.0
        return ht.DNDarray(
            laplacian,
            weights.gshape,
            dtype,
            weights.split,
            weights.device,
            comm,
            weights.balanced if weights.split is not None else True,
        )


def _block_offsets(x: ht.DNDarray) -> Tuple[int, int]:
    """Global row and column of the local block's first element."""
    if x.split is None or x.comm.size == 1:
        return 0, 0
    first = x.counts_displs()[1][x.comm.rank]
    return (first, 0) if x.split == 0 else (0, first)


def _local_diagonal(block: torch.Tensor, row0: int, col0: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """Local (row, column) indices of the global diagonal's entries inside the block."""
    start = max(row0, col0)
    stop = min(row0 + block.shape[0], col0 + block.shape[1])
    index = torch.arange(start, max(start, stop), device=block.device)
    return index - row0, index - col0
