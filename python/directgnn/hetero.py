"""Heterogeneous graphs: typed nodes and relations, their reader and writer, and the prefetching
loader of typed blocks.

A heterogeneous dataset has node types, each with its own ids ``0..count-1`` and optionally a
feature table, and relations ``(src, rel, dst)``, each a CSR by destination (row ``v`` of
``dst`` lists the ``src`` nodes it receives messages from). Labels and splits belong to one
target type::

    import directgnn
    ds = directgnn.hetero.mag(0.002)              # or directgnn.load(DIR), HeteroDataset.from_pyg
    loader = directgnn.HeteroLoader(ds, ds.train_idx, fanouts=[10, 5], batch_size=256)
    for batch in loader:                          # batch.x["paper"], batch.blocks[0].edges[...]
        assert batch.x["paper"].shape[0] == batch.node["paper"].numel()
"""

import dataclasses
import json
import os
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from ._ops import NativeLoader, classes, ops, os_errors
from .sampler import Block
from .tensor import UnifiedTensor, _as_tensor, _ids

EdgeType = Tuple[str, str, str]


def _edge_type(key) -> EdgeType:
    """``(src, rel, dst)`` from a tuple or a "src,rel,dst" string."""
    parts = tuple(key.split(",")) if isinstance(key, str) else tuple(key)
    if len(parts) != 3 or not all(isinstance(p, str) for p in parts):
        raise ValueError(f"directgnn: {key!r} is not an edge type: give (src, rel, dst) or "
                         "'src,rel,dst'")
    return parts


def check_edge_index(src: torch.Tensor, dst: torch.Tensor, num_src: int, num_dst: int,
                     where: str = "edge_index"):
    """Raises ``IndexError`` naming the first column of an edge index (``where``) whose source
    or destination is out of range."""
    bad = (src < 0) | (src >= num_src) | (dst < 0) | (dst >= num_dst)
    if bool(bad.any()):
        col = int(bad.nonzero()[0, 0])
        nodes = (f"a graph of {num_src} nodes" if num_src == num_dst and where == "edge_index"
                 else f"{num_src} source and {num_dst} destination nodes")
        raise IndexError(f"directgnn: {where}[:, {col}] = ({int(src[col])}, {int(dst[col])}) "
                         f"names a node out of range for {nodes}")


def csc(edge_index: torch.Tensor, num_src: int, num_dst: int, where: str = "edge_index"):
    """``(indptr, indices, perm)`` of one relation's COO ``edge_index`` ([2, E]: sources, then
    destinations): a CSR by destination whose rows list their sources in order (repeats kept),
    and ``perm`` (position to edge id), None when the edges come in that order already.
    An id out of range raises ``IndexError`` naming its column (``where`` names the index)."""
    src, dst = edge_index[0].cpu().long(), edge_index[1].cpu().long()
    check_edge_index(src, dst, num_src, num_dst, where)
    key = dst * max(num_src, 1) + src
    perm = None
    if key.numel() > 1 and not bool((key[1:] >= key[:-1]).all()):
        perm = torch.sort(key, stable=True)[1]
        src, dst = src[perm], dst[perm]
    indptr = torch.zeros(num_dst + 1, dtype=torch.int64)
    indptr[1:] = torch.cumsum(torch.bincount(dst, minlength=num_dst), 0)
    return indptr, src.contiguous(), perm


def _rows(indptr):
    return torch.repeat_interleave(torch.arange(indptr.numel() - 1), indptr.diff())


def sorted_rows(indptr: torch.Tensor, indices: torch.Tensor, num_src: int):
    """``(indptr, indices, perm)`` of a CSR on the CPU whose rows list their sources in order:
    the arrays themselves when they do (``perm`` None), else ``indices`` sorted within rows and
    ``perm`` (new position to old)."""
    indptr, indices = indptr.cpu(), indices.cpu()
    key = _rows(indptr) * max(num_src, 1) + indices.long()
    if key.numel() < 2 or bool((key[1:] >= key[:-1]).all()):
        return indptr, indices, None
    perm = torch.sort(key, stable=True)[1]
    return indptr, indices[perm].contiguous(), perm


