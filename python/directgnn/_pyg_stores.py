"""directgnn's PyG stores: a FeatureStore over tables pinned in place and a GraphStore that keeps
each edge index as given. They follow PyG's reference stores (torch_geometric.testing's
MyFeatureStore and MyGraphStore) in what they accept and raise; directgnn.pyg re-exports them.
"""

import warnings

import numpy as np
import torch
from torch_geometric.data import Data, HeteroData
from torch_geometric.data import FeatureStore as _FeatureStore
from torch_geometric.data import GraphStore as _GraphStore
from torch_geometric.data.graph_store import EdgeLayout

from .data import Dataset
from .hetero import HeteroDataset, check_edge_index, npy_file
from ._ops import classes, exchange_stats_of, os_errors
from .tensor import GATHER_METHODS, UnifiedTensor, _as_tensor, _ids

HETERO = ("directgnn.pyg: this graph store holds typed edges (a heterogeneous graph), which "
          "this homogeneous path cannot read; read it with typed_csc_in_place, or sample it "
          "with directgnn.pyg.NeighborSampler, which takes typed graphs")


PLACEMENTS = ("auto", "host", "pinned", "device", "disk")


def _placement(name):
    if name not in PLACEMENTS:
        raise ValueError(f"directgnn.pyg.FeatureStore: placement {name!r} is not one of "
                         f"{', '.join(PLACEMENTS)}")
    return name


def _whole(index):
    """Whether a TensorAttr index asks for the whole tensor (None or ``:``)."""
    return index is None or (isinstance(index, slice) and index == slice(None))


def _rows_of(index):
    """How many rows a new tensor written at ``index`` needs."""
    if isinstance(index, slice):
        if index.stop is None or index.stop < 0:
            raise ValueError("directgnn.pyg.FeatureStore: a new tensor written through a slice "
                             "needs the slice's end, to know how many rows it has")
        return index.stop
    index = torch.as_tensor(index)
    if index.dtype == torch.bool:
        return index.numel()
    return int(index.max()) + 1 if index.numel() else 0


def contiguous_rows(tensor, what):
    """``tensor`` itself when contiguous; else one contiguous copy, with a note."""
    if tensor.is_contiguous():
        return tensor
    warnings.warn(f"directgnn.pyg: {what} is not contiguous; it was copied once into a "
                  "contiguous tensor (pass a contiguous one to keep a single copy)",
                  stacklevel=4)
    return tensor.contiguous()


