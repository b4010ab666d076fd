"""
In-memory datasets over heat arrays, HeAT's ``Dataset``/``DataLoader`` names, and the GLOBAL
shuffle between epochs.

Each process trains on its own block of samples (the local part of a split-0 DNDarray). Between
epochs the samples move between processes, so every process sees a different part of the data
in every epoch: :func:`dataset_shuffle` applies a keyed permutation of the whole data set in one
all-to-all through the communicator, :func:`dataset_ishuffle` starts the same all-to-all without
blocking (overlapped with an epoch's training) and :func:`dataset_irecv` completes it.

The layout after a shuffle for epoch ``e`` is a pure function of ``(seed, e)`` and the data: the
sample with original global index ``i`` sits at global position ``P_e(i)`` (a keyed permutation,
:class:`heat.utils.data.plan.KeyedPermutation`), whatever the layout before. Each process keeps
its number of samples, so every sample is held by exactly one process in every epoch and every
process can compute, without communication, where its samples go and where its new ones come
from -- the all-to-all needs no count exchange.
"""

from __future__ import annotations

import atexit
import secrets
import weakref
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.utils.data as torch_data

import heat as ht
from heat.core.communication import verdicts
from heat.core.dndarray import DNDarray
from heat.core.sanitation import check_bool, check_choice, check_int, check_type

from .plan import KeyedPermutation, derive_key

__all__ = [
    "Dataset",
    "DataLoader",
    "DistributedDataset",
    "DistributedSampler",
    "create_train_val_split",
    "dataset_shuffle",
    "dataset_ishuffle",
    "dataset_irecv",
]

_MASK63 = (1 << 63) - 1
#: Datasets with a shuffle in flight; completed at exit (every process has the same ones), so
#: MPI is never finalised with a pending collective.
_PENDING: "weakref.WeakSet" = weakref.WeakSet()


def _permutation(size: int, seed: int, epoch: Optional[int]) -> KeyedPermutation:
    """The layout of epoch ``epoch`` (None: the original order)."""
    return KeyedPermutation(size, None if epoch is None else derive_key(seed, epoch))


