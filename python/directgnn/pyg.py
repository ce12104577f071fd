"""directgnn behind PyG's loaders: a feature store, a graph store and a neighbour sampler.

PyG's ``NeighborLoader`` accepts a ``(FeatureStore, GraphStore)`` pair and a sampler of its
own choosing. With directgnn's, feature rows come from tables pinned in place (GPU threads
read them over PCIe when the store's device is a GPU), and sampling needs neither pyg-lib nor
torch-sparse. Switching is one line::

    import torch
    from torch_geometric.datasets import FakeDataset
    # from torch_geometric.loader import NeighborLoader    # before
    from directgnn.pyg import NeighborLoader               # after
    data = FakeDataset(avg_num_nodes=500)[0]               # any PyG Data
    data.train_mask = torch.rand(data.num_nodes) < 0.5
    loader = NeighborLoader(data, num_neighbors=[10, 10], batch_size=64,
                            input_nodes=data.train_mask, shuffle=True)
    batch = next(iter(loader))                             # PyG's batch: x, y, edge_index, n_id

Heterogeneous graphs too: a ``HeteroData`` (or a directgnn ``HeteroDataset``, or stores with
node types and edge types) with ``input_nodes=("paper", ids)`` gives PyG's heterogeneous
batches, ``x_dict`` and ``edge_index_dict`` ready for ``to_hetero`` models
(examples/pyg_hetero.py); ``LinkNeighborLoader`` takes them with
``edge_label_index=(edge_type, index)``.
"""

import copy
import math

import torch

try:
    from torch_geometric.data import Data, HeteroData
    from torch_geometric.data import GraphStore as _GraphStore
    from torch_geometric.loader import LinkNeighborLoader as _LinkNeighborLoader
    from torch_geometric.loader import NeighborLoader as _NeighborLoader
    from torch_geometric.sampler import BaseSampler, NodeSamplerInput, SamplerOutput
    from torch_geometric.sampler.base import SubgraphType
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError("directgnn.pyg needs PyG: pip install torch-geometric (it is pure "
                      "Python; pyg-lib and torch-sparse are not needed)") from error

from . import _pyg_hetero
from ._pyg_stores import HETERO as _HETERO
from ._pyg_stores import FeatureStore, GraphStore, coo_to_csc, node_features, stores
from ._ops import ops
from .data import Dataset
from .hetero import HeteroDataset
from .loader import _keep_batch_memory
from .sampler import NeighborSampler as _Sampler

__all__ = ["FeatureStore", "GraphStore", "LinkNeighborLoader", "NeighborLoader",
           "NeighborSampler", "stores"]


def _csc(data):
    """``(colptr, row, perm)`` on the CPU of a homogeneous graph from any PyG ``GraphStore``
    (directgnn's in place), a ``(FeatureStore, GraphStore)`` pair, a ``Data`` or a directgnn
    dataset."""
    if isinstance(data, tuple):
        data = data[1]
    if isinstance(data, GraphStore):
        colptr, row = data.csc_in_place()
        return colptr, row, data.edge_permutation
    if isinstance(data, Data):  # before GraphStore: a Data is one too, and sorts a copy
        if data.edge_index is None:  # nodes only: a graph without edges
            return torch.zeros(data.num_nodes + 1, dtype=torch.int64), torch.empty(
                0, dtype=torch.int64), None
        return coo_to_csc(data.edge_index, data.num_nodes)
    if isinstance(data, _GraphStore):
        attrs = data.get_all_edge_attrs()
        if not attrs:
            raise ValueError(f"directgnn.pyg: the graph store {type(data).__name__} holds no "
                             "edge index")
        if any(attr.edge_type is not None for attr in attrs):
            raise NotImplementedError(_HETERO)
        row, colptr, perm = data.csc()
        return colptr.cpu(), row.cpu(), perm
    if isinstance(data, Dataset):
        return data.indptr, data.indices, None
    raise TypeError("directgnn.pyg: expected a GraphStore, a (FeatureStore, GraphStore) pair, a "
                    f"torch_geometric Data or a directgnn Dataset, got {type(data).__name__}")


