"""
The plan of a streaming epoch: which rows each process yields, in which order.

Everything here is a pure function of integers -- the number of rows, the window size in rows,
the process count, the batch size, the seed, the epoch, the shuffle switch, the tail policy and
the resume history. There is no MPI and no file in this module: the loader
(:mod:`heat.utils.data.streaming`) reads and exchanges exactly what the plan says, and a resume
only has to rebuild the plan.

How an epoch is laid out
------------------------
* **Windows.** The rows ``0 .. n_rows-1`` are cut into contiguous windows of ``window_rows`` rows
  (the last one shorter). Each epoch visits the windows in a keyed pseudo-random order
  (``shuffle=True``) or in file order.
* **Rounds.** Consecutive groups of ``p`` windows of that order form the rounds; in round ``j``
  process ``q`` reads window ``j*p + q`` (in the last round some processes read none).
* **The round's stream.** The rows of a round are put in a keyed pseudo-random order, the round's
  stream (file order without shuffle); a row may appear in it only once, except for the padding of
  ``tail="wrap"`` in the last round. The epoch's stream is the concatenation of the rounds' streams.
* **Shares.** Process ``r`` takes a contiguous share of each round's stream, sized so that after
  every round the processes' totals differ by at most one row (``r < x % p`` gets one more of the
  first ``x`` rows). It receives its share in one all-to-all (:mod:`.exchange`) and yields it in a
  keyed pseudo-random order of its own (file order without shuffle).
* **Batches and the tail.** Every process yields the same number of batches, ``steps``. With
  ``T`` rows and ``G = p * batch_size``:

  - ``"short"`` (default): ``steps = ceil(T / G)``; every row exactly once. All batches have
    ``batch_size`` rows, except, when ``G`` does not divide ``T``, the last two batches of each
    process, which split its rest evenly (each between ``batch_size // 2`` and ``batch_size``
    rows; a single batch when ``steps == 1``). A batch is empty only with ``batch_size == 1`` or
    when fewer rows than processes are left.
  - ``"drop"``: ``steps = floor(T / G)``, all batches full; ``T - steps * G < G`` rows (a random
    subset with shuffle, the file's last rows without) are not yielded: :attr:`EpochPlan.dropped`.
  - ``"wrap"``: ``steps = ceil(T / G)``, all batches full; the last round's stream is extended
    cyclically by ``steps * G - T < G`` rows, which are yielded a second time:
    :attr:`EpochPlan.wrapped`.

Guarantees
----------
* **Exactly once.** Over one epoch and all processes together, every row is yielded exactly once
  (``"short"``); at most once, with exactly ``dropped`` rows left out (``"drop"``); at least once,
  with exactly ``wrapped`` rows yielded twice (``"wrap"``). This holds for an epoch that is
  interrupted and resumed any number of times, on any process counts and batch sizes.
* **Shuffle quality.** Rows that are in the same round end up in a uniformly shuffled order and
  uniformly spread over the processes -- up to the quality of the keyed permutation: up to 4096
  elements the order of keyed 64-bit hashes (uniform up to hash collisions), above a 4-round
  Feistel network with multiply-xorshift round functions (cycle-walked to the exact size), which
  passes chi-square tests of uniformity but is not a cryptographic permutation. The shuffle buffer is therefore ``p x window_rows`` rows: when the whole file fits
  in one round (``n_rows <= p * window_rows``) each epoch is a uniform permutation of the file;
  otherwise two rows can only meet in a batch if their windows fall into the same round, and
  which windows do is re-drawn every epoch.
* **Determinism.** The rows each process yields, in order, are a function of the arguments of
  :class:`EpochPlan` alone: the same on every machine and library version (the keyed functions
  use only 64-bit integer arithmetic, no library random generator).
* **Resume.** A position is the list of segments of the epoch so far, ``(process_count,
  batch_size, steps_done)`` each. Continuing with the same process count and batch size continues
  the identical sequence. With another process count or batch size a new segment begins: the
  rounds of the old segment that were fully consumed are gone; the windows of the remaining
  rounds are carried over, minus the rows already yielded, and regrouped into rounds of the new
  process count (with a new key). So the rest of the epoch is a different order than an
  uninterrupted run would have produced, with the same shuffle quality, and still every remaining
  row exactly once.

Examples
--------
>>> plan = EpochPlan(n_rows=10, window_rows=4, process_count=2, batch_size=2, seed=0, epoch=0)
>>> plan.steps
3
>>> rows = [plan.simulate(r) for r in range(2)]
>>> sorted(int(i) for batches in rows for batch in batches for i in batch)
[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "TAIL_POLICIES",
    "derive_key",
    "KeyedPermutation",
    "window_bounds",
    "window_order",
    "Segment",
    "RoundTask",
    "EpochPlan",
]

#: The tail policies, the default first.
TAIL_POLICIES = ("short", "drop", "wrap")

_MASK64 = (1 << 64) - 1
# labels that separate the keyed functions of one (seed, epoch)
_WINDOWS, _ROUND, _ORDER, _SEGMENT = 1, 2, 3, 4


def _mix64(z: int) -> int:
    """The splitmix64 finaliser on a Python int (a bijection of 64-bit integers)."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _mix64_array(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def derive_key(*parts: int) -> int:
    """
    A 64-bit key from non-negative integers (order matters); the same on every platform.

    Examples
    --------
    >>> derive_key(0, 1) != derive_key(1, 0)
    True
    """
    key = 0x6A09E667F3BCC908
    for part in parts:
        key = _mix64(key ^ _mix64(int(part) & _MASK64))
    return key