class Dataset(torch_data.Dataset):
    """
    A map-style torch Dataset over this process's samples of split-0 heat arrays (or torch
    tensors holding this process's samples), shuffled globally between epochs.

    Parameters
    ----------
    array : DNDarray, torch.Tensor or sequence of them
        The samples along axis 0. A DNDarray must be split along axis 0 (or not split with one
        process); a torch tensor is this process's block. A sequence (e.g. features and labels)
        is kept paired: all arrays need the same number of samples on every process, and move
        together. The first is ``data``/``htdata``, the second ``targets``/``httargets``, further
        ones ``data2``/``htdata2`` and so on.
    transforms : callable or sequence of callables or None
        Applied to a sample in ``__getitem__``; one per array (None: unchanged).
    ishuffle : bool
        The DataLoader shuffles without blocking (overlapped with the epoch) instead of between
        epochs.
    test_set : bool
        A test set is never shuffled.
    seed : int
        Key of the shuffles (with the epoch); non-negative.

    Attributes
    ----------
    htdata : DNDarray
        The first array, in the current layout.
    data : torch.Tensor
        Its local block (this process's samples).
    indices : torch.Tensor
        The original global index of every local sample (int64), in the current layout.
    epoch : int or None
        The epoch whose layout the dataset holds (None: the original order).

    Examples
    --------
    >>> x = ht.arange(10, split=0)
    >>> ds = ht.utils.data.Dataset(x)
    >>> ht.utils.data.dataset_shuffle(ds, [["data", "htdata"]])
    >>> len(ds) == x.lshape[0]
    True
    """

    def __init__(
        self,
        array: Union[DNDarray, torch.Tensor, Sequence[Union[DNDarray, torch.Tensor]]],
        transforms: Union[None, Callable, Sequence[Optional[Callable]]] = None,
        ishuffle: bool = False,
        test_set: bool = False,
        seed: int = 0,
    ):
        arrays = list(array) if isinstance(array, (list, tuple)) else [array]
        if not arrays:
            raise ValueError("array must not be an empty sequence")
        for a in arrays:
            if not isinstance(a, (DNDarray, torch.Tensor)):
                raise TypeError(f"array must be a DNDarray or torch.Tensor, got {type(a).__name__}")
            if a.ndim == 0:
                raise ValueError("array must have at least one dimension (the samples)")
        check_bool(ishuffle, "ishuffle")
        check_bool(test_set, "test_set")
        if check_int(seed, "seed", 0) > _MASK63:
            raise ValueError(f"seed must be < 2**63, got {seed}")
        if transforms is None or callable(transforms):
            transforms = [transforms] + [None] * (len(arrays) - 1)
        if not isinstance(transforms, (list, tuple)) or len(transforms) != len(arrays):
            raise TypeError(
                f"transforms must be None, a callable or {len(arrays)} callables or None"
            )
        if any(t is not None and not callable(t) for t in transforms):
            raise TypeError("transforms must hold callables or None")
        comms = [a.comm for a in arrays if isinstance(a, DNDarray)]
        self.comm = comms[0] if comms else ht.MPI_WORLD
        for a in arrays:
            if isinstance(a, DNDarray) and a.split not in (0, None):
                raise ValueError(f"array must be split along axis 0, got split={a.split}")
            if isinstance(a, DNDarray) and a.split is None and a.comm.size > 1:
                raise ValueError(
                    "array must be split along axis 0 (split=None with several processes)"
                )

        # local checks may differ between processes (torch blocks): agree before going on
        error = None
        lengths = {a.shape[0] if isinstance(a, torch.Tensor) else a.lshape[0] for a in arrays}
        if len(lengths) != 1:
            error = ValueError(
                f"array: the arrays hold different numbers of samples {sorted(lengths)}"
            )
        verdicts.raise_if_any(self.comm, error)

        self.transforms = list(transforms)
        self.ishuffle = bool(ishuffle)
        self.test_set = bool(test_set)
        self.seed = int(seed)
        self.epoch: Optional[int] = None
        self._pending = None
        self._attrs: List[List[str]] = []
        for k, a in enumerate(arrays):
            if not isinstance(a, DNDarray):
                a = ht.array(a, is_split=0, comm=self.comm)
            names = (
                ["data", "htdata"]
                if k == 0
                else ["targets", "httargets"]
                if k == 1
                else [f"data{k}", f"htdata{k}"]
            )
            setattr(self, names[0], a.larray)
            setattr(self, names[1], a)
            self._attrs.append(names)
        counts, displs = self.htdata.counts_displs()
        self._counts = np.asarray(counts, dtype=np.int64)
        self._displs = np.asarray(displs, dtype=np.int64)
        self._size = int(self._counts.sum())

    @property
    def attrs(self) -> List[List[str]]:
        """The ``[torch attribute, heat attribute]`` pairs that move together in a shuffle."""
        return [list(pair) for pair in self._attrs]

    @property
    def indices(self) -> torch.Tensor:
        """The original global index of every local sample, in the current layout."""
        me = self.comm.rank
        positions = np.arange(self._displs[me], self._displs[me] + self._counts[me])
        return torch.from_numpy(_permutation(self._size, self.seed, self.epoch).inverse(positions))

    def __len__(self) -> int:
        return int(self.data.shape[0])

    def __getitem__(self, index):
        items = []
        for (name, _), transform in zip(self._attrs, self.transforms):
            item = getattr(self, name)[index]
            items.append(item if transform is None else transform(item))
        return items[0] if len(items) == 1 else tuple(items)

    def Shuffle(self, epoch: Optional[int] = None) -> None:
        """Shuffle globally now (:func:`dataset_shuffle`); skipped for a test set."""
        if not self.test_set:
            dataset_shuffle(self, self._attrs, epoch=epoch)

    def Ishuffle(self, epoch: Optional[int] = None) -> None:
        """Start a global shuffle (:func:`dataset_ishuffle`); skipped for a test set."""
        if not self.test_set:
            dataset_ishuffle(self, self._attrs, epoch=epoch)


# -- the global shuffle ---------------------------------------------------------------------------


