"""directgnn behind PyG's NeighborLoader, checked against PyG's meaning directly (PyG's own
loader cannot run here: it needs pyg-lib or torch-sparse)."""

import os
import pickle
import sys

import pytest
import torch
from torch_geometric.data import Data, EdgeAttr, HeteroData, TensorAttr
from torch_geometric.loader import NeighborLoader as PygNeighborLoader
from torch_geometric.nn.models import GraphSAGE

import directgnn
from conftest import HERE, needs_gpu
from directgnn import pyg

sys.path.insert(0, os.path.join(HERE, "../../examples"))
import pyg_sage  # noqa: E402


@pytest.fixture(scope="module")
def data():
    ds = directgnn.datasets.synthetic(1500, 6, 8, seed=9)
    d = pyg_sage.as_pyg(ds)
    d.train_mask = torch.rand(d.num_nodes, generator=torch.Generator().manual_seed(1)) < 0.2
    return d


def edge_set(d):
    return set(zip(d.edge_index[0].tolist(), d.edge_index[1].tolist()))


def test_batches_have_pygs_meaning(data):
    seeds = data.train_mask.nonzero().view(-1)
    loader = pyg.NeighborLoader(data, num_neighbors=[4, 3], batch_size=50,
                                input_nodes=data.train_mask, device="cpu")
    edges, sizes, seen = edge_set(data), [], []
    for batch in loader:
        n_id, bs = batch.n_id, batch.batch_size
        sizes.append(bs)
        seen.append(n_id[:bs])
        assert n_id.unique().numel() == n_id.numel()
        row, col = batch.edge_index
        assert int(batch.edge_index.max()) < n_id.numel()
        assert all(e in edges for e in zip(n_id[row].tolist(), n_id[col].tolist()))
        assert torch.equal(data.edge_index[:, batch.e_id], n_id[batch.edge_index])
        assert torch.equal(batch.x, data.x[n_id]) and torch.equal(batch.y, data.y[n_id])
        assert torch.equal(batch.train_mask, data.train_mask[n_id])
        assert sum(batch.num_sampled_nodes) == n_id.numel()
        assert sum(batch.num_sampled_edges) == row.numel()
        assert batch.num_sampled_nodes[0] == bs
    full, rest = divmod(seeds.numel(), 50)
    assert sizes == [50] * full + ([rest] if rest else [])
    assert torch.equal(torch.cat(seen), seeds)  # seeds first, in order (no shuffling)


def test_every_neighbour_gives_the_whole_two_hop_subgraph(data):
    seeds = torch.tensor([3, 500, 1499])
    loader = pyg.NeighborLoader(data, num_neighbors=[-1, -1], batch_size=3, input_nodes=seeds,
                                device="cpu")
    batch = next(iter(loader))
    # Independently: every edge into a node within one hop (upstream) of the seeds.
    src, dst = data.edge_index
    hop1 = set(src[torch.isin(dst, seeds)].tolist()) | set(seeds.tolist())
    into = torch.isin(dst, torch.tensor(sorted(hop1)))
    want = set(zip(src[into].tolist(), dst[into].tolist()))
    n_id = batch.n_id
    got = set(zip(n_id[batch.edge_index[0]].tolist(), n_id[batch.edge_index[1]].tolist()))
    assert got == want and batch.edge_index.size(1) == len(want)


def test_trim_to_layer_gives_the_same_seed_outputs(data):
    torch.manual_seed(0)
    model = GraphSAGE(data.num_features, 16, num_layers=3, out_channels=5).eval()
    loader = pyg.NeighborLoader(data, num_neighbors=[5, 4, 3], batch_size=40,
                                input_nodes=data.train_mask, device="cpu")
    batch = next(iter(loader))
    full = model(batch.x, batch.edge_index)[: batch.batch_size]
    trimmed = model(batch.x, batch.edge_index,
                    num_sampled_nodes_per_hop=batch.num_sampled_nodes,
                    num_sampled_edges_per_hop=batch.num_sampled_edges)[: batch.batch_size]
    assert torch.allclose(full, trimmed, atol=1e-5)


