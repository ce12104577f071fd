"""directgnn.pyg on heterogeneous graphs: the typed graph of a ``HeteroData``, a directgnn
:class:`~directgnn.HeteroDataset` or a ``(FeatureStore, GraphStore)`` pair with edge types, and
PyG's heterogeneous draw on directgnn's C++ sampler (torch.classes.directgnn.HeteroPygSampler).
"""

import copy
import math

import numpy as np
import torch
from torch_geometric.data import GraphStore as _GraphStore
from torch_geometric.data import HeteroData, remote_backend_utils
from torch_geometric.sampler import HeteroSamplerOutput
from torch_geometric.sampler.base import NumNeighbors

from ._ops import classes
from ._pyg_stores import FeatureStore, own_rows
from .hetero import HeteroDataset, csc


def is_hetero(data, num_neighbors=None) -> bool:
    """Whether ``data`` (with these ``num_neighbors``) asks for heterogeneous sampling."""
    if isinstance(data, (HeteroData, HeteroDataset)) or isinstance(num_neighbors, dict):
        return True
    if isinstance(data, tuple) and isinstance(data[1], _GraphStore):
        return any(a.edge_type is not None for a in data[1].get_all_edge_attrs())
    return False


def _pair_graph(feature_store, graph_store):
    """Node types, counts and per edge type ``(indptr, indices, perm)`` of a store pair: a
    stored CSC in place, other layouts converted by PyG's ``GraphStore.csc``."""
    attrs = graph_store.get_all_edge_attrs()
    edge_types = sorted({a.edge_type for a in attrs})
    node_types = sorted({t for et in edge_types for t in (et[0], et[2])} | {
        a.group_name for a in feature_store.get_all_tensor_attrs()
        if isinstance(a.group_name, str)})
    counts = {t: remote_backend_utils.num_nodes(feature_store, graph_store, t)
              for t in node_types}
    typed = getattr(graph_store, "typed_csc_in_place", None)
    if typed is not None:
        graphs = typed()
    else:
        rows, colptrs, perms = graph_store.csc()
        graphs = {et: (colptrs[et].cpu(), rows[et].cpu(), perms.get(et)) for et in edge_types}
    return node_types, counts, edge_types, graphs


def _hetero_data_counts(data):
    """The node types of a ``HeteroData`` (its node stores, then types met only in edge types)
    and their node counts; a type whose count PyG cannot tell is named with the fix."""
    stored = list(data.node_types)
    node_types = stored + sorted({t for et in data.edge_types for t in (et[0], et[2])}
                                 - set(stored))
    counts = {}
    for t in node_types:
        n = data[t].num_nodes if t in stored else None
        if n is None:
            raise ValueError(f"directgnn.pyg: node type '{t}' has no number of nodes (no 'x' "
                             f"and no 'num_nodes' to tell it by); set "
                             f"data['{t}'].num_nodes = N")
        counts[t] = int(n)
    return node_types, counts


def typed_graph(data):
    """``(node_types, counts, edge_types, {edge_type: (indptr, indices, perm)})`` of ``data``:
    each relation's CSR by destination as the C++ sampler reads it (its edge ids are CSR
    positions); ``perm`` maps a CSR position to the edge's id in ``data`` (None: the same)."""
    if isinstance(data, HeteroData):
        node_types, counts = _hetero_data_counts(data)
        edge_types = data.edge_types
        graphs = {et: csc(data[et].edge_index, counts[et[0]], counts[et[2]],
                          f"data[{et}].edge_index") for et in edge_types}
        return node_types, counts, edge_types, graphs
    if isinstance(data, HeteroDataset):
        node_types, edge_types, counts = data.node_types, data.edge_types, data.num_nodes
        graphs = {et: (data.indptr[et], data.indices[et], None) for et in edge_types}
    elif isinstance(data, tuple):
        node_types, counts, edge_types, graphs = _pair_graph(*data)
    else:
        raise TypeError("directgnn.pyg: heterogeneous sampling takes a HeteroData, a directgnn "
                        "HeteroDataset or a (FeatureStore, GraphStore) pair with edge types, "
                        f"got {type(data).__name__}")
    graphs = {et: (indptr.cpu(), indices.cpu(), perm)
              for et, (indptr, indices, perm) in graphs.items()}
    return list(node_types), dict(counts), list(edge_types), graphs


def _fanouts(num_neighbors, edge_types):
    """PyG's ``num_neighbors`` (a list for every edge type, a dict by edge type, or a
    ``NumNeighbors``) as one list per edge type, resolved by PyG's own rules."""
    if isinstance(num_neighbors, NumNeighbors):
        num_neighbors = NumNeighbors(num_neighbors.values, num_neighbors.default)
    else:
        num_neighbors = NumNeighbors(num_neighbors)
    values = num_neighbors.get_values(edge_types)
    return [[int(f) for f in values[et]] for et in edge_types]


