"""
Tests of heat/core/communication/verdicts.py: one error on some processes becomes the same
exception on every process (type and message), settings (name -> description) that must agree,
the message that names the first one that differs, the non-blocking verdict, flags and decisions
of process 0. Under 1-4 processes; every case checks that the next collective still works.
"""

import pytest

import heat as ht
from heat.core.communication import verdicts
from tests.helpers import collective_assert, raised_message

COMM = ht.MPI_WORLD


def test_first_difference_names_the_entry_and_the_processes():
    summaries = [
        {"a": "1", "b": "2"},
        {"a": "1", "b": "3"},
        {"a": "1", "b": "2"},
        {"a": "1", "b": "2"},
    ]
    message = verdicts.first_difference("X's settings", summaries)
    assert (
        message
        == "X's settings differ between processes: b is 2 on processes 0, 2, 3 but 3 on process 1"
    )
    missing = verdicts.first_difference("m", [{"a": "1"}, {"a": "1", "c": "5"}])
    assert missing == "m differ between processes: c is missing on process 0 but 5 on process 1"
    three = verdicts.first_difference("m", [{"a": "1"}, {"a": "2"}, {"a": "3"}])
    assert three.endswith("a is 1 on process 0, 2 on process 1, 3 on process 2")
    order = verdicts.first_difference("m", [{"a": "1", "b": "2"}, {"b": "2", "a": "1"}])
    assert order.endswith("the order is a, b on process 0 but b, a on process 1")
    assert verdicts.ranks_text([0, 1, 2, 3, 5, 7, 8]) == "processes 0-3, 5, 7, 8"
    assert verdicts.ranks_text([4]) == "process 4"


@pytest.mark.parametrize("differs", [False, True])
def test_agree_on_settings(differs):
    odd = COMM.size - 1
    value = "2" if differs and COMM.rank == odd else "1"

    def fingerprint(result):
        return "the settings", {"same": "0", "setting": value}

    outcome = raised_message(ValueError, verdicts.agree, COMM, lambda: 42, fingerprint=fingerprint)
    if not differs or COMM.size == 1:
        collective_assert(outcome is None, f"rank {COMM.rank}: {outcome}")
        return
    others = "processes 0" if COMM.size > 2 else "process 0"
    expected = f"the settings differ between processes: setting is 1 on {others}"
    ok = outcome is not None and outcome.startswith(expected)
    ok = ok and outcome.endswith(f"but 2 on process {odd}")
    collective_assert(ok, f"rank {COMM.rank}: {outcome}")


LAST = COMM.size - 1


class _LibraryError(KeyError):
    """A library's own exception class (not builtin): travels as its builtin base."""


@pytest.mark.parametrize(
    "error, expected_type, fragment",
    [
        (FileNotFoundError("no such file: x.h5"), FileNotFoundError, "no such file: x.h5"),
        (_LibraryError("missing key"), KeyError, "missing key"),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), ValueError, "can't decode"),
    ],
)
def test_raise_if_any_raises_the_same_type_and_text_everywhere(error, expected_type, fragment):
    mine = error if COMM.rank == LAST else None
    message = raised_message(expected_type, verdicts.raise_if_any, COMM, mine)
    ok = message is not None and fragment in message
    ok = ok and (COMM.size == 1 or f"[on process {LAST}]" in message)
    collective_assert(ok, f"rank {COMM.rank}: {message}")
    # nobody failed: nothing raised, and the communicator is still in step
    verdicts.raise_if_any(COMM, None)
    assert COMM.allreduce(1) == COMM.size


def test_lowest_failing_process_wins_and_all_failing_are_named():
    error = ValueError(f"bad on {COMM.rank}") if COMM.rank >= 1 or COMM.size == 1 else None
    message = raised_message(ValueError, verdicts.raise_if_any, COMM, error)
    if COMM.size == 1:
        collective_assert(message == "bad on 0", message)
        return
    where = (
        "process 1" if COMM.size == 2 else "processes " + ", ".join(map(str, range(1, COMM.size)))
    )
    collective_assert(message == f"bad on 1 [on {where}]", f"rank {COMM.rank}: {message}")


@pytest.mark.parametrize("failing", [None, "last"])
def test_pending_verdict_overlaps_and_settles(failing):
    error = OSError("read failed") if failing and COMM.rank == LAST else None
    verdict = verdicts.PendingVerdict(COMM, error)
    total = COMM.allreduce(COMM.rank)  # other work on the communicator meanwhile
    message = raised_message(OSError, verdict.settle)
    assert verdict.done()
    ok = total == COMM.size * (COMM.size - 1) // 2
    if failing:
        ok = ok and message is not None and message.startswith("read failed")
    else:
        ok = ok and message is None
    collective_assert(ok, f"rank {COMM.rank}: {message}")


def test_any_true_and_root_decides():
    assert verdicts.any_true(COMM, COMM.rank == LAST) is True
    assert verdicts.any_true(COMM, False) is False
    decided = verdicts.root_decides(COMM, lambda: ("rank 0 saw", COMM.rank))
    assert decided == ("rank 0 saw", 0)
    assert verdicts.root_decides(COMM, lambda: COMM.rank, root=LAST) == LAST
    message = raised_message(FileNotFoundError, verdicts.root_decides, COMM, open, "/nonexistent/x")
    collective_assert(message is not None and "/nonexistent/x" in message, str(message))


def test_agree_returns_each_result_and_raises_a_failure_everywhere():
    assert verdicts.agree(COMM, lambda: COMM.rank) == COMM.rank

    def fails_last():
        if COMM.rank == LAST:
            raise TypeError("x must be a DNDarray")
        return 1

    message = raised_message(TypeError, verdicts.agree, COMM, fails_last)
    ok = message is not None and message.startswith("x must be a DNDarray")
    collective_assert(ok, f"rank {COMM.rank}: {message}")
    # a fingerprint that is not a dict: every process's summary in the message
    if COMM.size > 1:
        outcome = raised_message(
            ValueError,
            verdicts.agree,
            COMM,
            lambda: COMM.rank == LAST,
            fingerprint=lambda flag: ("flag", flag),
        )
        collective_assert(
            outcome is not None and "do not see the same flag" in outcome, str(outcome)
        )
