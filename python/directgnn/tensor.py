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


class _Gather(torch.autograd.Function):
    """The gather with a gradient for the table: dense, as ``index_select`` gives (repeated
    ids add up), or sparse, the batch's rows only, as ``nn.Embedding(sparse=True)`` gives."""

    @staticmethod
    def forward(ctx, table, ids, options, sparse):
        ctx.save_for_backward(ids)
        ctx.shape, ctx.device, ctx.sparse = table.shape, table.device, sparse
        return _gather(table, ids, **options)

    @staticmethod
    def backward(ctx, grad):
        (ids,) = ctx.saved_tensors
        ids = ids.to(ctx.device, torch.int64)
        grad = grad.to(ctx.device)
        if ctx.sparse:  # uncoalesced, as nn.Embedding's; the forward checked every id
            table_grad = torch.sparse_coo_tensor(ids.unsqueeze(0), grad, ctx.shape,
                                                 check_invariants=False, is_coalesced=False)
        else:
            table_grad = grad.new_zeros(ctx.shape).index_add_(0, ids, grad)
        return table_grad, None, None, None


def gather(table: Union[torch.Tensor, np.ndarray], ids, *, method: str = "auto",
           sort_ids: bool = False, max_threads: int = 0, sparse: bool = False,
           out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Rows ``ids`` of the 2-D ``table``, as a dense tensor on ``ids.device``.

    CPU ids gather on the CPU. CUDA ids read a pinned table (``torch.Tensor.pin_memory``, a
    :class:`UnifiedTensor`) in place with 128-byte aligned warp reads (``method="aligned"``,
    the default for pinned tables) or one thread per element (``"zero-copy"``); a table in
    plain host memory is gathered by CPU threads and copied (``"cpu-copy"``); a CUDA table is
    indexed on its GPU. Every id is checked first: an id out of range raises an IndexError
    that names it.

    Differentiable: where ``table`` requires a gradient, backward gives it one on the table's
    device, dense as ``table[ids]`` does, or with ``sparse=True`` a sparse COO gradient holding
    only the gathered rows (for ``torch.optim.SparseAdam`` and other sparse optimisers).

    Args:
        table: [rows, features] tensor of any dtype, on the CPU or a GPU, or a numpy array.
        ids: 1-D int64 or int32 tensor, numpy array or list (a bool mask selects its rows).
        method: "auto", "cpu-copy", "zero-copy" or "aligned".
        sort_ids: sort the ids on the GPU first, so reads walk memory in order.
        max_threads: cap on the GPU threads of one gather (0: no cap).
        sparse: the table's gradient is sparse.
        out: optional tensor to write into (CPU: in place; an empty tensor is resized); not
            with a table that requires a gradient, as torch's ``out=`` functions.
    """
    options = _options(method, sort_ids, max_threads)
    table = _as_tensor(table)
    ids = _ids(ids, table.shape[0] if table.dim() > 0 else None, "directgnn.gather")
    if table.requires_grad and torch.is_grad_enabled():
        if out is not None:
            raise RuntimeError("directgnn.gather: out= does not take part in autograd, and the "
                               "table requires a gradient; leave out= unset (or gather under "
                               "torch.no_grad())")
        return _Gather.apply(table, ids, options, bool(sparse))
    if out is None:
        return _gather(table, ids, **options)
    return _gather_out(table, ids, out=out, **options)


def _ids(ids, rows, where):
    """``ids`` as a 1-D integer tensor: tensors as they are, numpy arrays and lists converted;
    a bool mask of ``rows`` entries becomes the ids of its True entries."""
    if not isinstance(ids, torch.Tensor):
        if isinstance(ids, np.ndarray):
            ids = torch.from_numpy(np.ascontiguousarray(ids))
        else:
            ids = torch.as_tensor(ids)
            if ids.dtype.is_floating_point and ids.numel() == 0:
                ids = ids.long()
    if ids.dtype == torch.bool:
        if rows is not None and ids.dim() == 1 and ids.numel() != rows:
            raise IndexError(f"{where}: a bool mask of {ids.numel()} entries for {rows} rows; "
                             "give one entry per row")
        return ids.nonzero().view(-1)
    return ids


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

    It indexes like a tensor's first dimension: ``u[ids]`` (a tensor, numpy array or list of
    ids, or a bool mask) returns the rows on ``ids.device``: CUDA ids use the aligned
    zero-copy gather (or ``method``), CPU ids the CPU gather; ``u[3]`` and ``u[-1]`` one row,
    ``u[0:10]`` a view of the CPU tensor. A 1-D tensor (labels) gives 1-D results. ``shape``,
    ``size()``, ``dtype``, ``device`` (where the rows live: the CPU), ``len()``, ``dim()`` and
    ``.to()`` (a copy, as ``torch.Tensor.to``) are the tensor's. Where the tensor requires a
    gradient, gathered rows carry it back (:func:`gather`).

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
        self._store = classes.FeatureStore(self._rows, "auto", int(device), "", "auto", False)

    def __getitem__(self, index):
        if isinstance(index, slice) or index is Ellipsis:
            return self._tensor[index]
        if isinstance(index, (int, np.integer)):
            i = int(index)
            if not -len(self) <= i < len(self):
                raise IndexError(f"directgnn.UnifiedTensor: index {i} is out of range for "
                                 f"{len(self)} rows")
            return self._tensor[i]
        if isinstance(index, tuple):
            raise IndexError("directgnn.UnifiedTensor: indexes its first dimension only; index "
                             "the rows it returns for the others")
        ids = _ids(index, len(self), "directgnn.UnifiedTensor")
        # The method applies to CUDA ids; CPU ids always gather on the CPU.
        options = self._options if ids.is_cuda else {}
        if self._tensor.requires_grad and torch.is_grad_enabled():
            rows = _Gather.apply(self._rows, ids, options, False)
        else:
            rows = _gather(self._rows, ids, **options)
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

    def size(self, dim: Optional[int] = None):
        """The tensor's shape, or its size along ``dim``, as ``torch.Tensor.size``."""
        return self._tensor.size() if dim is None else self._tensor.size(dim)

    def dim(self) -> int:
        """The number of dimensions (1 or 2)."""
        return self._tensor.dim()

    @property
    def device(self) -> torch.device:
        """Where the rows live: the CPU (GPU threads read them there when pinned)."""
        return self._tensor.device

    def to(self, *args, **kwargs) -> torch.Tensor:
        """The whole tensor converted as ``torch.Tensor.to`` converts it (to a GPU: a copy in
        GPU memory, which the unified tensor exists to avoid for large tables)."""
        return self._tensor.to(*args, **kwargs)

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