@dataclasses.dataclass
class HeteroDataset:
    """A heterogeneous graph for node classification on its target type.

    Attributes:
        name: the dataset's name.
        num_nodes: node type -> count (in the dataset's type order).
        x: node type -> [count, F] float32 or float16 features, for the types that have them
            (memory-mapped for dataset directories).
        indptr, indices: edge type ``(src, rel, dst)`` -> the relation's CSR by destination:
            int64 ``indptr`` [count of dst + 1], int32/int64 ``indices`` (ids of src).
        target: the labelled node type, or None.
        y: int64 [count of target] labels (-1 = unlabelled), or None.
        num_classes, class_names: the labels' classes (names empty when unknown).
        splits: each a dict of target-type ids under "train", "val" and "test".
        features_path: node type -> the .npy file its ``x`` maps (a dataset directory's, or a
            numpy memory map's), which ``features="disk"`` reads rows from.
        node_ids: node type -> int64 original id of each stored node, for a dataset that
            ``directgnn partition`` renumbered (empty otherwise): ``node_ids[t][v]`` is the id
            stored node ``v`` had in the dataset it was made from.
        partition: a partitioned dataset's books: ``{"method", "parts", "offsets": {node
            type: [P + 1 ids]}, "feature_part"}`` (part k owns each type's ids
            ``offsets[t][k]`` to ``offsets[t][k + 1] - 1``; ``feature_part`` >= 0: the tables
            hold that part's rows only, as ``directgnn.load(DIR, shard=True)`` loads them),
            or None.
        shard_rank: the torch.distributed rank this dataset was loaded for
            (``directgnn.load(DIR, shard=True)``), or None.
    """

    name: str
    num_nodes: Dict[str, int]
    x: Dict[str, torch.Tensor]
    indptr: Dict[EdgeType, torch.Tensor]
    indices: Dict[EdgeType, torch.Tensor]
    target: Optional[str] = None
    y: Optional[torch.Tensor] = None
    num_classes: int = 0
    class_names: List[str] = dataclasses.field(default_factory=list)
    splits: List[dict] = dataclasses.field(default_factory=list)
    features_path: Dict[str, str] = dataclasses.field(default_factory=dict)
    _features_checked: bool = dataclasses.field(default=False, repr=False, compare=False)
    node_ids: Dict[str, torch.Tensor] = dataclasses.field(default_factory=dict)
    partition: Optional[dict] = None
    shard_rank: Optional[int] = None

    @property
    def node_types(self) -> List[str]:
        return list(self.num_nodes)

    @property
    def edge_types(self) -> List[EdgeType]:
        return list(self.indptr)

    def metadata(self) -> Tuple[List[str], List[EdgeType]]:
        """``(node_types, edge_types)``, as PyG's ``HeteroData.metadata()`` (for ``to_hetero``)."""
        return self.node_types, self.edge_types

    @property
    def num_edges(self) -> Dict[EdgeType, int]:
        return {et: self.indices[et].numel() for et in self.edge_types}

    def edge_index(self, edge_type) -> torch.Tensor:
        """Relation ``edge_type``'s edges as PyG's [2, E] int64 (sources, destinations)."""
        et = _edge_type(edge_type)
        return torch.stack([self.indices[et].long(), _rows(self.indptr[et])])

    def split(self, k: int = 0) -> Dict[str, torch.Tensor]:
        """Split ``k`` as a dict of "train", "val" and "test" ids of the target type."""
        if not 0 <= k < len(self.splits):
            raise ValueError(f"directgnn: dataset {self.name!r} has {len(self.splits)} split(s); "
                             f"split {k} does not exist")
        return self.splits[k]

    @property
    def train_idx(self) -> torch.Tensor:
        return self.split(0)["train"]

    @property
    def val_idx(self) -> torch.Tensor:
        return self.split(0)["val"]

    @property
    def test_idx(self) -> torch.Tensor:
        return self.split(0)["test"]

    def _graph(self, with_features: bool = True, with_partition: bool = True):
        """The C++ graph over these arrays (torch.classes.directgnn.HeteroGraph), validated;
        with the partition's books (which a rank holding its parts' rows needs) unless
        ``with_partition`` is False."""
        keys = [",".join(et) for et in self.edge_types]
        features = [self.x.get(t) if with_features else None for t in self.node_types]
        return classes.HeteroGraph(
            self.name, self.node_types, [int(n) for n in self.num_nodes.values()], features, keys,
            [self.indptr[et] for et in self.edge_types],
            [self.indices[et] for et in self.edge_types], self.target or "", self.y,
            int(self.num_classes), list(self.class_names), [s["train"] for s in self.splits],
            [s["val"] for s in self.splits], [s["test"] for s in self.splits],
            [self.features_path.get(t, "") if with_features and t in self.x else ""
             for t in self.node_types],
            self._features_checked or not with_features,
            json.dumps(self.partition) if self.partition and with_features and with_partition
            else "")

    def random_link_split(self, relation, seed: int = 0, val: float = 0.05, test: float = 0.1,
                          neg_per_source: int = 0) -> Tuple["HeteroDataset", Dict[str, object]]:
        """The seeded link split of ``directgnn train --task link --target-relation
        RELATION`` (PyG's ``RandomLinkSplit`` with ``edge_types`` and ``rev_edge_types``):
        ``relation`` (``(src, rel, dst)``, "src,rel,dst" or a unique relation name) gives the
        positives; ``val`` and ``test`` fractions of them leave the message-passing graph, from
        the relation and its reverse. Returns the message-passing dataset and the split:
        ``train``, ``val``, ``test`` ([E, 2] source, destination ids), ``val_neg`` and
        ``test_neg`` (one shared pair per positive, or ``neg_per_source`` destinations per
        positive's source) and ``negatives`` (the layout)."""
        key = ",".join(relation) if isinstance(relation, (tuple, list)) else str(relation)
        with os_errors():
            indptrs, indices, link = ops.random_hetero_link_split(
                self._graph(with_features=False), key, float(val), float(test),
                int(neg_per_source), int(seed))
        graph = dataclasses.replace(self, indptr=dict(zip(self.edge_types, indptrs)),
                                    indices=dict(zip(self.edge_types, indices)))
        split = dict(zip(("train", "val", "test", "val_neg", "test_neg"), link))
        split["negatives"] = "per_source" if neg_per_source > 0 else "shared"
        return graph, split

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes a heterogeneous dataset directory (``path`` must not exist; written under a
        temporary name, then renamed), checked as the reader checks it. A partitioned dataset is
        written in its stored ids as a plain one (``directgnn partition`` writes the books)."""
        with os_errors():
            self._graph(with_partition=False).save(os.fspath(path))

    def to_pyg(self):
        """A PyG ``HeteroData``: ``x`` and ``num_nodes`` per type, ``edge_index`` per edge
        type, and on the target type ``y`` and split 0 as ``train_mask``, ``val_mask`` and
        ``test_mask``."""
        from torch_geometric.data import HeteroData
        data = HeteroData()
        for t, n in self.num_nodes.items():
            data[t].num_nodes = n
            if t in self.x:
                data[t].x = self.x[t]
        for et in self.edge_types:
            data[et].edge_index = self.edge_index(et)
        if self.target is not None and self.y is not None:
            data[self.target].y = self.y
            for name, ids in (self.splits[0].items() if self.splits else ()):
                mask = torch.zeros(self.num_nodes[self.target], dtype=torch.bool)
                mask[ids] = True
                data[self.target][f"{name}_mask"] = mask
        return data

    @staticmethod
    def from_pyg(data, target: Optional[str] = None, name: str = "pyg") -> "HeteroDataset":
        """The dataset of a PyG ``HeteroData``: its node types (``num_nodes``, ``x``), edge
        types (``edge_index``, as a CSR by destination), and the labels ``y`` of ``target``
        (default: the one type that has ``y``) with ``train_mask``/``val_mask``/``test_mask``
        as split 0 when it has all three."""
        counts = {t: int(data[t].num_nodes) for t in data.node_types}
        x = {t: _features(data[t].x, t) for t in data.node_types if "x" in data[t]}
        files = {t: npy_file(data[t].x) for t in x if npy_file(data[t].x)}
        indptr, indices = {}, {}
        for et in data.edge_types:
            indptr[et], indices[et], _ = csc(data[et].edge_index, counts[et[0]], counts[et[2]],
                                             f"data[{et}].edge_index")
        out = HeteroDataset(name, counts, x, indptr, indices, features_path=files)
        target = target if target is not None else _labelled_type(data)
        if target is not None:
            out.target, out.y = target, _labels(data[target], target)
            out.num_classes = int(out.y.max()) + 1 if out.y.numel() else 0
            masks = [data[target].get(f"{s}_mask") for s in ("train", "val", "test")]
            if all(m is not None for m in masks):
                out.splits = [{s: m.nonzero().view(-1) for s, m in
                               zip(("train", "val", "test"), masks)}]
        return out

    def __repr__(self):
        types = ", ".join(f"{t}={n}" + (f" x{tuple(self.x[t].shape[1:])}" if t in self.x else "")
                          for t, n in self.num_nodes.items())
        edges = ", ".join(f"{','.join(et)}={n}" for et, n in self.num_edges.items())
        target = "" if self.target is None else f", target={self.target!r} ({self.num_classes} " \
                                                 f"classes, {len(self.splits)} split(s))"
        return f"HeteroDataset({self.name!r}, nodes: {types}; edges: {edges}{target})"


def _features(x, node_type):
    if isinstance(x, UnifiedTensor):
        x = x.tensor  # its own memory, pinned in place: read there
    x = _as_tensor(x)
    if x.dtype not in (torch.float32, torch.float16):
        raise ValueError(f"directgnn.HeteroDataset.from_pyg: node type {node_type!r} has x of "
                         f"dtype {x.dtype}; give float32 or float16 features (x.float())")
    return x


def npy_file(x):
    """The .npy file a numpy memory map (``np.load(path, mmap_mode="r")``) maps, else ""."""
    name = getattr(x, "filename", None)
    if isinstance(x, np.memmap) and name and str(name).endswith(".npy"):
        return os.fspath(name)
    return ""


def _labelled_type(data):
    typed = [t for t in data.node_types if "y" in data[t]]
    if len(typed) > 1:
        raise ValueError(f"directgnn.HeteroDataset.from_pyg: node types {typed} all have y; "
                         "name the target type with target=")
    return typed[0] if typed else None


def _labels(store, target):
    if "y" not in store:
        raise ValueError(f"directgnn.HeteroDataset.from_pyg: target type {target!r} has no y")
    y = torch.as_tensor(store.y)
    if y.dim() == 2 and y.shape[1] == 1:
        y = y.view(-1)  # OGB's [N, 1]
    if y.is_floating_point() or y.dim() != 1:
        raise ValueError(f"directgnn.HeteroDataset.from_pyg: y of {target!r} must hold one "
                         f"integer class per node, got {y.dtype} {tuple(y.shape)}")
    return y.long()


def _from_fields(fields, checked=True) -> HeteroDataset:
    (name, types, counts, features, keys, indptrs, indices, target, labels, num_classes,
     class_names, train, val, test, files, node_ids, partition) = fields
    edge_types = [_edge_type(k) for k in keys]
    return HeteroDataset(
        name, dict(zip(types, counts)), {t: x for t, x in zip(types, features) if x is not None},
        dict(zip(edge_types, indptrs)), dict(zip(edge_types, indices)), target or None, labels,
        int(num_classes), list(class_names),
        [{"train": a, "val": b, "test": c} for a, b, c in zip(train, val, test)],
        {t: f for t, f in zip(types, files) if f}, checked,
        node_ids={t: i for t, i in zip(types, node_ids) if i is not None},
        partition=json.loads(partition) if partition else None)


def load_hetero(path: Union[str, os.PathLike], *, add_inverse_edges: bool = False,
                _part: int = -1, _parts: int = 0) -> HeteroDataset:
    """Reads a heterogeneous dataset directory (memory-mapped), OGB's heterogeneous raw layout
    (ogbn-mag) or a directory of typed CSV edge lists; ``add_inverse_edges`` adds reverse
    relations as PyG's ``ToUndirected``. ``directgnn.load`` calls this for such paths."""
    with os_errors():
        return _from_fields(ops.load_hetero(os.fspath(path), bool(add_inverse_edges), int(_part),
                                            int(_parts)))


