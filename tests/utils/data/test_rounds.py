"""
Tests of heat.utils.data.rounds: a round's rows in yield order (the assembler), the thread that
assembles the next round while the consumer works (its schedule, stop and errors), and the queue
batches are cut from.

The windows come from in-memory arrays through a reader with the WindowReader's interface (no
files); the oracle is the plan's simulation (``Segment.yielded_rows_of_round``). The assembler
is collective: every process assembles the same rounds in the same order.
"""

import time
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import heat as ht
from heat.utils.data.buffers import BufferPool
from heat.utils.data.plan import EpochPlan, RoundTask
from heat.utils.data.rounds import (
    Piece,
    RoundAssembler,
    RoundsAhead,
    RowQueue,
    spare_rows,
    start_steps,
)
from tests.helpers import collective_assert

COMM = ht.MPI_WORLD


class ArrayReader:
    """WindowReader's interface over in-memory arrays: the windows in order, into pool buffers."""

    def __init__(self, arrays, windows, capacity, pool, spare=0, fail_at=None):
        self.arrays, self.windows, self.pool = arrays, list(windows), pool
        self.capacity, self.spare, self.fail_at = capacity, spare, fail_at
        self.next, self.out, self.closed = 0, 0, False

    def get(self):
        index, self.next = self.next, self.next + 1
        if index == self.fail_at:
            raise OSError("simulated read failure")
        start, stop = self.windows[index]
        buffer = self.pool.take(self.capacity + self.spare)
        for source, target in zip(self.arrays, buffer.arrays):
            target[: stop - start] = source[start:stop]
        buffer.filled = stop - start
        self.out += 1
        return buffer

    def release(self, buffer):
        if buffer is not None:
            self.pool.release(buffer)
            self.out -= 1

    def close(self, wait=True):
        self.closed = True


def data(n):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    return x, np.arange(n, dtype=np.int64) * 3


def assembler_for(plan, arrays, fail_at=None, spare=None):
    segment, rank = plan.segment, COMM.rank
    tasks = plan.tasks(rank)
    windows = [
        (int(segment.starts[t.window]), int(segment.stops[t.window]))
        for t in tasks
        if t.window is not None
    ]
    pool = BufferPool([a.shape[1:] for a in arrays], [a.dtype for a in arrays])
    if spare is None:
        spare = spare_rows(plan.window_rows, plan.batch_size, COMM.size, plan.shuffle)
    reader = ArrayReader(arrays, windows, plan.window_rows, pool, spare, fail_at)
    output = plan.window_rows + plan.batch_size + 1
    return RoundAssembler(segment, COMM, reader, pool, output), tasks


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("tail", ["short", "wrap"])
@pytest.mark.parametrize("n, window, spare", [(61, 8, None), (23, 5, 0), (7, 4, None)])
def test_assembled_rounds_are_the_planned_rows(n, window, spare, shuffle, tail):
    x, y = data(n)
    plan = EpochPlan(n, window, COMM.size, 3, seed=2, shuffle=shuffle, tail=tail)
    assembler, tasks = assembler_for(plan, [x, y], spare=spare)
    ok, kept = True, []
    for task in tasks:
        pieces = assembler.assemble(task)
        expected = plan.segment.yielded_rows_of_round(task.round, COMM.rank)
        expected = expected[task.skip : task.skip + task.take]
        rows = np.concatenate([p.rows for p in pieces]) if pieces else np.zeros(0, np.int64)
        ok &= np.array_equal(rows, expected)
        ok &= all(np.array_equal(p.tensors[0].numpy(), x[p.rows]) for p in pieces)
        ok &= all(np.array_equal(p.tensors[1].numpy(), y[p.rows]) for p in pieces)
        kept.extend(pieces)
    assembler.finish()
    ok &= assembler.reader.out == 0  # every window went back to the reader
    collective_assert(ok, "assembled rows differ from the plan")
    pool = assembler.pool
    assert pool.counts()[0] >= (1 if kept else 0)  # the pieces view their buffers ...
    del kept, pieces
    assert pool.counts()[0] == 0  # ... and nothing else does


