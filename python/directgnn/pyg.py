"""directgnn behind PyG's loaders: a feature store, a graph store and a neighbour sampler.

PyG's ``NeighborLoader`` accepts a ``(FeatureStore, GraphStore)`` pair and a sampler of its
own choosing. With directgnn's, feature rows come from tables pinned in place (GPU threads
read them over PCIe when the store's device is a GPU), and sampling needs neither pyg-lib nor
torch-sparse. Switching is one line::

    from torch_geometric.loader import NeighborLoader      # before
    from directgnn.pyg import NeighborLoader               # after
    loader = NeighborLoader(data, num_neighbors=[10, 10], batch_size=64,
                            input_nodes=data.train_mask, shuffle=True)

Homogeneous graphs only for now; a ``HeteroData`` raises ``NotImplementedError``.
"""

import torch

try:
    from torch_geometric.data import Data, EdgeAttr, HeteroData, TensorAttr
    from torch_geometric.data import FeatureStore as _FeatureStore
    from torch_geometric.data import GraphStore as _GraphStore
    from torch_geometric.data.graph_store import EdgeLayout
    from torch_geometric.loader import NeighborLoader as _NeighborLoader
    from torch_geometric.sampler import BaseSampler, SamplerOutput
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError("directgnn.pyg needs PyG: pip install torch-geometric (it is pure "
                      "Python; pyg-lib and torch-sparse are not needed)") from error

from .data import Dataset
from .sampler import NeighborSampler as _Sampler
from .tensor import GATHER_METHODS, UnifiedTensor, _as_tensor

__all__ = ["FeatureStore", "GraphStore", "NeighborLoader", "NeighborSampler", "stores"]

_HETERO = ("directgnn.pyg: heterogeneous graphs (HeteroData, typed nodes or edges) are not "
           "supported yet; use a homogeneous Data, or PyG's own stores for this graph")


def _default_device(device):
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


class FeatureStore(_FeatureStore):
    """PyG's ``FeatureStore`` over tables that stay where they are.

    A tensor put into the store is pinned in place (a :class:`directgnn.UnifiedTensor`,
    never copied; without a GPU it is kept as it is). Rows come back on ``device``:
    ``multi_get_tensor``, which PyG's loaders call once per batch, gathers every requested
    attribute (``x``, ``y``, masks, ...) for the batch's nodes in one call.

    Args:
        device: where gathered rows go (default: the GPU when there is one, else the CPU).
        method: gather method for GPU reads: "auto", "cpu-copy", "zero-copy" or "aligned".
        max_threads: cap on the GPU threads of one gather (0: no cap).
    """

    def __init__(self, device=None, *, method="auto", max_threads=0):
        super().__init__()
        if method not in GATHER_METHODS:
            raise ValueError(f"directgnn.pyg.FeatureStore: method {method!r} is not one of "
                             f"{', '.join(GATHER_METHODS)}")
        if int(max_threads) < 0:
            raise ValueError("directgnn.pyg.FeatureStore: max_threads must be >= 0 (0 = no cap)")
        self.device = _default_device(device)
        self.method = method
        self.max_threads = int(max_threads)
        self._tables = {}  # (group_name, attr_name) -> the tensor put, in place
        self._pins = {}  # the same keys -> UnifiedTensor keeping a CPU tensor pinned

    @staticmethod
    def _key(attr):
        if attr.group_name is not None:
            raise NotImplementedError(_HETERO)
        return (attr.group_name, attr.attr_name)

    def _put_tensor(self, tensor, attr):
        key, tensor = self._key(attr), _as_tensor(tensor)
        if attr.index is None:
            if tensor.dim() == 0:
                raise ValueError(f"directgnn.pyg.FeatureStore: {attr.attr_name!r} is a scalar; "
                                 "put tensors with one row per node")
            self._pins.pop(key, None)
            if tensor.device.type == "cpu":
                rows = tensor.view(tensor.size(0), -1) if tensor.dim() > 2 else tensor
                self._pins[key] = UnifiedTensor(rows)  # refuses a non-contiguous tensor
            self._tables[key] = tensor
            return True
        if key not in self._tables:
            raise KeyError(f"directgnn.pyg.FeatureStore: no tensor {attr.attr_name!r} to write "
                           "rows into; put the whole tensor first (index=None)")
        table = self._tables[key]
        table[attr.index] = tensor.to(table.device, table.dtype)
        return True

    def _ids(self, index):
        return torch.as_tensor(index, dtype=torch.int64).to(self.device)

    def _get_tensor(self, attr):
        table = self._tables.get(self._key(attr))
        if table is None:
            raise KeyError(f"directgnn.pyg.FeatureStore: no tensor {attr.attr_name!r}")
        if attr.index is None:
            return table
        if isinstance(attr.index, (slice, int)):
            return table[attr.index].to(self.device)
        return self._gather([table], attr.index)[0]

    def _gather(self, tables, index):
        return torch.ops.directgnn.gather_many(tables, self._ids(index), method=self.method,
                                               max_threads=self.max_threads)

    def _multi_get_tensor(self, attrs):
        """Every attribute for the same node ids in one gather; others one by one."""
        if not attrs or not all(isinstance(a.index, torch.Tensor) for a in attrs) or any(
                a.index is not attrs[0].index for a in attrs):
            return [self._get_tensor(a) for a in attrs]
        tables = [self._tables.get(self._key(a)) for a in attrs]
        missing = [a.attr_name for a, t in zip(attrs, tables) if t is None]
        if missing:
            raise KeyError(f"directgnn.pyg.FeatureStore: no tensor named {missing}")
        return self._gather(tables, attrs[0].index)

    def _remove_tensor(self, attr):
        key = self._key(attr)
        self._pins.pop(key, None)  # unpinned once nothing else holds the pinning
        return self._tables.pop(key, None) is not None

    def _get_tensor_size(self, attr):
        table = self._tables.get(self._key(attr))
        return None if table is None else tuple(table.shape)

    def is_pinned(self, attr_name):
        """Whether the tensor ``attr_name`` is pinned for GPU reads."""
        pin = self._pins.get((None, attr_name))
        return pin is not None and pin.is_pinned

    def get_all_tensor_attrs(self):
        return [TensorAttr(group, name) for group, name in self._tables]

    def __getstate__(self):
        raise TypeError("directgnn.pyg.FeatureStore cannot be sent to another process (its "
                        "pinned tables belong to this one); use num_workers=0 (batches are "
                        "prepared in C++ threads) or build the store in that process")