def is_hetero(path: Union[str, os.PathLike]) -> bool:
    """Whether ``path`` is a heterogeneous source :func:`load_hetero` reads."""
    return bool(ops.is_hetero(os.fspath(path)))


def mag(scale: float = 0.01, *, seed: int = 0, feat_dim: Optional[int] = None,
        num_classes: Optional[int] = None, shape: str = "ogbn-mag") -> HeteroDataset:
    """An ogbn-mag-shaped graph made in memory (``directgnn generate mag``): papers, authors,
    institutions and fields of study with reverse relations, features on papers only, paper
    labels planted in the communities of a paper's authors, fields and citations; ``scale`` 1
    is ogbn-mag's size (128-d float32 features and 16 classes unless given). The same for a
    seed whatever the thread count. ``shape="mag240m"`` follows OGB-LSC's MAG240M instead:
    paper, author and institution, its sizes (121.8M papers at ``scale`` 1), 768-d float16
    features, 153 classes and labels on 1.15% of the papers (the others' are -1)."""
    return _from_fields(ops.mag_dataset(float(scale), int(seed), int(feat_dim or 0),
                                        int(num_classes or 0), str(shape)))


def relation_fanouts(edge_types: Sequence[EdgeType], fanouts, where: str) -> List[List[int]]:
    """Per-relation fan-out lists in ``edge_types``' order, from one list for every relation or
    a dict keyed by ``(src, rel, dst)`` (or "src,rel,dst") covering every relation."""
    if not isinstance(fanouts, Mapping):
        return [[int(f) for f in fanouts] for _ in edge_types]
    given = {_edge_type(k): [int(f) for f in v] for k, v in fanouts.items()}
    unknown = [k for k in given if k not in edge_types]
    missing = [et for et in edge_types if et not in given]
    if unknown or missing:
        raise ValueError(f"{where}: fanouts name {unknown or 'no unknown'} edge types and miss "
                         f"{missing or 'none'}; give one list for every relation of "
                         f"{list(edge_types)} (or one list for all)")
    return [given[et] for et in edge_types]


