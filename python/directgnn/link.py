"""Link prediction's minibatches for your own training loop: :class:`LinkLoader`."""

import dataclasses
from typing import Iterator, Optional, Sequence, Tuple, Union

import torch

from ._ops import NativeLoader, classes, os_errors
from .data import Dataset
from .loader import _keep_batch_memory
from .sampler import Block, Sample, _sample
from .tensor import _as_tensor


@dataclasses.dataclass
class LinkBatch:
    """One link-prediction minibatch.

    Attributes:
        edges: int64 [B, 2] global (src, dst): the batch's positive edges.
        x: [len(n_id), F] input features.
        sample: the sampled subgraph (:class:`Sample`); its seeds are the batch's distinct
            endpoints, positives' first, then negatives'.
        edge_label_index, edge_label: binary negatives: int64 [2, B + K·B] local (src; dst)
            ids of every scored pair, positives first, and float32 labels (1, then 0).
        src_index, dst_pos_index, dst_neg_index: triplet negatives: int64 [B], [B] and
            [B, K] local ids.
    """

    edges: torch.Tensor
    x: torch.Tensor
    sample: Sample
    edge_label_index: Optional[torch.Tensor] = None
    edge_label: Optional[torch.Tensor] = None
    src_index: Optional[torch.Tensor] = None
    dst_pos_index: Optional[torch.Tensor] = None
    dst_neg_index: Optional[torch.Tensor] = None

    @property
    def n_id(self) -> torch.Tensor:
        """Global ids of every input node, the endpoints first."""
        return self.sample.node

    @property
    def blocks(self) -> Sequence[Block]:
        """One per layer, the outermost first."""
        return self.sample.blocks


