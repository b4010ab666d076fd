"""
Devices on which the process-local data of a DNDarray lives.

``cpu`` always exists. ``gpu`` exists when torch sees a CUDA (or ROCm) device; every process then
uses one GPU, ``local_rank % torch.cuda.device_count()``, where the node-local rank is read from
the environment the MPI launcher sets (``MPI_LOCALRANKID``, ``OMPI_COMM_WORLD_LOCAL_RANK``,
``PMI_LOCAL_RANK``, ``MV2_COMM_WORLD_LOCAL_RANK``, ``SLURM_LOCALID``; 0 if none is set), so that
the processes of a node spread over its GPUs.

The default device of new arrays is ``cpu`` until :func:`use_device` changes it.
"""

from __future__ import annotations

import os
from typing import Optional, Union

import torch

__all__ = ["Device", "cpu", "get_device", "sanitize_device", "use_device"]


class Device:
    """
    A device that holds the process-local tensors of DNDarrays.

    Parameters
    ----------
    device_type : str
        Heat's name of the kind of device, ``"cpu"`` or ``"gpu"``.
    device_id : int
        Index of the device among the devices of its kind on this node.
    torch_device : str
        The torch device string, e.g. ``"cpu"`` or ``"cuda:0"``; pass it to ``tensor.to``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.

    Examples
    --------
    >>> ht.cpu
    Device(device_type='cpu', device_id=0, torch_device='cpu')
    >>> str(ht.cpu)
    'cpu:0'
    >>> ht.cpu == "cpu"
    True
    """

    def __init__(self, device_type: str, device_id: int, torch_device: str):
        if not isinstance(device_type, str):
            raise TypeError(f"device_type must be a str, got {type(device_type).__name__}")
        if isinstance(device_id, bool) or not isinstance(device_id, int):
            raise TypeError(f"device_id must be an int, got {type(device_id).__name__}")
        if not isinstance(torch_device, str):
            raise TypeError(f"torch_device must be a str, got {type(torch_device).__name__}")
        self.__device_type = device_type
        self.__device_id = device_id
        self.__torch_device = torch_device

    @property
    def device_type(self) -> str:
        """Heat's name of the kind of device: ``"cpu"`` or ``"gpu"``."""
        return self.__device_type

    @property
    def device_id(self) -> int:
        """Index of the device among the devices of its kind on this node."""
        return self.__device_id

    @property
    def torch_device(self) -> str:
        """The torch device string, e.g. ``"cpu"`` or ``"cuda:0"``."""
        return self.__torch_device

    def __repr__(self) -> str:
        return (
            f"Device(device_type={self.device_type!r}, device_id={self.device_id}, "
            f"torch_device={self.torch_device!r})"
        )

    def __str__(self) -> str:
        return f"{self.device_type}:{self.device_id}"

    def __eq__(self, other: object) -> bool:
        """
        Equal to a Device of the same type and id, to the strings naming its type (``"cpu"``,
        ``"gpu"``), to ``str(self)`` (``"gpu:0"``) and to its torch device (``"cuda:0"``, or a
        ``torch.device``).
        """
        if isinstance(other, Device):
            return (self.device_type, self.device_id, self.torch_device) == (
                other.device_type,
                other.device_id,
                other.torch_device,
            )
        if isinstance(other, str):
            name = other.strip().lower()
            if self.device_type == "gpu" and name == "cuda":
                return True
            return name in (self.device_type, str(self), self.torch_device)
        if isinstance(other, torch.device):
            return torch.device(self.torch_device) == other or (
                other.index is None and torch.device(self.torch_device).type == other.type
            )
        return NotImplemented

    def __hash__(self) -> int:
        # equal objects must hash equally: a Device equals the string of its type
        return hash(self.device_type)


cpu = Device("cpu", 0, "cpu")
"""The CPU of this process; always available."""