class GraphStore(_GraphStore):
    """PyG's ``GraphStore`` keeping each edge index as given: CSC ``(colptr, row)``, CSR or COO
    tensors are stored in place, not copied. PyG's samplers read ``csc()``; directgnn's reads
    the CSC directly. ``edge_permutation`` maps CSC positions to the original edge order
    when :func:`stores` sorted a COO ``edge_index`` (None otherwise)."""

    def __init__(self):
        super().__init__()
        self._edges = {}  # layout -> (EdgeAttr, (a, b))
        self.edge_permutation = None

    @staticmethod
    def _layout(attr):
        if attr.edge_type is not None:
            raise NotImplementedError(_HETERO)
        return EdgeLayout(attr.layout)

    def _put_edge_index(self, edge_index, edge_attr):
        self._edges[self._layout(edge_attr)] = (edge_attr, tuple(edge_index))
        return True

    def _get_edge_index(self, edge_attr):
        entry = self._edges.get(self._layout(edge_attr))
        return None if entry is None else entry[1]

    def _remove_edge_index(self, edge_attr):
        return self._edges.pop(self._layout(edge_attr), None) is not None

    def get_all_edge_attrs(self):
        return [attr for attr, _ in self._edges.values()]

    def csc_in_place(self):
        """``(colptr, row)`` of the stored CSC, or converted once from another layout."""
        entry = self._edges.get(EdgeLayout.CSC)
        if entry is not None:
            row, colptr = entry[1]  # PyG's CSC is (row, colptr)
            return colptr, row
        if not self._edges:
            raise ValueError("directgnn.pyg.GraphStore: no edge index has been put")
        row, colptr, perm = self.csc()
        self.edge_permutation = perm
        return colptr, row


def _coo_to_csc(edge_index, num_nodes):
    """``(colptr, row, perm)`` of a COO ``edge_index`` sorted by destination (stable)."""
    row, col = edge_index[0].long(), edge_index[1].long()
    col, perm = torch.sort(col, stable=True)
    colptr = torch.zeros(num_nodes + 1, dtype=torch.int64)
    colptr[1:] = torch.cumsum(torch.bincount(col, minlength=num_nodes), 0)
    return colptr, row[perm].contiguous(), perm


def stores(data, device=None, *, method="auto", max_threads=0):
    """The ``(FeatureStore, GraphStore)`` pair over a PyG ``Data`` or a directgnn
    :class:`~directgnn.Dataset`.

    Node-level tensors (``x``, ``y``, masks, ...) are put into the feature store in place.
    A directgnn dataset's CSR graph is its neighbour lists, stored as the CSC in place; a
    ``Data``'s COO ``edge_index`` is sorted into a CSC once (its permutation kept, so
    ``e_id`` indexes the original edges).
    """
    if isinstance(data, HeteroData):
        raise NotImplementedError(_HETERO)
    feature_store = FeatureStore(device, method=method, max_threads=max_threads)
    graph_store = GraphStore()
    if isinstance(data, Dataset):
        n = data.num_nodes
        feature_store.put_tensor(data.x, group_name=None, attr_name="x", index=None)
        feature_store.put_tensor(data.y, group_name=None, attr_name="y", index=None)
        colptr, row = data.indptr, data.indices
    elif isinstance(data, Data):
        n = data.num_nodes
        for name in data.node_attrs():
            value = data[name]
            if isinstance(value, torch.Tensor) and value.dim() >= 1 and value.size(0) == n:
                feature_store.put_tensor(value, group_name=None, attr_name=name, index=None)
        colptr, row, perm = _coo_to_csc(data.edge_index, n)
        graph_store.edge_permutation = perm
    else:
        raise TypeError("directgnn.pyg.stores: expected a torch_geometric Data or a directgnn "
                        f"Dataset, got {type(data).__name__}")
    graph_store.put_edge_index((row, colptr), edge_type=None, layout="csc", size=(n, n))
    return feature_store, graph_store