class FeatureStore(_FeatureStore):
    """PyG's ``FeatureStore`` over tables that stay where they are.

    A CPU tensor or numpy array put into the store (a memory map included) is pinned in place (a
    :class:`directgnn.UnifiedTensor`, never copied; without a GPU it is kept as it is); a tensor
    that is not contiguous is copied once, with a warning. Rows come back on ``device``, or
    where each tensor is when ``device`` is None (as PyG's reference store):
    ``multi_get_tensor``, which PyG's loaders call once per batch, gathers every requested
    attribute (``x``, ``y``, masks, ...) for the batch's nodes in one call.

    As PyG's reference store: any group name (a node type) and attribute name; writing rows at
    an index into a tensor that does not exist yet creates it, with as many rows as the index
    reaches (rows not written are zero); a tensor that is not there raises ``KeyError``.

    Args:
        device: where gathered rows go: None (where each tensor is), "cpu", or a GPU, whose
            threads then read rows of CPU tensors from pinned host memory.
        method: gather method for GPU reads: "auto", "cpu-copy", "zero-copy" or "aligned".
        max_threads: cap on the GPU threads of one gather (0: no cap).
        features: where each group's tables live: "auto" (pinned in place where a GPU is
            visible, as it is elsewhere), "host" (as it is: the CPU gathers), "pinned" (needs a
            GPU), "device" (copied to the GPU once) or "disk" (the rows of a numpy memory map of a
            .npy read from the file as gathers ask, never through page faults; the group's
            tensors in memory, labels and masks, stay there).
        features_per_type: ``{group_name: placement}`` for the groups (node types) named.
        disk_io, disk_direct: how "disk" tables are read ("auto", "io_uring", "pread"; O_DIRECT).
    """

    def __init__(self, device=None, *, method="auto", max_threads=0, features="auto",
                 features_per_type=None, disk_io="auto", disk_direct=False):
        super().__init__()
        if method not in GATHER_METHODS:
            raise ValueError(f"directgnn.pyg.FeatureStore: method {method!r} is not one of "
                             f"{', '.join(GATHER_METHODS)}")
        if int(max_threads) < 0:
            raise ValueError("directgnn.pyg.FeatureStore: max_threads must be >= 0 (0 = no cap)")
        self.device = None if device is None else torch.device(device)
        self.method = method
        self.max_threads = int(max_threads)
        self.features = _placement(features)
        self.features_per_type = {t: _placement(p) for t, p in (features_per_type or {}).items()}
        self.disk_io, self.disk_direct = str(disk_io), bool(disk_direct)
        self._tables = {}  # (group_name, attr_name) -> the tensor put, in place
        self._pins = {}  # the same keys -> UnifiedTensor keeping a CPU tensor pinned
        self._disk = {}  # the same keys -> the C++ store reading a table's rows from its file
        self._files = {}  # the same keys -> the .npy a table put maps
        self._sharded = {}  # the same keys -> ShardedTable: a table this rank holds a part of

    @staticmethod
    def _key(attr):
        return (attr.group_name, attr.attr_name)

    def placement(self, group_name=None):
        """Where the group's tables live ("auto", "host", "pinned", "device" or "disk")."""
        return self.features_per_type.get(group_name, self.features)

    def _set_table(self, key, tensor, file=""):
        if tensor.dim() == 0:
            raise ValueError(f"directgnn.pyg.FeatureStore: {key[1]!r} is a scalar; put tensors "
                             "with one row per node")
        self._pins.pop(key, None)
        self._disk.pop(key, None)
        placement = self.placement(key[0])
        if placement == "pinned" and not torch.cuda.is_available():
            raise ValueError(f"directgnn.pyg.FeatureStore: {key[1]!r} of {key[0]!r}: pinned "
                             "keeps a table for a GPU to read, but no GPU is visible; place it "
                             "host or disk")
        if tensor.device.type == "cpu":
            tensor = contiguous_rows(tensor, f"tensor {key[1]!r}")
            rows = tensor.view(tensor.size(0), -1) if tensor.dim() > 2 else tensor
            if placement == "disk" and file:
                device = (self.device.index or 0) if self.device is not None else 0
                self._disk[key] = classes.FeatureStore(rows, "disk", int(device), file,
                                                       self.disk_io, self.disk_direct)
            elif placement == "device":
                tensor = tensor.to(self.device if self.device is not None and
                                   self.device.type == "cuda" else "cuda")
            elif placement in ("auto", "pinned"):
                self._pins[key] = UnifiedTensor(rows)
        self._tables[key] = tensor

    def put_sharded(self, part, offsets, attr_name="x", group_name=None, *, group=None,
                    dist_timeout=300.0):
        """Puts ``attr_name`` as a table sharded over the ranks of a torch.distributed process
        group (``group``, default the script's): this rank holds ``part``, the rows
        ``offsets[rank]`` to ``offsets[rank + 1] - 1`` of ``offsets[-1]``, and a gather of any
        rows fetches the others from their owners (two all-to-alls; docs/distributed.md). Every
        gather is a collective: each rank's loader must ask for rows as many times (the same
        number of batches on every rank), in a process of its own (``num_workers=0``)."""
        import torch.distributed as dist
        group = group if group is not None else dist.group.WORLD
        key = (group_name, attr_name)
        part = contiguous_rows(_as_tensor(part), f"tensor {attr_name!r}")
        with os_errors():
            self._sharded[key] = classes.ShardedTable(part.view(part.size(0), -1),
                                                      [int(o) for o in offsets], group.boxed(),
                                                      int(dist_timeout))
        self._pins.pop(key, None)
        self._disk.pop(key, None)
        self._tables[key] = part

    def exchange_stats(self) -> dict:
        """What the sharded tables' exchanges moved since the last call, summed (as
        :meth:`directgnn.Loader.exchange_stats`); empty when no table is sharded."""
        total = {}
        for table in self._sharded.values():
            for k, v in dict(table.exchange_counts()).items():
                # Each table gathers once a batch: the batches are the most any table counted.
                total[k] = max(total.get(k, 0), v) if k == "gathers" else total.get(k, 0) + v
        return exchange_stats_of(total)

    def check_placements(self):
        """Raises when a group placed on disk has no table read from a file."""
        for group in {key[0] for key in self._tables}:
            if self.placement(group) == "disk" and not any(k[0] == group for k in self._disk):
                where = "the data" if group is None else f"node type {group!r}"
                raise ValueError(f"directgnn.pyg.FeatureStore: {where} is placed on disk, but "
                                 "none of its tensors maps a .npy file; give its x as a numpy "
                                 "memory map (np.load(path, mmap_mode='r')), or place it "
                                 "elsewhere")

    def is_on_disk(self, attr_name, group_name=None):
        """Whether the tensor ``attr_name`` is read from its file as gathers ask."""
        return (group_name, attr_name) in self._disk

    def _put_tensor(self, tensor, attr):
        key, file = self._key(attr), npy_file(tensor)
        tensor = _as_tensor(tensor)
        if _whole(attr.index):
            self._set_table(key, tensor, file or self._files.get(key, ""))
            return True
        table = self._tables.get(key)
        if table is None:
            table = tensor.new_zeros((_rows_of(attr.index), *tensor.shape[1:]))
            table[self._index(attr.index, table.device)] = tensor
            self._set_table(key, table)
            return True
        table[self._index(attr.index, table.device)] = tensor.to(table.device, table.dtype)
        return True

    @staticmethod
    def _index(index, device):
        if isinstance(index, (slice, int)):
            return index
        return torch.as_tensor(index).to(device)

    def _ids(self, index, table):
        ids = _ids(index, table.shape[0], "directgnn.pyg.FeatureStore")
        return ids.to(self.device or table.device, torch.int64)

    def _table(self, attr):
        table = self._tables.get(self._key(attr))
        if table is None:
            raise KeyError(f"directgnn.pyg.FeatureStore: no tensor for '{attr}'")
        return table

    def _get_tensor(self, attr):
        table = self._table(attr)
        if _whole(attr.index):
            return table
        if self._key(attr) in self._sharded:
            return self._multi_get_tensor([attr])[0]
        if isinstance(attr.index, (slice, int)):
            return table[attr.index].to(self.device or table.device)
        return self._gather([table], attr.index)[0]

    def _sharded_ids(self, attr):
        exchange = self._sharded[self._key(attr)]
        index = attr.index
        if not isinstance(index, torch.Tensor):
            index = torch.arange(exchange.num_rows())[index]
        return _ids(index, exchange.num_rows(), "directgnn.pyg.FeatureStore").cpu().long()

    def _sharded_round(self, asks):
        """One gather of every sharded table, in the order they were put, a table asked for
        nothing gathering no rows: whatever node types a batch holds, every rank's exchanges
        pair up. ``asks`` maps a table's key to the id tensors asked of it; returns the rows of
        each, in that order."""
        out = {}
        for key, exchange in self._sharded.items():
            ids = asks.get(key, [])
            rows = exchange.gather(torch.cat(ids) if ids else torch.empty(0, dtype=torch.int64))
            rows = rows.view(rows.size(0), *self._tables[key].shape[1:])
            if self.device is not None:
                rows = rows.to(self.device)
            out[key] = list(rows.split([len(i) for i in ids])) if ids else []
        return out

    def _gather(self, tables, index):
        # The overload itself, and only the options that differ from the defaults: each saves
        # microseconds a call (docs/benchmarks.md).
        options = {}
        if self.method != "auto":
            options["method"] = self.method
        if self.max_threads:
            options["max_threads"] = self.max_threads
        ids = self._ids(index, tables[0])
        if not self._disk:
            return _gather_many(tables, ids, **options)
        disk = {id(self._tables[k]): store for k, store in self._disk.items()}
        out = [None] * len(tables)
        rest = [i for i, t in enumerate(tables) if id(t) not in disk]
        if rest:
            for i, rows in zip(rest, _gather_many([tables[i] for i in rest], ids, **options)):
                out[i] = rows
        for i, t in enumerate(tables):
            if id(t) in disk:
                rows = disk[id(t)].gather(ids, self.method, False, self.max_threads)
                out[i] = rows.view(rows.size(0), *t.shape[1:])
        return out

    def _multi_get_tensor(self, attrs):
        """The attributes that share node ids (one index tensor, a node type's in a typed
        graph) in one gather per row count; others one by one. Sharded tables: one round of
        their exchanges a call (every rank must call as often)."""
        out = [None] * len(attrs)
        done = set()
        if self._sharded:
            mine = [i for i, a in enumerate(attrs)
                    if self._key(a) in self._sharded and not _whole(a.index)]
            asks = {}
            for i in mine:
                asks.setdefault(self._key(attrs[i]), []).append(self._sharded_ids(attrs[i]))
            got = self._sharded_round(asks)
            for i in mine:
                out[i] = got[self._key(attrs[i])].pop(0)
            done.update(mine)
        groups = {}
        for i, a in enumerate(attrs):
            if i in done:
                continue
            if isinstance(a.index, torch.Tensor):
                table = self._table(a)
                groups.setdefault((id(a.index), table.size(0)), []).append((i, table))
            else:
                out[i] = self._get_tensor(a)
        for members in groups.values():
            index = attrs[members[0][0]].index
            for (i, _), got in zip(members, self._gather([t for _, t in members], index)):
                out[i] = got
        return out

    def _remove_tensor(self, attr):
        key = self._key(attr)
        self._sharded.pop(key, None)
        self._pins.pop(key, None)  # unpinned once nothing else holds the pinning
        self._disk.pop(key, None)
        return self._tables.pop(key, None) is not None

    def _get_tensor_size(self, attr):
        table = self._tables.get(self._key(attr))
        if table is None:
            return None
        sharded = self._sharded.get(self._key(attr))
        if sharded is not None and _whole(attr.index):
            return (sharded.num_rows(), *table.shape[1:])  # the whole table's, not this part's
        return tuple(table.shape) if _whole(attr.index) else tuple(self._get_tensor(attr).shape)

    def is_pinned(self, attr_name, group_name=None):
        """Whether the tensor ``attr_name`` is pinned for GPU reads."""
        pin = self._pins.get((group_name, attr_name))
        return pin is not None and pin.is_pinned

    def get_all_tensor_attrs(self):
        return [self._tensor_attr_cls.cast(*key) for key in self._tables]

    def __getstate__(self):
        raise TypeError("directgnn.pyg.FeatureStore cannot be sent to another process (its "
                        "pinned tables belong to this one); use num_workers=0 (batches are "
                        "prepared in C++ threads) or build the store in that process")