def test_the_stores_keep_tensors_in_place(data):
    fs, gs = pyg.stores(data, "cpu")
    assert fs.get_tensor(None, "x", None).data_ptr() == data.x.data_ptr()
    assert {a.attr_name for a in fs.get_all_tensor_attrs()} == {"x", "y", "train_mask"}
    assert fs.get_tensor_size(None, "x", None) == tuple(data.x.shape)
    ids = torch.tensor([7, 0, 7, 1499])
    x, y = fs.multi_get_tensor([fs._tensor_attr_cls(None, n, ids) for n in ("x", "y")])
    assert torch.equal(x, data.x[ids]) and torch.equal(y, data.y[ids])
    assert torch.equal(fs.get_tensor(None, "y", slice(0, 5)), data.y[:5])
    ds = directgnn.datasets.synthetic(300, 4, 3, seed=1)
    fs2, gs2 = pyg.stores(ds, "cpu")
    colptr, row = gs2.csc_in_place()
    assert colptr.data_ptr() == ds.indptr.data_ptr() and row.data_ptr() == ds.indices.data_ptr()
    assert fs2.remove_tensor(None, "y", None) and fs2.get_tensor_size(None, "y", None) is None
    with pytest.raises(IndexError, match="out of range"):
        fs.get_tensor(None, "x", torch.tensor([1500]))


def test_the_feature_store_round_trips_as_pygs_reference_store():
    fs = pyg.FeatureStore("cpu")
    tensor = torch.tensor([[0, 0, 0], [1, 1, 1], [2, 2, 2]])
    attr = TensorAttr(None, "feat", None)
    assert fs.put_tensor(tensor, attr)
    assert torch.equal(fs.get_tensor(attr), tensor)
    assert torch.equal(fs[None, "feat", None], tensor)
    assert torch.equal(fs.get_tensor(None, "feat", torch.tensor([0, 2])), tensor[[0, 2]])
    assert torch.equal(fs.get_tensor(None, "feat", torch.tensor([], dtype=torch.long)),
                       tensor[:0])
    assert fs.get_tensor_size(attr) == (3, 3)
    assert fs.get_all_tensor_attrs() == [TensorAttr(None, "feat")]
    assert fs.update_tensor(tensor + 1, attr)
    assert torch.equal(fs.get_tensor(attr), tensor + 1)
    assert fs.remove_tensor(attr) and not fs.remove_tensor(attr)
    with pytest.raises(KeyError):
        fs.get_tensor(attr)
    assert fs.get_all_tensor_attrs() == []


def test_the_graph_store_round_trips_as_pygs_reference_store():
    gs = pyg.GraphStore()
    row, col = torch.tensor([0, 1, 1, 2]), torch.tensor([1, 0, 2, 1])
    coo = EdgeAttr(None, "coo", size=(3, 3))
    assert gs.put_edge_index((row, col), coo)
    got = gs.get_edge_index(coo)
    assert got[0] is row and got[1] is col  # kept in place
    assert gs.get_all_edge_attrs() == [coo]
    csc_row, colptr, perm = gs.csc()
    assert colptr.tolist() == [0, 1, 3, 4]
    assert torch.equal(csc_row, row[perm])
    assert torch.equal(gs.csc_in_place()[0], colptr)
    assert gs.remove_edge_index(coo) and not gs.remove_edge_index(coo)
    with pytest.raises(KeyError):
        gs.get_edge_index(coo)


def test_writing_rows_reaches_the_tensor_put():
    fs = pyg.FeatureStore("cpu")
    t = torch.zeros(6, 2)
    fs.put_tensor(t, None, "x", None)
    fs.put_tensor(torch.ones(2, 2), None, "x", torch.tensor([1, 4]))
    assert t[1].tolist() == [1, 1] and t[4].tolist() == [1, 1] and t[0].tolist() == [0, 0]
    with pytest.raises(ValueError, match="method"):
        pyg.FeatureStore("cpu", method="fast")