class NeighborSampler(BaseSampler):
    """PyG's ``BaseSampler`` running directgnn's sampler with PyG's semantics.

    Seeds come first in ``node``; each node's neighbours are drawn once, at the hop that first
    reaches it (uniformly, without replacement); ``num_sampled_nodes`` and
    ``num_sampled_edges`` count them per hop, so ``trim_to_layer`` applies; edges are
    directed from the neighbour (``row``) to the node it was drawn for (``col``).

    Args:
        data: a :class:`GraphStore`, a ``(FeatureStore, GraphStore)`` pair, a PyG ``Data`` or
            a directgnn dataset.
        num_neighbors: neighbours per hop, seed hop first; -1 takes every neighbour.
        device: "cpu" (the CPU sampler) or "cuda[:N]" (the GPU sampler).
        graph: where the GPU sampler reads the graph: "pinned" (in place) or "device".
        seed: the base of every draw.
    """

    def __init__(self, data, num_neighbors, *, device="cpu", graph="pinned", seed=0):
        if isinstance(data, HeteroData) or isinstance(num_neighbors, dict):
            raise NotImplementedError(_HETERO)
        if isinstance(data, tuple):
            data = data[1]
        if not isinstance(data, GraphStore):
            data = stores(data, "cpu")[1]
        colptr, row = data.csc_in_place()
        self._perm = data.edge_permutation
        self._args = (colptr, row, list(getattr(num_neighbors, "values", num_neighbors)),
                      str(device), graph, int(seed))
        self._build()

    def _build(self):
        colptr, row, fanouts, device, graph, seed = self._args
        self.num_neighbors = fanouts
        self._sampler = _Sampler(colptr, row, fanouts, device=device, graph=graph, seed=seed,
                                 mode="pyg")

    def __getstate__(self):  # worker processes rebuild the C++ sampler over the same tensors
        return {"args": self._args, "perm": self._perm}

    def __setstate__(self, state):
        self._args, self._perm = state["args"], state["perm"]
        self._build()

    @property
    def edge_permutation(self):
        return self._perm

    def sample_from_nodes(self, index, **kwargs):
        if index.time is not None:
            raise NotImplementedError("directgnn.pyg.NeighborSampler: temporal sampling "
                                      "(input_time, time_attr) is not supported")
        s = self._sampler.sample(index.node)
        return SamplerOutput(node=s.node, row=s.row, col=s.col, edge=s.edge,
                             num_sampled_nodes=s.num_sampled_nodes,
                             num_sampled_edges=s.num_sampled_edges,
                             metadata=(index.input_id, index.time))

    def sample_from_edges(self, index, neg_sampling=None):
        raise NotImplementedError("directgnn.pyg.NeighborSampler: sampling from edges (link "
                                  "prediction, LinkNeighborLoader) is not supported yet")


_UNSUPPORTED = {"replace": False, "disjoint": False, "subgraph_type": "directional",
                "time_attr": None, "weight_attr": None, "input_time": None,
                "temporal_strategy": "uniform"}


class NeighborLoader(_NeighborLoader):
    """PyG's ``NeighborLoader`` over directgnn's stores and sampler: the same arguments and
    batches (``x``, ``y``, ``edge_index``, ``n_id``, ``e_id``, ``batch_size``,
    ``num_sampled_nodes``, ...), with no pyg-lib or torch-sparse.

    Args:
        data: a PyG ``Data``, a directgnn dataset, or a ``(FeatureStore, GraphStore)`` pair
            from :func:`stores`.
        num_neighbors, input_nodes, batch_size, shuffle, ...: as PyG's ``NeighborLoader``.
        device: where feature rows are gathered (default: the GPU when there is one).
        sampler: "cpu" or "cuda[:N]": which sampler draws the neighbours.
        graph: where the GPU sampler reads the graph: "pinned" or "device".
        seed: the base of every sampling draw.
    """

    def __init__(self, data, num_neighbors, input_nodes=None, *, device=None, sampler="cpu",
                 graph="pinned", seed=0, **kwargs):
        for name, default in _UNSUPPORTED.items():
            if kwargs.get(name, default) != default:
                raise NotImplementedError(f"directgnn.pyg.NeighborLoader: {name}="
                                          f"{kwargs[name]!r} is not supported yet")
            kwargs.pop(name, None)
        if not isinstance(data, tuple):
            data = stores(data, device)
        if input_nodes is None:
            input_nodes = torch.arange(data[1].csc_in_place()[0].numel() - 1)
        node_sampler = NeighborSampler(data, num_neighbors, device=sampler, graph=graph,
                                       seed=seed)
        super().__init__(data, num_neighbors, input_nodes=input_nodes,
                         neighbor_sampler=node_sampler, **kwargs)