@dataclasses.dataclass
class HeteroBlock:
    """One layer's typed bipartite graphs: per edge type a :class:`Block` whose rows are the
    first ``num_dst[dst]`` nodes of its destination type and whose indices are local ids of its
    source type (< ``num_src[src]``). Each type's destination nodes are the first of its source
    nodes, so a layer reads its own inputs as ``x[t][:num_dst[t]]``."""

    num_src: Dict[str, int]
    num_dst: Dict[str, int]
    edges: Dict[EdgeType, Block]

    @property
    def edge_index_dict(self) -> Dict[EdgeType, torch.Tensor]:
        """PyG's ``edge_index_dict``: per edge type, [2, E] local (source, destination) ids."""
        return {et: b.edge_index for et, b in self.edges.items()}

    def to(self, device, non_blocking: bool = False) -> "HeteroBlock":
        return HeteroBlock(self.num_src, self.num_dst,
                           {et: b.to(device, non_blocking) for et, b in self.edges.items()})


@dataclasses.dataclass
class HeteroBatch:
    """One heterogeneous minibatch.

    Attributes:
        seeds: global ids of the target-type nodes trained on (the first ``len(seeds)`` of
            ``node[target]``).
        x: node type -> [len(node[t]), F] input features, for types with features.
        y: the seeds' labels (None without labels).
        node: node type -> global ids of every input node of that type (PyG's ``n_id``).
        blocks: one :class:`HeteroBlock` per layer, the outermost (reading the inputs) first.
    """

    seeds: torch.Tensor
    x: Dict[str, torch.Tensor]
    y: Optional[torch.Tensor]
    node: Dict[str, torch.Tensor]
    blocks: List[HeteroBlock]

    @property
    def batch_size(self) -> int:
        return self.seeds.numel()

    def to(self, device, non_blocking: bool = False) -> "HeteroBatch":
        """The batch with every tensor on ``device``."""
        move = lambda t: None if t is None else t.to(device, non_blocking=non_blocking)  # noqa
        return HeteroBatch(move(self.seeds), {t: move(v) for t, v in self.x.items()},
                           move(self.y), {t: move(v) for t, v in self.node.items()},
                           [b.to(device, non_blocking) for b in self.blocks])

    def __repr__(self):
        nodes = ", ".join(f"{t}={v.numel()}" for t, v in self.node.items())
        return f"HeteroBatch(seeds={self.batch_size}, nodes: {nodes}, layers={len(self.blocks)})"


