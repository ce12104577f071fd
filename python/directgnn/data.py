"""Datasets as Python sees them, and the project's readers."""

import dataclasses
import json
import os
from typing import Dict, List, Optional, Union

import torch

from ._ops import ops, os_errors


@dataclasses.dataclass
class Dataset:
    """A graph in CSR form, for node classification (labels, node splits), link prediction
    (link splits) or both.

    Attributes:
        name: the dataset's name.
        indptr, indices: the graph by destination (row v lists the nodes v receives messages
            from: an edge src -> dst puts src in dst's row, PyG's CSC; an undirected graph stores
            both directions). ``indptr`` is int64 [N + 1], ``indices`` int32 or int64.
        x: [N, F] node features (float32 or float16; memory-mapped for dataset directories).
        y: int64 [N] labels, -1 for unlabelled nodes; None for a dataset without labels
            (link prediction only).
        num_classes: the number of classes (0 without labels).
        directed: whether the graph was kept directed.
        splits: the dataset's stored splits, each a dict of int64 node ids under "train",
            "val" and "test" (empty when the dataset ships none).
        features_path: the ``features.npy`` of a dataset directory, which
            :class:`directgnn.Loader` reads rows from with ``features="disk"`` (None for
            datasets made in memory or read from other formats).
        edge_weight: float32 [E] edge weights in the order of ``indices`` (a dataset
            directory's ``edge_weights.npy``), or None; ``directgnn.Loader(weighted=True)``
            samples by them.
        link: the stored link split, or None: a dict of [E, 2] int64 (src, dst) positives
            under "train", "val" and "test", and the fixed evaluation negatives under
            "val_neg" and "test_neg" in the layout "negatives" names: "shared" ([M, 2] pairs
            scored against every positive, as ogbl-collab), "per_source" ([E, K] destinations
            for each positive's source, as ogbl-citation2) or "none". "eval_edges_in_graph":
            whether validation and test positives may also be edges of the graph (pairs that
            interact again, as ogbl-collab's); otherwise such a positive is refused as a leak.
            "published": whether the split is a published benchmark's, kept as published
            (``directgnn.datasets.import_ogbl`` counts its repeated positives and negatives
            that are edges); a split that is not has neither, or is refused.
        node_ids: for a dataset whose nodes ``directgnn convert --reorder`` renumbered, int64
            [N] with ``node_ids[v]`` the original id of stored node ``v`` (every array above is
            in the stored order); None when the nodes keep their original ids.
            :meth:`original_ids` and :meth:`stored_ids` translate.
        node_order: how the nodes were renumbered ("degree", "rcm", or "metis" or "random"
            when ``directgnn partition`` did), or None.
        partition: a partitioned dataset's book, or None: ``method``, ``parts``, ``offsets``
            (P + 1 stored ids: part k owns ``offsets[k]`` to ``offsets[k + 1] - 1``),
            ``nodes``, ``edges`` and ``seeds`` per part, and ``edge_cut`` (stored edges whose
            ends have different owners). :meth:`owners` maps stored ids to parts.
        shard_rank: the rank of the torch.distributed process group this dataset was loaded
            for (``directgnn.load(DIR, shard=True)``), or None: a :class:`directgnn.Loader`
            over it holds this rank's part of the feature table and fetches the other rows
            from their owners.
        feature_part: the part whose feature rows alone ``x`` holds (rows ``offsets[k]`` to
            ``offsets[k + 1] - 1``, when the table is stored by part), or None: ``x`` holds
            every node's row.
    """

    name: str
    indptr: torch.Tensor
    indices: torch.Tensor
    x: torch.Tensor
    y: Optional[torch.Tensor]
    num_classes: int
    directed: bool = False
    splits: List[dict] = dataclasses.field(default_factory=list)
    features_path: Optional[str] = None
    edge_weight: Optional[torch.Tensor] = None
    link: Optional[dict] = None
    node_ids: Optional[torch.Tensor] = None
    node_order: Optional[str] = None
    partition: Optional[dict] = None
    shard_rank: Optional[int] = None
    feature_part: Optional[int] = None

    @property
    def num_nodes(self) -> int:
        """The number of nodes."""
        return self.indptr.numel() - 1

    @property
    def num_edges(self) -> int:
        """The number of stored (directed) edges."""
        return self.indices.numel()

    def original_ids(self, ids: torch.Tensor) -> torch.Tensor:
        """The original ids of stored node ids ``ids`` (such as a batch's ``n_id``): the same
        ids when the dataset was not renumbered."""
        ids = torch.as_tensor(ids)
        return ids.clone() if self.node_ids is None else self.node_ids[ids.long()]

    def stored_ids(self, original: torch.Tensor) -> torch.Tensor:
        """The stored ids of original node ids ``original`` (to index ``x``, ``y`` or give a
        loader seeds): the same ids when the dataset was not renumbered."""
        original = torch.as_tensor(original)
        if self.node_ids is None:
            return original.clone()
        stored = torch.empty_like(self.node_ids)
        stored[self.node_ids] = torch.arange(self.num_nodes, dtype=stored.dtype)
        return stored[original.long()]

    def owners(self, ids: torch.Tensor) -> torch.Tensor:
        """The part that owns each stored node id of ``ids`` in a partitioned dataset (a
        search in the book's offsets)."""
        if self.partition is None:
            raise ValueError(f"directgnn: dataset {self.name!r} is not partitioned; "
                             "make one with `directgnn partition`")
        starts = torch.tensor(self.partition["offsets"][1:-1], dtype=torch.long)
        return torch.searchsorted(starts, torch.as_tensor(ids).long(), right=True)

    def split(self, k: int = 0) -> Dict[str, torch.Tensor]:
        """Split ``k`` as a dict of "train", "val" and "test" node ids."""
        if not self.splits:
            raise ValueError(f"directgnn: dataset {self.name!r} has no stored splits")
        if not 0 <= k < len(self.splits):
            raise ValueError(f"directgnn: dataset {self.name!r} has {len(self.splits)} split(s); "
                             f"split {k} does not exist")
        return self.splits[k]

    def random_split(self, seed: int = 0) -> Dict[str, torch.Tensor]:
        """The seeded protocol of ``directgnn train`` for datasets without a split (Shchur et
        al. 2018): 20 labelled nodes per class for training, 500 for validation, 1000 for
        testing, as a dict of "train", "val" and "test" node ids. A renumbered dataset draws
        by original ids (the nodes drawn before renumbering) and returns stored ids."""
        if self.y is None:
            raise ValueError(f"directgnn: dataset {self.name!r} has no labels, so it has no node "
                             "split; use random_link_split for link prediction")
        train, val, test = ops.random_split(self.y, self.num_classes, int(seed), self.node_ids)
        return {"train": train, "val": val, "test": test}

    def random_link_split(self, seed: int = 0, val: float = 0.05, test: float = 0.1,
                          neg_per_source: int = 0) -> "Dataset":
        """The seeded link split of ``directgnn train --task link`` and ``directgnn convert
        --link-split 0.85,0.05,0.1`` (PyG's ``RandomLinkSplit``): the graph's unique edges
        (each undirected pair once, self-loops left out, multi-edges as one) shuffled; the
        ``val`` and ``test`` fractions become validation and test positives and leave the
        message-passing graph. Fixed negatives for validation and test are no edge of the
        whole graph: one shared pair per positive (``neg_per_source=0``, PyG's ratio of 1) or
        ``neg_per_source`` destinations for each positive's source. Returns a new dataset over
        the message-passing graph (without edge weights) with ``link`` set::

            import directgnn
            ds = directgnn.datasets.synthetic(500, 6, 8)
            split = ds.random_link_split(seed=0)
            print(split.link["train"].shape, split.link["val_neg"].shape, split.num_edges)
        """
        indptr, indices, link = ops.random_link_split(
            self.indptr, self.indices, self.directed, float(val), float(test),
            int(neg_per_source), int(seed))
        out = dataclasses.replace(self, indptr=indptr, indices=indices, edge_weight=None)
        out.link = _link_dict(link, "per_source" if neg_per_source > 0 else "shared")
        return out

    def to_pyg(self):
        """A PyG ``Data``: ``x``, ``edge_index`` ([2, E] sources, destinations), ``num_nodes``,
        and where the dataset has them ``y``, ``edge_weight``, the node splits as
        ``train_mask``, ``val_mask`` and ``test_mask`` (one split: [N]; several: [N, S], one
        column per split, as PyG's WikiCS) and the link split: ``{train,val,test}_pos_edge_index``
        ([2, E]), with shared negatives ``{val,test}_neg_edge_index`` ([2, M]) or per-source
        ones ``{val,test}_neg_dst`` ([E, K] destinations for each positive's source). A
        renumbered dataset's ``node_ids`` comes along: PyG's loaders slice it with the nodes, so
        a batch's ``node_ids`` are their original ids."""
        from torch_geometric.data import Data
        dst = torch.repeat_interleave(torch.arange(self.num_nodes), self.indptr.diff())
        data = Data(x=self.x, edge_index=torch.stack([self.indices.long(), dst]),
                    num_nodes=self.num_nodes)
        if self.y is not None:
            data.y = self.y
        if self.edge_weight is not None:
            data.edge_weight = self.edge_weight
        if self.node_ids is not None:
            data.node_ids = self.node_ids
        for name in (("train", "val", "test") if self.splits else ()):
            masks = torch.zeros(self.num_nodes, len(self.splits), dtype=torch.bool)
            for k, split in enumerate(self.splits):
                masks[split[name], k] = True
            data[f"{name}_mask"] = masks[:, 0] if len(self.splits) == 1 else masks
        if self.link is not None:
            for name in ("train", "val", "test"):
                data[f"{name}_pos_edge_index"] = self.link[name].t().contiguous()
            negatives = self.link.get("negatives", "none")
            for name in (("val", "test") if negatives != "none" else ()):
                neg = self.link[name + "_neg"]
                if negatives == "shared":
                    data[f"{name}_neg_edge_index"] = neg.t().contiguous()
                else:
                    data[f"{name}_neg_dst"] = neg
        return data

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the dataset as a dataset directory (``path`` must not exist; written under a
        temporary name, then renamed), checked as a loader checks it: graph, features,
        labels, node splits, edge weights and link split."""
        link, negatives, repeats, published = [], "", False, False
        if self.link is not None:
            repeats = bool(self.link.get("eval_edges_in_graph", False))
            published = bool(self.link.get("published", False))
            negatives = self.link.get("negatives", "none")
            link = [self.link[k] for k in ("train", "val", "test")]
            if negatives != "none":
                link += [self.link["val_neg"], self.link["test_neg"]]
        with os_errors():
            ops.save_dataset(os.fspath(path), self.name, self.indptr, self.indices, self.x,
                             self.y, self.directed, [s["train"] for s in self.splits],
                             [s["val"] for s in self.splits], [s["test"] for s in self.splits],
                             self.edge_weight, link, negatives, repeats, published,
                             self.node_ids, self.node_order or "")

    @property
    def train_idx(self) -> torch.Tensor:
        """The training node ids of split 0."""
        return self.split(0)["train"]

    @property
    def val_idx(self) -> torch.Tensor:
        """The validation node ids of split 0."""
        return self.split(0)["val"]

    @property
    def test_idx(self) -> torch.Tensor:
        """The test node ids of split 0."""
        return self.split(0)["test"]

    def __repr__(self):
        link = "" if self.link is None else f", link={self.link['train'].shape[0]} train edges"
        return (f"Dataset({self.name!r}, nodes={self.num_nodes}, edges={self.num_edges}, "
                f"features={tuple(self.x.shape)} {self.x.dtype}, classes={self.num_classes}, "
                f"splits={len(self.splits)}{link})")


def _link_dict(tensors, negatives, eval_edges_in_graph=False, published=False):
    """The C++ link list (train, val, test[, val_neg, test_neg]) as Dataset.link, or None."""
    if not tensors:
        return None
    out = dict(zip(("train", "val", "test", "val_neg", "test_neg"), tensors))
    out["negatives"] = negatives
    out["eval_edges_in_graph"] = bool(eval_edges_in_graph)
    out["published"] = bool(published)
    return out


def _from_tuple(t):
    (name, indptr, indices, x, y, num_classes, directed, train, val, test, features_path,
     edge_weight, link, negatives, eval_edges_in_graph, published, node_ids, node_order,
     partition, feature_part) = t
    splits = [{"train": a, "val": b, "test": c} for a, b, c in zip(train, val, test)]
    return Dataset(name, indptr, indices, x, y, int(num_classes), bool(directed), splits,
                   features_path or None, edge_weight,
                   _link_dict(link, negatives, eval_edges_in_graph, published), node_ids,
                   node_order or None, json.loads(partition) if partition else None,
                   None, int(feature_part) if feature_part >= 0 else None)


def load(path: Union[str, os.PathLike], *, keep_self_loops: bool = False,
         add_inverse_edges: bool = False, shard: bool = False,
         _skip_link_split_files: bool = False) -> Union[Dataset, "HeteroDataset"]:
    """Reads a dataset with the project's own readers, as ``directgnn train --dataset`` does.

    ``path`` is a dataset directory (written by ``directgnn convert``/``generate``; its
    features are memory-mapped, not read), an ``.npz`` file (gnn-benchmark or numpy savez
    layout) or an OGB raw directory. A heterogeneous source (a heterogeneous dataset
    directory, OGB's heterogeneous raw layout, typed CSV edge lists) gives a
    :class:`directgnn.HeteroDataset` (self-loops are always kept there). A file that cannot be
    read raises OSError (FileNotFoundError when it is missing); one whose content is wrong a
    RuntimeError naming the file, the field and the fix.

    ``shard=True``, in a script whose torch.distributed process group is made (under
    ``torchrun``): ``path`` is a partitioned dataset (``directgnn partition``) with one part
    per rank, and this rank loads only its part's feature rows when the table is stored by
    part (``feature_part``; the graph and labels are whole). A :class:`directgnn.Loader` over
    it fetches the other rows from their owners (docs/distributed.md, "From Python"); a
    heterogeneous one loads its part of every featured type's table, for a
    :class:`directgnn.HeteroLoader`.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"directgnn.load: {path} does not exist")
    from .hetero import is_hetero, load_hetero
    rank, ranks = _shard_rank(path) if shard else (-1, 0)
    if shard:
        # Checked before loading: with other parts, the load would join every part's rows.
        _check_parts(path, ranks, _book_parts(path))
    if is_hetero(path):
        data = load_hetero(path, add_inverse_edges=add_inverse_edges, _part=rank, _parts=ranks)
        if shard:
            data.shard_rank = rank
        return data
    with os_errors():
        data = _from_tuple(ops.load_dataset(path, keep_self_loops, add_inverse_edges,
                                            _skip_link_split_files, rank, ranks))
    if shard:
        _check_parts(path, ranks, (data.partition or {}).get("parts"))
        data.shard_rank = rank
    return data


def _book_parts(path):
    """The parts of a dataset directory's partition book, None when it has none; False when
    meta.json cannot be read here (the load then says why)."""
    try:
        with open(os.path.join(path, "meta.json")) as f:
            meta = json.load(f)
        if meta.get("kind") == "heterogeneous":  # a book per type, every one with the parts
            return ((meta.get("node_types") or [{}])[0].get("partition") or {}).get("parts")
        return (meta.get("partition") or {}).get("parts")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, AttributeError):
        return False


def _check_parts(path, ranks, parts):
    if parts is False or parts == ranks:
        return
    raise ValueError(f"directgnn.load(shard=True): {path} "
                     + ("is not partitioned" if parts is None else f"has {parts} parts")
                     + f" and the process group {ranks} ranks; write one part per rank with "
                     f"`directgnn partition {path} OUT --parts {ranks}`")


def _shard_rank(path):
    """This process's rank and the group's size, for load(shard=True)."""
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError(f"directgnn.load({path!r}, shard=True): torch.distributed has no "
                           "process group; call torch.distributed.init_process_group() first "
                           "(torchrun sets the environment it reads)")
    return dist.get_rank(), dist.get_world_size()