def _check_attrs(dataset, attrs) -> List[List[Optional[str]]]:
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a heat.utils.data.Dataset, got {type(dataset).__name__}")
    if attrs is None:
        return dataset.attrs
    if not isinstance(attrs, (list, tuple)) or not attrs:
        raise TypeError("attrs must be a non-empty list of [torch attribute, heat attribute] pairs")
    checked = []
    for pair in attrs:
        if isinstance(pair, str):
            pair = [pair, None]
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[0], str):
            raise TypeError(
                f"attrs must hold [torch attribute, heat attribute or None] pairs, got {pair!r}"
            )
        if pair[1] is not None and not isinstance(pair[1], str):
            raise TypeError(f"attrs: the heat attribute must be a str or None, got {pair[1]!r}")
        if not isinstance(getattr(dataset, pair[0], None), torch.Tensor):
            raise ValueError(f"attrs: dataset has no torch tensor attribute {pair[0]!r}")
        if getattr(dataset, pair[0]).shape[0] != len(dataset):
            raise ValueError(f"attrs: {pair[0]!r} does not hold one row per local sample")
        checked.append(list(pair))
    return checked


def _check_epoch(dataset, epoch) -> int:
    if epoch is None:
        return 0 if dataset.epoch is None else dataset.epoch + 1
    return check_int(epoch, "epoch", 0)


def _start_shuffle(dataset: Dataset, attrs, epoch: int, blocking: bool):
    """Pack this process's samples by destination and start (or run) the all-to-all."""
    comm, me, p = dataset.comm, dataset.comm.rank, dataset.comm.size
    size, counts, displs = dataset._size, dataset._counts, dataset._displs
    old = _permutation(size, dataset.seed, dataset.epoch)
    new = _permutation(size, dataset.seed, epoch)
    ends = displs + counts

    # where my rows go: original index -> position in the new layout -> process
    mine = np.arange(displs[me], ends[me])
    targets = new(old.inverse(mine))
    destinations = np.searchsorted(ends, targets, side="right")
    order = np.lexsort((targets, destinations))  # by process, then by position there
    send_counts = np.bincount(destinations, minlength=p)
    # what I receive: my new positions -> original index -> old position -> process
    positions = np.arange(displs[me], ends[me])
    sources = np.searchsorted(ends, old(new.inverse(positions)), side="right")
    arrival = np.argsort(sources, kind="stable")  # each sender sends in position order
    recv_counts = np.bincount(sources, minlength=p)

    # one record of bytes per sample: the rows of all attributes side by side
    tensors = [getattr(dataset, name) for name, _ in attrs]
    device = tensors[0].device
    index = torch.from_numpy(order).to(device)
    parts = []
    for t in tensors:
        width = int(np.prod(t.shape[1:], dtype=np.int64)) * t.element_size()  # bytes per row
        rows = t.index_select(0, index).reshape(len(order), -1 if len(order) else 0)
        parts.append(
            rows.contiguous().view(torch.uint8)
            if rows.numel()
            else torch.empty((len(order), width), dtype=torch.uint8, device=device)
        )
    widths = [q.shape[1] for q in parts]
    record = int(sum(widths))
    send = torch.cat(parts, dim=1).reshape(-1) if parts else torch.empty(0, dtype=torch.uint8)
    receive = torch.empty(int(counts[me]) * record, dtype=torch.uint8, device=device)
    scounts = (send_counts * record).tolist()
    rcounts = (recv_counts * record).tolist()
    sdispls = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(np.int64).tolist()
    rdispls = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(np.int64).tolist()
    if blocking:
        comm.Alltoallv((send, scounts, sdispls), (receive, rcounts, rdispls))
        request = None
    else:  # the request keeps send and receive alive until it completes
        request = comm.Ialltoallv((send, scounts, sdispls), (receive, rcounts, rdispls))
    return dict(
        request=request,
        send=send,
        receive=receive,
        arrival=arrival,
        widths=widths,
        attrs=attrs,
        epoch=epoch,
        shapes=[t.shape[1:] for t in tensors],
        dtypes=[t.dtype for t in tensors],
    )