def _hetero_sample(result, node_types, edge_types):
    """The C++ sample (input nodes per type; per block num_src, num_dst per type and indptr,
    indices per relation, flattened) as node ids per type and HeteroBlocks."""
    nodes, num_src, num_dst, indptrs, indices = result
    T, R = len(node_types), len(edge_types)
    blocks = []
    for layer in range(len(num_src) // T):
        src = dict(zip(node_types, num_src[layer * T:(layer + 1) * T]))
        dst = dict(zip(node_types, num_dst[layer * T:(layer + 1) * T]))
        edges = {et: Block(indptrs[layer * R + r], indices[layer * R + r], src[et[0]],
                           dst[et[2]]) for r, et in enumerate(edge_types)}
        blocks.append(HeteroBlock(src, dst, edges))
    return dict(zip(node_types, nodes)), blocks


class HeteroSampler:
    """Typed neighbour sampling as :class:`HeteroLoader` draws (each layer anew for all its
    destination nodes, DGL's heterogeneous blocks), from seeds of any node type; the result
    depends only on the graph, seeds, fan-outs and seed, not on the number of threads.

    Args:
        data: a :class:`HeteroDataset`.
        fanouts: as :class:`HeteroLoader`'s.
        seed: the base of every draw; each call to :meth:`sample` draws anew.
    """

    def __init__(self, data: HeteroDataset, fanouts, *, seed: int = 0):
        self.data = data
        self.fanouts = relation_fanouts(data.edge_types, fanouts, "directgnn.HeteroSampler")
        self._sampler = classes.HeteroSampler(data._graph(with_features=False), self.fanouts)
        self._seed, self._calls = int(seed), 0

    def sample(self, node_type: str, seeds, seed: Optional[int] = None) -> HeteroBatch:
        """The blocks for ``seeds`` (distinct ids of ``node_type``, or a bool mask) as a
        :class:`HeteroBatch` without features or labels. ``seed`` fixes this call's draw
        (default: the sampler's seed and a call counter)."""
        if node_type not in self.data.num_nodes:
            raise ValueError(f"directgnn.HeteroSampler: {node_type!r} is not a node type of "
                             f"{self.data.node_types}")
        seeds = _ids(seeds, self.data.num_nodes[node_type], "directgnn.HeteroSampler").long()
        if seed is None:
            self._calls += 1
            seed = self._seed * 1_000_003 + self._calls - 1
        result = self._sampler.sample(self.data.node_types.index(node_type), seeds, int(seed))
        node, blocks = _hetero_sample(result, self.data.node_types, self.data.edge_types)
        return HeteroBatch(seeds, {}, None, node, blocks)


class HeteroLoader(NativeLoader):
    """Minibatches of target-type ``seeds`` over a heterogeneous graph: typed neighbour
    sampling (each layer drawn anew, as DGL's), one feature gather per node type, each type's
    table in its own placement, and the seeds' labels, prepared ahead by C++ threads while the
    current minibatch trains.

    Args:
        data: a :class:`HeteroDataset` or a PyG ``HeteroData`` (converted by
            :meth:`HeteroDataset.from_pyg`, with ``target``; its ``x`` tensors, numpy memory
            maps and :class:`UnifiedTensor` are read in place, unless placed "device").
        seeds: ids of the target type (a tensor, numpy array or list, or a bool mask).
        fanouts: neighbours per hop, seed hop first, for every relation (``[10, 5]``), or a dict
            ``{(src, rel, dst): [10, 5], ...}`` naming every relation; -1 takes all.
        batch_size: seeds per minibatch (the last one may be smaller).
        shuffle: a new order every pass (seeded by ``seed`` and the pass number).
        prefetch: minibatches prepared ahead (0: each when asked for; "auto": 2 on a GPU or
            with a table on disk, else 0).
        workers: threads preparing them.
        seed: the base of the shuffling and of every sampling draw; a pass depends only on
            it, the pass number and the data, not on the number of threads.
        target: with a ``HeteroData``: the labelled node type (default: the one with ``y``).
        device: where batches are made: "cpu" (the default; ``batch.to(device)`` moves them),
            "auto", "cuda" or "cuda:N" ("cuda" and auto's GPU: torch's current device, as
            ``torch.cuda.set_device`` chose). On a GPU each type's rows are gathered onto it.
        features: every featured type's placement, as ``directgnn train --features``: "auto"
            (per type by its size and the memory free: GPU memory, then RAM, then disk),
            "host", "pinned", "device" or "disk" (rows read from the type's .npy as batches
            need them: a dataset directory's, or a numpy memory map's).
        features_per_type: ``{node_type: placement}`` for the types named (others take
            ``features``).
        gather: how a GPU gets rows: "auto", "cpu-copy", "zero-copy" or "aligned".
        disk_io, disk_direct: how rows on disk are read ("auto", "io_uring", "pread"; O_DIRECT).
        feature_cache_gib: one RAM cache of this many GiB shared by the types on disk, filled
            here by ``feature_cache_rank`` ("presample": a pass over ``seeds``; "degree").
        sharded, seed_assignment, group, dist_timeout, exchange_device: as
            :class:`directgnn.Loader`'s: over a partitioned dataset loaded with
            ``directgnn.load(DIR, shard=True)`` in a script with a torch.distributed process
            group, each featured type's rows come from their owners through an exchange of its
            own (docs/distributed.md, "From Python"); the seeds this rank takes are the target
            type's its part owns ("part") or its shard of every rank's shuffle ("global").
    """

    def __init__(self, data, seeds, *, fanouts, batch_size: int = 1024, shuffle: bool = True,
                 prefetch: Union[str, int] = 1, workers: int = 1, seed: int = 0,
                 target: Optional[str] = None, device: Union[str, torch.device] = "cpu",
                 features: str = "auto", features_per_type: Optional[Mapping[str, str]] = None,
                 gather: str = "auto", disk_io: str = "auto", disk_direct: bool = False,
                 feature_cache_gib: float = 0.0, feature_cache_rank: str = "presample",
                 sharded: Union[str, bool] = "auto", seed_assignment: str = "part", group=None,
                 dist_timeout: float = 300.0, exchange_device: str = "auto"):
        from .loader import _Shard
        if not isinstance(data, HeteroDataset):
            data = HeteroDataset.from_pyg(data, target=target)
        if data.target is None:
            raise ValueError("directgnn.HeteroLoader: the data has no target node type (labels "
                             "y of one type); seeds are nodes of that type")
        self.data = data
        self.target = data.target
        self.seeds = _ids(seeds, data.num_nodes[data.target], "directgnn.HeteroLoader").long()
        self.fanouts = relation_fanouts(data.edge_types, fanouts, "directgnn.HeteroLoader")
        self.batch_size, self.shuffle, self.seed = int(batch_size), shuffle, int(seed)
        per_type = ",".join(f"{t}={p}" for t, p in (features_per_type or {}).items())
        choices = {"device": str(device), "features": features, "gather": gather,
                   "disk_io": disk_io, "feature_cache_rank": feature_cache_rank,
                   "features_per_type": per_type}
        depth = -1 if prefetch == "auto" else int(prefetch)  # -1: auto
        self._shard = _Shard.of(data, sharded, seed_assignment, group, self.seeds,
                                "directgnn.HeteroLoader", data.target)
        with os_errors():
            self._loader = classes.HeteroLoader(data._graph(), self.fanouts, self.batch_size,
                                                depth, int(workers), choices, bool(disk_direct),
                                                float(feature_cache_gib))
            if self._shard:
                self._loader.shard(self._shard.group.boxed(), int(dist_timeout), len(self),
                                   self._shard.wire(self.device, exchange_device,
                                                    "directgnn.HeteroLoader"))
            # A progress line on a terminal (stderr), nothing otherwise.
            self.feature_cache = self._loader.fill_cache(self.seeds, self.seed, True)
        self._epoch = 0
        self._warn_note()

    @property
    def placements(self) -> str:
        """Where each type's table lives and how it is gathered, e.g. "paper disk (...)"."""
        return self._loader.placements()

    def __len__(self) -> int:
        count = self._shard.count if self._shard else self.seeds.numel()
        return self._loader.steps(count)


    def __repr__(self):
        return (f"HeteroLoader(target={self.target!r}, seeds={self.seeds.numel()}, "
                f"batch_size={self.batch_size}, batches={len(self)})")

    def __iter__(self) -> Iterator[HeteroBatch]:
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + self._epoch)
        if self._shard:
            order = self._shard.pass_seeds(self.seeds, self.shuffle, g)
        else:
            order = self.seeds
            if self.shuffle:
                order = self.seeds[torch.randperm(self.seeds.numel(), generator=g)]
        pass_id = self._loader.start(order, self.seed * 1_000_003 + self._epoch)
        self._epoch += 1
        types, edge_types = self.data.node_types, self.data.edge_types
        try:
            while self._loader.has_next(pass_id):
                seeds, x, y, sample = self._loader.next(pass_id)
                node, blocks = _hetero_sample(sample, types, edge_types)
                yield HeteroBatch(seeds, {t: v for t, v in zip(types, x) if v is not None}, y,
                                  node, blocks)
        finally:
            self._loader.finish(pass_id)


__all__ = ["EdgeType", "HeteroBatch", "HeteroBlock", "HeteroDataset", "HeteroLoader",
           "HeteroSampler", "csc",
           "is_hetero", "load_hetero", "mag", "relation_fanouts", "sorted_rows"]