class LinkLoader(NativeLoader):
    """Minibatches of positive ``edges`` with negatives, for link prediction, from the C++ link
    sampler (the one ``directgnn train --task link`` runs; docs/link-prediction.md)::

        import torch
        import directgnn
        data = directgnn.datasets.synthetic(2000, 8, 16)
        split = data.random_link_split(seed=0)
        loader = directgnn.LinkLoader(split, split.link["train"], fanouts=[10, 10],
                                      batch_size=256, neg_sampling="binary", neg_ratio=1)
        for batch in loader:          # batch.x, batch.blocks, batch.edge_label_index, ...
            src, dst = batch.edge_label_index
            assert batch.edge_label.shape == (2 * batch.edges.shape[0],)

    Args:
        data: a :class:`Dataset`, or a tuple ``(indptr, indices, x)``; its graph is the
            message-passing graph (a directed one is symmetrised, as OGB's citation2 recipes).
        edges: int64 [E, 2] positive (src, dst) pairs to iterate over.
        fanouts: neighbours per hop, seed hop first; -1 takes every neighbour.
        batch_size: positive edges per minibatch (the last one may be smaller).
        neg_sampling: "binary" (``neg_ratio`` × B random pairs, labelled 0) or "triplet"
            (``neg_ratio`` random destinations per positive's source), PyG's two modes.
        neg_dist: "uniform", or "degree" (degree^0.75, as word2vec and PinSage).
        exact_negatives: redraw a negative that is an edge of the graph (either direction) or
            a self-pair; a graph too dense for that raises.
        exclude_seed_edges: leave each batch's positive edges, and their reverses, out of its
            sampled neighbourhoods (GraphBolt's ``exclude_seed_edges``).
        shuffle: a new seeded order of the edges every pass.
        seed: the base of every draw; a pass repeats for a seed, whatever the thread count.
        mode: "dgl" (each layer draws anew) or "pyg" (each node drawn once).
        directed: whether the graph is directed (default: the dataset's; False for a tuple).
        device: where batches are delivered: "auto" (a GPU when there is one), "cpu", "cuda"
            or "cuda:N" ("cuda" and auto's GPU: torch's current device).
        sampler: "auto" (the GPU's on a GPU: negatives, exclusion and the k-hop sample drawn
            there, the same batches as the CPU's), "cpu" or "gpu".
        graph: where the GPU sampler reads the graph: "pinned" or "device".
        features: "auto" (pinned on a GPU, host on the CPU), "host", "pinned", "device", or
            "disk" (rows read from the dataset directory's ``features.npy`` as batches need
            them; ``data`` must come from ``directgnn.load(DIR)``), as :class:`Loader`.
        gather: "auto", "cpu-copy", "zero-copy" or "aligned" (onto a GPU).
        prefetch: batches prepared ahead by worker threads: "auto" (2 on a GPU or with
            features="disk", else 0, as ``directgnn train``), or 0..64.
        workers: threads preparing them.
        disk_io, disk_direct: with features="disk", as :class:`Loader`.
        sharded, seed_assignment, group, dist_timeout, exchange_device: as :class:`Loader`'s,
            over a partitioned dataset loaded with ``directgnn.load(DIR, shard=True)``: the
            other ranks' rows come from their owners; "part" takes the positives whose source
            node this rank's part owns, "global" this rank's shard of every pass's shuffle.

    Each ``iter(loader)`` is a pass of its own, with its own workers; a pass left unfinished
    stops when its iterator is closed or collected. As :class:`Loader`, the first loader of a
    process tells glibc to keep freed batch buffers for reuse (DIRECTGNN_MALLOC=default keeps
    glibc's defaults).
    """

    def __init__(self, data: Union[Dataset, Tuple[torch.Tensor, ...]], edges: torch.Tensor, *,
                 fanouts: Sequence[int], batch_size: int = 1024, neg_sampling: str = "binary",
                 neg_ratio: int = 1, neg_dist: str = "uniform", exact_negatives: bool = False,
                 exclude_seed_edges: bool = True, shuffle: bool = True, seed: int = 0,
                 mode: str = "dgl", directed: Optional[bool] = None,
                 device: Union[str, torch.device] = "auto", features: str = "auto",
                 gather: str = "auto", sampler: str = "auto", graph: str = "pinned",
                 prefetch: Union[str, int] = "auto", workers: int = 1,
                 disk_io: str = "auto", disk_direct: bool = False,
                 sharded: Union[str, bool] = "auto", seed_assignment: str = "part", group=None,
                 dist_timeout: float = 300.0, exchange_device: str = "auto"):
        from .loader import _Shard
        features_path = ""
        if isinstance(data, Dataset):
            indptr, indices, x = data.indptr, data.indices, data.x
            directed = data.directed if directed is None else directed
            features_path = data.features_path or ""
        else:
            indptr, indices, x = (_as_tensor(a) for a in data)
        edges = torch.as_tensor(edges)
        if edges.dim() != 2 or edges.shape[1] != 2:
            raise ValueError(f"directgnn.LinkLoader: edges has shape {tuple(edges.shape)}; give "
                             "[E, 2] (src, dst) pairs (PyG's [2, E] edge_label_index is "
                             "edges.t())")
        if batch_size < 1:
            raise ValueError(f"directgnn.LinkLoader: batch_size must be positive, got "
                             f"{batch_size}")
        _keep_batch_memory()  # as Loader: freed batch buffers stay with the process
        self.edges, self.batch_size, self.shuffle = edges.long(), int(batch_size), shuffle
        self.seed, self.mode, self.neg_sampling = int(seed), mode, neg_sampling
        self._epoch = 0
        choices = {"device": str(device), "features": features, "gather": gather,
                   "sampler": sampler, "graph": graph, "mode": mode,
                   "disk_io": disk_io, "neg_sampling": neg_sampling, "neg_dist": neg_dist,
                   "exact_negatives": "true" if exact_negatives else "false",
                   "exclude_seed_edges": "true" if exclude_seed_edges else "false"}
        depth = -1 if prefetch == "auto" else int(prefetch)  # -1: auto
        # A sharded table: positives by their source node's part ("part") or a shard of every
        # rank's shuffle ("global"), as `directgnn train --task link` assigns them.
        self._shard = _Shard.of(data, sharded, seed_assignment, group, self.edges,
                                "directgnn.LinkLoader", owner_ids=self.edges[:, 0])
        offsets = self._shard.offsets if self._shard else []
        part = data.feature_part if self._shard and data.feature_part is not None else -1
        with os_errors():
            self._loader = classes.LinkLoader(
                indptr, indices, x, features_path, bool(directed), choices,
                [int(f) for f in fanouts], self.batch_size, depth, int(workers),
                bool(disk_direct), int(neg_ratio), offsets, part)
            if self._shard:
                self._loader.shard(self._shard.group.boxed(), int(dist_timeout), len(self),
                                   self._shard.wire(self.device, exchange_device,
                                                    "directgnn.LinkLoader"))
        self._warn_note()

    @property
    def prefetch(self) -> int:
        """Batches prepared ahead, as resolved."""
        return self._loader.prefetch()

    def __repr__(self):
        return (f"LinkLoader(edges={self.edges.shape[0]}, batch_size={self.batch_size}, "
                f"batches={len(self)}, neg_sampling={self.neg_sampling!r}, "
                f"device={self.device}, mode={self._loader.mode()!r})")

    def __len__(self) -> int:
        count = self._shard.count if self._shard else self.edges.shape[0]
        return self._loader.steps(count)


    def __iter__(self) -> Iterator[LinkBatch]:
        order = self.edges
        base = self.seed * 1_000_003 + self._epoch
        g = torch.Generator().manual_seed(base)
        if self._shard:
            order = self._shard.pass_seeds(self.edges, self.shuffle, g)
        elif self.shuffle:
            order = self.edges[torch.randperm(self.edges.shape[0], generator=g)]
        self._epoch += 1
        with os_errors():
            pass_id = self._loader.start(order, base)
        try:
            while self._loader.has_next(pass_id):
                with os_errors():
                    positives, x, result, labels = self._loader.next(pass_id)
                batch = LinkBatch(positives, x, _sample(result, self.mode))
                if self.neg_sampling == "binary":
                    batch.edge_label_index, batch.edge_label = labels
                else:
                    batch.src_index, batch.dst_pos_index, batch.dst_neg_index = labels
                yield batch
        finally:
            self._loader.finish(pass_id)