class GraphStore(_GraphStore):
    """PyG's ``GraphStore`` keeping each edge index as given: CSC ``(row, colptr)``, CSR or COO
    tensors are stored in place, not copied. As PyG's reference store, an edge index is found
    by its edge type, layout, ``is_sorted`` and ``size``; another ``size`` raises ``KeyError``.
    directgnn's samplers read :meth:`csc_in_place`; ``edge_permutation`` maps CSC positions to
    the original edge order when a COO or CSR index had to be sorted (None otherwise)."""

    def __init__(self):
        super().__init__()
        self._edges = {}  # key -> (EdgeAttr, (a, b))
        self.edge_permutation = None
        # Per edge type, for typed graphs: CSC position -> original edge id of a COO index
        # sorted on the way in (stores(HeteroData)); None where the same.
        self.edge_permutations = {}

    @staticmethod
    def _key(attr):
        size = None if attr.size is None else tuple(int(s) for s in attr.size)
        return (attr.edge_type, EdgeLayout(attr.layout), bool(attr.is_sorted), size)

    def _put_edge_index(self, edge_index, edge_attr):
        self._edges[self._key(edge_attr)] = (edge_attr, tuple(edge_index))
        return True

    def _get_edge_index(self, edge_attr):
        entry = self._edges.get(self._key(edge_attr))
        return None if entry is None else entry[1]

    def _remove_edge_index(self, edge_attr):
        return self._edges.pop(self._key(edge_attr), None) is not None

    def get_all_edge_attrs(self):
        return [attr for attr, _ in self._edges.values()]

    def csc_in_place(self):
        """``(colptr, row)`` of the homogeneous graph: a stored CSC in place, or converted
        once from another layout (its permutation kept in ``edge_permutation``)."""
        attrs = self.get_all_edge_attrs()
        if not attrs:
            raise ValueError("directgnn.pyg.GraphStore: no edge index has been put")
        if any(attr.edge_type is not None for attr in attrs):
            raise NotImplementedError(HETERO)
        for attr, (row, colptr) in self._edges.values():
            if attr.layout == EdgeLayout.CSC:  # PyG's CSC is (row, colptr)
                return colptr, row
        row, colptr, perm = self.csc()
        self.edge_permutation = perm
        return colptr, row

    def typed_csc_in_place(self):
        """``{edge_type: (colptr, row, perm)}`` of a typed graph: stored CSCs in place (with the
        permutations of ``edge_permutations``), or every edge type converted by PyG's ``csc``
        when some are stored in another layout."""
        attrs = self.get_all_edge_attrs()
        if any(attr.edge_type is None for attr in attrs):
            raise ValueError("directgnn.pyg.GraphStore: holds an edge index without an edge "
                             "type next to typed ones; give every edge index its edge type")
        if all(attr.layout == EdgeLayout.CSC for attr in attrs):
            return {attr.edge_type: (colptr, row, self.edge_permutations.get(attr.edge_type))
                    for attr, (row, colptr) in self._edges.values()}
        rows, colptrs, perms = self.csc()
        return {et: (colptrs[et].cpu(), rows[et].cpu(), perms.get(et)) for et in rows}