_LOCAL_RANK_VARIABLES = (
    "MPI_LOCALRANKID",  # MPICH / Intel MPI (hydra)
    "OMPI_COMM_WORLD_LOCAL_RANK",  # Open MPI
    "PMI_LOCAL_RANK",  # PMI-based launchers
    "MV2_COMM_WORLD_LOCAL_RANK",  # MVAPICH2
    "SLURM_LOCALID",  # srun; last, as it is also set (to 0) for every rank of an mpirun job
)


def _local_rank() -> int:
    """The node-local rank of this process as the MPI launcher reports it; 0 if unknown."""
    for variable in _LOCAL_RANK_VARIABLES:
        value = os.environ.get(variable)
        if value is not None:
            try:
                return int(value)
            except ValueError:
                continue
    return 0


if torch.cuda.is_available():
    __gpu_id = _local_rank() % torch.cuda.device_count()
    gpu = Device("gpu", __gpu_id, f"cuda:{__gpu_id}")
    """The GPU of this process: local rank modulo the number of GPUs of the node."""
    __all__.append("gpu")
    del __gpu_id


__default_device = cpu


def get_device() -> Device:
    """
    The default device of new arrays.

    Returns
    -------
    Device

    Examples
    --------
    >>> ht.get_device()
    Device(device_type='cpu', device_id=0, torch_device='cpu')
    """
    return __default_device


def sanitize_device(device: Optional[Union[str, Device, torch.device]] = None) -> Device:
    """
    The :class:`Device` that ``device`` denotes.

    Parameters
    ----------
    device : str, Device, torch.device or None
        ``None`` gives the default device (:func:`get_device`). Strings: ``"cpu"``, ``"gpu"`` or
        ``"cuda"`` (case-insensitive), also with this process's device id (``"cpu:0"``,
        ``"gpu:0"``, ``"cuda:0"``). A ``torch.device`` of type ``cpu`` or ``cuda``.

    Returns
    -------
    Device

    Raises
    ------
    TypeError
        If ``device`` is of another type.
    ValueError
        If ``device`` names an unknown device, a GPU when none is available, or a GPU other than
        the one this process uses.

    Examples
    --------
    >>> ht.core.devices.sanitize_device("cpu")
    Device(device_type='cpu', device_id=0, torch_device='cpu')
    >>> ht.core.devices.sanitize_device(None) is ht.get_device()
    True
    """
    if device is None:
        return get_device()
    if isinstance(device, Device):
        return device
    if isinstance(device, torch.device):
        name = str(device)
    elif isinstance(device, str):
        name = device.strip().lower()
    else:
        raise TypeError(
            f"device must be None, a str, a heat Device or a torch.device, "
            f"got {type(device).__name__}"
        )

    if cpu == name:
        return cpu
    kind = name.split(":", 1)[0]
    if kind in ("gpu", "cuda"):
        gpu_device = globals().get("gpu")
        if gpu_device is None:
            raise ValueError(
                f"device {device!r} is not available: torch finds no GPU, use device='cpu'"
            )
        if gpu_device == name:
            return gpu_device
        raise ValueError(
            f"device {device!r} is not the GPU this process uses, {gpu_device.torch_device!r} "
            f"(heat uses one GPU per process: local rank modulo the number of GPUs)"
        )
    raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")


def use_device(device: Optional[Union[str, Device, torch.device]] = None) -> None:
    """
    Set the default device of new arrays.

    Parameters
    ----------
    device : str, Device, torch.device or None
        Anything :func:`sanitize_device` accepts; ``None`` restores the initial default,
        ``cpu``.

    Raises
    ------
    TypeError, ValueError
        As :func:`sanitize_device`.

    Examples
    --------
    >>> ht.use_device("cpu")
    >>> ht.get_device()
    Device(device_type='cpu', device_id=0, torch_device='cpu')
    """
    global __default_device
    __default_device = cpu if device is None else sanitize_device(device)