def _finish_shuffle(dataset: Dataset, state) -> None:
    """Unpack the received records into the new local blocks and set the attributes."""
    if state["request"] is not None:
        state["request"].Wait()
    receive, arrival = state["receive"], state["arrival"]
    rows = len(arrival)
    records = receive.view(rows, -1) if rows else receive.view(0, sum(state["widths"]))
    place = torch.from_numpy(arrival).to(receive.device)
    at = 0
    for (name, ht_name), width, shape, dtype in zip(
        state["attrs"], state["widths"], state["shapes"], state["dtypes"]
    ):
        # a fresh copy: a column slice may start at an offset that the dtype view cannot take
        block = records[:, at : at + width].clone(memory_format=torch.contiguous_format)
        block = block.view(dtype).reshape((rows,) + tuple(shape))
        at += width
        local = torch.empty_like(block)
        local[place] = block  # arrival order -> position order
        setattr(dataset, name, local)
        if ht_name is not None:
            old = getattr(dataset, ht_name, None)
            if isinstance(old, DNDarray):
                setattr(
                    dataset,
                    ht_name,
                    DNDarray(
                        local, old.gshape, old.dtype, old.split, old.device, old.comm, old.balanced
                    ),
                )
    dataset.epoch = state["epoch"]


def dataset_irecv(dataset: Dataset) -> None:
    """
    Complete a shuffle started by :func:`dataset_ishuffle` (nothing if none is pending).

    Examples
    --------
    >>> ht.utils.data.dataset_ishuffle(ds, ds.attrs)
    >>> # ... train on the current samples ...
    >>> ht.utils.data.dataset_irecv(ds)
    """
    state, dataset._pending = getattr(dataset, "_pending", None), None
    _PENDING.discard(dataset)
    if state is not None:
        _finish_shuffle(dataset, state)


def dataset_shuffle(
    dataset: Dataset, attrs: Optional[Sequence] = None, epoch: Optional[int] = None
) -> None:
    """
    Shuffle the samples of ``dataset`` across all processes, in one all-to-all.

    Afterwards the sample with original global index ``i`` is at global position ``P(i)``, a
    keyed permutation of all samples from ``(dataset.seed, epoch)`` -- uniform over the data
    set, independent of the layout before, so every sample is held by exactly one process and
    the result reproduces. Every process keeps its number of samples. Collective.

    Parameters
    ----------
    dataset : Dataset
    attrs : list of [str, str or None] pairs, optional
        ``[torch attribute, heat attribute]`` of the arrays that move together (HeAT's form,
        e.g. ``[["data", "htdata"], ["targets", "httargets"]]``); default: all of the dataset's.
        The heat attribute (a DNDarray) is rebuilt around the new local block.
    epoch : int, optional
        The epoch whose layout to take (default: the one after the dataset's current epoch).

    Examples
    --------
    >>> ds = ht.utils.data.Dataset((ht.arange(8, split=0), ht.arange(8, split=0) * 10))
    >>> ht.utils.data.dataset_shuffle(ds, epoch=0)
    >>> bool((ds.targets == ds.data * 10).all())  # features and labels stay paired
    True
    """
    attrs = _check_attrs(dataset, attrs)
    epoch = _check_epoch(dataset, epoch)
    dataset_irecv(dataset)  # a shuffle in flight lands first: the order of collectives agrees
    _finish_shuffle(dataset, _start_shuffle(dataset, attrs, epoch, blocking=True))


def dataset_ishuffle(
    dataset: Dataset, attrs: Optional[Sequence] = None, epoch: Optional[int] = None
) -> None:
    """
    Start :func:`dataset_shuffle` without blocking; :func:`dataset_irecv` completes it.

    The samples are packed into a send buffer at once, so training may go on with the current
    samples (and may even change them) while the all-to-all runs; the attributes change only
    in :func:`dataset_irecv`. The request holds the send and receive buffers until then.

    Parameters
    ----------
    dataset, attrs, epoch
        As in :func:`dataset_shuffle`.

    Examples
    --------
    >>> ht.utils.data.dataset_ishuffle(ds, ds.attrs)   # after an epoch
    >>> ht.utils.data.dataset_irecv(ds)                # at the start of the next one
    """
    attrs = _check_attrs(dataset, attrs)
    epoch = _check_epoch(dataset, epoch)
    dataset_irecv(dataset)
    dataset._pending = _start_shuffle(dataset, attrs, epoch, blocking=False)
    _PENDING.add(dataset)


@atexit.register
def _complete_pending() -> None:  # registered after mpi4py's own exit hook, so it runs first
    for dataset in list(_PENDING):
        try:
            dataset_irecv(dataset)
        except Exception:  # noqa: BLE001 -- at exit, nothing left to report to
            pass


# -- sampler and loader ---------------------------------------------------------------------------


