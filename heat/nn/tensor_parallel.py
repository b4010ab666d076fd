"""
Tensor parallelism (Megatron-style): the weights of a layer split over the processes of a
communicator, every process computing its part of every sample.

* :class:`ColumnParallelLinear` -- the weight split along the output features: each process
  computes its slice of the output from the whole (replicated) input; the gradient of the input is
  summed over the processes in backward (one all-reduce);
* :class:`RowParallelLinear` -- the weight split along the input features: each process multiplies
  its slice of the input, the partial products are summed in forward (one all-reduce), the bias
  added once after the sum;
* :class:`ParallelEmbedding` -- the vocabulary split: ids outside a process's rows give zeros,
  then one all-reduce;
* :class:`ParallelMLP` (column then row: one all-reduce forward, one backward) and
  :class:`ParallelSelfAttention` (heads split; queries, keys and values column-parallel, the output
  projection row-parallel);
* :func:`parallelize` -- replace submodules of a model by their parallel versions, built from the
  weights they hold.

The collectives are small ``torch.autograd.Function`` objects (identity forward / all-reduce
backward, all-reduce forward / identity backward, all-gather / slice, slice / all-gather) whose
communication goes through heat's communicator. Every process of ``comm`` runs the same forward
and backward with the same (replicated) inputs; the parameters a process holds are its own shards
(``weight``) and the replicated parts (a row-parallel bias), so any ``torch.optim`` optimizer
updates them as one process would update the whole layer.

The layout of a split is heat's balanced layout (``comm.counts_displs_shape``): 10 output features
over 3 processes are 4, 3 and 3; a process may hold none. ``weight_dndarray`` shows the global
weight as a DNDarray (a view of the shards, no copy).
"""

from __future__ import annotations

import math
import zlib
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import torch

from ..core import devices, types
from ..core.communication import MPICommunication, sanitize_comm, verdicts
from ..core.dndarray import DNDarray
from ..core.sanitation import check_bool, check_choice, check_int, check_type

__all__ = [
    "ColumnParallelLinear",
    "ParallelEmbedding",
    "ParallelMLP",
    "ParallelSelfAttention",
    "RowParallelLinear",
    "parallelize",
]


# ------------------------------------------------------------------------------------------------
# the transport: collectives inside autograd
# ------------------------------------------------------------------------------------------------


def _all_reduce(comm: MPICommunication, t: torch.Tensor) -> torch.Tensor:
    """The sum of ``t`` over the processes of ``comm`` (a new tensor; ``t`` itself alone)."""
    if comm.size == 1:
        return t
    return comm.allreduce_tensor(t.detach().contiguous())


def _gather_last(comm: MPICommunication, t: torch.Tensor, counts: Sequence[int]) -> torch.Tensor:
    """The blocks of the processes joined along the last axis (``counts[r]`` columns from r)."""
    if comm.size == 1:
        return t
    front = t.detach().movedim(-1, 0).contiguous()  # Allgatherv joins along the first axis
    rest = tuple(front.shape[1:])
    row = math.prod(rest)
    out = torch.empty((sum(counts),) + rest, dtype=t.dtype, device=t.device)
    comm.Allgatherv(front, (out, [c * row for c in counts]))
    return out.movedim(0, -1).contiguous()


def _slice_last(t: torch.Tensor, start: int, count: int) -> torch.Tensor:
    return t.narrow(-1, start, count).contiguous()


class _CopyToParallel(torch.autograd.Function):
    """Identity forward; the gradient summed over the processes in backward."""

    @staticmethod
    def forward(ctx, x, comm):
        ctx.comm = comm
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return _all_reduce(ctx.comm, grad), None


class _ReduceFromParallel(torch.autograd.Function):
    """The partial results summed over the processes in forward; identity backward."""

    @staticmethod
    def forward(ctx, x, comm):
        return _all_reduce(comm, x)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class _GatherFromParallel(torch.autograd.Function):
    """The slices joined along the last axis in forward; the own slice of the gradient back."""

    @staticmethod
    def forward(ctx, x, comm, counts, displs):
        ctx.start, ctx.count = displs[comm.rank], counts[comm.rank]
        return _gather_last(comm, x, counts)

    @staticmethod
    def backward(ctx, grad):
        return _slice_last(grad, ctx.start, ctx.count), None, None, None


class _ScatterToParallel(torch.autograd.Function):
    """The own slice of the last axis in forward; the gradient slices joined in backward."""

    @staticmethod
    def forward(ctx, x, comm, counts, displs):
        ctx.comm, ctx.counts = comm, counts
        return _slice_last(x, displs[comm.rank], counts[comm.rank])

    @staticmethod
    def backward(ctx, grad):
        return _gather_last(ctx.comm, grad, ctx.counts), None, None, None


def _copy_to_parallel(x: torch.Tensor, comm: MPICommunication) -> torch.Tensor:
    return x if comm.size == 1 else _CopyToParallel.apply(x, comm)


def _reduce_from_parallel(x: torch.Tensor, comm: MPICommunication) -> torch.Tensor:
    return x if comm.size == 1 else _ReduceFromParallel.apply(x, comm)


# ------------------------------------------------------------------------------------------------
# the plan: layouts, argument checks and their agreement
# ------------------------------------------------------------------------------------------------