class NeighborSampler(BaseSampler):
    """PyG's ``BaseSampler`` running directgnn's sampler with PyG's semantics.

    Seeds come first in ``node``; each node's neighbours are drawn once, at the hop that first
    reaches it (uniformly without replacement, or by edge weight); ``num_sampled_nodes`` and
    ``num_sampled_edges`` count them per hop, so ``trim_to_layer`` applies; edges are
    directed from the neighbour (``row``) to the node it was drawn for (``col``), and ``edge``
    holds their ids.

    On a heterogeneous graph (a ``HeteroData``, a directgnn ``HeteroDataset`` or a store pair
    with edge types) it returns PyG's ``HeteroSamplerOutput``: ``node`` per node type (the
    input type's seeds first), ``row``/``col``/``edge`` per edge type ``(src, rel, dst)`` (the
    source's local id among ``node[src]``, the destination's among ``node[dst]``: messages flow
    ``row -> col``, as ``edge_index = [row, col]``), ``num_sampled_nodes`` per node type and
    ``num_sampled_edges`` per edge type, hop by hop. Each node's neighbours in each edge type
    into its type are drawn once, at the hop after it is first reached, up to
    ``num_neighbors[edge_type][hop]`` (0: none). The CPU sampler only, uniform, and
    ``subgraph_type`` "directional" or "bidirectional". Link sampling there seeds the edge
    type's source type with the input edges' (and negatives') distinct sources and its
    destination type with their distinct destinations (one list of both when the types are
    the same), as PyG's ``edge_sample``.

    Args:
        data: a ``GraphStore`` (directgnn's, read in place, or any other PyG graph store), a
            ``(FeatureStore, GraphStore)`` pair, a PyG ``Data`` or ``HeteroData``, or a
            directgnn dataset (homogeneous or heterogeneous).
        num_neighbors: neighbours per hop, seed hop first; -1 takes every neighbour. For a
            typed graph, one list for every edge type or a dict by edge type (PyG's rules).
        device: "cpu" (the CPU sampler) or "cuda[:N]" (the GPU sampler).
        graph: where the GPU sampler reads the graph: "pinned" (in place) or "device".
        seed: the base of every draw.
        weight_attr: the edge attribute holding edge weights (PyG's ``weight_attr``): each
            neighbour is drawn with probability proportional to its edge's weight.
        subgraph_type: PyG's: "directional" (the sampled edges), "bidirectional" (those and
            their reverses, made as PyG makes them) or "induced" (every edge among the sampled
            nodes, without per-hop counts, as PyG).
    """

    def __init__(self, data, num_neighbors, *, device="cpu", graph="pinned", seed=0,
                 weight_attr=None, subgraph_type="directional"):
        self.subgraph_type = SubgraphType(subgraph_type)
        self._hetero = None
        if _pyg_hetero.is_hetero(data, num_neighbors):
            _check_hetero(device, weight_attr, self.subgraph_type)
            self._hetero = _pyg_hetero.HeteroDraw(data, num_neighbors, seed=seed)
            self.num_neighbors = num_neighbors
            return
        colptr, row, self._perm = _csc(data)
        weights = None if weight_attr is None else _edge_weights(data, weight_attr, self._perm)
        self._args = (colptr, row, list(getattr(num_neighbors, "values", num_neighbors)),
                      str(device), graph, int(seed), weights)
        self._build()

    def _build(self):
        colptr, row, fanouts, device, graph, seed, weights = self._args
        self.num_neighbors = fanouts
        if not fanouts:  # no hops (PyG's num_neighbors=[]): a batch is its seeds alone
            self._sampler = None
            return
        self._sampler = _Sampler(colptr, row, fanouts, device=device, graph=graph, seed=seed,
                                 mode="pyg", weights=weights,
                                 edge_ids=self.subgraph_type != SubgraphType.induced)

    def __getstate__(self):  # worker processes rebuild the C++ sampler over the same tensors
        if self._hetero is not None:
            return {"hetero": self._hetero, "subgraph_type": self.subgraph_type,
                    "num_neighbors": self.num_neighbors}
        return {"args": self._args, "perm": self._perm, "subgraph_type": self.subgraph_type}

    def __setstate__(self, state):
        self.subgraph_type = state["subgraph_type"]
        self._hetero = state.get("hetero")
        if self._hetero is not None:
            self.num_neighbors = state["num_neighbors"]
            return
        self._args, self._perm = state["args"], state["perm"]
        self._build()

    @property
    def is_hetero(self) -> bool:
        """Whether the graph sampled is heterogeneous."""
        return self._hetero is not None

    @property
    def num_nodes(self):
        """The number of nodes of the graph sampled (per node type for a typed graph)."""
        if self._hetero is not None:
            return dict(self._hetero.num_nodes)
        return self._args[0].numel() - 1

    @property
    def edge_permutation(self):
        """CSC position to edge id (per edge type for a typed graph; None where the same)."""
        return self._hetero.perm if self._hetero is not None else self._perm

    def sample_from_nodes(self, index, **kwargs):
        if index.time is not None:
            raise NotImplementedError("directgnn.pyg.NeighborSampler: temporal sampling "
                                      "(input_time, time_attr) is not supported")
        if self._hetero is not None:
            out = self._hetero.sample(index)
            if self.subgraph_type == SubgraphType.bidirectional:
                out = out.to_bidirectional()
            return out
        metadata = (index.input_id, index.time)
        if self._sampler is None:
            node, none = index.node.long(), torch.empty(0, dtype=torch.int64)
            return SamplerOutput(node=node, row=none, col=none, edge=none,
                                 num_sampled_nodes=[node.numel()], num_sampled_edges=[],
                                 metadata=metadata)
        if self.subgraph_type == SubgraphType.induced:
            node = self._sampler._draw(index.node)[0]
            colptr, row = self._args[:2]
            src, dst, edge = ops.induced_subgraph(colptr, row, node.cpu())
            return SamplerOutput(node=node, row=src.to(node.device), col=dst.to(node.device),
                                 edge=edge.to(node.device), metadata=metadata)
        # PyG's fields straight from C++: no Sample objects, no per-field torch calls.
        node, row, col, edge, hop_nodes, hop_edges = self._sampler._draw_pyg(index.node)
        out = SamplerOutput(node=node, row=row, col=col, edge=edge,
                            num_sampled_nodes=hop_nodes, num_sampled_edges=hop_edges,
                            metadata=metadata)
        if self.subgraph_type == SubgraphType.bidirectional:
            out = out.to_bidirectional()
        return out

    def sample_from_edges(self, index, neg_sampling=None):
        """PyG's link-prediction sample: the input edges (``index.row`` -> ``index.col``) and
        their negatives seed the neighbour sampler, as PyG's ``edge_sample`` does. Negatives
        are drawn by PyG's own ``NegativeSampling.sample`` (binary: ``ceil(amount * B)``
        random pairs labelled 0; triplet: ``amount`` destinations per source), so their
        distribution and ``weight`` are PyG's; the seeds are the sorted distinct endpoints;
        ``metadata`` holds ``(input_id, edge_label_index, edge_label, None)`` or, for
        triplets, ``(input_id, src_index, dst_pos_index, dst_neg_index, None)``. On a typed
        graph ``index.input_type`` is the edge type ``(src, rel, dst)``: negatives are drawn
        over each endpoint's type, and the seeds and local ids are per type (see the class
        docstring)."""
        if index.time is not None:
            raise NotImplementedError("directgnn.pyg.NeighborSampler: temporal link sampling "
                                      "(edge_label_time) is not supported")
        if self._hetero is not None:
            out = _pyg_hetero.sample_from_edges(self._hetero, index, neg_sampling)
            if self.subgraph_type == SubgraphType.bidirectional:
                out = out.to_bidirectional()
            return out
        src, dst, label = index.row, index.col, index.label
        num_pos, num_nodes = src.numel(), self.num_nodes
        triplet = neg_sampling is not None and neg_sampling.is_triplet()
        if neg_sampling is not None:
            num_neg = math.ceil(num_pos * neg_sampling.amount)
            if triplet:
                if label is not None:
                    raise ValueError("directgnn.pyg: edge_label must be None for triplet "
                                     "negative sampling (as in PyG)")
                dst = torch.cat([dst, neg_sampling.sample(num_neg, "dst", num_nodes)])
            else:
                src = torch.cat([src, neg_sampling.sample(num_neg, "src", num_nodes)])
                dst = torch.cat([dst, neg_sampling.sample(num_neg, "dst", num_nodes)])
                label = torch.ones(num_pos) if label is None else label
                label = torch.cat([label, label.new_zeros((num_neg, ) + label.shape[1:])])
        seed, inverse = torch.cat([src, dst]).unique(return_inverse=True)
        out = self.sample_from_nodes(NodeSamplerInput(input_id=None, node=seed))
        if triplet:
            neg_index = inverse[2 * num_pos:].view(num_pos, -1).squeeze(-1)
            out.metadata = (index.input_id, inverse[:num_pos], inverse[num_pos:2 * num_pos],
                            neg_index, None)
        else:
            out.metadata = (index.input_id, inverse.view(2, -1), label, None)
        return out


