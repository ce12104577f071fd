"""The prefetching minibatch loader."""

import dataclasses
import os
from typing import Iterator, List, Optional, Sequence, Tuple, Union

import torch

from ._ops import NativeLoader, classes, ops, os_errors

_allocator_configured = False


def _keep_batch_memory():
    """Tells glibc to keep freed batch buffers instead of returning them to the OS after every
    minibatch (each new batch would page-fault its memory afresh): once per process, by the
    first Loader or directgnn.pyg.NeighborLoader, unless DIRECTGNN_MALLOC=default. Measured in
    docs/benchmarks.md."""
    global _allocator_configured
    if not _allocator_configured and os.environ.get("DIRECTGNN_MALLOC") != "default":
        ops.configure_allocator()
    _allocator_configured = True
from .data import Dataset
from .hetero import HeteroDataset
from .sampler import Block, Sample, _fanouts, _mode, _sample
from .tensor import _as_tensor, _ids


@dataclasses.dataclass
class Batch:
    """One minibatch, on the loader's device.

    Attributes:
        seeds: the global ids of the nodes trained on (the first ``len(seeds)`` of ``n_id``).
        x: [len(n_id), F] input features.
        y: labels of the seeds.
        sample: the sampled subgraph, in DGL's and PyG's views (:class:`Sample`).
        n_id: global ids of every input node, seeds first (``sample.node``).
        blocks: one per layer, the outermost first (``sample.blocks``).
    """

    seeds: torch.Tensor
    x: torch.Tensor
    y: torch.Tensor
    sample: Sample

    @property
    def n_id(self) -> torch.Tensor:
        """Global ids of every input node, seeds first."""
        return self.sample.node

    @property
    def blocks(self) -> List[Block]:
        """One :class:`Block` per layer, the outermost first."""
        return self.sample.blocks

    @property
    def batch_size(self) -> int:
        """The number of seeds."""
        return self.seeds.numel()

    def to(self, device, non_blocking: bool = False) -> "Batch":
        """The batch with every tensor on ``device``, as ``torch_geometric.data.Data.to``."""
        return Batch(self.seeds.to(device, non_blocking=non_blocking),
                     self.x.to(device, non_blocking=non_blocking),
                     self.y.to(device, non_blocking=non_blocking),
                     self.sample.to(device, non_blocking))

    def __repr__(self):
        layers = ", ".join(f"{b.num_dst}<-{b.num_src}" for b in self.blocks)
        return (f"Batch(seeds={self.batch_size}, n_id={self.n_id.numel()}, "
                f"x={list(self.x.shape)} {self.x.dtype}, y={list(self.y.shape)}, "
                f"blocks=[{layers}], device={self.x.device})")


