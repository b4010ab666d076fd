"""
A per-batch record of where training time and bytes go (compute, exposed communication, bytes
sent inside the node and across nodes).
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Deque, Dict, Iterator, List, Optional

__all__ = ["BatchRecord", "Timeline"]


@dataclass
class BatchRecord:
    """
    One batch of one process.

    Attributes
    ----------
    epoch, batch : int
    action : str
        The global synchronization of this batch: ``"blocking"``, ``"send"``, ``"receive"``,
        ``"receive+send"`` or ``"local"`` (none).
    compute_seconds : float
        From the end of the previous step to this step, minus the exposed communication of the
        backward pass (forward, backward, data loading).
    exposed_seconds : float
        Time the process waited for communication: the end of the backward pass (node-local
        gradients) and the global synchronization in ``step``.
    step_seconds : float
        The whole ``step`` call (optimizer update and global synchronization).
    bytes_local, bytes_cross_node : int
        Bytes this process sent inside its node and across nodes (ring-algorithm model).
    phases : dict of str -> float
        ``exposed_seconds`` by phase: ``"node average"`` (waiting for the node-local gradient
        average at the end of the backward pass), ``"send"`` (starting a non-blocking
        cross-node sum), ``"receive"`` (waiting for one and blending it in), ``"blocking"`` (a
        blocking global average); only the phases this batch had.
    """

    epoch: int
    batch: int
    action: str
    compute_seconds: float
    exposed_seconds: float
    step_seconds: float
    bytes_local: int
    bytes_cross_node: int
    phases: Dict[str, float] = field(default_factory=dict)


class Timeline:
    """
    The most recent ``capacity`` batch records, with totals over all batches ever recorded.

    Examples
    --------
    >>> timeline = Timeline()
    >>> timeline.append(BatchRecord(0, 0, "blocking", 0.1, 0.02, 0.03, 100, 50))
    >>> timeline.summary()["bytes_cross_node"]
    50
    """

    def __init__(self, capacity: Optional[int] = 100_000):
        self.records: Deque[BatchRecord] = deque(maxlen=capacity)
        self._totals: Dict[str, float] = {}
        self._phases: Dict[str, float] = {}
        self._count = 0

    def append(self, record: BatchRecord) -> None:
        self.records.append(record)
        self._count += 1
        for key in (
            "compute_seconds",
            "exposed_seconds",
            "step_seconds",
            "bytes_local",
            "bytes_cross_node",
        ):
            self._totals[key] = self._totals.get(key, 0) + getattr(record, key)
        for phase, seconds in record.phases.items():
            self._phases[phase] = self._phases.get(phase, 0.0) + seconds

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[BatchRecord]:
        return iter(self.records)

    def summary(self) -> Dict[str, Any]:
        """Totals over every batch recorded: seconds, bytes, the number of batches and the
        exposed seconds by phase (``"phases"``)."""
        return {"batches": self._count, **self._totals, "phases": dict(self._phases)}

    def as_dicts(self) -> List[Dict[str, Any]]:
        """The kept records as dictionaries (e.g. for a CSV or JSON report)."""
        return [asdict(r) for r in self.records]