def _check_hetero(device, weight_attr, subgraph_type):
    """Refuses what the heterogeneous sampler does not offer yet, by name."""
    if torch.device(device).type != "cpu":
        raise NotImplementedError("directgnn.pyg: heterogeneous graphs are sampled on the CPU "
                                  "only; use sampler='cpu' (batches may still go to a GPU with "
                                  "device=)")
    if weight_attr is not None:
        raise NotImplementedError("directgnn.pyg: weighted sampling (weight_attr) of "
                                  "heterogeneous graphs is not supported yet")
    if subgraph_type == SubgraphType.induced:
        raise NotImplementedError("directgnn.pyg: subgraph_type='induced' is not supported on "
                                  "heterogeneous graphs (nor by PyG's pyg-lib sampler); use "
                                  "'directional' or 'bidirectional'")


def _edge_weights(data, weight_attr, perm):
    """The edge weights named ``weight_attr`` in CSC order (``perm``: CSC position to edge id),
    from a ``Data`` or a directgnn dataset; PyG offers no weights with a store pair, nor do
    we."""
    if isinstance(data, Data):
        if weight_attr not in data:
            raise KeyError(f"directgnn.pyg: weight_attr={weight_attr!r} names no attribute of the "
                           "data")
        weights = torch.as_tensor(data[weight_attr]).cpu()
        if weights.dim() != 1 or weights.numel() != data.num_edges:
            raise ValueError(f"directgnn.pyg: weight_attr={weight_attr!r} has shape "
                             f"{tuple(weights.shape)}; give one weight per edge "
                             f"([{data.num_edges}])")
        return weights if perm is None else weights[perm]
    if isinstance(data, Dataset):
        if weight_attr != "edge_weight" or data.edge_weight is None:
            raise ValueError(f"directgnn.pyg: weight_attr={weight_attr!r}: a directgnn dataset "
                             "holds weights only as edge_weight (a dataset directory's "
                             "edge_weights.npy), and this one has "
                             f"{'none' if data.edge_weight is None else 'only those'}")
        return data.edge_weight
    raise NotImplementedError("directgnn.pyg: weight_attr is not supported for "
                              "(FeatureStore, GraphStore) inputs (nor is it in PyG)")