class Loader(NativeLoader):
    """Minibatches of ``seeds``: neighbour sampling, the feature gather and the labels,
    prepared ahead by C++ threads (on side streams on a GPU) while the current minibatch
    trains; no worker processes.

    Args:
        data: a :class:`Dataset` (``directgnn.load``, ``directgnn.datasets``), a PyG ``Data``
            (``edge_index``, ``x``, ``y``; messages flow from source to target, as PyG's) or a
            tuple ``(indptr, indices, x, y)`` of tensors or numpy arrays.
        seeds: the node ids to iterate over (e.g. ``data.train_idx``): a tensor, numpy array
            or list of ids, or a bool mask over the nodes (PyG's ``data.train_mask``).
        fanouts: neighbours per hop, seed hop first; -1 takes every neighbour.
        batch_size: seeds per minibatch (the last one may be smaller).
        shuffle: a new order every pass (seeded by ``seed`` and the pass number).
        device: "auto" (a GPU when there is one), "cpu", "cuda" or "cuda:N" ("cuda" and
            auto's GPU: torch's current device, as ``torch.cuda.set_device`` chose, so a
            torchrun script's ranks each get their own).
        features: where the feature table is read from: "auto" (pinned on a GPU, host on the
            CPU), "host", "pinned", "device", or "disk" (rows read from the dataset
            directory's ``features.npy`` as minibatches need them, for tables larger than RAM;
            ``data`` must come from ``directgnn.load(DIR)``).
        gather: "auto", "cpu-copy", "zero-copy" or "aligned".
        sampler: "auto" (the GPU's on a GPU), "cpu" or "gpu".
        graph: where the GPU sampler reads the graph: "pinned" or "device".
        mode: "dgl" (each layer draws anew) or "pyg" (each node drawn once), as for
            :class:`NeighborSampler`.
        prefetch: minibatches prepared ahead: "auto" (2 on a GPU or with features="disk",
            else 0, as ``directgnn train``), or 0..64 (0: each one when asked for).
        workers: threads preparing them.
        seed: the base of the shuffling and of every sampling draw.
        disk_io: with features="disk": "auto", "io_uring" or "pread".
        disk_direct: with features="disk": read with O_DIRECT (no page cache).
        feature_cache_gib: with features="disk": keep this many GiB of the most used rows in
            RAM, filled when the loader is made (0: no cache).
        feature_cache_rank: which rows the cache keeps: "presample" (those a sampling pass over
            ``seeds`` gathers most) or "degree".
        feature_cache_policy: what the cache does with rows a batch misses: "static" (nothing),
            "sieve" (they replace rows not hit lately, as GraphBolt's), "lookahead" (batches
            are sampled ahead, and the rows used soonest are kept; on the CPU, ``workers=1``)
            or "auto" (lookahead where it can run, else static). With a look-ahead cache a new
            pass replaces an unfinished one: take one pass at a time.
        lookahead_batches: with a look-ahead cache, the batches sampled ahead (0: 8).
        weighted: draw neighbours by edge weight (as :class:`NeighborSampler` with
            ``weights``): ``edge_weight``, or else the dataset's (``edge_weights.npy``).
        edge_weight: float32 [E] edge weights in the order of ``indices``.
        edge_ids: each block carries its edges' ids (``Block.edge_ids``) to index edge
            attributes with; default: True for mode "pyg" (``batch.sample.edge``), as PyG.
        sharded: whether the feature table is sharded over the ranks of a torch.distributed
            process group, each rank holding its part's rows and fetching the others from
            their owners with two all-to-alls per minibatch: "auto" (when ``data`` was loaded
            with ``directgnn.load(DIR, shard=True)``), True or False. ``data`` is then a
            partitioned dataset with one part per rank.
        seed_assignment: with a sharded table, which of ``seeds`` this rank iterates over
            (every rank passes the same seeds): "part" (those its part owns, each pass cut to
            the count every part has, so every rank takes the same number of minibatches) or
            "global" (its equal share of each pass's shuffle of all of them, as
            ``DistributedSampler``; the minibatches of ``directgnn train --seed-assignment
            global``).
        group: the process group whose store the exchange's own group is made over
            (default: torch.distributed's default group). The exchange never uses the group
            itself, so the script's collectives (DDP's all-reduce) and the loader's, on its
            prefetching thread, never meet.
        dist_timeout: seconds an exchange waits for the other ranks before failing.
        exchange_device: on a GPU, where a sharded table's ids and rows cross: "gpu" (each
            owner's GPU gathers its rows, a pinned part by the aligned kernel, and they travel
            GPU to GPU: over an NCCL group of the loader's own when ``group`` is NCCL's, else
            over Gloo, which copies GPU tensors through host memory), "cpu" (over Gloo on the
            CPU, then copied to the GPU) or "auto" ("gpu" when ``group`` is NCCL's).

    Each ``iter(loader)`` is a pass of its own, with its own workers: two may run at once
    (each in the order its pass number and ``seed`` give), and a pass left unfinished stops
    when its iterator is closed or collected.

    The first loader of a process tells glibc to keep freed batch buffers for reuse (they
    are tens of MB; returning them to the OS makes every minibatch page-fault its memory
    afresh). Set DIRECTGNN_MALLOC=default before to keep glibc's defaults.
    """

    def __init__(self, data: Union[Dataset, Tuple[torch.Tensor, ...]],
                 seeds: Union[torch.Tensor, Sequence[int]], *, fanouts: Sequence[int],
                 batch_size: int = 1024, shuffle: bool = True,
                 device: Union[str, torch.device] = "auto", features: str = "auto",
                 gather: str = "auto", sampler: str = "auto", graph: str = "pinned",
                 mode: str = "dgl", prefetch: Union[str, int] = "auto", workers: int = 1,
                 seed: int = 0, disk_io: str = "auto", disk_direct: bool = False,
                 feature_cache_gib: float = 0.0, feature_cache_rank: str = "presample",
                 feature_cache_policy: str = "auto", lookahead_batches: int = 0,
                 weighted: bool = False, edge_weight: Optional[torch.Tensor] = None,
                 edge_ids: Optional[bool] = None, sharded: Union[str, bool] = "auto",
                 seed_assignment: str = "part", group=None, dist_timeout: float = 300.0,
                 exchange_device: str = "auto"):
        features_path = ""
        if isinstance(data, HeteroDataset) or type(data).__name__ == "HeteroData":
            raise TypeError("directgnn.Loader: the data is heterogeneous; use "
                            "directgnn.HeteroLoader(data, seeds, fanouts=...) for typed graphs")
        if _is_pyg_data(data):
            data = _from_pyg(data)
        if isinstance(data, Dataset):
            indptr, indices, x, y = data.indptr, data.indices, data.x, data.y
            features_path = data.features_path or ""
            if edge_weight is None:
                edge_weight = data.edge_weight
        else:
            indptr, indices, x, y = (_as_tensor(a) for a in data)
        if weighted and edge_weight is None:
            raise ValueError("directgnn.Loader: weighted=True draws neighbours by edge weight, "
                             "but the data has none; pass edge_weight= (one per edge, in the "
                             "order of indices) or load a dataset directory with "
                             "edge_weights.npy")
        weights = _as_tensor(edge_weight) if weighted else None
        if edge_ids is None:
            edge_ids = mode == "pyg"
        _keep_batch_memory()
        self.seeds = _ids(seeds, indptr.numel() - 1, "directgnn.Loader").to(torch.int64)
        self.fanouts = _fanouts(fanouts)
        self.sample_mode = _mode(mode, "directgnn.Loader")
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.seed = int(seed)
        choices = {"device": str(device), "features": features, "gather": gather,
                   "sampler": sampler, "graph": graph, "mode": mode, "disk_io": disk_io,
                   "feature_cache_rank": feature_cache_rank,
                   "feature_cache_policy": feature_cache_policy,
                   "lookahead_batches": str(int(lookahead_batches)),
                   "weighted": "true" if weighted else "false",
                   "edge_ids": "true" if edge_ids else "false"}
        depth = -1 if prefetch == "auto" else int(prefetch)  # -1: auto
        self._shard = _Shard.of(data, sharded, seed_assignment, group, self.seeds)
        offsets = self._shard.offsets if self._shard else []
        part = data.feature_part if self._shard and data.feature_part is not None else -1
        with os_errors():
            self._loader = classes.Loader(indptr, indices, x, y, weights, features_path, choices,
                                          self.fanouts, self.batch_size, depth, int(workers),
                                          bool(disk_direct), float(feature_cache_gib), offsets,
                                          part)
            if self._shard:
                self._loader.shard(self._shard.group.boxed(), int(dist_timeout), len(self),
                                   self._shard.wire(self.device, exchange_device,
                                                    "directgnn.Loader"))
            # A progress line on a terminal (stderr), nothing otherwise.
            self.feature_cache = self._loader.fill_cache(self.seeds, self.seed, True)
        self._epoch = 0
        self._warn_note()

    @property
    def mode(self) -> str:
        """Features, gather method and sampler as run, e.g. "pinned/aligned/gpu"."""
        return self._loader.mode()

    def __repr__(self):
        return (f"Loader(seeds={self.seeds.numel()}, fanouts={self.fanouts}, "
                f"batch_size={self.batch_size}, batches={len(self)}, device={self.device}, "
                f"mode={self.mode!r}, sample_mode={self.sample_mode!r})")

    def __len__(self) -> int:
        count = self._shard.count if self._shard else self.seeds.numel()
        return self._loader.steps(count)


    def __iter__(self) -> Iterator[Batch]:
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + self._epoch)
        if self._shard:
            order = self._shard.pass_seeds(self.seeds, self.shuffle, g)
        else:
            order = self.seeds
            if self.shuffle:
                order = self.seeds[torch.randperm(self.seeds.numel(), generator=g)]
        with os_errors():
            pass_id = self._loader.start(order, self.seed * 1_000_003 + self._epoch)
        self._epoch += 1
        try:
            while self._loader.has_next(pass_id):
                with os_errors():
                    seeds, x, y, sample = self._loader.next(pass_id)
                yield Batch(seeds, x, y, _sample(sample, self.sample_mode))
        finally:
            self._loader.finish(pass_id)


