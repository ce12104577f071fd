"""The feature gather and the unified tensor."""

import warnings
from typing import Optional, Union

import numpy as np
import torch

from ._ops import classes, ops

GATHER_METHODS = ("auto", "cpu-copy", "zero-copy", "aligned")


# The overloads themselves: calling them skips the packet's overload lookup, and passing only
# the keyword arguments that differ from the defaults saves ~5 us a call (docs/benchmarks.md).
_gather = ops.gather.default
_gather_out = ops.gather.out


def _options(method, sort_ids, max_threads):
    """The gather's keyword arguments that differ from the defaults."""
    _check_method(method)
    options = {}
    if method != "auto":
        options["method"] = method
    if sort_ids:
        options["sort_ids"] = True
    if max_threads:
        options["max_threads"] = int(max_threads)
    return options


def _check_method(method):
    if method not in GATHER_METHODS:
        raise ValueError(
            f"directgnn: method {method!r} is not a gather method; use one of "
            f"{', '.join(GATHER_METHODS)}")


def gather(table: torch.Tensor, ids: torch.Tensor, *, method: str = "auto",
           sort_ids: bool = False, max_threads: int = 0,
           out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Rows ``ids`` of the 2-D ``table``, as a dense tensor on ``ids.device``.

    CPU ids gather on the CPU. CUDA ids read a pinned table (``torch.Tensor.pin_memory``, a
    :class:`UnifiedTensor`) in place with 128-byte aligned warp reads (``method="aligned"``,
    the default for pinned tables) or one thread per element (``"zero-copy"``); a table in
    plain host memory is gathered by CPU threads and copied (``"cpu-copy"``); a CUDA table is
    indexed on its GPU. Every id is checked first: an id out of range raises an error that
    names it.

    Args:
        table: [rows, features] tensor of any dtype, on the CPU or a GPU.
        ids: 1-D int64 or int32 tensor.
        method: "auto", "cpu-copy", "zero-copy" or "aligned".
        sort_ids: sort the ids on the GPU first, so reads walk memory in order.
        max_threads: cap on the GPU threads of one gather (0: no cap).
        out: optional tensor to write into (CPU: in place; an empty tensor is resized).
    """
    options = _options(method, sort_ids, max_threads)
    if out is None:
        return _gather(table, ids, **options)
    return _gather_out(table, ids, out=out, **options)


def _as_tensor(data):
    """A tensor over ``data``'s own memory (numpy arrays and memory maps included)."""
    if isinstance(data, torch.Tensor):
        return data
    if isinstance(data, np.ndarray):
        with warnings.catch_warnings():
            # A read-only memory map: torch warns that writes would reach it; we never write.
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(data)
    raise TypeError(f"directgnn: expected a torch.Tensor or numpy array, got {type(data).__name__}")


class UnifiedTensor:
    """A CPU tensor whose rows GPU threads read in place, over PCIe (zero-copy).

    Pins the tensor's own memory where a GPU is visible (``cudaHostRegister``; nothing is
    copied, memory-mapped arrays included) and keeps the tensor alive; the memory is unpinned
    when the last user of the pinning is released. Pinning memory twice is safe. Without a
    GPU the tensor is kept as it is (``is_pinned`` is False) and indexing gathers on the CPU.

    ``u[ids]`` returns the rows on ``ids.device``: CUDA ids use the aligned zero-copy gather
    (or ``method``), CPU ids the CPU gather. A 1-D tensor (labels) gives 1-D results.

    Args:
        tensor: a contiguous CPU tensor or numpy array (``np.load(..., mmap_mode="r")``).
        method: the gather method for CUDA ids ("auto", "zero-copy", "aligned", "cpu-copy").
        sort_ids, max_threads: as for :func:`gather`.
        device: the GPU index the pinning is made for (default 0).
    """

    def __init__(self, tensor: Union[torch.Tensor, np.ndarray], *, method: str = "auto",
                 sort_ids: bool = False, max_threads: int = 0, device: int = 0):
        t = _as_tensor(tensor)
        if t.device.type != "cpu":
            raise ValueError(f"directgnn.UnifiedTensor: the tensor is on {t.device}; a unified "
                             "tensor keeps its rows in host memory (use .cpu(), or index the "
                             "GPU tensor directly)")
        if t.dim() not in (1, 2):
            raise ValueError(f"directgnn.UnifiedTensor: expected a 1-D or 2-D tensor, got "
                             f"{t.dim()} dimensions")
        if not t.is_contiguous():
            raise ValueError("directgnn.UnifiedTensor: the tensor is not contiguous; pinning "
                             "works in place on its own memory (.contiguous() makes a copy)")
        self._options = _options(method, sort_ids, max_threads)
        self._method, self._sort_ids, self._max_threads = method, sort_ids, max_threads
        self._tensor = t
        self._rows = t if t.dim() == 2 else t.view(-1, 1)
        # "auto": pinned where a GPU is visible, host otherwise (the library decides). The store
        # owns the pinning; gathers read the pinned memory through the operator.
        self._store = classes.FeatureStore(self._rows, "auto", int(device))

    def __getitem__(self, ids):
        if not isinstance(ids, torch.Tensor):
            ids = torch.as_tensor(ids, dtype=torch.int64)
        # The method applies to CUDA ids; CPU ids always gather on the CPU.
        rows = _gather(self._rows, ids, **self._options) if ids.is_cuda else _gather(self._rows, ids)
        return rows if self._tensor.dim() == 2 else rows.view(-1)

    @property
    def method(self) -> str:
        """The gather method for CUDA ids: "auto", "zero-copy", "aligned" or "cpu-copy"."""
        return self._method

    @method.setter
    def method(self, method: str) -> None:
        self._options = _options(method, self._sort_ids, self._max_threads)
        self._method = method

    def __len__(self) -> int:
        return self._tensor.shape[0]

    def __repr__(self):
        return (f"UnifiedTensor(shape={tuple(self.shape)}, dtype={self.dtype}, "
                f"is_pinned={self.is_pinned}, method={self.method!r})")

    def __reduce__(self):
        raise TypeError(
            "directgnn.UnifiedTensor cannot be sent to another process: its pinning belongs to "
            "this process. Send the tensor (or the file it is mapped from) and wrap it in a "
            "UnifiedTensor in the worker.")

    @property
    def shape(self) -> torch.Size:
        """The tensor's shape."""
        return self._tensor.shape

    @property
    def dtype(self) -> torch.dtype:
        """The tensor's dtype."""
        return self._tensor.dtype

    @property
    def is_pinned(self) -> bool:
        """True when GPU threads read the rows in place (a GPU is visible and pinning worked)."""
        return self._store.placement() == "pinned"

    @property
    def tensor(self) -> torch.Tensor:
        """The wrapped CPU tensor (the same memory)."""
        return self._tensor


def unified(tensor: Union[torch.Tensor, np.ndarray], **kwargs) -> "UnifiedTensor":
    """Shorthand for :class:`UnifiedTensor` (``directgnn.unified(t)[ids]``)."""
    return UnifiedTensor(tensor, **kwargs)