class DistributedDataset(torch_data.Dataset):
    """
    HeAT's map-style torch Dataset over the local rows of a split-0 DNDarray: item ``i`` is row
    ``i`` of this process's block (``dndarray.larray[i]``), so a torch DataLoader on every process
    sees that process's samples. Meant for :class:`DistributedSampler`, which shuffles the rows
    (between processes, or within each).

    Parameters
    ----------
    dndarray : DNDarray
        The samples along axis 0; split along axis 0.
    transforms : callable, optional
        Applied to every item.

    Attributes
    ----------
    dndarray : DNDarray
        The array itself (not a copy: a global shuffle by the sampler reorders its rows).

    Raises
    ------
    TypeError
        If ``dndarray`` is not a DNDarray or ``transforms`` not callable.
    ValueError
        If ``dndarray`` is not split along axis 0.

    Examples
    --------
    >>> x = ht.arange(10, split=0)
    >>> ds = ht.utils.data.DistributedDataset(x)
    >>> len(ds) == x.lshape[0]
    True
    """

    def __init__(self, dndarray: DNDarray, transforms: Optional[Callable] = None):
        check_type(dndarray, "dndarray", DNDarray, "a DNDarray")
        if dndarray.split != 0:
            raise ValueError(f"dndarray must be split along axis 0, got split={dndarray.split}")
        if transforms is not None and not callable(transforms):
            raise TypeError(f"transforms must be None or callable, got {type(transforms).__name__}")
        self.dndarray = dndarray
        self.transforms = transforms

    def __len__(self) -> int:
        return int(self.dndarray.lshape[0])

    def __getitem__(self, index):
        item = self.dndarray.larray[index]
        return item if self.transforms is None else self.transforms(item)

    def __getitems__(self, indices: Sequence[int]):
        # torch's batched fetch: one item per index, as __getitem__
        return [self[index] for index in indices]


def _agreed_seed(comm, seed: Optional[int]) -> int:
    """``seed``, or (None) a fresh random one drawn on process 0 and broadcast."""
    if seed is not None:
        return seed
    return int(comm.bcast(secrets.randbits(63) if comm.rank == 0 else None, root=0))


def _check_seed(seed: Optional[int]) -> Optional[int]:
    seed = check_int(seed, "seed", 0, allow_none=True)
    if seed is not None and seed > _MASK63:
        raise ValueError(f"seed must be < 2**63, got {seed}")
    return seed


def _global_permutation(n: int, seed: int, draw: int) -> np.ndarray:
    """Row ``i`` of the shuffled array is row ``perm[i]`` of the array before: the same on
    every process and for every process count."""
    return np.random.default_rng([seed, draw]).permutation(n)