class KeyedPermutation:
    """
    A keyed pseudo-random permutation of ``range(size)``, evaluated on any subset of it.

    Up to ``EXPLICIT`` elements: the order of keyed 64-bit hashes of ``0 .. size-1`` (uniform
    up to hash collisions). Above: a Feistel network on the smallest power of two ``>= size`` (its
    bits split into a high and a low half, each of ``ROUNDS`` rounds mixing one half into the
    other with a keyed multiply-xorshift function), cycle-walked so that values stay below
    ``size``; forward and inverse cost a few vectorised integer operations per element, so a
    process can ask where its own rows go without computing the whole permutation. Feistel
    networks on small domains are visibly non-uniform, hence the explicit form there.
    ``key=None`` gives the identity.

    Examples
    --------
    >>> perm = KeyedPermutation(10, key=derive_key(7))
    >>> values = perm(np.arange(10))
    >>> sorted(values.tolist())
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    >>> bool((perm.inverse(values) == np.arange(10)).all())
    True
    """

    ROUNDS = 4
    EXPLICIT = 4096

    def __init__(self, size: int, key: Optional[int]):
        self.size = int(size)
        self.identity = key is None or self.size <= 1
        self._explicit: Optional[Tuple[np.ndarray, np.ndarray]] = None
        if not self.identity and self.size <= self.EXPLICIT:
            hashes = _mix64_array(np.arange(self.size, dtype=np.uint64) ^ np.uint64(key))
            forward = np.argsort(hashes, kind="stable").astype(np.int64)
            inverse = np.empty_like(forward)
            inverse[forward] = np.arange(self.size, dtype=np.int64)
            self._explicit = (forward, inverse)
        bits = max(self.size - 1, 0).bit_length()
        self._low_bits = bits // 2
        self._high_bits = bits - self._low_bits
        # 32-bit arithmetic whenever the values fit: NumPy vectorises 32-bit multiplications,
        # 64-bit ones are an order of magnitude slower
        self._width = 32 if bits <= 32 else 64
        self._type = np.uint32 if self._width == 32 else np.uint64
        self._low_mask = self._type((1 << self._low_bits) - 1)
        self._round_keys = []
        if not self.identity:
            mask = (1 << self._width) - 1
            for i in range(self.ROUNDS):
                k = derive_key(key, i)
                # odd multipliers keep the multiplications bijective
                m1, m2 = (derive_key(k, 1) | 1) & mask, (derive_key(k, 2) | 1) & mask
                self._round_keys.append((self._type(k & mask), self._type(m1), self._type(m2)))

    def _mix(self, values: np.ndarray, i: int, out_bits: int) -> np.ndarray:
        k, m1, m2 = self._round_keys[i]
        h = values + k
        h *= m1
        h ^= h >> self._type(self._width // 2)
        h *= m2
        h >>= self._type(self._width - out_bits)  # the top bits are the best mixed ones
        return h

    def _rounds(self, x: np.ndarray, order) -> np.ndarray:
        high = x >> self._type(self._low_bits)
        low = x & self._low_mask
        for i in order:
            if i % 2 == 0:
                if self._high_bits:
                    high ^= self._mix(low, i, self._high_bits)
            elif self._low_bits:
                low ^= self._mix(high, i, self._low_bits)
        return (high << self._type(self._low_bits)) | low

    def _walk(self, values: np.ndarray, forward: bool) -> np.ndarray:
        order = range(self.ROUNDS) if forward else range(self.ROUNDS - 1, -1, -1)
        out = self._rounds(values.astype(self._type), order)
        limit = self._type(self.size) if self.size < (1 << self._width) else None
        todo = np.flatnonzero(out >= limit) if limit is not None else np.zeros(0, np.int64)
        while todo.size:  # cycle walking: repeat until back inside range(size)
            out[todo] = self._rounds(out[todo], order)
            todo = todo[out[todo] >= limit]
        return out.astype(np.int64)

    def __call__(self, values: np.ndarray) -> np.ndarray:
        """The images of ``values`` (integers in ``range(size)``) as int64."""
        values = np.asarray(values, dtype=np.int64).reshape(-1)
        if self._explicit is not None:
            return self._explicit[0][values]
        return values.copy() if self.identity else self._walk(values, forward=True)

    def inverse(self, values: np.ndarray) -> np.ndarray:
        """The preimages of ``values`` (integers in ``range(size)``) as int64."""
        values = np.asarray(values, dtype=np.int64).reshape(-1)
        if self._explicit is not None:
            return self._explicit[1][values]
        return values.copy() if self.identity else self._walk(values, forward=False)


def window_bounds(n_rows: int, window_rows: int) -> Tuple[np.ndarray, np.ndarray]:
    """
    The first and one-past-last row of every window, in file order.

    Examples
    --------
    >>> window_bounds(10, 4)
    (array([0, 4, 8]), array([ 4,  8, 10]))
    """
    starts = np.arange(0, n_rows, window_rows, dtype=np.int64)
    return starts, np.minimum(starts + window_rows, n_rows)


def window_order(n_windows: int, seed: int, epoch: int, shuffle: bool) -> np.ndarray:
    """
    The order in which an epoch visits the windows: keyed by (seed, epoch), or file order.

    Examples
    --------
    >>> window_order(4, seed=0, epoch=0, shuffle=False)
    array([0, 1, 2, 3])
    """
    key = derive_key(seed, epoch, _WINDOWS) if shuffle else None
    return KeyedPermutation(n_windows, key)(np.arange(n_windows))


def _slot_owner(offsets: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """
    The process whose slots hold each position: the last ``r`` with ``offsets[r] <= position``
    (``offsets`` ascending, ``offsets[0] == 0``), as int64.

    Examples
    --------
    >>> _slot_owner(np.array([0, 3, 3, 5]), np.array([0, 2, 3, 4, 5, 9]))
    array([0, 0, 2, 2, 3, 3])
    """
    if len(offsets) > 8:
        return np.searchsorted(offsets, positions, side="right") - 1
    # a few comparisons per position beat a binary search's per-element overhead
    owner = np.zeros(len(positions), dtype=np.int64)
    for start in offsets[1:].tolist():
        owner += positions >= start
    return owner


def _group_stably(keys: np.ndarray, p: int) -> np.ndarray:
    """
    The indices that sort ``keys`` (integers in ``range(p)``) stably: grouped by key, each group
    in its original order.

    Examples
    --------
    >>> _group_stably(np.array([1, 0, 1, 0]), 2)
    array([1, 3, 0, 2])
    """
    if p <= 4:  # a pass per key beats a sort
        return np.concatenate([np.flatnonzero(keys == q) for q in range(p)])
    # a stable radix sort for 16-bit keys (O(n)); comparisons beyond
    return np.argsort(keys.astype(np.int16 if p < 2**15 else np.int32), kind="stable")


def _share(x, r, p):
    """How many of the first ``x`` rows (or slots) belong to process ``r`` of ``p``."""
    return x // p + (r < x % p)


@dataclass(frozen=True)
class RoundTask:
    """
    What one process does in one round that some process needs.

    Attributes
    ----------
    round : int
        The round's index in the segment.
    due_step : int
        The round is read and exchanged before the batch of this step is assembled (the same
        step on every process, so the exchange is entered by all processes together).
    window : int or None
        The index (in the segment's window list) of the window this process reads, if any.
    skip, take : int
        Of this process's share of the round (its slots, in its yield order), the first ``skip``
        were yielded before a resume; the next ``take`` are yielded now.
    """

    round: int
    due_step: int
    window: Optional[int]
    skip: int
    take: int


class Segment:
    """
    A stretch of an epoch planned for one process count and batch size (see the module notes).

    Parameters
    ----------
    starts, stops : array of int
        The windows (row ranges), in visiting order.
    excluded : dict
        Window index -> sorted int64 offsets (within the window) of rows already yielded in
        earlier segments of the epoch.
    process_count, batch_size : int
    tail : str
    shuffle : bool
    key : int
        Keys the round permutations and the yield orders.
    """

    def __init__(
        self,
        starts: np.ndarray,
        stops: np.ndarray,
        excluded: Dict[int, np.ndarray],
        process_count: int,
        batch_size: int,
        tail: str,
        shuffle: bool,
        key: int,
    ):
        self.starts = np.asarray(starts, dtype=np.int64)
        self.stops = np.asarray(stops, dtype=np.int64)
        self.excluded = excluded
        self.p = p = int(process_count)
        self.batch_size = b = int(batch_size)
        self.tail = tail
        self.shuffle = shuffle
        self.key = key
        sizes = self.stops - self.starts
        for w, offsets in excluded.items():
            sizes[w] -= len(offsets)
        if (sizes <= 0).any():
            raise ValueError("a window of a segment has no rows left")  # the caller drops those
        self.window_sizes = sizes
        self.window_count = k = len(sizes)
        self.round_count = -(-k // p)
        self.round_rows = (
            np.add.reduceat(sizes, np.arange(0, k, p)) if k else np.zeros(0, dtype=np.int64)
        )
        self.rows = t = int(sizes.sum())
        global_batch = p * b
        if tail == "drop":
            self.steps = t // global_batch
            self.pad, self.dropped = 0, t - self.steps * global_batch
        else:
            self.steps = -(-t // global_batch)
            self.pad = self.steps * global_batch - t if tail == "wrap" else 0
            self.dropped = 0
        # rows before each round in the segment's stream
        self.bounds = np.concatenate([[0], np.cumsum(self.round_rows)]).astype(np.int64)
        # the wrap padding: each process's shortfall, appended to its share of the last round
        ranks = np.arange(p)
        self.padding = self.steps * b - _share(t, ranks, p) if self.pad else np.zeros(p, np.int64)
        self._remaining_cache: Dict[int, np.ndarray] = {}

    # -- per process: rows and batches -------------------------------------------------------------

    def share(self, rank: int, slots) -> np.ndarray:
        """Process ``rank``'s count among the first ``slots`` slots of the segment's stream."""
        return _share(np.asarray(slots, dtype=np.int64), rank, self.p)

    def stream_rows(self, rank: int) -> int:
        """How many rows process ``rank``'s stream holds (its share of all slots)."""
        return int(self.share(rank, self.rows) + self.padding[rank])

    def yielded_rows(self, rank: int) -> int:
        """How many rows process ``rank`` yields in the whole segment."""
        if self.tail == "short":
            return self.stream_rows(rank)
        return self.steps * self.batch_size

    def batch_sizes(self, rank: int) -> Tuple[int, List[int]]:
        """``(full, last)``: ``full`` batches of ``batch_size`` rows, then batches of ``last``."""
        b, steps = self.batch_size, self.steps
        if self.tail != "short" or self.rows % (self.p * b) == 0:
            return steps, []
        rest = self.stream_rows(rank)
        if steps == 1:
            return 0, [rest]
        rest -= (steps - 2) * b
        return steps - 2, [(rest + 1) // 2, rest // 2]

    def batch_size_at(self, rank: int, step: int) -> int:
        """The number of rows process ``rank`` yields at ``step``."""
        full, last = self.batch_sizes(rank)
        return self.batch_size if step < full else last[step - full]

    def rows_before(self, rank: int, step: int) -> int:
        """How many rows process ``rank`` has yielded before ``step``."""
        full, last = self.batch_sizes(rank)
        if step <= full:
            return step * self.batch_size
        return full * self.batch_size + sum(last[: step - full])

    def step_of(self, rank: int, row: int) -> int:
        """The step at which process ``rank`` yields the ``row``-th row of its stream."""
        full, last = self.batch_sizes(rank)
        if row < full * self.batch_size:
            return row // self.batch_size
        row -= full * self.batch_size
        for i, size in enumerate(last):
            if row < size:
                return full + i
            row -= size
        raise ValueError(f"process {rank} yields no row {row}")

    # -- rounds ------------------------------------------------------------------------------------

    def round_window_indices(self, j: int) -> range:
        """The indices of the windows of round ``j`` (reader ``q`` reads the ``q``-th)."""
        return range(j * self.p, min((j + 1) * self.p, self.window_count))

    def _last_slot(self, j: int) -> np.ndarray:
        """Every process's count of the slots up to the end of round ``j``."""
        ranks = np.arange(self.p)
        last = _share(self.bounds[j + 1], ranks, self.p)
        return last + self.padding if j == self.round_count - 1 else last

    def round_slots(self, j: int) -> Tuple[np.ndarray, np.ndarray]:
        """
        ``(counts, offsets)``: each process's share of round ``j``'s rows; process ``r`` takes
        the stream positions ``offsets[r] + range(counts[r])`` (the wrap padding of the last
        round not included, see :meth:`_share_positions`).
        """
        ranks = np.arange(self.p)
        counts = _share(self.bounds[j + 1], ranks, self.p) - _share(self.bounds[j], ranks, self.p)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        return counts.astype(np.int64), offsets

    def _round_padding(self, j: int) -> Tuple[np.ndarray, np.ndarray]:
        """``(counts, offsets)`` of the wrap padding of round ``j``: positions ``rows + ...``."""
        counts = self.padding if j == self.round_count - 1 else np.zeros(self.p, np.int64)
        return counts, np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)

    def round_permutation(self, j: int) -> KeyedPermutation:
        """The permutation from positions in round ``j``'s stream to the round's rows."""
        key = derive_key(self.key, _ROUND, j) if self.shuffle else None
        return KeyedPermutation(int(self.round_rows[j]), key)

    def yield_order(self, j: int, rank: int) -> np.ndarray:
        """
        The order (indices into the received share, see :meth:`received_rows`) in which
        ``rank`` yields round ``j``: a keyed permutation of its rows, then the wrap padding copies
        (so that copies are only ever yielded in the last step, never before a resume).
        """
        counts, _ = self.round_slots(j)
        key = derive_key(self.key, _ORDER, j, rank) if self.shuffle else None
        size = int(self.round_rows[j])
        if not self._round_padding(j)[0].any():
            return KeyedPermutation(int(counts[rank]), key)(np.arange(int(counts[rank])))
        positions = self._share_positions(j, rank)
        copies = positions // size
        u = self.round_permutation(j)(positions % size)
        readers = np.searchsorted(self._round_bases(j), u, side="right") - 1
        is_copy = copies[np.lexsort((u, copies, readers))] > 0
        originals, padding = np.flatnonzero(~is_copy), np.flatnonzero(is_copy)
        return np.concatenate(
            [originals[KeyedPermutation(len(originals), key)(np.arange(len(originals)))], padding]
        )

    def remaining_offsets(self, w: int) -> Optional[np.ndarray]:
        """The offsets of window ``w``'s rows still in the stream (None: all of them)."""
        if w not in self.excluded:
            return None
        if w not in self._remaining_cache:
            everything = np.arange(self.stops[w] - self.starts[w], dtype=np.int64)
            self._remaining_cache[w] = np.setdiff1d(everything, self.excluded[w])
        return self._remaining_cache[w]

    def _window_offsets(self, w: int, ranks: np.ndarray) -> np.ndarray:
        """The offsets in window ``w`` of its ``ranks``-th remaining rows."""
        remaining = self.remaining_offsets(w)
        return ranks if remaining is None else remaining[ranks]

    def _round_bases(self, j: int) -> np.ndarray:
        windows = self.round_window_indices(j)
        sizes = self.window_sizes[windows.start : windows.stop]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def locate(self, j: int, u: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(reader, global row)`` of the rows with round-local numbers ``u`` in round ``j``."""
        bases = self._round_bases(j)
        readers = np.searchsorted(bases, u, side="right") - 1
        rows = np.empty(len(u), dtype=np.int64)
        first = j * self.p
        for q in np.unique(readers):
            mask = readers == q
            w = first + int(q)
            rows[mask] = self.starts[w] + self._window_offsets(w, u[mask] - bases[q])
        return readers, rows

    def send_plan(self, j: int, reader: int) -> Tuple[np.ndarray, np.ndarray]:
        """
        What ``reader`` sends in round ``j``: window offsets in send order, and counts per process.

        The rows for each destination are contiguous in send order, grouped by destination, and
        within a group ordered by (copy, row): original rows in file order first, then the wrap
        padding copies.
        """
        counts_out = np.zeros(self.p, dtype=np.int64)
        w = j * self.p + reader
        if w >= self.window_count:
            return np.zeros(0, dtype=np.int64), counts_out
        m = int(self.window_sizes[w])
        size = int(self.round_rows[j])
        ranks = np.arange(m, dtype=np.int64)
        extra = int(self._round_padding(j)[0].sum())  # wrap padding in the last round
        if self.p == 1 and not extra:  # everything stays here, in file order
            counts_out[0] = m
            return self._window_offsets(w, ranks), counts_out
        base = int(self._round_bases(j)[reader])
        positions = self.round_permutation(j).inverse(base + ranks)
        if extra:
            all_positions, all_ranks = [positions], [ranks]
            copy = 1
            while copy * size < size + extra:
                more = positions + copy * size
                keep = more < size + extra
                all_positions.append(more[keep])
                all_ranks.append(ranks[keep])
                copy += 1
            positions, ranks = np.concatenate(all_positions), np.concatenate(all_ranks)
        _, offsets = self.round_slots(j)
        destinations = _slot_owner(offsets, positions)
        if extra:
            _, pad_offsets = self._round_padding(j)
            copy = positions >= size
            destinations[copy] = _slot_owner(pad_offsets, positions[copy] - size)
        if self.shuffle or extra:
            ranks = ranks[_group_stably(destinations, self.p)]
        counts_out += np.bincount(destinations, minlength=self.p)
        return self._window_offsets(w, ranks), counts_out

    def _share_positions(self, j: int, rank: int) -> np.ndarray:
        """The stream positions of ``rank``'s share of round ``j`` (padding copies after)."""
        counts, offsets = self.round_slots(j)
        positions = offsets[rank] + np.arange(counts[rank], dtype=np.int64)
        pad_counts, pad_offsets = self._round_padding(j)
        if pad_counts[rank]:
            size = int(self.round_rows[j])
            copies = size + pad_offsets[rank] + np.arange(pad_counts[rank], dtype=np.int64)
            positions = np.concatenate([positions, copies])
        return positions

    def received_rows(self, j: int, rank: int) -> np.ndarray:
        """
        The global rows ``rank`` receives in round ``j``, in the order they arrive (by reader,
        then copy, then row), i.e. what :meth:`send_plan` of every reader delivers.
        """
        positions = self._share_positions(j, rank)
        size = int(self.round_rows[j])
        u = self.round_permutation(j)(positions % size)
        readers, rows = self.locate(j, u)
        return rows[np.lexsort((u, positions // size, readers))]

    def yielded_rows_of_round(self, j: int, rank: int) -> np.ndarray:
        """The global rows ``rank`` yields from round ``j``, in yield order (a simulation)."""
        return self.received_rows(j, rank)[self.yield_order(j, rank)]

    def is_local(self, j: int) -> bool:
        """
        Whether every process's share of round ``j`` is exactly the window it reads, in order
        (then no exchange is needed; only without shuffle and padding).
        """
        if self.shuffle or self.p == 1:
            return self.p == 1
        counts, offsets = self.round_slots(j)
        if self._round_padding(j)[0].any():
            return False
        sizes = np.zeros(self.p, dtype=np.int64)
        windows = self.round_window_indices(j)
        sizes[: len(windows)] = self.window_sizes[windows.start : windows.stop]
        return bool((counts == sizes).all())

    # -- position ----------------------------------------------------------------------------------

    def tasks(self, rank: int, start_step: int = 0) -> List[RoundTask]:
        """
        The rounds some process needs from ``start_step`` on, in order, as seen by ``rank``.
        """
        ranks = np.arange(self.p)
        done = np.array([self.rows_before(r, start_step) for r in ranks], dtype=np.int64)
        end = np.array([self.yielded_rows(r) for r in ranks], dtype=np.int64)
        tasks = []
        for j in range(self.round_count):
            first = _share(self.bounds[j], ranks, self.p)
            last = self._last_slot(j)
            low, high = np.maximum(first, done), np.minimum(last, end)
            needed = np.flatnonzero(low < high)
            if needed.size == 0:
                continue
            due = min(self.step_of(int(r), int(low[r])) for r in needed)
            window = j * self.p + rank
            tasks.append(
                RoundTask(
                    round=j,
                    due_step=int(due),
                    window=window if window < self.window_count else None,
                    skip=int(max(0, min(done[rank], last[rank]) - first[rank])),
                    take=int(max(0, high[rank] - low[rank])),
                )
            )
        # rounds are exchanged in order, so a round is due no later than any round after it
        for i in range(len(tasks) - 2, -1, -1):
            if tasks[i + 1].due_step < tasks[i].due_step:
                tasks[i] = dataclasses.replace(tasks[i], due_step=tasks[i + 1].due_step)
        return tasks

    def consumed(self, steps: int) -> Tuple[int, Dict[int, np.ndarray]]:
        """
        After ``steps`` steps: the first round not fully yielded, and for the windows from that
        round on, the offsets of their rows yielded so far (earlier segments included).
        """
        ranks = np.arange(self.p)
        done = np.array([self.rows_before(r, steps) for r in ranks], dtype=np.int64)
        first_open = self.round_count
        for j in range(self.round_count):
            if (done < self._last_slot(j)).any():
                first_open = j
                break
        excluded = {w: offsets for w, offsets in self.excluded.items() if w >= first_open * self.p}
        for j in range(first_open, self.round_count):
            first = _share(self.bounds[j], ranks, self.p)
            taken = np.clip(done - first, 0, None)
            if not taken.any():
                break  # later rounds are untouched
            rows = np.concatenate(
                [self.yielded_rows_of_round(j, int(r))[: int(taken[r])] for r in ranks]
            )
            for w in self.round_window_indices(j):
                inside = rows[(rows >= self.starts[w]) & (rows < self.stops[w])] - self.starts[w]
                if inside.size:
                    old = excluded.get(w, np.zeros(0, dtype=np.int64))
                    excluded[w] = np.union1d(old, inside).astype(np.int64)
        return first_open, excluded


class EpochPlan:
    """
    The plan of one epoch for this job's process count and batch size (see the module notes).

    Parameters
    ----------
    n_rows : int
        Rows of the data.
    window_rows : int
        Rows per window (the last window may be shorter).
    process_count, batch_size : int
        This job's process count and per-process batch size.
    seed, epoch : int
        Non-negative; key the window order and the permutations.
    shuffle : bool
    tail : {"short", "drop", "wrap"}
    history : sequence of (process_count, batch_size, steps)
        The segments of this epoch so far (from a saved state; empty for a fresh epoch). If the
        last one has this job's process count and batch size, the plan continues it.

    Raises
    ------
    ValueError
        If an argument is out of range or the history is impossible (a segment with more steps
        than it has, or segments after one that finished the epoch).

    Examples
    --------
    >>> plan = EpochPlan(10, 4, process_count=2, batch_size=2, seed=0, epoch=0, tail="drop")
    >>> plan.steps, plan.dropped
    (2, 2)
    """

    def __init__(
        self,
        n_rows: int,
        window_rows: int,
        process_count: int,
        batch_size: int,
        *,
        seed: int = 0,
        epoch: int = 0,
        shuffle: bool = True,
        tail: str = "short",
        history: Sequence[Sequence[int]] = (),
    ):
        for name, value, low in (
            ("n_rows", n_rows, 0),
            ("window_rows", window_rows, 1),
            ("process_count", process_count, 1),
            ("batch_size", batch_size, 1),
            ("seed", seed, 0),
            ("epoch", epoch, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            if value < low:
                raise ValueError(f"{name} must be >= {low}, got {value}")
        if tail not in TAIL_POLICIES:
            raise ValueError(f"tail must be one of {TAIL_POLICIES}, got {tail!r}")
        history = [tuple(int(v) for v in entry) for entry in history]
        for entry in history:
            if len(entry) != 3 or entry[0] < 1 or entry[1] < 1 or entry[2] < 0:
                raise ValueError(
                    f"history entries must be (process_count >= 1, batch_size >= 1, steps >= 0), "
                    f"got {entry}"
                )
        self.n_rows, self.window_rows = int(n_rows), int(window_rows)
        self.process_count, self.batch_size = int(process_count), int(batch_size)
        self.seed, self.epoch, self.shuffle, self.tail = int(seed), int(epoch), bool(shuffle), tail

        if history and history[-1][:2] == (self.process_count, self.batch_size):
            earlier, self.start_step = history[:-1], history[-1][2]
        else:
            earlier, self.start_step = history, 0
        self.earlier = earlier
        self.steps_before = sum(entry[2] for entry in earlier)

        starts, stops = window_bounds(self.n_rows, self.window_rows)
        order = window_order(len(starts), self.seed, self.epoch, self.shuffle)
        starts, stops, excluded = starts[order], stops[order], {}
        configs = [entry[:2] for entry in earlier] + [(self.process_count, self.batch_size)]
        for index, (p, b) in enumerate(configs):
            segment = Segment(
                starts, stops, excluded, p, b, tail, self.shuffle, self._segment_key(index)
            )
            if index == len(earlier):
                break
            steps = earlier[index][2]
            if steps >= segment.steps:
                raise ValueError(
                    f"history: segment {index} has {steps} steps done, but the epoch ends after "
                    f"{segment.steps} steps there (a finished epoch has no later segments)"
                )
            first_open, carried = segment.consumed(steps)
            cut = first_open * p
            starts, stops = starts[cut:], stops[cut:]
            carried = {w - cut: offsets for w, offsets in carried.items()}
            # windows whose rows were all yielded leave the plan
            keep = [w for w in range(len(starts)) if len(carried.get(w, ())) < stops[w] - starts[w]]
            renumber = {w: i for i, w in enumerate(keep)}
            excluded = {renumber[w]: offsets for w, offsets in carried.items() if w in renumber}
            starts, stops = starts[keep], stops[keep]
        self.segment = segment
        if self.start_step > segment.steps:
            raise ValueError(
                f"history: {self.start_step} steps done, but the segment has only {segment.steps}"
            )

    def _segment_key(self, index: int) -> int:
        return derive_key(self.seed, self.epoch, _SEGMENT, index)

    @property
    def steps(self) -> int:
        """Batches every process yields in the whole epoch (earlier segments included)."""
        return self.steps_before + self.segment.steps

    @property
    def finished(self) -> bool:
        """Whether the position is at the end of the epoch."""
        return self.start_step >= self.segment.steps

    @property
    def dropped(self) -> int:
        """Rows the epoch leaves out (``tail="drop"``)."""
        return self.segment.dropped

    @property
    def wrapped(self) -> int:
        """Rows the epoch yields a second time (``tail="wrap"``)."""
        return self.segment.pad

    def history(self, steps_done: int) -> List[List[int]]:
        """The position after ``steps_done`` steps of the current segment, as saved in a state."""
        current = [self.process_count, self.batch_size, steps_done]
        return [list(entry) for entry in self.earlier] + [current]

    def tasks(self, rank: int) -> List[RoundTask]:
        """The rounds ahead of process ``rank``, from the current position on."""
        return self.segment.tasks(rank, self.start_step)

    def batch_size_at(self, rank: int, step: int) -> int:
        """Rows of ``rank``'s batch at ``step`` of the current segment."""
        return self.segment.batch_size_at(rank, step)

    def simulate(self, rank: int) -> List[np.ndarray]:
        """
        The global rows of every batch ``rank`` yields from the current position to the end of
        the epoch, computed without files or communication (the reference for the loader).
        """
        segment = self.segment
        pieces = []
        for task in self.tasks(rank):
            rows = segment.yielded_rows_of_round(task.round, rank)
            pieces.append(rows[task.skip : task.skip + task.take])
        stream = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
        batches, at = [], 0
        for step in range(self.start_step, segment.steps):
            size = segment.batch_size_at(rank, step)
            batches.append(stream[at : at + size])
            at += size
        return batches
