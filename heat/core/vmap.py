"""
:func:`vmap`: a function of per-sample tensors mapped over the samples of split arrays, with
:func:`torch.func.vmap` on each process's block.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Tuple, Union

import torch

from . import types
from .communication import verdicts
from .dndarray import DNDarray
from .layout import redistribute

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _check_out_dims(out_dims) -> Union[int, Tuple[int, ...]]:
    def as_int(value) -> int:
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise TypeError(f"out_dims must be an int or a tuple of ints, but was {out_dims!r}")
        return operator.index(value)

    if isinstance(out_dims, (tuple, list)):
        return tuple(as_int(value) for value in out_dims)
    return as_int(out_dims)


def _outputs_and_dims(outputs, out_dims) -> Tuple[Tuple[torch.Tensor, ...], Tuple[int, ...]]:
    """The outputs of the mapped function as a tuple, and the (non-negative) axis of each."""
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    outputs = tuple(outputs)
    dims = (out_dims,) * len(outputs) if isinstance(out_dims, int) else out_dims
    if len(dims) != len(outputs):
        raise ValueError(
            f"out_dims has {len(dims)} entries, but func returned {len(outputs)} outputs"
        )
    return outputs, tuple(d % o.ndim for o, d in zip(outputs, dims))


def vmap(
    func: Callable[..., Any],
    out_dims: Union[int, Tuple[int, ...]] = 0,
    randomness: str = "error",
    *,
    chunk_size: Union[int, None] = None,
    **kwargs,
) -> Callable[..., Tuple[DNDarray, ...]]:
    """
    Vectorize ``func`` over the split axis of DNDarrays, as HeAT's ``heat.vmap``.

    ``vmap(func)`` returns a function of DNDarrays. Called on arrays split along some axis, it
    applies :func:`torch.func.vmap` of ``func`` to each process's local blocks, mapping over
    the split axis of every split input (in HeAT's terms the split axis is the batch axis, so
    there is no ``in_dims``: it is each input's ``split``). Inputs that are not split are passed
    whole to every call of ``func``. Each output is a DNDarray split along its ``out_dims``
    axis, which holds the samples in the order of the inputs' split axis, in the layout of the
    first split input.

    Communication: split inputs distributed differently from the first one are redistributed to
    its layout first (one all-to-all each). On several processes, one small allgather after the
    local computation lets every process raise the same error if ``func`` failed on any of them,
    and gives processes without samples (where torch cannot map) the outputs' shapes.

    Parameters
    ----------
    func : callable
        A function of ``torch.Tensor`` positional arguments (one sample of each split input,
        the whole of each other input) that returns a tensor or a tuple of tensors.
    out_dims : int or tuple of int
        The axis of each output along which the samples are stacked, which becomes its split
        axis (an int for all outputs, or one per output). Default 0.
    randomness : {"error", "different", "same"}
        Passed to :func:`torch.func.vmap`: whether random operations in ``func`` raise, differ
        between samples, or are the same for all samples. Random numbers are not coordinated
        between processes: with "same", samples on different processes get different ones.
    chunk_size : int, optional
        Passed to :func:`torch.func.vmap`: compute ``chunk_size`` samples of the local block at
        a time (less memory; 1 is a Python loop over the samples). Default: all at once.
    **kwargs
        Keyword arguments passed to ``func`` on every call and not mapped over; keyword
        arguments given to the returned function are added to them (and take precedence).

    Returns
    -------
    callable
        ``vmapped(*arrays, **kwargs)``: every positional argument a DNDarray, at least one of
        them split, all split ones with the same length along their split axis. It returns a
        **tuple** of DNDarrays, one per output of ``func`` (also for a single output, as HeAT).

    Raises
    ------
    TypeError
        If ``func`` is not callable, ``out_dims`` not an int or tuple of ints, ``chunk_size``
        not an int or None; when called, if a positional argument is not a DNDarray.
    ValueError
        If ``randomness`` is not one of the three values, or ``chunk_size`` is not positive;
        when called, if no input is split, the split inputs differ in length along their split
        axis or in communicator, or ``out_dims`` does not match the number of outputs.

    Examples
    --------
    >>> x = ht.random.randn(6, 3, split=0)
    >>> norms, = ht.vmap(lambda row: torch.linalg.vector_norm(row))(x)
    >>> norms.shape, norms.split
    ((6,), 0)
    >>> w = ht.ones((3, 2))              # not split: every sample gets all of it
    >>> y, = ht.vmap(lambda row, w: row @ w)(x, w)
    >>> y.shape, y.split
    ((6, 2), 0)
    >>> cols, = ht.vmap(lambda col, scale: col * scale, out_dims=1)(ht.resplit(x, 1), scale=2.0)
    >>> cols.shape, cols.split
    ((6, 3), 1)
    """
    if not callable(func):
        raise TypeError(f"func must be callable, but was {type(func).__name__}")
    out_dims = _check_out_dims(out_dims)
    if not isinstance(randomness, str) or randomness not in _RANDOMNESS:
        raise ValueError(f"randomness must be one of {_RANDOMNESS}, but was {randomness!r}")
    if chunk_size is not None:
        if isinstance(chunk_size, bool) or not hasattr(chunk_size, "__index__"):
            raise TypeError(f"chunk_size must be None or an int, but was {chunk_size!r}")
        chunk_size = operator.index(chunk_size)
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, but was {chunk_size}")
    bound_kwargs = dict(kwargs)

    def vmapped(*arrays: DNDarray, **call_kwargs) -> Tuple[DNDarray, ...]:
        for position, x in enumerate(arrays):
            if not isinstance(x, DNDarray):
                raise TypeError(
                    f"argument {position} of the vmapped function must be a DNDarray, but was "
                    f"{type(x).__name__}"
                )
        split_arrays = [x for x in arrays if x.split is not None]
        if not split_arrays:
            raise ValueError(
                "at least one argument of the vmapped function must be split: its split axis "
                "is the axis mapped over"
            )
        reference = split_arrays[0]
        length = reference.gshape[reference.split]
        for x in split_arrays[1:]:
            if x.gshape[x.split] != length:
                raise ValueError(
                    "the split arguments must have the same length along their split axes, "
                    f"but have {length} and {x.gshape[x.split]}"
                )
            if x.comm != reference.comm:
                raise ValueError("the split arguments must share one communicator")

        # every split input's block must hold the same samples as the reference's
        aligned = list(arrays)
        if reference.comm.is_distributed() and len(split_arrays) > 1:
            counts = reference.counts_displs()[0]
            for i, x in enumerate(arrays):
                if x.split is not None and x is not reference and x.counts_displs()[0] != counts:
                    aligned[i] = redistribute(x, counts)

        in_dims = tuple(x.split for x in aligned)
        blocks = [x.larray for x in aligned]
        comm = reference.comm
        local_samples = reference.lshape[reference.split]
        # torch cannot map over an empty batch in general (reductions index sample 0): a
        # process without samples takes the per-sample output shapes from one that has some
        computes = local_samples > 0 or length == 0
        outputs, dims, error = None, None, None
        if computes:
            try:
                mapped = torch.func.vmap(
                    func,
                    in_dims,
                    out_dims,
                    randomness=randomness,
                    # torch cannot chunk an empty batch
                    chunk_size=chunk_size if local_samples > 0 else None,
                )
                outputs = mapped(*blocks, **{**bound_kwargs, **call_kwargs})
                outputs, dims = _outputs_and_dims(outputs, out_dims)
            except Exception as exception:  # noqa: B902 - shared with every process below
                error = exception
        if comm.is_distributed():
            # one small allgather: every process raises the first error any of them met, and
            # processes without samples learn the outputs' shapes and types
            summary = (
                verdicts.portable(error)
                if error is not None
                else None
                if outputs is None
                else [(tuple(o.shape), o.dtype, d % o.ndim) for o, d in zip(outputs, dims)]
            )
            summaries = comm.allgather(summary)
            verdicts.raise_first(
                [entry if isinstance(entry, tuple) else None for entry in summaries], error
            )
            if outputs is None:
                described = next(entry for entry in summaries if entry is not None)
                outputs, dims = [], []
                for shape, dtype, dim in described:
                    shape = list(shape)
                    shape[dim] = 0
                    outputs.append(torch.empty(shape, dtype=dtype, device=blocks[0].device))
                    dims.append(dim)
        elif error is not None:
            raise error
        balanced = reference._balanced
        results = []
        for output, dim in zip(outputs, dims):
            gshape = list(output.shape)
            gshape[dim] = length
            results.append(
                DNDarray(
                    output,
                    tuple(gshape),
                    types.canonical_heat_type(output.dtype),
                    dim,
                    reference.device,
                    reference.comm,
                    balanced,
                )
            )
        return tuple(results)

    vmapped.__name__ = getattr(func, "__name__", "vmapped")
    vmapped.__doc__ = f"``heat.vmap`` of {getattr(func, '__qualname__', repr(func))}."
    return vmapped