def _layout(
    comm: MPICommunication, total: int, counts: Optional[Sequence[int]] = None
) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """Counts and displacements of ``total`` features: balanced, or the ``counts`` given."""
    if counts is None:
        counts, displs, _ = comm.counts_displs_shape((total,), 0)
        return counts, displs
    counts = tuple(int(c) for c in counts)
    displs = tuple(sum(counts[:r]) for r in range(len(counts)))
    return counts, displs


def _checksum(t: Optional[torch.Tensor]) -> Optional[int]:
    """A checksum of the bits of ``t`` (so that processes can compare copies of a weight)."""
    if t is None or t.numel() == 0:
        return None
    raw = t.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8)
    return zlib.crc32(raw.numpy().tobytes())


def _agree(
    comm: MPICommunication, owner: str, check: Callable[[], Any], entries: Callable[[Any], Dict]
) -> Any:
    """
    Run ``check()`` on every process; one small all-gather; the same exception everywhere if any
    process failed or the processes' ``entries(result)`` (name -> value) differ.
    """

    def fingerprint(result):
        return f"{owner}'s arguments", {
            name: repr(value) for name, value in entries(result).items()
        }

    return verdicts.agree(comm, check, fingerprint=fingerprint)


def _check_comm(comm: Any) -> MPICommunication:
    return sanitize_comm(comm)


def _check_floating(dtype: Any) -> Optional[torch.dtype]:
    if dtype is None:
        return None
    check_type(dtype, "dtype", torch.dtype, "None or a torch.dtype")
    if not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating-point torch.dtype, got {dtype}")
    return dtype


def _check_input(x: Any, features: int, name: str = "input") -> None:
    """The (local) input check of a forward pass."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim == 0 or x.shape[-1] != features:
        raise ValueError(
            f"{name} must have {features} features in its last dimension, got shape "
            f"{tuple(x.shape)}"
        )


def _split_view(local: torch.Tensor, axis: int, counts, comm: MPICommunication) -> DNDarray:
    """The global tensor whose blocks along ``axis`` are the processes' ``local`` (no copy)."""
    shape = list(local.shape)
    shape[axis] = sum(counts)
    balanced = tuple(counts) == comm.counts_displs_shape(tuple(shape), axis)[0]
    return DNDarray(
        local.detach(),
        tuple(shape),
        types.canonical_heat_type(local.dtype),
        axis,
        devices.sanitize_device(local.device),
        comm,
        balanced,
    )


def _parameter(t: torch.Tensor) -> torch.nn.Parameter:
    return torch.nn.Parameter(t.detach().clone().contiguous())


# ------------------------------------------------------------------------------------------------
# the math: the layers
# ------------------------------------------------------------------------------------------------