# directgnn's placement keywords of the loaders (FeatureStore's).
_PLACEMENT_OPTIONS = ("features", "features_per_type", "disk_io", "disk_direct")

# PyG's sampling options directgnn does not offer yet, with the value that means "off".
_UNSUPPORTED = {"replace": False, "disjoint": False, "time_attr": None, "input_time": None}


def _check_options(kwargs, where):
    """Takes PyG's sampling options out of ``kwargs`` (PyG's loader ignores them when given a
    sampler), refusing the ones directgnn does not offer, and returns those it offers
    (``weight_attr``, ``subgraph_type``: enums and strings alike)."""
    for name, off in _UNSUPPORTED.items():
        value = kwargs.pop(name, off)
        if value is None or (isinstance(value, bool) and not value):
            continue
        raise NotImplementedError(f"{where}: {name}={value!r} is not supported yet")
    kwargs.pop("temporal_strategy", None)  # only meaningful with time_attr
    return {"weight_attr": kwargs.pop("weight_attr", None),
            "subgraph_type": SubgraphType(kwargs.pop("subgraph_type", "directional"))}


def _split_node_features(data, device, placements=None):
    """A feature store over ``data``'s node features (placed by ``placements``,
    FeatureStore's keywords), and a shallow copy of ``data`` holding everything else (edge and
    graph attributes, what a store cannot hold)."""
    features = node_features(data)
    store = FeatureStore(device, **(placements or {}))
    for name, value in features.items():
        store.put_tensor(value, group_name=None, attr_name=name, index=None)
    store.check_placements()
    rest = copy.copy(data)
    for name in features:
        del rest[name]
    rest.num_nodes = data.num_nodes
    return store, rest