def test_the_stores_follow_pygs_reference_stores():
    fs = pyg.FeatureStore()
    # Rows written at an index into a tensor not there yet create it, as far as the index goes.
    fs.put_tensor(torch.tensor([[1.0], [2.0]]), "paper", "feat", torch.tensor([3, 1]))
    assert fs.get_tensor("paper", "feat", None).view(-1).tolist() == [0, 2, 0, 1]
    assert torch.equal(fs["paper", "feat", torch.tensor([3])], torch.tensor([[1.0]]))
    assert torch.equal(fs["paper"].feat[:], fs.get_tensor("paper", "feat", None))
    with pytest.raises(KeyError):
        fs.get_tensor("author", "feat", None)  # group names are part of the key
    # A tensor that is not contiguous is copied once, with a note.
    with pytest.warns(UserWarning, match="not contiguous"):
        fs.put_tensor(torch.arange(12.0).view(4, 3)[:, ::2], None, "w", None)
    assert fs.get_tensor(None, "w", torch.tensor([1])).tolist() == [[3.0, 5.0]]
    # Rows come back where the table is when the store has no device of its own.
    assert fs.get_tensor(None, "w", torch.tensor([0])).device.type == "cpu"
    gs = pyg.GraphStore()
    edges = (torch.tensor([0, 1]), torch.tensor([1, 2]))
    gs.put_edge_index(edges, ("v", "to", "v"), "coo", size=(3, 3))
    assert gs.get_edge_index(("v", "to", "v"), "coo", size=(3, 3))[0] is edges[0]
    with pytest.raises(KeyError):  # the size is part of the key
        gs.get_edge_index(("v", "to", "v"), "coo", size=(4, 4))
    with pytest.raises(KeyError):
        gs.get_edge_index(("v", "to", "v"), "coo", is_sorted=True, size=(3, 3))
    with pytest.raises(NotImplementedError, match="heterogeneous"):
        gs.csc_in_place()  # a typed edge: stored, but not sampled yet


def test_edge_and_graph_attributes_travel_as_in_pyg():
    edge_index = torch.tensor([[1, 2, 3, 0, 4, 2], [0, 0, 0, 1, 1, 4]])
    d = Data(x=torch.arange(5.0).view(5, 1), edge_index=edge_index,
             edge_weight=torch.tensor([10.0, 20, 30, 40, 50, 60]),
             edge_attr=torch.arange(12.0).view(6, 2), name="toy", scale=torch.tensor([[7.0]]))
    loader = pyg.NeighborLoader(d, num_neighbors=[-1, -1], batch_size=2,
                                input_nodes=torch.tensor([0, 1]))
    batch = next(iter(loader))
    assert batch.name == "toy" and torch.equal(batch.scale, d.scale)
    assert torch.equal(batch.edge_weight, d.edge_weight[batch.e_id])
    assert torch.equal(batch.edge_attr, d.edge_attr[batch.e_id])
    assert torch.equal(d.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
    assert torch.equal(batch.x, d.x[batch.n_id])
    assert batch.num_nodes == batch.n_id.numel()
    assert torch.equal(loader.data.x, d.x)  # the loader keeps the user's Data whole


def test_a_memory_mapped_x_is_gathered(tmp_path):
    import numpy as np
    path = tmp_path / "x.npy"
    x = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(30, 4))
    x[:] = np.arange(120, dtype=np.float32).reshape(30, 4)
    x.flush()
    d = Data(x=np.load(path, mmap_mode="r"), edge_index=torch.randint(0, 30, (2, 90)))
    batch = next(iter(pyg.NeighborLoader(d, num_neighbors=[3], batch_size=5)))
    assert isinstance(batch.x, torch.Tensor)
    assert torch.equal(batch.x, torch.from_numpy(x[batch.n_id.numpy()]))