class DistributedSampler(torch_data.Sampler):
    """
    A torch sampler over this process's samples, for heat's :class:`Dataset` (heat's global
    shuffle per epoch) and for HeAT's :class:`DistributedDataset` (HeAT's shuffle of the array
    itself). It yields local indices, so a torch DataLoader on every process reads that
    process's samples.

    **With a heat Dataset**, ``set_epoch(e)`` selects the epoch, and iterating moves the samples
    between processes into the layout of epoch ``e`` (one all-to-all; :func:`dataset_shuffle`)
    and yields the local indices in order. Unlike torch's DistributedSampler it never pads with
    duplicated samples nor drops any: every sample is yielded exactly once per epoch by exactly
    one process; processes may yield one sample more or less than others.

    **With a DistributedDataset** (HeAT's semantics): with ``shuffle=True`` the rows of the
    dataset's DNDarray are shuffled at construction and at every :meth:`set_seed`:

    - ``shuffle_type="global"``: a random permutation of all rows, the same on every process;
      every process keeps its number of rows, and row ``i`` of the shuffled array is row
      ``perm[i]`` of the array before. The indices are then yielded in order;
    - ``shuffle_type="local"``: every process permutes its own rows, and every iteration yields
      them in a new random order.

    The permutations derive from ``seed`` (and the process for "local"): a seeded run repeats
    whatever the number of processes (for "global"); torch's global random state is left alone.

    Parameters
    ----------
    dataset : Dataset or DistributedDataset
    shuffle : bool, optional
        Shuffle (default: True for a heat Dataset, ignored for a test set; False for a
        DistributedDataset, as HeAT).
    seed : int, optional
        Replaces a heat Dataset's seed; for a DistributedDataset, the key of the shuffles
        (None: a random one, the same on every process).
    shuffle_type : {"global", "local"}
        For a DistributedDataset (see above); a heat Dataset shuffles globally.
    correction : bool
        HeAT's switch that put the rows of a global shuffle into the permutation's order instead
        of grouped by the process they came from; heat always applies the exact permutation, so
        it has no effect.

    Attributes
    ----------
    linked_sampler : DistributedSampler or None
        The sampler that :meth:`link` ties to this one.

    Raises
    ------
    TypeError
        If ``dataset`` is neither, or an argument has the wrong type.
    ValueError
        If ``seed`` is negative or ``shuffle_type`` unknown; a heat Dataset takes only
        ``shuffle_type="global"``.

    Examples
    --------
    >>> sampler = ht.utils.data.DistributedSampler(ds)
    >>> loader = torch.utils.data.DataLoader(ds, batch_size=4, sampler=sampler)
    >>> for epoch in range(3):
    ...     sampler.set_epoch(epoch)
    ...     for batch in loader:
    ...         pass

    HeAT's form, features and labels shuffled alike:

    >>> x, y = ht.random.randn(100, 3, split=0), ht.arange(100, split=0)
    >>> sx = ht.utils.data.DistributedSampler(ht.utils.data.DistributedDataset(x), shuffle=True, seed=1)
    >>> sy = ht.utils.data.DistributedSampler(ht.utils.data.DistributedDataset(y), shuffle=True, seed=1)
    """

    def __init__(
        self,
        dataset: Union[Dataset, DistributedDataset],
        shuffle: Optional[bool] = None,
        seed: Optional[int] = None,
        shuffle_type: str = "global",
        correction: bool = False,
    ):
        if not isinstance(dataset, (Dataset, DistributedDataset)):
            raise TypeError(
                "dataset must be a heat.utils.data.Dataset or DistributedDataset, got "
                f"{type(dataset).__name__}"
            )
        heat_dataset = isinstance(dataset, Dataset)
        shuffle = heat_dataset if shuffle is None else check_bool(shuffle, "shuffle")
        seed = _check_seed(seed)
        check_type(shuffle_type, "shuffle_type", str, "a string")
        check_choice(shuffle_type, "shuffle_type", ("global", "local"))
        check_bool(correction, "correction")
        if heat_dataset and shuffle_type != "global":
            raise ValueError("a heat Dataset shuffles globally: shuffle_type must be 'global'")
        self.dataset = dataset
        self.shuffle = shuffle
        self.correction = bool(correction)
        self.epoch = 0
        self.linked_sampler: Optional["DistributedSampler"] = None
        if heat_dataset:
            if seed is not None:
                dataset.seed = seed
            return
        self.dndarray = dataset.dndarray
        self.shuffle_type = shuffle_type
        self._draws = 0  # shuffles so far: each set_seed draws a new permutation
        self.set_seed(seed)

    # -- HeAT's interface (DistributedDataset) --------------------------------------------------
    def _heat_dataset_only(self, name: str) -> None:
        if isinstance(self.dataset, Dataset):
            raise TypeError(f"{name} is for a DistributedDataset; a heat Dataset uses set_epoch")

    def set_seed(self, value: Optional[int]) -> None:
        """
        Set the key of the shuffles and, with ``shuffle``, shuffle the rows now (collective for
        a global shuffle); passed on to a linked sampler.

        Parameters
        ----------
        value : int, optional
            Non-negative; None draws a random one (the same on every process).
        """
        self._heat_dataset_only("set_seed")
        value = _check_seed(value)
        self._seed = value
        seed = _agreed_seed(self.dndarray.comm, value) if self.shuffle_type == "global" else value
        self._key = seed if seed is not None else secrets.randbits(63)
        if self.shuffle:
            self._shuffle()
        if self.linked_sampler is not None:
            self.linked_sampler.set_seed(value)

    def set_shuffle_type(self, shuffle_type: str) -> None:
        """
        Choose "global" or "local" shuffling for the next :meth:`set_seed`; passed on to a
        linked sampler.
        """
        self._heat_dataset_only("set_shuffle_type")
        check_type(shuffle_type, "shuffle_type", str, "a string")
        self.shuffle_type = check_choice(shuffle_type, "shuffle_type", ("global", "local"))
        if self.linked_sampler is not None:
            self.linked_sampler.set_shuffle_type(shuffle_type)

    def link(self, sampler: "DistributedSampler") -> None:
        """Tie ``sampler`` (e.g. of the labels) to this one: later seeds and shuffle types
        set here are set there too, so both keep shuffling alike."""
        if not isinstance(sampler, DistributedSampler):
            raise TypeError(f"sampler must be a DistributedSampler, got {type(sampler).__name__}")
        self.linked_sampler = sampler

    def unlink(self) -> None:
        """Undo :meth:`link`."""
        self.linked_sampler = None

    def _shuffle(self) -> None:
        array = self.dndarray
        self._draws += 1
        if self.shuffle_type == "local":
            rng = np.random.default_rng([self._key, self._draws, array.comm.rank])
            order = torch.from_numpy(rng.permutation(array.lshape[0])).to(array.larray.device)
            array.larray = array.larray[order]
            return
        counts = array.lshape_map[:, 0].clone()
        shuffled = array[_global_permutation(array.gshape[0], self._key, self._draws)]
        if not torch.equal(shuffled.lshape_map[:, 0], counts):  # keep every process's count
            target = shuffled.lshape_map.clone()
            target[:, 0] = counts
            shuffled.redistribute_(lshape_map=shuffled.lshape_map, target_map=target)
        array.larray = shuffled.larray

    # -- torch's interface ----------------------------------------------------------------------
    def set_epoch(self, epoch: int) -> None:
        """Select the epoch of the next iteration (as torch's sampler)."""
        if isinstance(self.dataset, Dataset):
            self.epoch = _check_epoch(self.dataset, epoch)
        else:
            self.epoch = check_int(epoch, "epoch", 0)

    def __iter__(self) -> Iterator[int]:
        if isinstance(self.dataset, DistributedDataset):
            count = len(self.dataset)
            if self.shuffle and self.shuffle_type == "local":
                self._draws += 1
                rng = np.random.default_rng(
                    [self._key, self._draws, self.epoch, self.dndarray.comm.rank]
                )
                return iter(rng.permutation(count).tolist())
            return iter(range(count))
        if self.shuffle and not self.dataset.test_set:
            dataset_irecv(self.dataset)
            if self.dataset.epoch != self.epoch:
                dataset_shuffle(self.dataset, epoch=self.epoch)
        return iter(range(len(self.dataset)))

    def __len__(self) -> int:
        return len(self.dataset)