class ColumnParallelLinear(torch.nn.Module):
    """
    A linear layer ``y = x A^T + b`` whose weight ``A`` (``out_features x in_features``, torch's
    layout) is split along the output features over the processes of ``comm``: each process holds
    the rows of ``A`` (and entries of ``b``) of its output slice and computes that slice from the
    whole input. The layout is heat's balanced one (10 features over 3 processes: 4, 3, 3).

    Forward needs no communication (with ``gather_output=True``, one all-gather joins the slices);
    backward sums the gradient of the input over the processes (one all-reduce). Followed by a
    :class:`RowParallelLinear` with ``input_is_parallel=True``, the slice is exactly the input
    that layer expects (:class:`ParallelMLP`).

    The weight is initialised as ``torch.nn.Linear(in_features, out_features)`` would initialise
    it: every process draws the whole weight from its own generator and keeps its rows, so with
    torch's generator seeded alike everywhere the layer equals that ``torch.nn.Linear`` (and with
    different seeds it is still a valid random initialisation).

    Parameters
    ----------
    in_features : int
        Size of each input sample (>= 1).
    out_features : int
        Size of each output sample (>= 1); fewer than processes leaves some processes without
        features.
    bias : bool
        Learn an additive bias (split like the output).
    comm : MPICommunication, optional
        The processes sharing the layer (default: the default communicator).
    gather_output : bool
        Return the whole output on every process instead of the own slice.
    dtype : torch.dtype, optional
        Floating-point type of the parameters (keyword only).
    device : torch.device or str, optional
        Where the parameters live (keyword only).

    Attributes
    ----------
    weight : torch.nn.Parameter
        This process's rows of the weight, ``(counts[rank], in_features)``.
    bias : torch.nn.Parameter or None
        This process's entries of the bias, ``(counts[rank],)``.
    counts, displs : tuple of int
        Output features per process and the first feature of each process.
    comm : MPICommunication

    Raises
    ------
    TypeError, ValueError
        On every process, for an argument of the wrong type or value, or if the processes pass
        different shapes or options (one small all-gather at construction).

    See Also
    --------
    RowParallelLinear, ParallelMLP, parallelize

    Examples
    --------
    >>> torch.manual_seed(0)
    >>> layer = ht.nn.ColumnParallelLinear(4, 10)  # 3 processes: 4, 3 and 3 output features
    >>> layer.weight.shape                          # on process 0
    torch.Size([4, 4])
    >>> layer(torch.ones(2, 4)).shape              # the own slice of the output
    torch.Size([2, 4])
    >>> layer.weight_dndarray.shape, layer.weight_dndarray.split
    ((10, 4), 0)
    >>> full = ht.nn.ColumnParallelLinear(4, 10, gather_output=True)
    >>> full(torch.ones(2, 4)).shape
    torch.Size([2, 10])
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        comm: Optional[MPICommunication] = None,
        gather_output: bool = False,
        *,
        dtype: Optional[torch.dtype] = None,
        device: Any = None,
    ):
        super().__init__()
        comm = _check_comm(comm)

        def check():
            gather = check_bool(gather_output, "gather_output")
            linear = _checked_linear(in_features, out_features, bias, dtype, device)
            return linear, gather

        linear, gather = _agree(
            comm, "ColumnParallelLinear", check, lambda r: _linear_entries(r[0], gather_output=r[1])
        )
        self._setup(comm, linear.weight, linear.bias, gather)

    def _setup(self, comm, weight, bias, gather_output, counts=None) -> None:
        self.comm = comm
        self.out_features, self.in_features = weight.shape
        self.gather_output = gather_output
        self.counts, self.displs = _layout(comm, self.out_features, counts)
        rows = slice(self.displs[comm.rank], self.displs[comm.rank] + self.counts[comm.rank])
        self.weight = _parameter(weight[rows])
        self.bias = None if bias is None else _parameter(bias[rows])

    @classmethod
    def from_linear(
        cls,
        linear: torch.nn.Linear,
        comm: Optional[MPICommunication] = None,
        gather_output: bool = False,
    ) -> "ColumnParallelLinear":
        """
        The column-parallel version of ``linear``: every process keeps its rows of
        ``linear.weight`` (and of its bias). ``linear`` must be the same on every process.

        Parameters
        ----------
        linear : torch.nn.Linear
        comm : MPICommunication, optional
        gather_output : bool

        Raises
        ------
        TypeError, ValueError
            On every process, for a wrong argument, or if ``linear`` differs between processes
            (its shape, dtype, or the bits of its weight or bias).

        Examples
        --------
        >>> torch.manual_seed(0)
        >>> linear = torch.nn.Linear(8, 10)
        >>> layer = ht.nn.ColumnParallelLinear.from_linear(linear, gather_output=True)
        >>> torch.allclose(layer(x), linear(x))
        True
        """
        return _from_linear(cls, linear, comm, "gather_output", gather_output)

    @property
    def weight_dndarray(self) -> DNDarray:
        """
        The global weight, ``(out_features, in_features)`` split along axis 0: a DNDarray whose
        local blocks are the processes' ``weight`` (a view; no communication, no copy).
        """
        return _split_view(self.weight, 0, self.counts, self.comm)

    @property
    def bias_dndarray(self) -> Optional[DNDarray]:
        """The global bias, split along axis 0 (a view), or None without bias."""
        return None if self.bias is None else _split_view(self.bias, 0, self.counts, self.comm)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        """
        The own slice of the output, ``(..., counts[rank])``, or with ``gather_output`` the whole
        output ``(..., out_features)``. ``input`` (``(..., in_features)``) must be the same on every
        process.
        """
        _check_input(input, self.in_features)
        x = _copy_to_parallel(input, self.comm)
        y = torch.nn.functional.linear(x, self.weight, self.bias)
        if self.gather_output and self.comm.size > 1:
            y = _GatherFromParallel.apply(y, self.comm, self.counts, self.displs)
        return y

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}, gather_output={self.gather_output}, "
            f"counts={self.counts}"
        )


class RowParallelLinear(torch.nn.Module):
    """
    A linear layer ``y = x A^T + b`` whose weight ``A`` (``out_features x in_features``) is split
    along the input features over the processes of ``comm``: each process multiplies its slice of
    the input by its columns of ``A``; the partial products are summed over the processes (one
    all-reduce in forward) and the bias, replicated on every process, is added once after the sum.
    Backward needs no communication (with ``input_is_parallel=False``, one all-gather joins the
    slices of the input's gradient).

    The weight is initialised as ``torch.nn.Linear(in_features, out_features)`` would initialise
    it (every process draws the whole weight and keeps its columns); the bias, which every
    process holds whole, is then taken from process 0, so that the processes agree on it even
    where torch's generator was seeded differently.

    Parameters
    ----------
    in_features : int
        Size of each input sample (>= 1), split over the processes (balanced layout).
    out_features : int
        Size of each output sample (>= 1).
    bias : bool
        Learn an additive bias (replicated).
    comm : MPICommunication, optional
        The processes sharing the layer (default: the default communicator).
    input_is_parallel : bool
        True (default): ``forward`` takes this process's slice of the input,
        ``(..., counts[rank])`` (what a :class:`ColumnParallelLinear` returns); False: the whole
        input, which every process slices itself.
    dtype : torch.dtype, optional
        Floating-point type of the parameters (keyword only).
    device : torch.device or str, optional
        Where the parameters live (keyword only).

    Attributes
    ----------
    weight : torch.nn.Parameter
        This process's columns of the weight, ``(out_features, counts[rank])``.
    bias : torch.nn.Parameter or None
        The whole bias, ``(out_features,)``, the same on every process.
    counts, displs : tuple of int
        Input features per process and the first feature of each process.
    comm : MPICommunication

    Raises
    ------
    TypeError, ValueError
        On every process, for an argument of the wrong type or value, or if the processes pass
        different shapes or options.

    See Also
    --------
    ColumnParallelLinear, ParallelMLP, parallelize

    Examples
    --------
    >>> layer = ht.nn.RowParallelLinear(10, 4, input_is_parallel=False)  # 4, 3, 3 inputs
    >>> layer(torch.ones(2, 10)).shape          # the whole output on every process
    torch.Size([2, 4])
    >>> layer.weight_dndarray.shape, layer.weight_dndarray.split
    ((4, 10), 1)
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        comm: Optional[MPICommunication] = None,
        input_is_parallel: bool = True,
        *,
        dtype: Optional[torch.dtype] = None,
        device: Any = None,
    ):
        super().__init__()
        comm = _check_comm(comm)

        def check():
            parallel = check_bool(input_is_parallel, "input_is_parallel")
            linear = _checked_linear(in_features, out_features, bias, dtype, device)
            return linear, parallel

        linear, parallel = _agree(
            comm,
            "RowParallelLinear",
            check,
            lambda r: _linear_entries(r[0], input_is_parallel=r[1]),
        )
        self._setup(comm, linear.weight, linear.bias, parallel)
        if self.bias is not None and comm.size > 1:
            with torch.no_grad():
                comm.Bcast(self.bias.data, root=0)

    def _setup(self, comm, weight, bias, input_is_parallel, counts=None) -> None:
        self.comm = comm
        self.out_features, self.in_features = weight.shape
        self.input_is_parallel = input_is_parallel
        self.counts, self.displs = _layout(comm, self.in_features, counts)
        start = self.displs[comm.rank]
        self.weight = _parameter(weight[:, start : start + self.counts[comm.rank]])
        self.bias = None if bias is None else _parameter(bias)

    @classmethod
    def from_linear(
        cls,
        linear: torch.nn.Linear,
        comm: Optional[MPICommunication] = None,
        input_is_parallel: bool = True,
    ) -> "RowParallelLinear":
        """
        The row-parallel version of ``linear``: every process keeps its columns of
        ``linear.weight`` and the whole bias. ``linear`` must be the same on every process.

        Parameters
        ----------
        linear : torch.nn.Linear
        comm : MPICommunication, optional
        input_is_parallel : bool

        Raises
        ------
        TypeError, ValueError
            On every process, for a wrong argument, or if ``linear`` differs between processes.

        Examples
        --------
        >>> linear = torch.nn.Linear(10, 4)
        >>> layer = ht.nn.RowParallelLinear.from_linear(linear, input_is_parallel=False)
        >>> torch.allclose(layer(x), linear(x))
        True
        """
        return _from_linear(cls, linear, comm, "input_is_parallel", input_is_parallel)

    @property
    def weight_dndarray(self) -> DNDarray:
        """
        The global weight, ``(out_features, in_features)`` split along axis 1: a DNDarray whose
        local blocks are the processes' ``weight`` (a view; no communication, no copy).
        """
        return _split_view(self.weight, 1, self.counts, self.comm)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        """
        The whole output ``(..., out_features)`` on every process, from this process's slice of
        the input (``input_is_parallel``) or from the whole input.
        """
        if self.input_is_parallel:
            _check_input(input, self.counts[self.comm.rank], "input (this process's slice)")
            x = input
        else:
            _check_input(input, self.in_features)
            x = input
            if self.comm.size > 1:
                x = _ScatterToParallel.apply(input, self.comm, self.counts, self.displs)
        partial = torch.nn.functional.linear(x, self.weight)
        y = _reduce_from_parallel(partial, self.comm)
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}, input_is_parallel={self.input_is_parallel}, "
            f"counts={self.counts}"
        )