def test_assembled_rounds_after_a_resume():
    x, y = data(61)
    plan = EpochPlan(
        61, 8, COMM.size, 2, seed=3, history=[(COMM.size + 1, 3, 2), (COMM.size, 2, 3)]
    )
    assembler, tasks = assembler_for(plan, [x, y])
    ok = True
    for task in tasks:
        rows = np.concatenate([p.rows for p in assembler.assemble(task)] or [np.zeros(0, np.int64)])
        expected = plan.segment.yielded_rows_of_round(task.round, COMM.rank)
        ok &= np.array_equal(rows, expected[task.skip : task.skip + task.take])
    assembler.finish()
    collective_assert(ok, "rows after a resume differ from the plan")


@pytest.mark.parametrize("shuffle", [True, False])
def test_a_failed_read_raises_the_same_error_everywhere(shuffle):
    x, y = data(40)
    plan = EpochPlan(40, 4, COMM.size, 2, seed=1, shuffle=shuffle)
    failing = COMM.rank == COMM.size - 1
    assembler, tasks = assembler_for(plan, [x, y], fail_at=1 if failing else None)
    raised = None
    try:
        for task in tasks:
            assembler.assemble(task)
        assembler.finish()
    except OSError as error:
        raised = error
    ok = raised is not None and "simulated read failure" in str(raised)
    collective_assert(ok, f"rank {COMM.rank}: {raised!r}")
    assert COMM.allreduce(1) == COMM.size  # no collective left behind


def test_start_steps():
    assert start_steps([0, 40, 41, 41, 90], 0) == [0, 1, 41, 41, 42]
    assert start_steps([7, 9], 5) == [5, 8]  # a resumed epoch: the first round at once
    assert start_steps([], 0) == []


class FakeAssembler:
    """Records when each task is assembled; optionally raises or holds the exchange's gate."""

    def __init__(self, fail_round=None, hold_for=0.0):
        self.exchanger = SimpleNamespace(gate=None)
        self.reader = SimpleNamespace(close=lambda wait=True: None)
        self.log, self.finished = [], False
        self.fail_round, self.hold_for = fail_round, hold_for

    def assemble(self, task):
        if task.round == self.fail_round:
            raise OSError("round failed")
        if self.hold_for and self.exchanger.gate is not None:
            with self.exchanger.gate:  # rows moving
                time.sleep(self.hold_for)
        self.log.append(task.round)
        return [Piece([torch.arange(2)], np.array([task.round, task.round]))]

    def finish(self):
        self.finished = True


def tasks(*due):
    return [RoundTask(round=j, due_step=d, window=j, skip=0, take=2) for j, d in enumerate(due)]


def eventually(condition, seconds=5.0):
    end = time.perf_counter() + seconds
    while not condition() and time.perf_counter() < end:
        time.sleep(0.001)
    return condition()


def test_rounds_start_when_the_consumer_allows_them():
    assembler = FakeAssembler()
    ahead = RoundsAhead(assembler, tasks(0, 5, 10), first_step=0)
    assert eventually(lambda: assembler.log == [0])
    time.sleep(0.05)
    assert assembler.log == [0]  # round 1 may start at step 1 only
    assert [p.rows[0] for p in ahead.due(0)] == [0] and ahead.next_due() == 5
    ahead.step(1)
    assert eventually(lambda: assembler.log == [0, 1])
    assert ahead.due(4) == []  # round 1 is due at step 5
    assert [p.rows[0] for p in ahead.due(5)] == [1]
    assert [p.rows[0] for p in ahead.due(10)] == [2]  # round 2 starts at step 6 at the latest
    ahead.finish()
    assert assembler.finished and ahead.next_due() is None


def test_stop_finishes_the_rounds_started_and_no_more():
    assembler = FakeAssembler()
    ahead = RoundsAhead(assembler, tasks(0, 1, 2, 9), first_step=0)
    ahead.due(0)
    ahead.step(2)  # rounds 1 and 2 may start
    ahead.stop()  # e.g. a break: the rounds allowed are finished (the other processes are in them)
    assert ahead.join(5.0)
    assert assembler.log == [0, 1, 2] and assembler.finished