def _all_on_cpu(device, sampler, rest):
    """Whether a batch for ``device`` made by the ``sampler`` with ``rest``'s attributes
    (a ``Data``, a ``HeteroData`` or None) is on the CPU already."""
    if device is None or device.type != "cpu" or torch.device(sampler).type != "cpu":
        return False
    return rest is None or all(not torch.is_tensor(v) or v.device.type == "cpu"
                               for store in rest.stores for v in store.values())


class _Batches:
    """What directgnn's loaders add to PyG's: the sampler, the node features gathered by
    directgnn from tables pinned in place, and batches moved to ``device``."""

    def _setup(self, data, num_neighbors, device, sampler, graph, seed, kwargs):
        """Checks the options and prepares the data; returns PyG's data and the sampler."""
        # Where the node tables live (FeatureStore's keywords), before PyG sees the rest.
        placements = {k: kwargs.pop(k) for k in _PLACEMENT_OPTIONS if k in kwargs}
        options = _check_options(kwargs, f"directgnn.pyg.{type(self).__name__}")
        _keep_batch_memory()
        self._device = None if device is None else torch.device(device)
        foreign = isinstance(data, tuple) and not isinstance(data[0], FeatureStore)
        self._features = self._rest = None
        # A Data's node features by group (None; a HeteroData's: node type): names and tables.
        self._node_tables = {}
        if placements and isinstance(data, tuple):
            raise ValueError(f"directgnn.pyg.{type(self).__name__}: {', '.join(placements)} "
                             "place directgnn's own tables; a (FeatureStore, GraphStore) pair "
                             "keeps its tables where its store does")
        if isinstance(data, (Dataset, HeteroDataset)):
            data = stores(data, device, **placements)
        elif isinstance(data, (Data, HeteroData)):
            split = _split_node_features if isinstance(data, Data) else \
                _pyg_hetero.split_node_features
            self._features, self._rest = split(data, device, placements)
            for a in self._features.get_all_tensor_attrs():
                names, tables = self._node_tables.setdefault(a.group_name, ([], []))
                names.append(a.attr_name)
                tables.append(self._features._table(a))
        node_sampler = NeighborSampler(data, num_neighbors, device=sampler, graph=graph,
                                       seed=seed, **options)
        if not foreign and _all_on_cpu(self._device, sampler, self._rest):
            self._device = None  # the batch is made there already; PyG's to() costs ~40 us
        return data, node_sampler

    def filter_fn(self, out):
        """PyG's batch from the sampled subgraph, with the node features gathered by directgnn,
        moved to ``device`` when one was given, then the user's transform."""
        data, transform = self.data, self.transform
        self.transform = None
        if self._rest is not None:
            self.data = self._rest  # PyG carries edge and graph attributes from the rest
        try:
            batch = super().filter_fn(out)
        finally:
            self.data, self.transform = data, transform
        # Our own store, whose tables all have a row per node (of their type): one gather of
        # every table of a type, straight past PyG's per-attribute checks (tens of
        # microseconds a batch).
        for group, (names, tables) in self._node_tables.items():
            ids, into = (out.node, batch) if group is None else (out.node[group], batch[group])
            for name, rows in zip(names, self._features._gather(tables, ids)):
                into[name] = rows
        if self._device is not None:
            batch = batch.to(self._device)
        return batch if transform is None else transform(batch)