def _from_linear(cls, linear: Any, comm: Any, option: str, value: Any) -> torch.nn.Module:
    """
    ``cls`` (a column- or row-parallel layer) built from ``linear``, the same on every process,
    with its one boolean ``option`` (``gather_output`` / ``input_is_parallel``) set to ``value``.
    """
    comm = _check_comm(comm)

    def check():
        check_type(linear, "linear", torch.nn.Linear, "a torch.nn.Linear")
        return check_bool(value, option)

    flag = _agree(
        comm,
        f"{cls.__name__}.from_linear",
        check,
        lambda r: _linear_entries(linear, checksums=True, **{option: r}),
    )
    layer = cls.__new__(cls)
    torch.nn.Module.__init__(layer)
    layer._setup(comm, linear.weight, linear.bias, flag)
    return layer


def _checked_linear(in_features, out_features, bias, dtype, device) -> torch.nn.Linear:
    """A ``torch.nn.Linear`` of the checked arguments (the whole weight, drawn here)."""
    in_features = check_int(in_features, "in_features", 1)
    out_features = check_int(out_features, "out_features", 1)
    bias = check_bool(bias, "bias")
    dtype = _check_floating(dtype)
    return torch.nn.Linear(in_features, out_features, bias=bias, dtype=dtype, device=device)


def _linear_entries(linear: torch.nn.Linear, checksums: bool = False, **options) -> Dict:
    entries = {
        "in_features": linear.in_features,
        "out_features": linear.out_features,
        "bias": linear.bias is not None,
        "dtype": linear.weight.dtype,
        **options,
    }
    if checksums:
        entries["weight checksum"] = _checksum(linear.weight)
        entries["bias checksum"] = _checksum(linear.bias)
    return entries


