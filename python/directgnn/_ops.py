"""Loads the torch ops library that sits beside this package and registers the shapes of
its operators for torch.compile."""

import contextlib
import os
import warnings

import torch

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libdirectgnn_ops.so")
if not os.path.exists(_LIBRARY):
    raise ImportError(
        f"directgnn: {_LIBRARY} is missing; build it with scripts/build.sh (or pip install "
        "--no-build-isolation . from the source tree)")
torch.ops.load_library(_LIBRARY)

ops = torch.ops.directgnn
classes = torch.classes.directgnn

# The library's I/O errors reach Python as RuntimeErrors with this mark (python/csrc/errors.h);
# torch has no OSError of its own. Its other kinds arrive as ValueError, TypeError, IndexError.
_OS_ERROR_MARK = "[directgnn OSError] "


@contextlib.contextmanager
def os_errors():
    """Re-raises the library's I/O errors, met inside the block, as OSError."""
    try:
        yield
    except RuntimeError as error:
        message = str(error)
        if not message.startswith(_OS_ERROR_MARK):
            raise
        raise OSError(message[len(_OS_ERROR_MARK):]) from None


class NativeLoader:
    """What the loaders over a C++ loader (``self._loader``) share: its device, and its note
    (why a run meant for a GPU runs on the CPU) said once, as a warning at the caller's line."""

    def _warn_note(self):
        note = self._loader.note()
        if note:
            warnings.warn(note.removeprefix("note: "), stacklevel=3)

    @property
    def device(self) -> torch.device:
        """Where batches are delivered."""
        return torch.device(self._loader.device())

    @property
    def rank(self):
        """This process's rank when the loader's table is sharded over ranks, else None."""
        shard = getattr(self, "_shard", None)
        return shard.rank if shard else None

    def exchange_stats(self) -> dict:
        """What the sharded table's exchanges moved since the last call (a heterogeneous
        loader's: every type's summed): "gathers", "rows" (rows asked for), "remote_rows" (of
        those, rows other ranks own), "cache_hits", "bytes_sent", "bytes_received" (ids and
        rows, this rank's side) and "seconds" (in the exchanges, waiting for peers included);
        empty when the table is not sharded."""
        return exchange_stats_of(self._loader.exchange_counts())


def exchange_stats_of(counts) -> dict:
    """An exchange's counts from C++ as Python gives them: integers but the seconds."""
    return {k: (v if k == "seconds" else int(v)) for k, v in dict(counts).items()}


@torch.library.register_fake("directgnn::gather")
def _gather_fake(table, ids, *, method="auto", sort_ids=False, max_threads=0):
    # The rows of `table` picked by `ids`, on the ids' device.
    return ids.new_empty((ids.shape[0], table.shape[1]), dtype=table.dtype)


@torch.library.register_fake("directgnn::gather.out")
def _gather_out_fake(table, ids, *, method="auto", sort_ids=False, max_threads=0, out):
    return out