class NeighborLoader(_Batches, _NeighborLoader):
    """PyG's ``NeighborLoader`` with directgnn's sampler and feature gather: the same arguments
    and batches (``x``, ``y``, ``edge_index``, ``n_id``, ``e_id``, ``batch_size``,
    ``num_sampled_nodes``, ...), with no pyg-lib or torch-sparse.

    From a ``Data``, node features (tensors and numpy arrays, memory maps included) are
    gathered by directgnn from tables pinned in place; every other attribute is carried as PyG
    carries it: edge attributes (``edge_attr``, ``edge_weight``, ...) indexed by ``e_id``,
    graph-level tensors and strings as they are. Any ``(FeatureStore, GraphStore)`` pair works;
    directgnn's own (:func:`stores`) are read in place, others through PyG's interfaces.

    A ``HeteroData`` gives PyG's heterogeneous batches the same way (node features gathered
    per node type, ``edge_index`` and edge attributes per edge type, ``n_id``, ``e_id``,
    ``num_sampled_nodes``/``_edges``, ``batch_size`` on the input type), sampled as
    :class:`NeighborSampler` describes::

        import directgnn
        from directgnn.pyg import NeighborLoader
        data = directgnn.hetero.mag(0.002).to_pyg()        # any HeteroData
        loader = NeighborLoader(data, num_neighbors=[10, 5], batch_size=128,
                                input_nodes=("paper", data["paper"].train_mask))
        batch = next(iter(loader))   # batch["paper"].x, batch.edge_index_dict, n_id, e_id

    Args:
        data: a PyG ``Data`` or ``HeteroData``, a directgnn dataset (homogeneous or
            heterogeneous), or a ``(FeatureStore, GraphStore)`` pair.
        num_neighbors, input_nodes, batch_size, shuffle, subgraph_type, ...: as PyG's
            ``NeighborLoader``, ``weight_attr`` and the three subgraph types included. Not
            offered yet (``NotImplementedError``): ``replace``, ``disjoint``, temporal
            sampling, and on typed graphs the GPU sampler, ``weight_attr`` and ``induced``.
        device: where batches are made. None (the default) leaves them where PyG would: with
            the data. A GPU (``"cuda"``) has GPU threads read the feature rows straight from
            pinned host memory, and the rest of the batch is moved there too.
        sampler: "cpu" or "cuda[:N]": which sampler draws the neighbours.
        graph: where the GPU sampler reads the graph: "pinned" or "device".
        seed: the base of every sampling draw.
        features, features_per_type, disk_io, disk_direct: where the node tables live, for
            all node types and for those named (``{"paper": "disk"}``): "auto" (pinned in
            place where a GPU is visible), "host", "pinned", "device" or "disk" (a numpy memory
            map of a .npy, or a directgnn dataset directory's table, read from its file as
            batches need rows); see :class:`directgnn.pyg.FeatureStore`.
    """

    def __init__(self, data, num_neighbors, input_nodes=None, *, device=None, sampler="cpu",
                 graph="pinned", seed=0, **kwargs):
        data, node_sampler = self._setup(data, num_neighbors, device, sampler, graph, seed,
                                         kwargs)
        if input_nodes is None and isinstance(data, tuple) and not node_sampler.is_hetero:
            input_nodes = torch.arange(node_sampler.num_nodes)
        if node_sampler.is_hetero and not isinstance(input_nodes, (str, tuple, list)):
            raise ValueError("directgnn.pyg.NeighborLoader: a heterogeneous graph needs the "
                             "seeds' node type: input_nodes=(node_type, ids), e.g. "
                             "input_nodes=('paper', data['paper'].train_mask), or "
                             "input_nodes='paper' for every node of the type")
        super().__init__(data, num_neighbors, input_nodes=input_nodes,
                         neighbor_sampler=node_sampler, **kwargs)