def test_enums_and_strings_alike_and_any_store_pair(data):
    from torch_geometric.sampler.base import SubgraphType
    from torch_geometric.testing import MyFeatureStore, MyGraphStore
    for subgraph_type in (SubgraphType.induced, "induced"):
        loader = pyg.NeighborLoader(data, num_neighbors=[2], subgraph_type=subgraph_type)
        assert loader.node_sampler.subgraph_type == SubgraphType.induced
    with pytest.raises(ValueError, match="sideways"):
        pyg.NeighborLoader(data, num_neighbors=[2], subgraph_type="sideways")
    # PyG's reference stores, which directgnn only reads through PyG's interfaces.
    fs, gs = MyFeatureStore(), MyGraphStore()
    fs.put_tensor(data.x, group_name=None, attr_name="x", index=None)
    gs.put_edge_index((data.edge_index[0], data.edge_index[1]), edge_type=None, layout="coo",
                      size=(data.num_nodes, data.num_nodes))
    loader = pyg.NeighborLoader((fs, gs), num_neighbors=[3, 2], batch_size=40,
                                input_nodes=torch.arange(100))
    for batch in loader:
        assert torch.equal(batch.x, data.x[batch.n_id])
        assert torch.equal(data.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])


def test_what_is_not_supported_says_so(data):
    with pytest.raises(NotImplementedError, match="replace"):
        pyg.NeighborLoader(data, num_neighbors=[2], input_nodes=data.train_mask, replace=True)
    with pytest.raises(NotImplementedError, match="FeatureStore, GraphStore"):
        pyg.NeighborLoader(pyg.stores(data), num_neighbors=[2], weight_attr="edge_weight")
    with pytest.raises(TypeError, match="another process"):
        pickle.dumps(pyg.stores(data, "cpu")[0])


def shuffled_edges(d):
    """``d`` with its edges in a random order (no longer sorted by destination) and an
    ``edge_attr`` holding each edge's position in ``d``."""
    order = torch.randperm(d.num_edges, generator=torch.Generator().manual_seed(3))
    out = d.clone()
    out.edge_index = d.edge_index[:, order]
    out.edge_attr = order.float().view(-1, 1)
    return out


def test_edge_ids_name_the_users_edges_in_any_order(data):
    """e_id indexes the user's edge_index whether or not it came sorted by destination; a
    sorted one needs no permutation (PyG's filter would map every e_id through it)."""
    assert pyg.NeighborSampler(data, [2]).edge_permutation is None
    shuffled = shuffled_edges(data)
    assert pyg.NeighborSampler(shuffled, [2]).edge_permutation is not None
    for d in (data, shuffled):
        loader = pyg.NeighborLoader(d, num_neighbors=[4, 3], batch_size=64,
                                    input_nodes=d.train_mask)
        for batch in loader:
            src, dst = batch.n_id[batch.edge_index[0]], batch.n_id[batch.edge_index[1]]
            assert torch.equal(torch.stack([src, dst]), d.edge_index[:, batch.e_id])
            if "edge_attr" in d:
                assert torch.equal(batch.edge_attr, d.edge_attr[batch.e_id])


def test_the_sampler_crosses_processes_by_rebuilding(data):
    data = shuffled_edges(data)  # with an edge permutation to carry
    sampler = pyg.NeighborSampler(data, [3, 2], seed=4)
    copy = pickle.loads(pickle.dumps(sampler))
    seeds = torch.tensor([1, 2, 3])
    a = sampler._sampler.sample(seeds, seed=5)
    b = copy._sampler.sample(seeds, seed=5)
    assert torch.equal(a.node, b.node) and torch.equal(a.row, b.row)
    assert torch.equal(copy.edge_permutation, sampler.edge_permutation)