class ParallelEmbedding(torch.nn.Module):
    """
    A lookup table whose rows (the vocabulary) are split over the processes of ``comm``: each
    process looks up the ids in its rows and gives zeros for the others; one all-reduce sums the
    processes' results, the same output as ``torch.nn.Embedding``. Backward needs no
    communication: each process's rows receive the gradients of their own ids.

    The table is initialised as ``torch.nn.Embedding(num_embeddings, embedding_dim)`` would
    initialise it (every process draws the whole table and keeps its rows).

    Parameters
    ----------
    num_embeddings : int
        Size of the vocabulary (>= 1), split in heat's balanced layout.
    embedding_dim : int
        Size of each embedding vector (>= 1).
    comm : MPICommunication, optional
        The processes sharing the table (default: the default communicator).
    padding_idx : int, optional
        As in ``torch.nn.Embedding``: that row starts as zeros and gets no gradient (keyword only).
    dtype : torch.dtype, optional
        Floating-point type of the table (keyword only).
    device : torch.device or str, optional
        Where the table lives (keyword only).

    Attributes
    ----------
    weight : torch.nn.Parameter
        This process's rows, ``(counts[rank], embedding_dim)``.
    counts, displs : tuple of int
        Rows per process and the first row of each process.

    Raises
    ------
    TypeError, ValueError
        On every process, for an argument of the wrong type or value, or if the processes pass
        different shapes or options.

    Examples
    --------
    >>> torch.manual_seed(0)
    >>> table = ht.nn.ParallelEmbedding(10, 3)   # rows 0-3, 4-6, 7-9 on 3 processes
    >>> table(torch.tensor([[0, 9], [5, 5]])).shape
    torch.Size([2, 2, 3])
    >>> table.weight_dndarray.shape, table.weight_dndarray.split
    ((10, 3), 0)
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        comm: Optional[MPICommunication] = None,
        *,
        padding_idx: Optional[int] = None,
        dtype: Optional[torch.dtype] = None,
        device: Any = None,
    ):
        super().__init__()
        comm = _check_comm(comm)

        def check():
            rows = check_int(num_embeddings, "num_embeddings", 1)
            width = check_int(embedding_dim, "embedding_dim", 1)
            pad = check_int(padding_idx, "padding_idx", -rows, maximum=rows - 1, allow_none=True)
            return torch.nn.Embedding(
                rows, width, padding_idx=pad, dtype=_check_floating(dtype), device=device
            )

        embedding = _agree(comm, "ParallelEmbedding", check, _embedding_entries)
        self._setup(comm, embedding)

    def _setup(self, comm: MPICommunication, embedding: torch.nn.Embedding) -> None:
        self.comm = comm
        self.num_embeddings, self.embedding_dim = embedding.weight.shape
        self.padding_idx = embedding.padding_idx
        self.counts, self.displs = _layout(comm, self.num_embeddings)
        self.start = self.displs[comm.rank]
        self.stop = self.start + self.counts[comm.rank]
        self.weight = _parameter(embedding.weight[self.start : self.stop])
        # the padding row, numbered in this process's rows, where this process holds it
        pad = self.padding_idx
        self._local_padding_idx = (
            pad - self.start if pad is not None and self.start <= pad < self.stop else None
        )

    @classmethod
    def from_embedding(
        cls, embedding: torch.nn.Embedding, comm: Optional[MPICommunication] = None
    ) -> "ParallelEmbedding":
        """
        The parallel version of ``embedding``: every process keeps its rows of the table, which
        must be the same on every process. ``max_norm``, ``scale_grad_by_freq`` and ``sparse``
        are not supported (ValueError).

        Examples
        --------
        >>> embedding = torch.nn.Embedding(10, 3)
        >>> table = ht.nn.ParallelEmbedding.from_embedding(embedding)
        >>> torch.equal(table(ids), embedding(ids))
        True
        """
        comm = _check_comm(comm)

        def check():
            check_type(embedding, "embedding", torch.nn.Embedding, "a torch.nn.Embedding")
            for option, default in (("max_norm", None), ("scale_grad_by_freq", False),
                                    ("sparse", False)):  # fmt: skip
                if getattr(embedding, option) != default:
                    raise ValueError(
                        f"embedding.{option} must be {default} (not supported by "
                        f"ParallelEmbedding), got {getattr(embedding, option)!r}"
                    )
            return embedding

        _agree(
            comm,
            "ParallelEmbedding.from_embedding",
            check,
            lambda e: _embedding_entries(e, checksums=True),
        )
        table = cls.__new__(cls)
        torch.nn.Module.__init__(table)
        table._setup(comm, embedding)
        return table

    @property
    def weight_dndarray(self) -> DNDarray:
        """The whole table, ``(num_embeddings, embedding_dim)`` split along axis 0 (a view)."""
        return _split_view(self.weight, 0, self.counts, self.comm)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        """
        The embeddings of the ids in ``input`` (an integer tensor, the same on every process),
        ``input.shape + (embedding_dim,)``.
        """
        if not isinstance(input, torch.Tensor):
            raise TypeError(f"input must be a torch.Tensor, got {type(input).__name__}")
        if input.dtype.is_floating_point or input.dtype.is_complex or input.dtype == torch.bool:
            raise TypeError(f"input must hold integer ids, got {input.dtype}")
        if input.numel() and (input.min() < 0 or input.max() >= self.num_embeddings):
            raise IndexError(f"input holds ids outside [0, {self.num_embeddings})")
        if self.comm.size == 1:
            return torch.nn.functional.embedding(input, self.weight, self._local_padding_idx)
        outside = (input < self.start) | (input >= self.stop)
        local_ids = (input - self.start).masked_fill(outside, 0)
        if self.counts[self.comm.rank] == 0:
            # no rows here: zeros that still depend on the (empty) table, for a uniform graph
            shape = tuple(input.shape) + (self.embedding_dim,)
            found = self.weight.sum() + torch.zeros(shape, dtype=self.weight.dtype,
                                                    device=self.weight.device)  # fmt: skip
        else:
            found = torch.nn.functional.embedding(local_ids, self.weight, self._local_padding_idx)
            found = found.masked_fill(outside.unsqueeze(-1), 0.0)
        return _reduce_from_parallel(found, self.comm)

    def extra_repr(self) -> str:
        pad = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}, counts={self.counts}"


def _embedding_entries(embedding: torch.nn.Embedding, checksums: bool = False) -> Dict:
    entries = {
        "num_embeddings": embedding.num_embeddings,
        "embedding_dim": embedding.embedding_dim,
        "padding_idx": embedding.padding_idx,
        "dtype": embedding.weight.dtype,
    }
    if checksums:
        entries["weight checksum"] = _checksum(embedding.weight)
    return entries


# ------------------------------------------------------------------------------------------------
# blocks
# ------------------------------------------------------------------------------------------------


def _check_activation(activation: Any) -> Callable:
    if not callable(activation):
        raise TypeError(
            f"activation must be callable (a torch.nn.Module or a function), got "
            f"{type(activation).__name__}"
        )
    return activation


class ParallelMLP(torch.nn.Module):
    """
    The feed-forward block of a transformer, ``fc2(activation(fc1(x)))``, tensor-parallel:
    ``fc1`` is a :class:`ColumnParallelLinear` (``hidden -> ffn_hidden``; each process its slice
    of the hidden features), the activation runs on the slices (it must be element-wise), ``fc2``
    a :class:`RowParallelLinear` (``ffn_hidden -> hidden``) taking the slices. One all-reduce in
    forward (``fc2``'s sum), one in backward (``fc1``'s input gradient).

    Initialised as ``torch.nn.Linear(hidden, ffn_hidden)`` then ``torch.nn.Linear(ffn_hidden,
    hidden)`` would be (see the layers).

    Parameters
    ----------
    hidden : int
        Input and output features.
    ffn_hidden : int
        Features between the layers, split over the processes (balanced layout).
    activation : callable
        Element-wise (default ``torch.nn.functional.gelu``); a module is registered as a
        submodule.
    bias : bool
        Both layers learn a bias.
    comm : MPICommunication, optional
    dtype, device : optional
        Of the parameters (keyword only).

    Attributes
    ----------
    fc1 : ColumnParallelLinear
    fc2 : RowParallelLinear

    Examples
    --------
    >>> mlp = ht.nn.ParallelMLP(16, 64, activation=torch.nn.ReLU())
    >>> mlp(torch.randn(8, 16)).shape   # the same output on every process
    torch.Size([8, 16])
    """

    def __init__(
        self,
        hidden: int,
        ffn_hidden: int,
        activation: Callable = torch.nn.functional.gelu,
        bias: bool = True,
        comm: Optional[MPICommunication] = None,
        *,
        dtype: Optional[torch.dtype] = None,
        device: Any = None,
    ):
        super().__init__()
        comm = _check_comm(comm)
        _agree(comm, "ParallelMLP", lambda: _check_activation(activation), lambda a: {})
        self.fc1 = ColumnParallelLinear(hidden, ffn_hidden, bias, comm, dtype=dtype, device=device)
        self.activation = activation
        self.fc2 = RowParallelLinear(ffn_hidden, hidden, bias, comm, dtype=dtype, device=device)
        self.comm = comm

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        """``(..., hidden)`` -> ``(..., hidden)``, the same on every process."""
        return self.fc2(self.activation(self.fc1(input)))


class ParallelSelfAttention(torch.nn.Module):
    """
    Multi-head self-attention with its heads split over the processes of ``comm``: the query,
    key and value projections are :class:`ColumnParallelLinear` layers whose slices are whole
    heads, each process attends with its own heads, and the output projection is a
    :class:`RowParallelLinear` taking the heads' outputs. One all-reduce in forward (the output
    projection's sum), one in backward (the input's gradient, shared by the three projections).

    The heads may be split unevenly: heat's balanced layout of ``num_heads`` (6 heads over 4
    processes: 2, 2, 1, 1; with fewer heads than processes some processes hold none). The result
    equals ``torch.nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)`` applied as
    ``mha(x, x, x, need_weights=False)[0]``, and the layer is initialised as that module would be
    (every process builds it and keeps its heads; :meth:`from_multihead_attention` takes an
    existing one). Dropout is not supported.

    Parameters
    ----------
    embed_dim : int
        Features of each token (>= 1), divisible by ``num_heads``.
    num_heads : int
        Attention heads (>= 1).
    bias : bool
        The projections learn biases.
    comm : MPICommunication, optional
    dtype, device : optional
        Of the parameters (keyword only).

    Attributes
    ----------
    q_proj, k_proj, v_proj : ColumnParallelLinear
        ``embed_dim -> embed_dim``, split by heads (``counts = heads x head_dim``).
    out_proj : RowParallelLinear
        ``embed_dim -> embed_dim``, its input split by heads.
    head_counts : tuple of int
        Heads per process.

    Raises
    ------
    TypeError, ValueError
        On every process, for an argument of the wrong type or value (``embed_dim`` not
        divisible by ``num_heads``), or if the processes pass different ones.

    Examples
    --------
    >>> attention = ht.nn.ParallelSelfAttention(16, 4)   # 2, 1, 1 heads on 3 processes
    >>> attention(torch.randn(2, 5, 16), is_causal=True).shape
    torch.Size([2, 5, 16])
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        bias: bool = True,
        comm: Optional[MPICommunication] = None,
        *,
        dtype: Optional[torch.dtype] = None,
        device: Any = None,
    ):
        super().__init__()
        comm = _check_comm(comm)

        def check():
            width = check_int(embed_dim, "embed_dim", 1)
            heads = check_int(num_heads, "num_heads", 1)
            if width % heads:
                raise ValueError(
                    f"embed_dim must be divisible by num_heads, got {width} and {heads}"
                )
            return torch.nn.MultiheadAttention(
                width,
                heads,
                bias=check_bool(bias, "bias"),
                batch_first=True,
                dtype=_check_floating(dtype),
                device=device,
            )

        mha = _agree(comm, "ParallelSelfAttention", check, _attention_entries)
        self._setup(comm, mha)
        if self.out_proj.bias is not None and comm.size > 1:
            with torch.no_grad():
                comm.Bcast(self.out_proj.bias.data, root=0)

    def _setup(self, comm: MPICommunication, mha: torch.nn.MultiheadAttention) -> None:
        self.comm = comm
        self.embed_dim, self.num_heads = mha.embed_dim, mha.num_heads
        self.head_dim = mha.head_dim
        self.head_counts, _ = _layout(comm, self.num_heads)
        counts = [h * self.head_dim for h in self.head_counts]
        weights = mha.in_proj_weight.chunk(3)
        biases = (None,) * 3 if mha.in_proj_bias is None else mha.in_proj_bias.chunk(3)
        projections = []
        for weight, bias in zip(weights, biases):
            layer = ColumnParallelLinear.__new__(ColumnParallelLinear)
            torch.nn.Module.__init__(layer)
            layer._setup(comm, weight, bias, False, counts)
            projections.append(layer)
        self.q_proj, self.k_proj, self.v_proj = projections
        self.out_proj = RowParallelLinear.__new__(RowParallelLinear)
        torch.nn.Module.__init__(self.out_proj)
        self.out_proj._setup(comm, mha.out_proj.weight, mha.out_proj.bias, True, counts)

    @classmethod
    def from_multihead_attention(
        cls, mha: torch.nn.MultiheadAttention, comm: Optional[MPICommunication] = None
    ) -> "ParallelSelfAttention":
        """
        The parallel version of ``mha`` (the same on every process): every process keeps the
        projections of its heads. ``mha`` must project queries, keys and values from
        ``embed_dim`` features and have no ``bias_k``/``bias_v``, no ``add_zero_attn`` and no
        dropout (ValueError otherwise). Its ``batch_first`` is ignored: the parallel layer takes
        ``(batch, sequence, embed_dim)``.

        Examples
        --------
        >>> mha = torch.nn.MultiheadAttention(16, 4, batch_first=True)
        >>> attention = ht.nn.ParallelSelfAttention.from_multihead_attention(mha)
        >>> torch.allclose(attention(x), mha(x, x, x, need_weights=False)[0])
        True
        """
        comm = _check_comm(comm)

        def check():
            check_type(mha, "mha", torch.nn.MultiheadAttention, "a torch.nn.MultiheadAttention")
            if not mha._qkv_same_embed_dim:
                raise ValueError("mha must have kdim == vdim == embed_dim")
            if mha.bias_k is not None or mha.add_zero_attn or mha.dropout:
                raise ValueError("mha must have no bias_k/bias_v, no add_zero_attn and dropout 0")
            return mha

        _agree(
            comm,
            "ParallelSelfAttention.from_multihead_attention",
            check,
            lambda m: _attention_entries(m, checksums=True),
        )
        attention = cls.__new__(cls)
        torch.nn.Module.__init__(attention)
        attention._setup(comm, mha)
        return attention

    def forward(self, input: torch.Tensor, is_causal: bool = False) -> torch.Tensor:
        """
        Self-attention over ``input``, ``(batch, sequence, embed_dim)`` (the same on every
        process); ``is_causal``: each token attends only to itself and the tokens before it.
        The whole output, ``(batch, sequence, embed_dim)``, on every process.
        """
        _check_input(input, self.embed_dim)
        if input.ndim != 3:
            raise ValueError(
                f"input must be (batch, sequence, embed_dim), got shape {tuple(input.shape)}"
            )
        is_causal = check_bool(is_causal, "is_causal")
        x = _copy_to_parallel(input, self.comm)  # one input-gradient all-reduce for q, k and v
        batch, length, _ = input.shape
        heads = self.head_counts[self.comm.rank]

        def split_heads(layer):
            projected = torch.nn.functional.linear(x, layer.weight, layer.bias)
            return projected.view(batch, length, heads, self.head_dim).transpose(1, 2)

        q, k, v = split_heads(self.q_proj), split_heads(self.k_proj), split_heads(self.v_proj)
        if heads:
            attended = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=is_causal
            )
        else:
            attended = q  # no heads here: an empty block
        merged = attended.transpose(1, 2).reshape(batch, length, heads * self.head_dim)
        return self.out_proj(merged)

    def extra_repr(self) -> str:
        return (
            f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
            f"head_counts={self.head_counts}"
        )


