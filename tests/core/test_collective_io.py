"""
Tests of heat/core/_collective_io.py's verdicts beyond what tests/core/test_io.py exercises
through ``ht.load``/``ht.save``: settings (name -> description) that must agree across processes,
and the message that names the first one that differs. Under 1-4 processes.
"""

import pytest

import heat as ht
from heat.core import _collective_io
from tests.helpers import collective_assert, raised_message

COMM = ht.MPI_WORLD


def test_first_difference_names_the_entry_and_the_processes():
    summaries = [
        {"a": "1", "b": "2"},
        {"a": "1", "b": "3"},
        {"a": "1", "b": "2"},
        {"a": "1", "b": "2"},
    ]
    message = _collective_io._first_difference("X's settings", summaries)
    assert message == "X's settings differ between processes: b is 2 on processes 0, 2, 3 but 3 on process 1"
    missing = _collective_io._first_difference("m", [{"a": "1"}, {"a": "1", "c": "5"}])
    assert missing == "m differ between processes: c is missing on process 0 but 5 on process 1"
    three = _collective_io._first_difference("m", [{"a": "1"}, {"a": "2"}, {"a": "3"}])
    assert three.endswith("a is 1 on process 0, 2 on process 1, 3 on process 2")
    order = _collective_io._first_difference("m", [{"a": "1", "b": "2"}, {"b": "2", "a": "1"}])
    assert order.endswith("the order is a, b on process 0 but b, a on process 1")
    assert _collective_io._ranks_text([0, 1, 2, 3, 5, 7, 8]) == "processes 0-3, 5, 7, 8"
    assert _collective_io._ranks_text([4]) == "process 4"


@pytest.mark.parametrize("differs", [False, True])
def test_agree_on_settings(differs):
    odd = COMM.size - 1
    value = "2" if differs and COMM.rank == odd else "1"

    def fingerprint(result):
        return "the settings", {"same": "0", "setting": value}

    outcome = raised_message(ValueError, _collective_io._agree, COMM, lambda: 42, fingerprint=fingerprint)
    if not differs or COMM.size == 1:
        collective_assert(outcome is None, f"rank {COMM.rank}: {outcome}")
        return
    others = "processes 0" if COMM.size > 2 else "process 0"
    expected = f"the settings differ between processes: setting is 1 on {others}"
    ok = outcome is not None and outcome.startswith(expected)
    ok = ok and outcome.endswith(f"but 2 on process {odd}")
    collective_assert(ok, f"rank {COMM.rank}: {outcome}")