class HeteroDraw:
    """PyG's heterogeneous neighbour sampling: each node's neighbours drawn once per edge type
    into its type, at the hop after it is first reached (``num_neighbors[edge_type][hop]``; 0
    draws none, -1 all), uniformly without replacement; the nodes of each type listed seeds
    first; ``row``/``col`` per edge type the local ids of each edge's source (of the edge
    type's source type) and destination, messages flowing ``row -> col``; ``edge`` its id."""

    def __init__(self, data, num_neighbors, seed=0):
        node_types, counts, edge_types, graphs = typed_graph(data)
        self.node_types, self.edge_types, self.num_nodes = node_types, edge_types, counts
        self.perm = {et: graphs[et][2] for et in edge_types}
        fanouts = _fanouts(num_neighbors, edge_types)
        self._args = (node_types, [counts[t] for t in node_types], edge_types,
                      [graphs[et][0] for et in edge_types], [graphs[et][1] for et in edge_types],
                      fanouts)
        self._seed, self._calls = int(seed), 0
        self._build()

    def _build(self):
        node_types, counts, edge_types, indptrs, indices, fanouts = self._args
        graph = classes.HeteroGraph("pyg", node_types, counts, [None] * len(node_types),
                                    [",".join(et) for et in edge_types], indptrs, indices, "",
                                    None, 0, [], [], [], [], [], True, "")
        hops = len(fanouts[0]) if fanouts else 0
        self._sampler = classes.HeteroPygSampler(graph, fanouts) if hops else None

    def __getstate__(self):  # worker processes rebuild the C++ sampler over the same tensors
        state = dict(self.__dict__)
        del state["_sampler"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._build()

    def sample(self, index) -> HeteroSamplerOutput:
        """PyG's ``HeteroSamplerOutput`` for ``index`` (a ``NodeSamplerInput`` with
        ``input_type``)."""
        if index.input_type not in self.node_types:
            raise ValueError(f"directgnn.pyg: input node type {index.input_type!r} is not among "
                             f"the graph's {self.node_types}")
        return self.sample_typed({index.input_type: index.node.long()},
                                 (index.input_id, index.time))

    def sample_typed(self, seeds, metadata) -> HeteroSamplerOutput:
        """PyG's ``HeteroSamplerOutput`` from seeds of several node types: ``seeds`` maps a node
        type to its distinct ids (types left out have none), each type's seeds first among its
        nodes; ``metadata`` is passed through."""
        self._calls += 1
        if self._sampler is None:  # no hops: the batch is its seeds
            return self._seeds_only(seeds, metadata)
        none = torch.empty(0, dtype=torch.int64)
        typed = [seeds[t].cpu() if t in seeds else none for t in self.node_types]
        node, row, col, edge, hop_nodes, hop_edges = self._sampler.sample_typed(
            typed, self._seed * 1_000_003 + self._calls - 1)
        return HeteroSamplerOutput(
            node=dict(zip(self.node_types, node)), row=dict(zip(self.edge_types, row)),
            col=dict(zip(self.edge_types, col)), edge=dict(zip(self.edge_types, edge)),
            num_sampled_nodes=dict(zip(self.node_types, hop_nodes)),
            num_sampled_edges=dict(zip(self.edge_types, hop_edges)), metadata=metadata)

    def _seeds_only(self, seeds, metadata):
        none = torch.empty(0, dtype=torch.int64)
        node = {t: seeds.get(t, none) for t in self.node_types}
        return HeteroSamplerOutput(
            node=node, row={et: none for et in self.edge_types},
            col={et: none for et in self.edge_types}, edge={et: none for et in self.edge_types},
            num_sampled_nodes={t: [v.numel()] for t, v in node.items()},
            num_sampled_edges={et: [] for et in self.edge_types}, metadata=metadata)


def sample_from_edges(draw: HeteroDraw, index, neg_sampling) -> HeteroSamplerOutput:
    """PyG's heterogeneous link sample of ``index`` (an ``EdgeSamplerInput`` whose
    ``input_type`` is the edge type ``(src, rel, dst)``): the positives ``index.row ->
    index.col`` and their negatives seed ``draw``.

    Negatives come from PyG's ``NegativeSampling.sample`` over the endpoint's type (binary:
    ``ceil(amount * B)`` sources then as many destinations, labelled 0 after the positives'
    labels, ones when none are given; triplet: ``amount`` destinations per source). The seeds
    of the source type are the distinct sources, those of the destination type the distinct
    destinations (sorted), or one list of both when the two types are the same. ``metadata``:
    ``(input_id, edge_label_index, edge_label, None)``, or for triplets ``(input_id,
    src_index, dst_pos_index, dst_neg_index, None)``, as local ids among the sampled nodes of
    their type."""
    src_type, dst_type = index.input_type[0], index.input_type[-1]
    for t in (src_type, dst_type):
        if t not in draw.node_types:
            raise ValueError(f"directgnn.pyg: edge type {index.input_type!r} joins node type "
                             f"{t!r}, which is not among the graph's {draw.node_types}")
    src, dst, label = index.row.long(), index.col.long(), index.label
    num_pos = src.numel()
    triplet = neg_sampling is not None and neg_sampling.is_triplet()
    if triplet and label is not None:
        raise ValueError("directgnn.pyg: edge_label must be None for triplet negative sampling "
                         "(as in PyG)")
    if neg_sampling is not None:
        num_neg = math.ceil(num_pos * neg_sampling.amount)
        if not triplet:  # PyG draws the sources first
            src = torch.cat([src, neg_sampling.sample(num_neg, "src", draw.num_nodes[src_type])])
            label = torch.ones(num_pos) if label is None else label
            label = torch.cat([label, label.new_zeros((num_neg, ) + label.shape[1:])])
        dst = torch.cat([dst, neg_sampling.sample(num_neg, "dst", draw.num_nodes[dst_type])])
    if src_type != dst_type:
        src_seeds, src_local = src.unique(return_inverse=True)
        dst_seeds, dst_local = dst.unique(return_inverse=True)
        seeds = {src_type: src_seeds, dst_type: dst_seeds}
    else:
        both, local = torch.cat([src, dst]).unique(return_inverse=True)
        seeds = {src_type: both}
        src_local, dst_local = local[:src.numel()], local[src.numel():]
    if triplet:
        neg_local = dst_local[num_pos:].view(num_pos, -1).squeeze(-1)
        metadata = (index.input_id, src_local, dst_local[:num_pos], neg_local, None)
    else:
        metadata = (index.input_id, torch.stack([src_local, dst_local]), label, None)
    return draw.sample_typed(seeds, metadata)


def node_features(data):
    """``{(node type, name): tensor}``: the node-level tensors and arrays of a ``HeteroData``
    (one row per node of their type along dimension 0)."""
    out = {}
    for t in data.node_types:
        store = data[t]
        n = store.num_nodes
        for name in store.node_attrs():
            value = store[name]
            if (isinstance(value, (torch.Tensor, np.ndarray)) and value.ndim >= 1
                    and value.shape[0] == n and data.__cat_dim__(name, value, store) == 0):
                out[(t, name)] = value
    return out


def split_node_features(data, device, placements=None):
    """A feature store over a ``HeteroData``'s node features (group name = node type; placed
    by ``placements``, FeatureStore's keywords), and a shallow copy of ``data`` holding
    everything else (edges, their attributes, node counts)."""
    features = node_features(data)
    store = FeatureStore(device, **(placements or {}))
    rest = copy.copy(data)
    for (t, name), value in features.items():
        store.put_tensor(value, group_name=t, attr_name=name, index=None)
        del rest[t][name]
    for t in data.node_types:
        if "num_nodes" in data[t]:  # as given: PyG's batches carry it only then
            rest[t].num_nodes = data[t].num_nodes
    store.check_placements()
    return store, rest


def put_dataset(feature_store, graph_store, data: HeteroDataset):
    """A directgnn ``HeteroDataset`` into the store pair: ``x`` per type with features (this
    rank's part of each, sharded, for a dataset loaded with ``shard=True``), ``y`` on the target
    type, each relation's CSR in place as PyG's CSC ``(row, colptr)``."""
    sharded = getattr(data, "shard_rank", None) is not None
    for t, x in data.x.items():
        feature_store._files[(t, "x")] = data.features_path.get(t, "")
        if sharded:
            # directgnn.load(DIR, shard=True): this rank's part of each type's table, the
            # others' rows fetched from their owners.
            offsets = data.partition["offsets"][t]
            feature_store.put_sharded(own_rows(x, offsets, data.shard_rank, data.num_nodes[t]),
                                      offsets, "x", group_name=t)
        else:
            feature_store.put_tensor(x, group_name=t, attr_name="x", index=None)
    if data.target is not None and data.y is not None:
        feature_store.put_tensor(data.y, group_name=data.target, attr_name="y", index=None)
    for et in data.edge_types:
        graph_store.put_edge_index((data.indices[et], data.indptr[et]), edge_type=et,
                                   layout="csc", size=(data.num_nodes[et[0]],
                                                       data.num_nodes[et[2]]))


def put_hetero_data(feature_store, graph_store, data: HeteroData):
    """A ``HeteroData`` into the store pair: node features by type, each edge type's COO
    ``edge_index`` sorted into a CSC once (its permutation kept in ``edge_permutations``)."""
    for (t, name), value in node_features(data).items():
        feature_store.put_tensor(value, group_name=t, attr_name=name, index=None)
    for et in data.edge_types:
        n_src, n_dst = data[et[0]].num_nodes, data[et[2]].num_nodes
        indptr, indices, perm = csc(data[et].edge_index, n_src, n_dst, f"data[{et}].edge_index")
        graph_store.put_edge_index((indices, indptr), edge_type=et, layout="csc",
                                   size=(n_src, n_dst))
        graph_store.edge_permutations[et] = perm