def _attention_entries(mha: torch.nn.MultiheadAttention, checksums: bool = False) -> Dict:
    entries = {
        "embed_dim": mha.embed_dim,
        "num_heads": mha.num_heads,
        "bias": mha.in_proj_bias is not None,
        "dtype": mha.in_proj_weight.dtype,
    }
    if checksums:
        for name, tensor in mha.named_parameters():
            entries[f"{name} checksum"] = _checksum(tensor)
    return entries


# ------------------------------------------------------------------------------------------------
# parallelize
# ------------------------------------------------------------------------------------------------

_STYLES = {
    "column": (torch.nn.Linear, ("gather_output",)),
    "row": (torch.nn.Linear, ("input_is_parallel",)),
    "embedding": (torch.nn.Embedding, ()),
}


def _check_plan(module: Any, plan: Any) -> Dict[str, Tuple[str, Dict[str, Any]]]:
    """``plan`` as name -> (style, options), every entry checked against ``module``."""
    check_type(module, "module", torch.nn.Module, "a torch.nn.Module")
    check_type(plan, "plan", dict, "a dict of submodule name -> style")
    checked = {}
    for name, entry in plan.items():
        check_type(name, "plan's keys", str, "submodule names (str)")
        if isinstance(entry, (tuple, list)) and len(entry) == 2:
            style, options = entry
        else:
            style, options = entry, {}
        check_choice(style, f"plan[{name!r}]", tuple(_STYLES))
        check_type(options, f"plan[{name!r}]'s options", dict, "a dict")
        kind, allowed = _STYLES[style]
        for option, value in options.items():
            check_choice(option, f"an option of plan[{name!r}]", allowed)
            check_bool(value, f"plan[{name!r}]'s {option}")
        if not name:
            raise ValueError("plan's keys must name submodules, got '' (the module itself)")
        try:
            submodule = module.get_submodule(name)
        except AttributeError:
            raise ValueError(f"plan names {name!r}, which is not a submodule of module") from None
        if not isinstance(submodule, kind):
            raise TypeError(
                f"plan[{name!r}] is {style!r}, which needs a torch.nn.{kind.__name__}, but "
                f"module.{name} is a {type(submodule).__name__}"
            )
        checked[name] = (style, dict(options))
    return checked