class _Shard:
    """A sharded loader's table: the group, this rank, the book's offsets over the seeds' node
    type, and which seeds this rank takes each pass. ``who`` names the loader in errors."""

    def __init__(self, offsets, group, rank, ranks, assignment, seeds, who, owner_ids=None):
        self.group, self.rank, self.ranks = group, rank, ranks
        self.offsets = list(offsets)
        self.assignment = assignment
        if assignment == "part":
            starts = torch.tensor(self.offsets[1:-1], dtype=torch.long)
            keys = seeds if owner_ids is None else owner_ids
            owner = torch.searchsorted(starts, keys.contiguous(), right=True)
            counts = torch.bincount(owner, minlength=ranks)
            self.mine = seeds[owner == rank]
            self.count = int(counts.min())
            if self.count == 0:
                empty = int(torch.argmin(counts))
                raise ValueError(f"{who}: seed_assignment='part': part {empty} owns "
                                 "none of the seeds, so no rank could take a minibatch; use "
                                 "seed_assignment='global' or partition again")
        else:
            self.count = seeds.shape[0] // ranks
            if self.count == 0:
                raise ValueError(f"{who}: {seeds.shape[0]} seeds for {ranks} ranks; "
                                 "every rank needs one")

    def wire(self, device, exchange_device, who):
        """Where the exchange's ids and rows cross for a loader on ``device``
        (``exchange_device``: "auto", "cpu" or "gpu"): "cpu", "gpu" (Gloo carrying GPU tensors)
        or "nccl" (an NCCL group of the exchange's own)."""
        if exchange_device not in ("auto", "cpu", "gpu"):
            raise ValueError(f"{who}: exchange_device={exchange_device!r}: use 'auto', 'cpu' "
                             "or 'gpu'")
        on_gpu = torch.device(device).type == "cuda"
        if exchange_device == "gpu" and not on_gpu:
            raise ValueError(f"{who}: exchange_device='gpu' lands the exchanged rows in a GPU's "
                             f"memory, but this loader's device is {device}; use 'cpu' or "
                             "'auto'")
        import torch.distributed as dist
        nccl = dist.get_backend(self.group) == "nccl"
        if not on_gpu or exchange_device == "cpu" or (exchange_device == "auto" and not nccl):
            return "cpu"
        return "nccl" if nccl else "gpu"

    @classmethod
    def of(cls, data, sharded, assignment, group, seeds, who="directgnn.Loader",
           seed_type=None, owner_ids=None):
        """The shard of a loader over ``data`` (``seed_type``: a heterogeneous dataset's type
        of the seeds; ``owner_ids``: the node of each seed its part goes by, when the seeds are
        not nodes, as a positive edge's source), or None when the table is whole."""
        if sharded not in ("auto", True, False):
            raise ValueError(f"{who}: sharded={sharded!r}: use 'auto', True or False")
        if assignment not in ("part", "global"):
            raise ValueError(f"{who}: seed_assignment={assignment!r}: use 'part' or "
                             "'global'")
        loaded_for = getattr(data, "shard_rank", None)
        if sharded == "auto":
            sharded = loaded_for is not None
        if not sharded:
            if loaded_for is not None and getattr(data, "feature_part", None) is not None:
                raise ValueError(f"{who}: the data holds one part's feature rows "
                                 "(directgnn.load(shard=True)); sharded=False needs the whole "
                                 "table")
            return None
        book = getattr(data, "partition", None)
        if book is None:
            raise ValueError(f"{who}: sharded=True needs a partitioned dataset "
                             "(directgnn.load of a `directgnn partition` directory)")
        import torch.distributed as dist
        if not (dist.is_available() and dist.is_initialized()):
            raise RuntimeError(f"{who}: sharded=True needs a torch.distributed "
                               "process group; call torch.distributed.init_process_group() "
                               "first (torchrun sets the environment it reads)")
        group = group if group is not None else dist.group.WORLD
        rank, ranks = dist.get_rank(group), dist.get_world_size(group)
        if book["parts"] != ranks:
            raise ValueError(f"{who}: the dataset has {book['parts']} "
                             f"parts and the process group {ranks} ranks; partition it with "
                             f"--parts {ranks}")
        if loaded_for is not None and loaded_for != rank:
            raise ValueError(f"{who}: the data was loaded for rank {loaded_for}, "
                             f"this is rank {rank}")
        offsets = book["offsets"][seed_type] if seed_type is not None else book["offsets"]
        return cls(offsets, group, rank, ranks, assignment, seeds, who, owner_ids)

    def pass_seeds(self, seeds, shuffle, generator):
        """This rank's seeds of one pass, in order (seeds may be rows, as positive edges)."""
        if self.assignment == "part":
            mine = self.mine
            if shuffle:
                mine = mine[torch.randperm(mine.shape[0], generator=generator)]
            return mine[:self.count]
        if shuffle:
            seeds = seeds[torch.randperm(seeds.shape[0], generator=generator)]
        return seeds[self.rank * self.count:(self.rank + 1) * self.count]


