"""How ``SummaryWriter``'s calls take their arguments: numbers, steps, protobufs, and the array
conversions of the non-scalar methods (``_media``, loaded on first use)."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Optional

from tally._tally import SchemaError, ValueTypeError


def _media() -> ModuleType:
    """The array conversions of the non-scalar methods, which need numpy; scalars never do,
    so ``import tally`` works without it."""
    try:
        from tally import _media as media
    except ModuleNotFoundError as e:
        raise ImportError(
            f"tally.SummaryWriter's histogram, image, audio, video and PR-curve methods need numpy ({e}): pip install numpy"
        ) from e
    return media


def _number(tag: str, v: Any, where: str = "add_scalar") -> float:
    if isinstance(v, float):
        return v
    if v is None or isinstance(v, (str, bytes)):
        raise ValueTypeError(f"{where}('{tag}'): expected a number, got {type(v).__name__} {v!r}")
    try:
        return float(v)  # ints, numpy scalars, 0-d tensors
    except (TypeError, ValueError) as e:
        raise ValueTypeError(f"{where}('{tag}'): expected a number, got {type(v).__name__}: {e}") from e


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _step(global_step: Any, name: str = "global_step") -> Optional[int]:
    """The event step, refused on this call (nothing batched or written) beyond TensorBoard's
    int64, which would otherwise fail a later, unrelated write."""
    if global_step is None:
        return None
    step = int(global_step)
    if not _INT64_MIN <= step <= _INT64_MAX:
        raise SchemaError(f"{name}={global_step!r}: beyond TensorBoard's int64 step range [{_INT64_MIN}, {_INT64_MAX}]")
    return step


def _scalar_step(global_step: Any) -> int:
    step = _step(global_step)
    return 0 if step is None else step


def _serialized(obj: Any, name: str) -> bytes:
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj)
    if hasattr(obj, "SerializeToString"):
        return bytes(obj.SerializeToString())
    raise TypeError(f"{name}: expected a protobuf message or its serialized bytes, got {type(obj).__name__}")
