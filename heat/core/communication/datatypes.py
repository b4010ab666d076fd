"""
Wire types and reductions: how each torch dtype travels through MPI and how it is combined.

MPI has no ``float16``/``bfloat16`` datatypes: such tensors travel as 16-bit integers and are
reduced by user-defined MPI operations that compute with torch (created once per dtype and
operation). ``bool`` tensors travel as bytes; every reduction of booleans maps to a logical one
(``SUM``/``MAX`` mean "any", ``PROD``/``MIN`` mean "all"), so results stay 0/1.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

import torch
from mpi4py import MPI

# torch dtype -> MPI datatype used on the wire
_TRANSPORT_TYPES: Dict[torch.dtype, MPI.Datatype] = {
    torch.bool: MPI.UINT8_T,
    torch.uint8: MPI.UINT8_T,
    torch.int8: MPI.INT8_T,
    torch.int16: MPI.INT16_T,
    torch.int32: MPI.INT32_T,
    torch.int64: MPI.INT64_T,
    torch.float16: MPI.UINT16_T,
    torch.bfloat16: MPI.UINT16_T,
    torch.float32: MPI.FLOAT,
    torch.float64: MPI.DOUBLE,
    torch.complex64: MPI.C_FLOAT_COMPLEX,
    torch.complex128: MPI.C_DOUBLE_COMPLEX,
}
for _name, _mpi_type in (
    ("uint16", MPI.UINT16_T),
    ("uint32", MPI.UINT32_T),
    ("uint64", MPI.UINT64_T),
):
    if hasattr(torch, _name):
        _TRANSPORT_TYPES[getattr(torch, _name)] = _mpi_type

_HALF_TYPES = (torch.float16, torch.bfloat16)
_REAL_FLOAT_TYPES = (torch.float32, torch.float64)
_COMPLEX_TYPES = (torch.complex64, torch.complex128)

_PREDEFINED_OPS: Dict[str, MPI.Op] = {
    "SUM": MPI.SUM,
    "PROD": MPI.PROD,
    "MIN": MPI.MIN,
    "MAX": MPI.MAX,
    "LAND": MPI.LAND,
    "LOR": MPI.LOR,
    "LXOR": MPI.LXOR,
    "BAND": MPI.BAND,
    "BOR": MPI.BOR,
    "BXOR": MPI.BXOR,
}
# bool tensors are bytes holding 0/1; every reduction maps to a logical one so results stay 0/1
_BOOL_OPS = {
    "SUM": "LOR",
    "MAX": "LOR",
    "LOR": "LOR",
    "BOR": "LOR",
    "PROD": "LAND",
    "MIN": "LAND",
    "LAND": "LAND",
    "BAND": "LAND",
    "LXOR": "LXOR",
    "BXOR": "LXOR",
}
_HALF_OPS: Dict[Tuple[torch.dtype, str], MPI.Op] = {}


def _op_name(op: Any) -> Optional[str]:
    """Name of a predefined reduction in ``_PREDEFINED_OPS``, or None for any other ``MPI.Op``."""
    if not isinstance(op, MPI.Op):
        raise TypeError(f"op must be an mpi4py MPI.Op such as MPI.SUM, got {type(op).__name__}")
    for name, predefined in _PREDEFINED_OPS.items():
        if op == predefined:
            return name
    return None


def _half_op(dtype: torch.dtype, name: str) -> MPI.Op:
    """The user-defined MPI op (created once) reducing float16/bfloat16 data with torch."""
    key = (dtype, name)
    op = _HALF_OPS.get(key)
    if op is None:
        torch_fn = {
            "SUM": torch.add,
            "PROD": torch.mul,
            "MIN": torch.minimum,
            "MAX": torch.maximum,
        }[name]

        def reduce_halves(inbuf, inoutbuf, datatype, _fn=torch_fn, _dtype=dtype):
            if inoutbuf.nbytes == 0:
                return
            if inbuf.readonly:  # torch.frombuffer warns on read-only buffers; we only read it
                inbuf = MPI.buffer.fromaddress(inbuf.address, inbuf.nbytes)
            incoming = torch.frombuffer(inbuf, dtype=_dtype)
            accumulated = torch.frombuffer(inoutbuf, dtype=_dtype)
            _fn(incoming, accumulated, out=accumulated)

        op = MPI.Op.Create(reduce_halves, commute=True)
        _HALF_OPS[key] = op
    return op


def _reduction(dtype: torch.dtype, op: MPI.Op) -> Tuple[MPI.Datatype, MPI.Op, bool]:
    """
    Resolve ``op`` for tensors of ``dtype``: (wire datatype, MPI op, whether data must be on host).

    User-defined ops are passed through unchanged (they see the wire datatype).
    """
    name = _op_name(op)
    wire = _TRANSPORT_TYPES[dtype]
    if name is None:  # user-defined ops compute on the host
        return wire, op, True
    if dtype == torch.bool:
        return wire, _PREDEFINED_OPS[_BOOL_OPS[name]], False
    if dtype in _HALF_TYPES:
        if name not in ("SUM", "PROD", "MIN", "MAX"):
            raise ValueError(
                f"op MPI.{name} is not supported for {dtype}; use SUM, PROD, MIN or MAX"
            )
        return wire, _half_op(dtype, name), True
    if dtype in _REAL_FLOAT_TYPES:
        if name not in ("SUM", "PROD", "MIN", "MAX"):
            raise ValueError(
                f"op MPI.{name} is not supported for {dtype}; use SUM, PROD, MIN or MAX"
            )
    elif dtype in _COMPLEX_TYPES:
        if name not in ("SUM", "PROD"):
            raise ValueError(f"op MPI.{name} is not supported for {dtype}; use SUM or PROD")
    return wire, op, False


def _neutral(name: Optional[str], dtype: torch.dtype) -> Union[bool, int, float]:
    """Neutral element of the predefined reduction ``name`` for ``dtype`` (0 when unknown)."""
    if name is None:
        return 0
    if dtype == torch.bool:
        return _BOOL_OPS[name] == "LAND"
    floating = dtype.is_floating_point or dtype.is_complex
    if name in ("PROD", "LAND"):
        return 1
    if name == "BAND":
        return -1 if torch.iinfo(dtype).min < 0 else torch.iinfo(dtype).max
    if name == "MIN":
        return float("inf") if floating else torch.iinfo(dtype).max
    if name == "MAX":
        return float("-inf") if floating else torch.iinfo(dtype).min
    return 0