def _is_pyg_data(data):
    return type(data).__module__.startswith("torch_geometric.") and hasattr(data, "edge_index")


def _from_pyg(data):
    """A PyG ``Data`` as a :class:`Dataset`: its graph by destination (PyG's CSC, messages
    from source to target), ``x`` and ``y`` (one label per node), and ``edge_weight`` in the
    graph's order when it has one."""
    from ._pyg_stores import coo_to_csc
    for name in ("edge_index", "x", "y"):
        if getattr(data, name, None) is None:
            raise ValueError(f"directgnn.Loader: the Data has no {name}; a Loader over a PyG Data "
                             "needs edge_index, x and y (one label per node)")
    y = torch.as_tensor(data.y)
    if y.is_floating_point() or y.is_complex():
        raise ValueError(f"directgnn.Loader: the Data's y is {y.dtype}; the Loader trains node "
                         "classification and needs integer class labels")
    if y.dim() == 2 and y.shape[1] == 1:
        y = y.view(-1)  # OGB's [N, 1] labels
    indptr, indices, perm = coo_to_csc(data.edge_index, data.num_nodes)
    weight = getattr(data, "edge_weight", None)
    if weight is not None:
        weight = torch.as_tensor(weight)
        weight = weight if perm is None else weight[perm]
    num_classes = int(y.max()) + 1 if y.numel() else 0
    return Dataset("pyg", indptr, indices, _as_tensor(data.x), y.long(), num_classes,
                   edge_weight=weight)
