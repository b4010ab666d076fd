"""
Full state dicts of tensor-parallel models: the state dict of the torch model that the parallel
layers replaced, gathered from the processes' shards, and the reverse.

The state dict of a model holding :class:`~heat.nn.ColumnParallelLinear`,
:class:`~heat.nn.RowParallelLinear`, :class:`~heat.nn.ParallelEmbedding`,
:class:`~heat.nn.ParallelMLP` or :class:`~heat.nn.ParallelSelfAttention` layers (built directly
or swapped in by :func:`~heat.nn.parallelize`) holds each process's shards. For a checkpoint that
any torch model can read -- what FSDP calls a *full* state dict --

* :func:`full_state_dict` joins the shards: the keys, order and shapes of the unsplit torch model
  (a ``torch.nn.Linear`` for each column or row layer, ``torch.nn.Embedding`` for the table, and
  ``torch.nn.MultiheadAttention``'s ``in_proj_weight`` / ``in_proj_bias`` / ``out_proj`` for the
  attention), on every process or on one;
* :func:`load_full_state_dict` loads such a dict (or the unsplit model's own ``state_dict()``)
  into the parallel model: every process keeps its shard.

Everything that is not a parallel layer passes through unchanged. The layout of a split is the
layer's (``counts``, ``displs``), uneven splits and processes without a shard included.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Dict, List, Mapping, NamedTuple, Optional, Tuple

import torch

from ..core.communication import MPICommunication, get_comm, verdicts
from ..core.sanitation import check_bool, check_int, check_type
from .tensor_parallel import (
    ColumnParallelLinear,
    ParallelEmbedding,
    ParallelSelfAttention,
    RowParallelLinear,
    _checksum,
)

__all__ = ["full_state_dict", "load_full_state_dict"]

_PARALLEL_LAYERS = (
    ColumnParallelLinear,
    RowParallelLinear,
    ParallelEmbedding,
    ParallelSelfAttention,
)

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _Entry(NamedTuple):
    """One entry of the full state dict and where its pieces live in the local one."""

    key: str  # the key in the full (unsplit) state dict
    parts: Tuple[str, ...]  # local keys whose joined blocks, concatenated along axis, make it
    axis: Optional[int]  # the split axis; None: replicated (one part, the same everywhere)
    counts: Tuple[int, ...] = ()  # the blocks' lengths along axis, per process
    displs: Tuple[int, ...] = ()


def _layer_entries(prefix: str, layer: torch.nn.Module) -> List[_Entry]:
    """The full entries of one parallel layer, in the order of the torch module it replaces."""

    def key(name: str) -> str:
        return f"{prefix}.{name}" if prefix else name

    if isinstance(layer, ParallelSelfAttention):  # torch.nn.MultiheadAttention's layout
        q, out = layer.q_proj, layer.out_proj
        entries = [
            _Entry(key("in_proj_weight"),
                   tuple(key(f"{p}_proj.weight") for p in "qkv"), 0, q.counts, q.displs)
        ]  # fmt: skip
        if q.bias is not None:
            entries.append(
                _Entry(key("in_proj_bias"),
                       tuple(key(f"{p}_proj.bias") for p in "qkv"), 0, q.counts, q.displs)
            )  # fmt: skip
        entries.append(_Entry(key("out_proj.weight"), (key("out_proj.weight"),), 1,
                              out.counts, out.displs))  # fmt: skip
        if out.bias is not None:
            entries.append(_Entry(key("out_proj.bias"), (key("out_proj.bias"),), None))
        return entries
    weight_axis = 1 if isinstance(layer, RowParallelLinear) else 0
    entries = [_Entry(key("weight"), (key("weight"),), weight_axis, layer.counts, layer.displs)]
    if getattr(layer, "bias", None) is not None:
        bias_axis = None if isinstance(layer, RowParallelLinear) else 0  # a row bias is whole
        entries.append(_Entry(key("bias"), (key("bias"),), bias_axis, layer.counts, layer.displs))
    return entries


def _plan(module: torch.nn.Module) -> Tuple[MPICommunication, List[_Entry]]:
    """
    The communicator of ``module``'s parallel layers (the default one if it has none) and the
    entries of its full state dict, in the order of ``module.state_dict()``. Local: the same on
    every process that holds the same model.
    """
    owner: Dict[str, Tuple[str, torch.nn.Module]] = {}  # local key -> its parallel layer
    comms: List[Tuple[str, MPICommunication]] = []
    inside: Optional[str] = None  # the parallel layer whose submodules are being visited
    for name, sub in module.named_modules(remove_duplicate=False):
        if inside is not None and (inside == "" or name.startswith(inside + ".")):
            continue
        inside = None
        if isinstance(sub, _PARALLEL_LAYERS):
            inside = name
            comms.append((name, sub.comm))
            for local in sub.state_dict(prefix=f"{name}." if name else "", keep_vars=True):
                owner[local] = (name, sub)
    for name, comm in comms[1:]:
        if comm != comms[0][1]:
            raise ValueError(
                f"module's parallel layers must share one communicator, but "
                f"{comms[0][0] or 'module'} and {name} have different ones"
            )
    entries: List[_Entry] = []
    emitted = set()
    for local in module.state_dict(keep_vars=True):
        if local not in owner:
            entries.append(_Entry(local, (local,), None))
            continue
        name, layer = owner[local]
        if name not in emitted:
            emitted.add(name)
            entries.extend(_layer_entries(name, layer))
    return (comms[0][1] if comms else get_comm()), entries


def _full_shape(entry: _Entry, local: Mapping[str, torch.Tensor]) -> Tuple[int, ...]:
    shape = list(local[entry.parts[0]].shape)
    if entry.axis is not None:
        shape[entry.axis] = sum(entry.counts) * len(entry.parts)
    return tuple(shape)


def full_state_dict(module: torch.nn.Module, rank: Optional[int] = 0) -> Dict[str, torch.Tensor]:
    """
    The state dict of the unsplit torch model behind ``module``: every tensor-parallel layer's
    shards joined (collective over the layers' communicator), under the keys and in the shapes
    of the layer it replaces -- ``torch.nn.Linear`` for :class:`ColumnParallelLinear` and
    :class:`RowParallelLinear` (:class:`ParallelMLP`'s ``fc1`` and ``fc2`` included),
    ``torch.nn.Embedding`` for :class:`ParallelEmbedding`, ``torch.nn.MultiheadAttention``
    (``in_proj_weight``, ``in_proj_bias``, ``out_proj.weight``, ``out_proj.bias``) for
    :class:`ParallelSelfAttention`. Every other entry passes through unchanged. The result loads
    into the unsplit model with ``load_state_dict`` (and back into a parallel one with
    :func:`load_full_state_dict`).

    Parameters
    ----------
    module : torch.nn.Module
        The model, the same structure on every process of its parallel layers' communicator
        (which all its parallel layers must share).
    rank : int or None
        The process (a rank of that communicator) that gets the state dict; the others get an
        empty dict and hold no gathered tensor. None: every process gets it. Default 0, as for a
        checkpoint that one process writes.

    Returns
    -------
    dict
        Key -> tensor (an ``OrderedDict``, in ``module.state_dict()``'s order), every tensor a
        copy on the CPU; ``{}`` on processes other than ``rank``.

    Raises
    ------
    TypeError, ValueError
        On every process, for a ``module`` that is no ``torch.nn.Module`` or whose parallel
        layers use different communicators, a ``rank`` out of range, or if the processes pass
        different ranks or models of different structure.

    See Also
    --------
    load_full_state_dict, parallelize

    Examples
    --------
    >>> torch.manual_seed(0)
    >>> model = torch.nn.Sequential(OrderedDict(
    ...     fc1=torch.nn.Linear(16, 64), act=torch.nn.ReLU(), fc2=torch.nn.Linear(64, 16)))
    >>> ht.nn.parallelize(model, {"fc1": "column", "fc2": "row"})   # 3 processes
    >>> model.state_dict()["fc1.weight"].shape                      # process 0's shard
    torch.Size([22, 16])
    >>> state = ht.nn.full_state_dict(model)                        # on process 0 only
    >>> state["fc1.weight"].shape
    torch.Size([64, 16])
    >>> plain = torch.nn.Sequential(OrderedDict(
    ...     fc1=torch.nn.Linear(16, 64), act=torch.nn.ReLU(), fc2=torch.nn.Linear(64, 16)))
    >>> plain.load_state_dict(state)
    <All keys matched successfully>
    """
    check_type(module, "module", torch.nn.Module, "a torch.nn.Module")
    comm, entries = _plan(module)

    def check():
        return check_int(rank, "rank", 0, maximum=comm.size - 1, allow_none=True)

    def fingerprint(root):
        return "arguments of full_state_dict", {
            "rank": repr(root),
            "keys": repr([(e.key, e.parts) for e in entries]),
        }

    root = verdicts.agree(comm, check, fingerprint=fingerprint)
    receives = root is None or comm.rank == root
    local = module.state_dict(keep_vars=False)
    full: Dict[str, torch.Tensor] = OrderedDict()
    for entry in entries:
        if entry.axis is None or comm.size == 1:
            if receives:
                pieces = [local[part].detach().to("cpu", copy=True) for part in entry.parts]
                full[entry.key] = pieces[0] if len(pieces) == 1 else torch.cat(pieces, entry.axis)
            continue
        pieces = []
        for part in entry.parts:
            block = local[part].detach()
            if root is None:
                pieces.append(comm.allgather_tensors(block, entry.axis))
            else:
                pieces.append(comm.gather_tensors(block, root, entry.axis))
        if receives:
            joined = pieces[0] if len(pieces) == 1 else torch.cat(pieces, entry.axis)
            full[entry.key] = joined.to("cpu")
    return full if receives else {}


def load_full_state_dict(
    module: torch.nn.Module,
    state_dict: Optional[Mapping[str, torch.Tensor]],
    strict: bool = True,
    *,
    rank: Optional[int] = None,
) -> IncompatibleKeys:
    """
    Load a full state dict -- from :func:`full_state_dict`, or the ``state_dict()`` of the
    unsplit torch model -- into ``module``: every process takes its shard of each tensor-parallel
    layer's entries, and every other entry as it is. Collective over the parallel layers'
    communicator; nothing is loaded anywhere unless every process can load.

    Parameters
    ----------
    module : torch.nn.Module
        The parallel model (as for :func:`full_state_dict`).
    state_dict : mapping or None
        Key -> tensor. Without ``rank``, the same on every process (keys, shapes, dtypes and
        values are checked with one small all-gather; e.g. ``torch.load`` of one file on every
        process); with ``rank``, read on that process only (None elsewhere).
    strict : bool
        Every key of the full state dict must be there and nothing else (default True).
    rank : int, optional
        The process (a rank of the layers' communicator) whose ``state_dict`` is loaded; it
        broadcasts one entry at a time, every process keeps its shard (keyword only). Default
        None: every process reads its own ``state_dict``.

    Returns
    -------
    IncompatibleKeys
        ``missing_keys`` and ``unexpected_keys``, in the full state dict's keys (empty when
        ``strict``), the same on every process.

    Raises
    ------
    TypeError, ValueError
        On every process, before anything is loaded: a wrong type, a ``rank`` out of range, a
        missing or unexpected key (``strict``), an entry of another shape than the unsplit
        model's, or (without ``rank``) state dicts that differ between processes.

    See Also
    --------
    full_state_dict

    Examples
    --------
    >>> plain = torch.nn.Sequential(OrderedDict(
    ...     fc1=torch.nn.Linear(16, 64), act=torch.nn.ReLU(), fc2=torch.nn.Linear(64, 16)))
    >>> model = ht.nn.parallelize(copy.deepcopy(plain), {"fc1": "column", "fc2": "row"})
    >>> ht.nn.load_full_state_dict(model, torch.load("checkpoint.pt"))  # written by plain
    IncompatibleKeys(missing_keys=[], unexpected_keys=[])
    >>> state = torch.load("checkpoint.pt") if ht.MPI_WORLD.rank == 0 else None
    >>> ht.nn.load_full_state_dict(model, state, rank=0)               # read by one process
    IncompatibleKeys(missing_keys=[], unexpected_keys=[])
    """
    check_type(module, "module", torch.nn.Module, "a torch.nn.Module")
    comm, entries = _plan(module)
    current = module.state_dict(keep_vars=True)

    def arguments():
        root = check_int(rank, "rank", 0, maximum=comm.size - 1, allow_none=True)
        return root, check_bool(strict, "strict")

    root, strict = verdicts.agree(
        comm,
        arguments,
        fingerprint=lambda r: (
            "arguments of load_full_state_dict",
            {"rank": repr(r[0]), "strict": repr(r[1])},
        ),
    )

    def validate():
        check_type(state_dict, "state_dict", Mapping, "a mapping of key -> tensor")
        expected = {entry.key for entry in entries}
        missing = [entry.key for entry in entries if entry.key not in state_dict]
        unexpected = [key for key in state_dict if key not in expected]
        if strict and (missing or unexpected):
            raise ValueError(
                f"state_dict does not match the model's full state dict: missing keys "
                f"{missing}, unexpected keys {unexpected}"
            )
        for entry in entries:
            if entry.key not in state_dict:
                continue
            full = state_dict[entry.key]
            if not isinstance(full, torch.Tensor):
                raise TypeError(
                    f"state_dict[{entry.key!r}] must be a torch.Tensor, got {type(full).__name__}"
                )
            shape = _full_shape(entry, current)
            if tuple(full.shape) != shape:
                raise ValueError(
                    f"state_dict[{entry.key!r}] has shape {tuple(full.shape)}, the model "
                    f"expects {shape}"
                )
        return IncompatibleKeys(missing, unexpected)

    def fingerprint(keys):
        summary = {key: repr((tuple(t.shape), t.dtype, _checksum(t)))
                   for key, t in state_dict.items() if isinstance(t, torch.Tensor)}  # fmt: skip
        return "state_dict passed to load_full_state_dict", summary

    if root is None:
        keys = verdicts.agree(comm, validate, fingerprint=fingerprint)
    else:
        keys = verdicts.root_decides(comm, validate, root=root)
    absent = set(keys.missing_keys)
    shards: Dict[str, torch.Tensor] = {}
    for entry in entries:
        if entry.key in absent:
            continue
        if root is None or comm.size == 1:
            full = state_dict[entry.key]
        else:
            mine = state_dict[entry.key].detach().contiguous() if comm.rank == root else None
            full = comm.bcast_tensor(mine, root, device=current[entry.parts[0]].device)
        for part, shard in zip(entry.parts, _shards(entry, full, comm.rank)):
            # a broadcast tensor is dropped after this entry: keep a copy of the shard only
            shards[part] = shard if root is None else shard.clone()
    module.load_state_dict(shards, strict=False)
    return keys


def _shards(entry: _Entry, full: torch.Tensor, rank: int) -> List[torch.Tensor]:
    """Process ``rank``'s block of ``full`` for each of ``entry``'s parts (views)."""
    if entry.axis is None:
        return [full]
    whole = sum(entry.counts)
    start, count = entry.displs[rank], entry.counts[rank]
    # in_proj_weight holds the queries', keys' and values' weights one after another
    return [full.narrow(entry.axis, k * whole + start, count) for k in range(len(entry.parts))]