def create_train_val_split(
    X: DNDarray, y: DNDarray, p: float = 0.95, seed: Optional[int] = None
) -> Tuple[DNDarray, DNDarray, DNDarray, DNDarray]:
    """
    Split samples and labels at random into a training and a validation set (HeAT's helper).

    The rows are shuffled by one random permutation, the same for ``X`` and ``y`` (so the pairs
    stay together); the first ``floor(p * n)`` rows of the shuffled data form the training set,
    the rest the validation set. The permutation derives from ``seed`` alone, so a seeded split is
    the same for any number of processes (HeAT 1.8 split every process's block by itself, so its
    set sizes depended on the number of processes). ``X`` and ``y`` are not changed (HeAT 1.8
    shuffled them in place).

    Parameters
    ----------
    X : DNDarray
        The samples along axis 0.
    y : DNDarray
        The labels, as many as samples.
    p : float
        The fraction of the samples that goes into the training set, in ``[0, 1]``.
    seed : int, optional
        Key of the permutation, non-negative; None: a random one (the same on every process).

    Returns
    -------
    (DNDarray, DNDarray, DNDarray, DNDarray)
        ``(X_train, y_train, X_val, y_val)``, laid out as ``X`` and ``y`` (balanced).

    Raises
    ------
    TypeError
        If ``X`` or ``y`` is not a DNDarray, ``p`` not a real number or ``seed`` not an int.
    ValueError
        If ``X`` or ``y`` is 0-d, their numbers of samples differ, ``p`` is outside ``[0, 1]``
        or ``seed`` is negative.

    Examples
    --------
    >>> X, y = ht.random.randn(100, 4, split=0), ht.arange(100, split=0)
    >>> X_train, y_train, X_val, y_val = ht.utils.data.create_train_val_split(X, y, p=0.8, seed=1)
    >>> X_train.shape, y_val.shape
    ((80, 4), (20,))
    """
    check_type(X, "X", DNDarray, "a DNDarray")
    check_type(y, "y", DNDarray, "a DNDarray")
    if X.ndim == 0 or y.ndim == 0:
        raise ValueError("X and y must have at least one dimension (the samples)")
    if X.gshape[0] != y.gshape[0]:
        raise ValueError(f"X and y must hold as many samples, got {X.gshape[0]} and {y.gshape[0]}")
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.floating, np.integer)):
        raise TypeError(f"p must be a float, got {type(p).__name__}")
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    seed = _agreed_seed(X.comm, _check_seed(seed))
    n = X.gshape[0]
    order = _global_permutation(n, seed, 0)
    train, val = order[: int(n * float(p))], order[int(n * float(p)) :]
    return X[train], y[train], X[val], y[val]