_gather_many = torch.ops.directgnn.gather_many.default


def coo_to_csc(edge_index, num_nodes):
    """``(colptr, row, perm)`` on the CPU of a COO ``edge_index`` sorted by destination
    (stable); ``perm`` (CSC position to edge id) is None where the edges come sorted already,
    so that edge ids need no mapping."""
    edge_index = edge_index.cpu()
    row, col = edge_index[0].long(), edge_index[1].long()
    check_edge_index(row, col, num_nodes, num_nodes)
    perm = None
    if col.numel() > 1 and not bool((col[1:] >= col[:-1]).all()):
        col, perm = torch.sort(col, stable=True)
        row = row[perm]
    colptr = torch.zeros(num_nodes + 1, dtype=torch.int64)
    colptr[1:] = torch.cumsum(torch.bincount(col, minlength=num_nodes), 0)
    return colptr, row.contiguous(), perm


def node_features(data):
    """The node-level tensors and arrays of a ``Data`` that a feature store holds: one row per
    node along dimension 0."""
    n = data.num_nodes
    out = {}
    for name in data.node_attrs():
        value = data[name]
        if (isinstance(value, (torch.Tensor, np.ndarray)) and value.ndim >= 1
                and value.shape[0] == n and data.__cat_dim__(name, value) == 0):
            out[name] = value
    return out


