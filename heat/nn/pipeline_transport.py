"""
Who talks to whom in a pipeline: every stage with its two neighbours, point to point and
non-blocking, through heat's communicator (``Isend`` / ``Irecv`` of torch tensors; each returns a
:class:`heat.core.communication.Request`).

* Activations travel forward (stage ``s`` to ``s + 1``), their gradients backward; each kind has
  its own tag, and both ends post and send them in micro-batch order, so MPI's non-overtaking rule
  matches every message with the receive meant for it.
* Shapes are agreed once per batch shape by a header message that runs down the pipeline
  (:meth:`StageLink.send_header`); receive buffers then come from a pool of tensors of that
  shape and are reused once their micro-batch is done.
* A receive is posted before it is needed (the executor posts the next micro-batch's receive
  before computing the current one), sends are never waited for until their buffer is due or the
  batch ends, and waiting polls with short sleeps (:meth:`StageLink.wait`, also for the
  pipeline's broadcasts): MPICH busy-polls in blocking calls, which takes the core from the
  neighbour being waited for when processes share cores.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Deque, Dict, List, Optional, Sequence, Tuple

import torch

from ..core.communication import MPICommunication, Request
from ..core.communication.verdicts import wait_without_spinning

__all__: List[str] = []

_TAGS = {"activation": 7301, "gradient": 7302, "header": 7303}
#: the most dimensions a boundary activation may have (the header has room for this many)
MAX_DIMS = 12
_HEADER_LENGTH = 3 + MAX_DIMS
_DTYPES = (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64,
    torch.complex128, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
)  # fmt: skip


@dataclass(frozen=True)
class TensorSpec:
    """Shape and dtype of the tensor that crosses a boundary, per micro-batch."""

    shape: Tuple[int, ...]
    dtype: torch.dtype

    @classmethod
    def of(cls, tensor: torch.Tensor) -> "TensorSpec":
        return cls(tuple(tensor.shape), tensor.dtype)

    @property
    def differentiable(self) -> bool:
        """Whether a gradient comes back for it."""
        return self.dtype.is_floating_point or self.dtype.is_complex

    @property
    def nbytes(self) -> int:
        numel = 1
        for d in self.shape:
            numel *= d
        return numel * torch.empty((), dtype=self.dtype).element_size()

    def check(self) -> None:
        """Raise unless the header can describe this spec."""
        if len(self.shape) > MAX_DIMS:
            raise ValueError(
                f"a boundary activation has {len(self.shape)} dimensions; at most {MAX_DIMS} "
                "are supported"
            )
        if self.dtype not in _DTYPES:
            raise TypeError(f"a boundary activation has the unsupported dtype {self.dtype}")


class _BufferPool:
    """Tensors of each (spec, device), handed out for receives and given back when done."""

    def __init__(self):
        self._free: Dict[Tuple[TensorSpec, torch.device], List[torch.Tensor]] = {}
        self.allocated = 0

    def acquire(self, spec: TensorSpec, device: torch.device) -> torch.Tensor:
        free = self._free.get((spec, device))
        if free:
            return free.pop()
        self.allocated += 1
        return torch.empty(spec.shape, dtype=spec.dtype, device=device)

    def release(self, tensor: torch.Tensor) -> None:
        tensor.grad = None
        tensor.requires_grad_(False)
        key = (TensorSpec.of(tensor), tensor.device)
        self._free.setdefault(key, []).append(tensor)


class StageLink:
    """
    The messages of one stage: activations from the previous stage and to the next one,
    gradients the other way, and the header that agrees on shapes.

    Parameters
    ----------
    comm : MPICommunication
        The pipeline's own communicator (a duplicate: its messages meet no other traffic); the
        stage is its rank.
    device : torch.device
        Where received tensors live.

    Attributes
    ----------
    wait_seconds : float
        Time spent waiting for messages (exposed communication and pipeline bubbles).
    bytes_sent, bytes_received : int
        Payload of activations and gradients.
    """

    def __init__(self, comm: MPICommunication, device: torch.device):
        self.comm = comm
        self.stage, self.stages = comm.rank, comm.size
        self.device = device
        self.pool = _BufferPool()
        self._sends: List[Request] = []
        self._posted: Dict[str, Deque[Tuple[int, Request, torch.Tensor]]] = {
            "activation": deque(),
            "gradient": deque(),
        }
        self.wait_seconds = 0.0
        self.bytes_sent = 0
        self.bytes_received = 0

    def _peer(self, kind: str, sending: bool) -> int:
        """Activations come from the stage before and go to the one after; gradients reverse."""
        forward = (kind == "activation") == sending
        return self.stage + 1 if forward else self.stage - 1

    # -- waiting -----------------------------------------------------------------------------------

    def wait(self, request: Request):
        """
        Complete ``request`` (any of the communicator's non-blocking operations) and return its
        result, sleeping between tests once it is not done at once; counts the time waited.
        """
        if request.Test():
            return request.Wait()
        began = time.perf_counter()
        # at most ~0.1 ms late: the latency of a hop adds to 1F1B's critical path
        result = wait_without_spinning(request, longest_pause=1e-4, first_pause=1e-5)
        self.wait_seconds += time.perf_counter() - began
        return result

    def progress(self) -> None:
        """Let MPI move pending messages on; forget the sends that have completed."""
        if self._sends:
            self._sends = [request for request in self._sends if not request.Test()]

    def finish_sends(self) -> None:
        """Wait until every send has completed."""
        for request in self._sends:
            self.wait(request)
        self._sends = []

    # -- activations and gradients -------------------------------------------------------------------

    def post(self, kind: str, micro_batch: int, spec: TensorSpec) -> None:
        """Post the receive of ``kind`` (``"activation"`` or ``"gradient"``) of ``micro_batch``."""
        buffer = self.pool.acquire(spec, self.device)
        request = self.comm.Irecv(buffer, source=self._peer(kind, False), tag=_TAGS[kind])
        self._posted[kind].append((micro_batch, request, buffer))

    def posted(self, kind: str) -> int:
        """How many receives of ``kind`` are posted and not yet taken."""
        return len(self._posted[kind])

    def receive(self, kind: str, micro_batch: int) -> torch.Tensor:
        """The tensor of the oldest posted receive of ``kind``, which must be ``micro_batch``'s."""
        expected, request, buffer = self._posted[kind].popleft()
        if expected != micro_batch:  # a bug of the executor, never of the user
            raise RuntimeError(f"{kind} of micro-batch {micro_batch} wanted, {expected} posted")
        self.wait(request)
        self.bytes_received += buffer.numel() * buffer.element_size()
        return buffer

    def send(self, kind: str, tensor: torch.Tensor) -> None:
        """Start sending ``tensor`` (kept alive by its request until it has gone)."""
        tensor = tensor.detach()
        self._sends.append(self.comm.Isend(tensor, dest=self._peer(kind, True), tag=_TAGS[kind]))
        self.bytes_sent += tensor.numel() * tensor.element_size()

    def release(self, tensor: torch.Tensor) -> None:
        """Give a received tensor back to the pool once nothing uses it."""
        self.pool.release(tensor)

    # -- shape agreement -----------------------------------------------------------------------------

    def send_header(self, spec: Optional[TensorSpec]) -> None:
        """Tell the next stage the spec of the activations to come (None: an error upstream)."""
        header = torch.zeros(_HEADER_LENGTH, dtype=torch.int64)
        if spec is not None:
            header[0] = 1
            header[1] = _DTYPES.index(spec.dtype)
            header[2] = len(spec.shape)
            header[3 : 3 + len(spec.shape)] = torch.tensor(spec.shape, dtype=torch.int64)
        self._sends.append(self.comm.Isend(header, dest=self.stage + 1, tag=_TAGS["header"]))

    def receive_header(self) -> Optional[TensorSpec]:
        """The spec the previous stage announced (None: an error upstream)."""
        header = torch.empty(_HEADER_LENGTH, dtype=torch.int64)
        self.wait(self.comm.Irecv(header, source=self.stage - 1, tag=_TAGS["header"]))
        if header[0] == 0:
            return None
        ndim = int(header[2])
        return TensorSpec(tuple(int(d) for d in header[3 : 3 + ndim]), _DTYPES[int(header[1])])


class ReplicaAverage:
    """
    The average of one stage's gradients over its data-parallel replicas (the processes that hold
    the same stage in the other pipelines): the tensors are packed into one flat buffer per dtype
    and device, each buffer is summed by one non-blocking all-reduce over ``comm``, and
    :meth:`finish` writes ``sum / replicas`` back.

    Parameters
    ----------
    comm : MPICommunication
        The stage's replicas (one process per pipeline), the same stage on each.

    Attributes
    ----------
    wait_seconds : float
        Time spent waiting for the all-reduces (exposed communication).
    bytes_reduced : int
        Payload handed to the all-reduces.
    """

    def __init__(self, comm: MPICommunication):
        self.comm = comm
        self.wait_seconds = 0.0
        self.bytes_reduced = 0
        self._buffers: Dict[Tuple[torch.dtype, torch.device, int], Tuple[torch.Tensor, ...]] = {}
        self._pending: List[Tuple[Request, torch.Tensor, List[torch.Tensor]]] = []

    def start(self, tensors: Sequence[torch.Tensor]) -> None:
        """
        Start averaging ``tensors`` in place (the same number, shapes and dtypes on every replica;
        none may change until :meth:`finish`).
        """
        groups: Dict[Tuple[torch.dtype, torch.device], List[torch.Tensor]] = {}
        for tensor in tensors:
            groups.setdefault((tensor.dtype, tensor.device), []).append(tensor)
        for (dtype, device), members in groups.items():
            numel = sum(t.numel() for t in members)
            key = (dtype, device, numel)
            if key not in self._buffers:  # reused from step to step
                self._buffers[key] = (
                    torch.empty(numel, dtype=dtype, device=device),
                    torch.empty(numel, dtype=dtype, device=device),
                )
            send, receive = self._buffers[key]
            offset = 0
            for t in members:
                send[offset : offset + t.numel()].copy_(t.detach().reshape(-1))
                offset += t.numel()
            self.bytes_reduced += send.numel() * send.element_size()
            self._pending.append((self.comm.Iallreduce(send, receive), receive, members))

    @torch.no_grad()
    def finish(self) -> None:
        """Wait for the all-reduces and write each tensor's average back into it."""
        began = time.perf_counter()
        try:
            for request, receive, members in self._pending:
                wait_without_spinning(request, longest_pause=1e-4, first_pause=1e-5)
                receive.div_(self.comm.size)
                offset = 0
                for t in members:
                    t.copy_(receive[offset : offset + t.numel()].view(t.shape))
                    offset += t.numel()
        finally:
            self._pending = []
            self.wait_seconds += time.perf_counter() - began
