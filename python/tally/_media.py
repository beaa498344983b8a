"""Input conversion for ``tally.SummaryWriter``: tensors, PIL images and figures to numpy.

Layouts follow torch's and tensorboardX's writers (image grids, video tiling, figure
rendering), so the same call shows the same picture in TensorBoard; encoding happens in
Rust (``tally._tally.summaries``). Every error names the argument at fault.
"""

from __future__ import annotations

import math
from typing import Any, List, Sequence

import numpy as np

__all__ = ["to_numpy", "image_hwc", "to_uint8", "video_thwc", "figure_chw", "audio_frames", "float_buffer", "layout_spec"]


def to_numpy(x: Any, name: str) -> np.ndarray:
    """``x`` as a numpy array: torch tensors via ``.detach().cpu().numpy()`` (torch never imported)."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu()
        if str(getattr(x, "dtype", "")) == "torch.bfloat16":  # numpy has no bfloat16
            x = x.float()
        x = x.numpy()
    elif hasattr(x, "numpy") and not isinstance(x, np.ndarray) and callable(x.numpy):
        x = x.numpy()
    try:
        arr = np.asarray(x)
    except Exception as e:  # ragged lists, objects numpy refuses
        raise TypeError(f"{name}: cannot convert {type(x).__name__} to an array: {e}") from e
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected numbers, got an array of dtype {arr.dtype}")
    return arr


def float_buffer(arr: np.ndarray) -> bytes:
    """Little-endian float64 bytes of ``arr`` flattened (C order)."""
    return np.ascontiguousarray(arr, dtype="<f8").tobytes()


def _is_pil(x: Any) -> bool:
    return type(x).__module__.startswith("PIL.") and hasattr(x, "getbands")


def _check_format(arr: np.ndarray, dataformats: str, allowed: str, name: str) -> str:
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or not set(fmt) <= set(allowed) or not set(fmt) >= set("HW"):
        raise ValueError(f"dataformats {dataformats!r}: expected distinct letters from {allowed!r} including H and W")
    if arr.ndim != len(fmt):
        raise ValueError(f"{name}: shape {arr.shape} has {arr.ndim} dimensions but dataformats {dataformats!r} has {len(fmt)}")
    return fmt


def _grid(nchw: np.ndarray, ncols: int = 8) -> np.ndarray:
    """N images (NCHW) tiled row by row, 8 per row, gray repeated to RGB: CHW."""
    if nchw.shape[1] == 1:
        nchw = np.concatenate([nchw] * 3, 1)
    n, c, h, w = nchw.shape
    ncols = min(n, ncols)
    nrows = math.ceil(n / ncols)
    canvas = np.zeros((c, h * nrows, w * ncols), dtype=nchw.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h : (y + 1) * h, x * w : (x + 1) * w] = nchw[i]
    return canvas


def stacked(images: Sequence[Any], name: str) -> np.ndarray:
    """A list of same-shaped images (arrays, tensors) as one array with a leading N axis."""
    arrays = [to_numpy(x, f"{name}[{i}]") for i, x in enumerate(images)]
    if not arrays:
        raise ValueError(f"{name}: the list holds no image")
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise ValueError(f"{name}: the images differ in shape ({', '.join(map(str, sorted(shapes)))}); a batch needs one")
    return np.stack(arrays)


def image_hwc(x: Any, dataformats: str, name: str = "img_tensor") -> np.ndarray:
    """One image (or, with an N axis, a grid of them) as HWC with 3 or 4 channels."""
    if _is_pil(x):
        arr = np.asarray(x)
        dataformats = "HW" if arr.ndim == 2 else "HWC"
    else:
        arr = to_numpy(x, name)
    fmt = _check_format(arr, dataformats, "NCHW", name)
    if "N" in fmt:
        if "C" not in fmt:
            raise ValueError(f"dataformats {dataformats!r}: a batch needs a C axis (e.g. 'NCHW' or 'NHWC')")
        nchw = arr.transpose([fmt.index(c) for c in "NCHW"])
        if nchw.shape[0] == 0:
            raise ValueError(f"{name}: the batch holds no image")
        if nchw.shape[1] not in (1, 3, 4):
            raise ValueError(f"{name}: {nchw.shape[1]} channels; expected 1, 3 or 4")
        return _grid(nchw).transpose(1, 2, 0)
    if "C" in fmt:
        hwc = arr.transpose([fmt.index(c) for c in "HWC"])
        if hwc.shape[2] not in (1, 3, 4):
            raise ValueError(f"{name}: {hwc.shape[2]} channels; expected 1 (gray), 3 (RGB) or 4 (RGBA)")
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    hw = arr.transpose([fmt.index(c) for c in "HW"])
    return np.stack([hw] * 3, 2)


def to_uint8(arr: np.ndarray) -> np.ndarray:
    """uint8 as is; anything else is taken to be in [0, 1], scaled by 255 and clipped."""
    if arr.dtype == np.uint8:
        return np.ascontiguousarray(arr)
    return np.ascontiguousarray((arr * 255.0).clip(0, 255).astype(np.uint8))


def rescaled(hwc: np.ndarray, factor: float) -> np.ndarray:
    """The image scaled by ``factor``, each output pixel the nearest input one."""
    h, w = hwc.shape[:2]
    rows = np.minimum((np.arange(max(1, int(h * factor))) / factor).astype(np.int64), h - 1)
    cols = np.minimum((np.arange(max(1, int(w * factor))) / factor).astype(np.int64), w - 1)
    return np.ascontiguousarray(hwc[rows][:, cols])


def video_thwc(x: Any, dataformats: str = "NTCHW") -> np.ndarray:
    """N videos of T frames tiled into one: T × H' × W' × C, uint8.

    The batch is zero-padded to a power of two and laid out on 2^k rows, as torch does.
    """
    arr = to_numpy(x, "vid_tensor")
    fmt = dataformats.upper()
    if sorted(fmt) != sorted("NTCHW"):
        raise ValueError(f"dataformats {dataformats!r}: expected a permutation of 'NTCHW'")
    if arr.ndim != 5:
        raise ValueError(f"vid_tensor: expected 5 dimensions ({dataformats}), got shape {arr.shape}")
    v = arr.transpose([fmt.index(c) for c in "NTCHW"])
    b, t, c, h, w = v.shape
    if b == 0 or t == 0:
        raise ValueError(f"vid_tensor: shape {arr.shape} holds no frame")
    if c not in (1, 3, 4):
        raise ValueError(f"vid_tensor: {c} channels; expected 1, 3 or 4")
    v = to_uint8(v)
    if b & (b - 1):
        v = np.concatenate([v, np.zeros((2 ** b.bit_length() - b, t, c, h, w), np.uint8)], 0)
    rows = 2 ** ((b.bit_length() - 1) // 2)
    cols = v.shape[0] // rows
    v = v.reshape(rows, cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return np.ascontiguousarray(v.reshape(t, rows * h, cols * w, c))


def figure_chw(figure: Any, close: bool, name: str = "figure") -> np.ndarray:
    """A matplotlib figure (or a list of them: NCHW) rendered by Agg to RGB."""
    if isinstance(figure, (list, tuple)):
        if not figure:
            raise ValueError(f"{name}: empty list of figures")
        return np.stack([figure_chw(f, close, f"{name}[{i}]") for i, f in enumerate(figure)])
    if not hasattr(figure, "canvas") or not hasattr(figure, "get_size_inches"):
        raise TypeError(f"{name}: expected a matplotlib Figure, got {type(figure).__name__}")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    w, h = figure.canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)
    if close:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return np.moveaxis(rgba[:, :, :3], 2, 0)


def audio_frames(x: Any) -> np.ndarray:
    """A clip as frames × channels (1 or 2): 1-D is mono; (1, L) and (2, L) are channels-first."""
    arr = to_numpy(x, "snd_tensor").astype(np.float64)
    if arr.ndim == 2 and arr.shape[0] in (1, 2) and arr.shape[1] > 2:
        arr = arr.T
    elif arr.ndim > 2:
        arr = arr.squeeze()
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] not in (1, 2) or arr.shape[0] == 0:
        raise ValueError(f"snd_tensor: expected samples of shape (L,), (1, L), (2, L) or (L, 1|2), got {np.shape(x)}")
    return arr


def layout_spec(layout: Any) -> List[Any]:
    """torch's custom-scalars ``{category: {chart: ["Multiline"|"Margin", [tags]]}}`` as lists."""
    if not isinstance(layout, dict):
        raise TypeError(f"layout: expected a dict of categories, got {type(layout).__name__}")
    out = []
    for cat, charts in layout.items():
        if not isinstance(charts, dict):
            raise TypeError(f"layout[{cat!r}]: expected a dict of charts, got {type(charts).__name__}")
        specs = []
        for title, spec in charts.items():
            if not (isinstance(spec, (list, tuple)) and len(spec) == 2 and spec[0] in ("Multiline", "Margin")):
                raise ValueError(f"layout[{cat!r}][{title!r}]: expected ['Multiline' or 'Margin', [tags]], got {spec!r}")
            tags = spec[1]
            if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
                raise TypeError(f"layout[{cat!r}][{title!r}]: tags must be a list of strings, got {tags!r}")
            specs.append((str(title), spec[0] == "Margin", list(tags)))
        out.append((str(cat), specs))
    return out


def hparam_value(key: str, v: Any) -> Any:
    """An hparam as bool, float, str or None (skipped): numbers, numpy and 0-d tensor scalars
    become floats, callables their name, and anything else its ``str`` (so nothing is lost)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (int, float, np.number)):
        return float(v)
    shape = getattr(v, "shape", None)
    if shape is not None and hasattr(v, "dtype") and int(np.prod(shape)) == 1:  # 1-element arrays, tensors
        return hparam_value(key, to_numpy(v, f"hparam_dict[{key!r}]").reshape(-1)[0].item())
    if callable(v):
        return getattr(v, "__name__", str(v))
    return str(v)