def test_the_loader_line_is_the_only_change(data):
    """PyG's and directgnn's loaders take the same arguments; PyG's cannot sample here."""
    kwargs = dict(num_neighbors=[3, 3], batch_size=32, input_nodes=data.train_mask)
    batch = next(iter(pyg.NeighborLoader(data, **kwargs, device="cpu")))
    assert batch.batch_size == 32 and isinstance(batch, Data)
    used = {"x", "y", "train_mask", "edge_index", "n_id", "e_id", "batch_size"}
    assert used | {"num_sampled_nodes", "num_sampled_edges"} <= set(batch.keys())
    try:
        theirs = next(iter(PygNeighborLoader(data, **kwargs)))
    except ImportError as error:  # neither pyg-lib nor torch-sparse installed
        assert "pyg-lib" in str(error)
        return
    assert used <= set(theirs.keys())  # torch-sparse's sampler gives no per-hop counts
    assert theirs.batch_size == batch.batch_size


def test_stock_graphsage_learns_cora(cora_path):
    scores = pyg_sage.main(["--dataset", cora_path, "--seeds", "0", "1", "2"])
    assert sum(scores) / len(scores) >= 0.76


@needs_gpu
def test_gpu_stores_and_sampler(data):
    loader = pyg.NeighborLoader(data, num_neighbors=[4, 3], batch_size=50,
                                input_nodes=data.train_mask, device="cuda", sampler="cuda")
    for batch in loader:
        assert batch.x.is_cuda
        n_id = batch.n_id.cpu()
        assert torch.equal(batch.x.cpu(), data.x[n_id])
        assert torch.equal(batch.y.cpu(), data.y[n_id])
        edges = edge_set(data)
        ei = batch.edge_index.cpu()
        assert all(e in edges for e in zip(n_id[ei[0]].tolist(), n_id[ei[1]].tolist()))
    fs, _ = pyg.stores(data, "cuda")
    assert fs.is_pinned("x")


@needs_gpu
def test_every_gather_method_gives_the_same_batches(data):
    batches = {}
    for method in ("auto", "aligned", "zero-copy", "cpu-copy"):
        fs, gs = pyg.stores(data, "cuda", method=method)
        loader = pyg.NeighborLoader((fs, gs), num_neighbors=[4, 3], batch_size=64,
                                    input_nodes=data.train_mask, seed=3)
        batches[method] = [(b.n_id.cpu(), b.x.cpu(), b.y.cpu()) for b in loader]
        assert all(torch.equal(x, data.x[n]) for n, x, _ in batches[method])
    first = batches["auto"]
    for method, got in batches.items():
        assert len(got) == len(first)
        assert all(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
                   for a, b in zip(first, got)), method


# One orientation everywhere: an edge src -> dst carries messages from src to dst (PyG's
# source_to_target flow), so sampling for dst reaches src and sampling for src does not reach
# dst; a directgnn dataset's neighbour lists are read the same way (docs/formats.md).
def test_messages_flow_from_source_to_target():
    edge_index = torch.tensor([[0, 0, 3], [1, 2, 2]])  # 0 -> 1, 0 -> 2, 3 -> 2
    d = Data(x=torch.randn(4, 2), y=torch.zeros(4, dtype=torch.long), edge_index=edge_index)
    sampler = pyg.NeighborSampler(d, [-1])
    reached = {}
    for seed in range(4):
        s = sampler._sampler.sample(torch.tensor([seed]))
        reached[seed] = set(s.node[1:].tolist())
    assert reached == {0: set(), 1: {0}, 2: {0, 3}, 3: set()}
    ds = directgnn.Dataset("tiny", torch.tensor([0, 0, 1, 3, 3]), torch.tensor([0, 0, 3]),
                           d.x, d.y, 1)
    assert pyg.stores(ds)[1].csc_in_place()[1].tolist() == [0, 0, 3]