class LinkNeighborLoader(_Batches, _LinkNeighborLoader):
    """PyG's ``LinkNeighborLoader`` with directgnn's sampler and feature gather: the same
    arguments and batches (``edge_label_index`` and ``edge_label``, or with triplet negatives
    ``src_index``, ``dst_pos_index`` and ``dst_neg_index``; ``x``, ``edge_index``, ``n_id``,
    ...), with no pyg-lib or torch-sparse::

        import torch
        from torch_geometric.datasets import FakeDataset
        from torch_geometric.sampler import NegativeSampling
        from directgnn.pyg import LinkNeighborLoader
        data = FakeDataset(avg_num_nodes=400)[0]
        loader = LinkNeighborLoader(data, num_neighbors=[10, 10], batch_size=64, shuffle=True,
                                    edge_label_index=data.edge_index,
                                    neg_sampling=NegativeSampling("binary", 1))
        batch = next(iter(loader))   # edge_label_index [2, 128]: 64 positives, 64 negatives

    Negatives come from PyG's own ``NegativeSampling`` (its modes, amount and weight), so the
    negatives are PyG's (not exact). A ``HeteroData`` (or a directgnn ``HeteroDataset``, or a
    store pair with edge types) takes ``edge_label_index=(edge_type, index)`` as PyG's (index
    None: every edge of that type); the labels sit where PyG puts them::

        import directgnn
        from directgnn.pyg import LinkNeighborLoader
        data = directgnn.hetero.mag(0.002).to_pyg()
        writes = ("author", "writes", "paper")
        loader = LinkNeighborLoader(data, num_neighbors=[10, 5], batch_size=64,
                                    edge_label_index=(writes, None), neg_sampling_ratio=1.0)
        batch = next(iter(loader))   # batch[writes].edge_label_index: local author, paper ids

    (triplets: ``batch["author"].src_index``, ``batch["paper"].dst_pos_index`` and
    ``dst_neg_index``). Not offered yet (``NotImplementedError``): temporal sampling
    (``edge_label_time``), ``replace``, ``disjoint``, and on typed graphs the GPU sampler,
    ``weight_attr`` and ``subgraph_type="induced"``.

    Args:
        device, sampler, graph, seed: as directgnn's ``NeighborLoader``.
    """

    def __init__(self, data, num_neighbors, edge_label_index=None, edge_label=None, *,
                 device=None, sampler="cpu", graph="pinned", seed=0, **kwargs):
        if kwargs.get("edge_label_time") is not None:
            raise NotImplementedError("directgnn.pyg.LinkNeighborLoader: temporal sampling "
                                      "(edge_label_time) is not supported yet")
        data, link_sampler = self._setup(data, num_neighbors, device, sampler, graph, seed,
                                         kwargs)
        super().__init__(data, num_neighbors, edge_label_index=edge_label_index,
                         edge_label=edge_label, neighbor_sampler=link_sampler, **kwargs)