class DataLoader:
    """
    Batches of this process's samples of a heat :class:`Dataset` (or any torch Dataset), with the
    global shuffle between epochs; HeAT's ``DataLoader`` and torch's loader protocol.

    Each iteration is one epoch: for a heat Dataset that is not a test set, the samples first
    move into the layout of the epoch (:func:`dataset_shuffle`); with ``dataset.ishuffle`` the
    shuffle for the next epoch is started right away and runs during this epoch
    (:func:`dataset_ishuffle`), completed when the next epoch begins. Iterate on all processes
    together. Processes hold one sample more or less than others when the samples do not divide
    evenly, so ``len()`` may differ by one batch between them: a training step that communicates
    per batch needs a balanced count (or ``drop_last`` with samples a multiple of the batch).

    Parameters
    ----------
    dataset : Dataset or torch.utils.data.Dataset
    batch_size : int
    num_workers, collate_fn, pin_memory, drop_last, timeout, worker_init_fn
        As for :class:`torch.utils.data.DataLoader`.
    sampler : torch.utils.data.Sampler, optional
        Default: the local samples in order (they are already shuffled globally).

    Attributes
    ----------
    epoch : int
        The epoch of the next iteration; advances after each complete one.

    Examples
    --------
    >>> ds = ht.utils.data.Dataset((ht.random.rand(100, 4, split=0), ht.arange(100, split=0)))
    >>> loader = ht.utils.data.DataLoader(ds, batch_size=8)
    >>> for x, y in loader:
    ...     pass
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int = 1,
        num_workers: int = 0,
        collate_fn: Optional[Callable] = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Optional[Callable] = None,
        sampler: Optional[torch_data.Sampler] = None,
    ):
        from .partial_dataset import PartialH5Dataset

        check_int(batch_size, "batch_size", 1)
        if not isinstance(dataset, (torch_data.Dataset, PartialH5Dataset)):
            raise TypeError(f"dataset must be a Dataset, got {type(dataset).__name__}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.drop_last = bool(drop_last)
        self.epoch = 0
        self._partial = isinstance(dataset, PartialH5Dataset)
        self.collate_fn = collate_fn
        if self._partial:
            self.DataLoader = None
            return
        self.DataLoader = torch_data.DataLoader(
            dataset,
            batch_size=self.batch_size,
            shuffle=False,
            sampler=sampler,
            num_workers=num_workers,
            collate_fn=collate_fn,
            pin_memory=pin_memory,
            drop_last=drop_last,
            timeout=timeout,
            worker_init_fn=worker_init_fn,
        )

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch of the next iteration."""
        self.epoch = check_int(epoch, "epoch", 0)

    def __len__(self) -> int:
        """Batches this process yields per epoch."""
        if self._partial:
            return len(self.dataset._loader(self.batch_size, self.drop_last))
        return len(self.DataLoader)

    def __iter__(self) -> Iterator:
        if self._partial:
            from .partial_dataset import PartialH5DataLoaderIter

            return PartialH5DataLoaderIter(self)
        return self._epoch_iter()

    def _epoch_iter(self) -> Iterator:
        dataset, epoch = self.dataset, self.epoch
        if isinstance(dataset, Dataset) and not dataset.test_set:
            dataset_irecv(dataset)
            if dataset.epoch != epoch:
                dataset_shuffle(dataset, epoch=epoch)
            if dataset.ishuffle:  # the next epoch's layout travels during this one
                dataset_ishuffle(dataset, epoch=epoch + 1)
        yield from self.DataLoader
        self.epoch = epoch + 1