def own_rows(x, offsets, rank, num_nodes):
    """This rank's rows of a table loaded with shard=True: ``x`` itself when it holds its part
    only (the part's file), else its range of the whole table."""
    return x[offsets[rank]:offsets[rank + 1]] if x.shape[0] == num_nodes else x


def stores(data, device=None, *, method="auto", max_threads=0, **placements):
    """The ``(FeatureStore, GraphStore)`` pair over a PyG ``Data`` or ``HeteroData``, or a
    directgnn :class:`~directgnn.Dataset` or :class:`~directgnn.HeteroDataset`.

    Node-level tensors and numpy arrays (``x``, ``y``, masks, memory maps, ...) are put into the
    feature store in place. A directgnn dataset's CSR graph is its neighbour lists, stored as
    the CSC in place; a ``Data``'s COO ``edge_index`` is sorted into a CSC once (its permutation
    kept, so ``e_id`` indexes the original edges). Edge-level and graph-level attributes have no
    place in a feature store (PyG's loaders read node attributes from it); a
    :class:`directgnn.pyg.NeighborLoader` over the ``Data`` itself carries them. A typed
    graph's node features are grouped by node type (``group_name``) and its edge indices keyed
    by edge type ``(src, rel, dst)``, each relation's CSR stored as PyG's CSC. ``placements``
    (``features``, ``features_per_type``, ``disk_io``, ``disk_direct``) go to the
    :class:`FeatureStore`; a directgnn dataset's tables keep their files for "disk". A directgnn
    dataset loaded with ``shard=True`` puts each feature table (each type's, on a
    heterogeneous one) as a table sharded over the ranks (:meth:`FeatureStore.put_sharded`).
    """
    feature_store = FeatureStore(device, method=method, max_threads=max_threads, **placements)
    graph_store = GraphStore()
    if isinstance(data, (HeteroData, HeteroDataset)):
        from ._pyg_hetero import put_dataset, put_hetero_data
        put = put_hetero_data if isinstance(data, HeteroData) else put_dataset
        put(feature_store, graph_store, data)
        feature_store.check_placements()
        return feature_store, graph_store
    if isinstance(data, Dataset):
        n = data.num_nodes
        feature_store._files[(None, "x")] = data.features_path or ""
        if getattr(data, "shard_rank", None) is not None:
            # directgnn.load(DIR, shard=True): this rank's part, the others' rows fetched.
            offsets = data.partition["offsets"]
            feature_store.put_sharded(own_rows(data.x, offsets, data.shard_rank, n), offsets, "x")
        else:
            feature_store.put_tensor(data.x, group_name=None, attr_name="x", index=None)
        feature_store.put_tensor(data.y, group_name=None, attr_name="y", index=None)
        colptr, row = data.indptr, data.indices
    elif isinstance(data, Data):
        n = data.num_nodes
        for name, value in node_features(data).items():
            feature_store.put_tensor(value, group_name=None, attr_name=name, index=None)
        colptr, row, graph_store.edge_permutation = coo_to_csc(data.edge_index, n)
    else:
        raise TypeError("directgnn.pyg.stores: expected a torch_geometric Data or a directgnn "
                        f"Dataset, got {type(data).__name__}")
    graph_store.put_edge_index((row, colptr), edge_type=None, layout="csc", size=(n, n))
    feature_store.check_placements()
    return feature_store, graph_store


__all__ = ["FeatureStore", "GraphStore", "stores"]