def test_an_error_of_the_thread_is_raised_where_the_round_is_due():
    assembler = FakeAssembler(fail_round=1)
    ahead = RoundsAhead(assembler, tasks(0, 3), first_step=0)
    ahead.due(0)
    ahead.step(1)
    assert ahead.join(5.0)  # the thread ended with the error
    with pytest.raises(OSError, match="round failed"):
        ahead.due(3)
    with pytest.raises(OSError, match="round failed"):  # and at every later call
        ahead.finish()


def test_the_consumer_waits_while_rows_move_only_when_it_holds():
    for hold in (True, False):
        assembler = FakeAssembler(hold_for=0.2)
        ahead = RoundsAhead(assembler, tasks(0, 2), first_step=0, hold=hold)
        assert (assembler.exchanger.gate is not None) == hold
        ahead.due(0)
        began = time.perf_counter()
        ahead.step(1)  # round 1 starts and moves rows for 0.2 s
        while len(assembler.log) < 2 and time.perf_counter() - began < 5:
            ahead.step(1)  # the consumer's next steps
            time.sleep(0.001)
        ahead.due(2)
        ahead.finish()
        waited = ahead.wait_seconds
        ok = waited > 0.1 if hold else True
        assert ok, (hold, waited)


def test_row_queue_cuts_views_and_copies_across_pieces():
    pool = BufferPool([(2,)], [np.float32])
    source = pool.take(10)
    source.arrays[0][:] = np.arange(20, dtype=np.float32).reshape(10, 2)
    first = Piece(source.view(6), np.arange(6))
    second = Piece([t[6:] for t in source.view(10)], np.arange(6, 10))
    pool.release(source)
    queue = RowQueue(pool)
    queue.extend([first, second, Piece([torch.zeros(0, 2)], np.zeros(0, np.int64))])
    assert queue.front == 6
    batches = queue.cut(2, 2, with_rows=True)  # two batches of two, views of the buffer
    assert [b[1].tolist() for b in batches] == [[0, 1], [2, 3]]
    assert batches[0][0].data_ptr() == first.tensors[0].data_ptr()
    tensors, rows = queue.take(3)  # two rows of the first piece, one of the second: a copy
    assert rows.tolist() == [4, 5, 6] and tensors[0][:, 0].tolist() == [8.0, 10.0, 12.0]
    assert pool.allocated == 2  # the copy went into a pooled buffer
    tensors, rows = queue.take(3)
    assert rows.tolist() == [7, 8, 9] and queue.front == 0
    empty, none = queue.take(0)
    assert empty[0].shape == (0, 2) and len(none) == 0


def test_spare_rows():
    assert spare_rows(1000, 8, 1, True) == 0 and spare_rows(1000, 8, 4, False) == 0
    assert spare_rows(1000, 8, 2, True) == 500 + 8 * 31 + 8 + 8


def test_rounds_ahead_over_a_duplicate_communicator_with_the_real_assembler():
    x, y = data(53)
    plan = EpochPlan(53, 6, COMM.size, 2, seed=8)
    assembler, round_tasks = assembler_for(plan, [x, y])
    assembler.comm = assembler.exchanger.comm = assembler.agreement.comm = COMM.Dup()
    ahead = RoundsAhead(assembler, round_tasks, first_step=0)
    stream = []
    for step in range(plan.segment.steps):
        stream.extend(p.rows for p in ahead.due(step))
        ahead.step(step + 1)
    ahead.finish()
    ahead.end()  # frees the duplicate
    expected = np.concatenate(plan.simulate(COMM.rank) or [np.zeros(0, np.int64)])
    mine = np.concatenate(stream) if stream else np.zeros(0, np.int64)
    collective_assert(np.array_equal(mine, expected), "the thread's rounds differ from the plan")
    assert assembler.reader.closed and ahead.join(0)  # the thread closed the reader and ended