def parallelize(
    module: torch.nn.Module,
    plan: Dict[str, Union[str, Tuple[str, Dict[str, bool]]]],
    comm: Optional[MPICommunication] = None,
) -> torch.nn.Module:
    """
    Replace submodules of ``module`` by their tensor-parallel versions, built from the weights
    they hold (which must be the same on every process), in place.

    Parameters
    ----------
    module : torch.nn.Module
        The model, the same on every process.
    plan : dict
        Submodule name (dotted for nested ones, as in ``module.get_submodule``) -> style:
        ``"column"`` (a ``torch.nn.Linear`` -> :class:`ColumnParallelLinear`, output left
        split), ``"row"`` (a ``torch.nn.Linear`` -> :class:`RowParallelLinear`, input expected
        split) or ``"embedding"`` (a ``torch.nn.Embedding`` -> :class:`ParallelEmbedding`); or
        ``(style, options)`` with ``{"gather_output": bool}`` for a column or
        ``{"input_is_parallel": bool}`` for a row. A column layer whose output feeds a row layer
        through element-wise operations (an MLP) needs neither option.
    comm : MPICommunication, optional
        The processes sharing the layers (default: the default communicator).

    Returns
    -------
    torch.nn.Module
        ``module`` itself.

    Raises
    ------
    TypeError, ValueError
        On every process, for a wrong plan (unknown style or option, a name that is no
        submodule, a submodule of another type), or if the processes' plans or weights differ.

    Examples
    --------
    >>> torch.manual_seed(0)
    >>> model = torch.nn.Sequential(OrderedDict(
    ...     fc1=torch.nn.Linear(16, 64), act=torch.nn.ReLU(), fc2=torch.nn.Linear(64, 16)))
    >>> ht.nn.parallelize(model, {"fc1": "column", "fc2": "row"})
    Sequential(
      (fc1): ColumnParallelLinear(in_features=16, out_features=64, ..., counts=(22, 21, 21))
      (act): ReLU()
      (fc2): RowParallelLinear(in_features=64, out_features=16, ..., counts=(22, 21, 21))
    )
    """
    comm = _check_comm(comm)
    checked = _agree(comm, "parallelize", lambda: _check_plan(module, plan), lambda c: {"plan": c})
    for name, (style, options) in checked.items():
        old = module.get_submodule(name)
        if style == "column":
            new = ColumnParallelLinear.from_linear(old, comm, **options)
        elif style == "row":
            new = RowParallelLinear.from_linear(old, comm, **options)
        else:
            new = ParallelEmbedding.from_embedding(old, comm)
        parent_name, _, child = name.rpartition(".")
        setattr(module.get_submodule(parent_name), child, new)
    return module
