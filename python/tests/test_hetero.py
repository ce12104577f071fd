"""Heterogeneous graphs from Python: the dataset directory, HeteroData round trips, the typed
loader, and directgnn.pyg's heterogeneous sampler and loader against PyG's field meanings."""

import json
import os

import numpy as np
import pytest
import torch

import directgnn

pyg = pytest.importorskip("torch_geometric")
from torch_geometric.sampler import HeteroSamplerOutput, NodeSamplerInput  # noqa: E402

import directgnn.pyg  # noqa: E402

PAPER = "paper"
WRITES = ("author", "writes", "paper")


@pytest.fixture(scope="module")
def mag():
    return directgnn.hetero.mag(0.002, seed=1)


@pytest.fixture(scope="module")
def mag_pyg(mag):
    return mag.to_pyg()


def edge_set(edge_index):
    return set(map(tuple, edge_index.t().tolist()))


def write_numpy_dir(path):
    """A two-type heterogeneous dataset directory written with numpy alone (docs/formats.md)."""
    rng = np.random.default_rng(0)
    os.makedirs(path / "nodes" / "item")
    np.save(path / "nodes" / "item" / "features.npy", rng.random((6, 3), dtype=np.float32))
    csr = {("user", "buys", "item"): ([0, 1, 3, 3, 4, 6, 6], [2, 0, 1, 3, 0, 2]),
           ("item", "rev_buys", "user"): ([0, 2, 3, 5, 6], [1, 4, 0, 0, 4, 2])}
    for (s, r, d), (indptr, indices) in csr.items():
        rel = path / "relations" / f"{s}___{r}___{d}"
        os.makedirs(rel)
        np.save(rel / "indptr.npy", np.array(indptr, dtype=np.int64))
        np.save(rel / "indices.npy", np.array(indices, dtype=np.int32))
    np.save(path / "labels.npy", np.array([0, 1, 1, 0, -1, 1], dtype=np.int64))
    for name, ids in (("train", [0, 1, 2]), ("val", [3]), ("test", [5])):
        np.save(path / f"{name}_idx.npy", np.array(ids, dtype=np.int64))
    meta = {"format_version": 2, "kind": "heterogeneous", "name": "shop",
            "node_types": [{"name": "item", "count": 6, "feat_dim": 3, "feat_dtype": "float32"},
                           {"name": "user", "count": 4, "feat_dim": 0}],
            "relations": [{"src": s, "rel": r, "dst": d, "num_edges": len(ix)}
                          for (s, r, d), (_, ix) in csr.items()],
            "target": {"type": "item", "num_classes": 2}, "num_splits": 1}
    (path / "meta.json").write_text(json.dumps(meta))
    return csr


def test_load_numpy_written_dir(tmp_path):
    csr = write_numpy_dir(tmp_path / "shop")
    ds = directgnn.load(tmp_path / "shop")
    assert isinstance(ds, directgnn.HeteroDataset)
    assert ds.num_nodes == {"item": 6, "user": 4} and ds.target == "item"
    assert list(ds.x) == ["item"] and ds.x["item"].shape == (6, 3)
    assert ds.edge_types == list(csr)
    for et, (indptr, indices) in csr.items():
        assert ds.indptr[et].tolist() == indptr and ds.indices[et].tolist() == indices
    assert ds.y.tolist() == [0, 1, 1, 0, -1, 1] and ds.num_classes == 2
    assert ds.train_idx.tolist() == [0, 1, 2] and ds.test_idx.tolist() == [5]
    assert ds.metadata() == (["item", "user"], list(csr))


def test_mag240m_shape_labels_a_few_papers_with_float16_features():
    ds = directgnn.hetero.mag(0.002, shape="mag240m", feat_dim=16, num_classes=8)
    assert list(ds.num_nodes) == ["paper", "author", "institution"]
    assert ds.num_nodes["paper"] == 243503 and ds.target == "paper" and ds.num_classes == 8
    assert ds.x["paper"].dtype == torch.float16 and ds.x["paper"].shape == (243503, 16)
    assert ("author", "writes", "paper") in ds.edge_types
    labelled = torch.cat([ds.train_idx, ds.val_idx, ds.test_idx])
    assert abs(len(labelled) - 0.011484 * 243503) <= 1
    assert (ds.y[labelled] >= 0).all() and int((ds.y >= 0).sum()) == len(labelled)
    with pytest.raises(ValueError, match="use ogbn-mag or mag240m"):
        directgnn.hetero.mag(0.002, shape="mag100m")


def test_save_and_load_round_trip(mag, tmp_path):
    mag.save(tmp_path / "mag")
    back = directgnn.load(tmp_path / "mag")
    assert back.num_nodes == mag.num_nodes and back.edge_types == mag.edge_types
    assert torch.equal(back.x[PAPER], mag.x[PAPER]) and torch.equal(back.y, mag.y)
    for et in mag.edge_types:
        assert torch.equal(back.indptr[et], mag.indptr[et])
        assert torch.equal(back.indices[et].long(), mag.indices[et].long())
    for k in ("train", "val", "test"):
        assert torch.equal(back.split(0)[k], mag.split(0)[k])
    with pytest.raises(RuntimeError, match="already exists"):
        mag.save(tmp_path / "mag")


def test_heterodata_round_trip(mag, mag_pyg):
    assert mag_pyg.metadata() == mag.metadata()
    back = directgnn.HeteroDataset.from_pyg(mag_pyg)
    assert back.target == PAPER and back.num_classes == mag.num_classes
    for et in mag.edge_types:
        assert edge_set(back.edge_index(et)) == edge_set(mag_pyg[et].edge_index)
        assert torch.equal(back.indptr[et], mag.indptr[et])
    for k in ("train", "val", "test"):
        assert torch.equal(back.split(0)[k], mag.split(0)[k].sort().values)


def batches(loader):
    return [(b.seeds, b.node, [(blk.num_src, blk.num_dst, {et: (e.indptr, e.indices) for et, e in
                                                             blk.edges.items()})
                               for blk in b.blocks]) for b in loader]


def same(a, b):
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def test_loader_deterministic_for_a_seed(mag):
    make = lambda **kw: directgnn.HeteroLoader(mag, mag.train_idx, fanouts=[4, 3],  # noqa
                                               batch_size=200, **kw)
    first = batches(make(seed=5))
    assert same(first, batches(make(seed=5, prefetch=3, workers=2)))
    assert same(first, batches(make(seed=5, prefetch=0)))
    assert not same(first, batches(make(seed=6)))


def test_loader_places_each_type_and_reads_disk_tables_as_memory(mag, tmp_path):
    mag.save(tmp_path / "mag")
    on_file = directgnn.load(tmp_path / "mag")
    assert on_file.features_path[PAPER].endswith("paper/features.npy")

    def xs(loader):
        return [b.x[PAPER] for b in loader]

    make = lambda data, **kw: directgnn.HeteroLoader(data, data.train_idx, fanouts=[4, 3],  # noqa
                                                     batch_size=200, seed=2, **kw)
    memory = make(on_file)
    assert "paper host (auto: fits in RAM)" in memory.placements
    assert memory.device == torch.device("cpu")
    disk = make(on_file, features="disk", feature_cache_gib=1e-4, feature_cache_rank="degree")
    assert disk.placements.startswith("paper disk")
    assert "shared by paper" in disk.feature_cache and "ranked by in-degree" in disk.feature_cache
    assert same(xs(memory), xs(disk))
    # A numpy memory map in a HeteroData is read from its file, the same rows again.
    data = on_file.to_pyg()
    data[PAPER].x = np.load(on_file.features_path[PAPER], mmap_mode="r")
    mapped = directgnn.HeteroDataset.from_pyg(data)
    assert mapped.features_path[PAPER] == on_file.features_path[PAPER]
    assert same(xs(make(mapped)), xs(make(mapped, features_per_type={PAPER: "disk"})))
    # A UnifiedTensor is read in place.
    data[PAPER].x = directgnn.UnifiedTensor(mag.x[PAPER])
    assert directgnn.HeteroDataset.from_pyg(data).x[PAPER].data_ptr() == mag.x[PAPER].data_ptr()


def test_loader_placements_are_checked_naming_type_and_fix(mag):
    make = lambda **kw: directgnn.HeteroLoader(mag, mag.train_idx, fanouts=[2], **kw)  # noqa
    with pytest.raises(ValueError, match="holds the table in memory, not in a file"):
        make(features="disk")
    with pytest.raises(ValueError, match="node type 'author' has no feature table"):
        make(features_per_type={"author": "host"})
    with pytest.raises(ValueError, match="no node type 'venue'"):
        make(features_per_type={"venue": "host"})
    with pytest.raises(ValueError, match="no node type's table is placed on disk"):
        make(feature_cache_gib=1.0)


def test_loader_blocks_read_the_graph(mag):
    fanouts = {et: [3, 2] for et in mag.edge_types}
    fanouts[WRITES] = [5, -1]
    loader = directgnn.HeteroLoader(mag, mag.train_idx, fanouts=fanouts, batch_size=100,
                                    shuffle=False)
    assert len(loader) == (mag.train_idx.numel() + 99) // 100
    batch = next(iter(loader))
    assert torch.equal(batch.seeds, mag.train_idx[:100])
    assert torch.equal(batch.node[PAPER][:100], batch.seeds)
    assert torch.equal(batch.y, mag.y[batch.seeds])
    assert torch.equal(batch.x[PAPER], mag.x[PAPER][batch.node[PAPER]])
    assert batch.blocks[-1].num_dst[PAPER] == 100
    for layer, block in enumerate(batch.blocks):
        hop = len(batch.blocks) - 1 - layer
        for et, b in block.edges.items():
            src, dst = b.edge_index
            glob = torch.stack([batch.node[et[0]][src], batch.node[et[2]][dst]])
            assert edge_set(glob) <= edge_set(mag.edge_index(et)), et
            assert b.num_dst == block.num_dst[et[2]] and bool((src < b.num_src).all())
            if fanouts[et][hop] > 0 and b.num_dst:
                assert int(b.indptr.diff().max()) <= fanouts[et][hop]


def test_sampler_from_any_type_is_repeatable(mag):
    sampler = directgnn.HeteroSampler(mag, [3, 2], seed=4)
    seeds = torch.tensor([5, 0, 9])
    a = sampler.sample("author", seeds, seed=11)
    assert torch.equal(a.node["author"][:3], seeds) and a.blocks[-1].num_dst["author"] == 3
    b = directgnn.HeteroSampler(mag, [3, 2]).sample("author", seeds, seed=11)
    assert same(batches([a]), batches([b]))
    assert not same(batches([a]), batches([sampler.sample("author", seeds)]))


def test_loader_refuses_bad_fanouts_and_homogeneous_loader(mag):
    with pytest.raises(ValueError, match="miss"):
        directgnn.HeteroLoader(mag, mag.train_idx, fanouts={WRITES: [5, 5]})
    with pytest.raises(TypeError, match="HeteroLoader"):
        directgnn.Loader(mag, mag.train_idx, fanouts=[5])


def check_pyg_output(out, data, seeds, fanouts):
    """PyG's field meanings: seeds first; every edge of its type, row -> col; fan-outs per
    hop per edge type; per-hop counts adding up."""
    assert isinstance(out, HeteroSamplerOutput)
    assert torch.equal(out.node[PAPER][:seeds.numel()], seeds)
    starts = {t: np.cumsum([0] + out.num_sampled_nodes[t]) for t in out.node}
    for t, nodes in out.node.items():
        assert sum(out.num_sampled_nodes[t]) == nodes.numel()
        assert nodes.unique().numel() == nodes.numel()
    for et in data.edge_types:
        row, col, edge = out.row[et], out.col[et], out.edge[et]
        assert sum(out.num_sampled_edges[et]) == row.numel() == col.numel() == edge.numel()
        pairs = torch.stack([out.node[et[0]][row], out.node[et[2]][col]])
        assert torch.equal(data[et].edge_index[:, edge], pairs), et
        first = 0
        for hop, count in enumerate(out.num_sampled_edges[et]):
            cols = col[first:first + count]
            first += count
            lo, hi = starts[et[2]][hop], starts[et[2]][hop + 1]
            assert bool(((cols >= lo) & (cols < hi)).all()), (et, hop)
            if fanouts[et][hop] >= 0 and count:
                assert int(torch.bincount(cols).max()) <= fanouts[et][hop], (et, hop)


def test_pyg_sampler_field_meanings(mag_pyg):
    fanouts = {et: [4, 2] for et in mag_pyg.edge_types}
    fanouts[("paper", "cites", "paper")] = [0, 3]
    fanouts[WRITES] = [-1, 1]
    sampler = directgnn.pyg.NeighborSampler(mag_pyg, fanouts, seed=3)
    seeds = torch.tensor([7, 3, 100, 42])
    out = sampler.sample_from_nodes(NodeSamplerInput(input_id=torch.arange(4), node=seeds,
                                                     input_type=PAPER))
    check_pyg_output(out, mag_pyg, seeds, fanouts)
    assert out.num_sampled_edges[("paper", "cites", "paper")][0] == 0
    assert out.num_sampled_nodes[PAPER][0] == 4 and out.num_sampled_nodes["author"][0] == 0
    writes = mag_pyg[WRITES].edge_index
    degree = int((writes[1] == 7).sum())
    assert int((out.node[PAPER][out.col[WRITES][:out.num_sampled_edges[WRITES][0]]]
                == 7).sum()) == degree  # -1: every neighbour


def test_pyg_neighbor_loader_batches(mag_pyg):
    data = mag_pyg.clone()
    data[WRITES].edge_attr = torch.arange(data[WRITES].num_edges, dtype=torch.float) * 2
    loader = directgnn.pyg.NeighborLoader(data, num_neighbors=[5, 3], batch_size=50,
                                          input_nodes=(PAPER, data[PAPER].train_mask))
    batch = next(iter(loader))
    assert batch[PAPER].batch_size == 50
    assert torch.equal(batch[PAPER].n_id[:50], data[PAPER].train_mask.nonzero().view(-1)[:50])
    assert torch.equal(batch[PAPER].x, data[PAPER].x[batch[PAPER].n_id])
    assert torch.equal(batch[PAPER].y, data[PAPER].y[batch[PAPER].n_id])
    assert torch.equal(batch[WRITES].edge_attr, data[WRITES].edge_attr[batch[WRITES].e_id])
    for et in data.edge_types:
        ei = batch[et].edge_index
        pairs = torch.stack([batch[et[0]].n_id[ei[0]], batch[et[2]].n_id[ei[1]]])
        assert torch.equal(data[et].edge_index[:, batch[et].e_id], pairs)


@pytest.mark.parametrize("source", ["heterodata", "dataset"])
def test_pyg_loader_over_store_pair(mag, mag_pyg, source):
    feature_store, graph_store = directgnn.pyg.stores(mag_pyg if source == "heterodata" else mag)
    loader = directgnn.pyg.NeighborLoader((feature_store, graph_store), num_neighbors=[4, 2],
                                          batch_size=64, input_nodes=(PAPER, mag.train_idx))
    batch = next(iter(loader))
    assert torch.equal(batch[PAPER].x, mag.x[PAPER][batch[PAPER].n_id])
    for et in mag.edge_types:
        ei = batch[et].edge_index
        pairs = torch.stack([batch[et[0]].n_id[ei[0]], batch[et[2]].n_id[ei[1]]])
        assert edge_set(pairs) <= edge_set(mag_pyg[et].edge_index), et


def test_pyg_loaders_place_each_type_and_read_disk_tables_as_memory(mag, tmp_path):
    mag.save(tmp_path / "mag")
    on_file = directgnn.load(tmp_path / "mag")
    data = on_file.to_pyg()
    data[PAPER].x = np.load(on_file.features_path[PAPER], mmap_mode="r")

    def papers(loader):
        return [(b[PAPER].n_id, b[PAPER].x) for b in loader]

    make = lambda source, **kw: directgnn.pyg.NeighborLoader(  # noqa: E731
        source, num_neighbors=[3, 2], batch_size=128, input_nodes=(PAPER, on_file.train_idx),
        shuffle=False, **kw)
    memory = papers(make(data))
    disk = make(data, features_per_type={PAPER: "disk"}, disk_io="pread")
    assert disk._features.is_on_disk("x", PAPER)
    assert same(memory, papers(disk))
    # A directgnn dataset directory's tables keep their files; host keeps them as they are.
    assert same(papers(make(on_file)), papers(make(on_file, features="disk")))
    assert same(memory, papers(make(data, features="host")))
    with pytest.raises(ValueError, match="none of its tensors maps a .npy file"):
        make(mag.to_pyg(), features_per_type={PAPER: "disk"})
    with pytest.raises(ValueError, match="is not one of auto, host, pinned, device, disk"):
        make(data, features="floppy")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no GPU is visible"):
            make(data, features="pinned")


def test_pyg_refuses_what_it_does_not_offer(mag_pyg):
    with pytest.raises(NotImplementedError, match="induced"):
        directgnn.pyg.NeighborLoader(mag_pyg, [2], input_nodes=PAPER, subgraph_type="induced")
    with pytest.raises(NotImplementedError, match="LinkNeighborLoader: disjoint"):
        directgnn.pyg.LinkNeighborLoader(mag_pyg, [2], edge_label_index=(WRITES, None),
                                         disjoint=True)


def test_to_hetero_graphsage_learns(mag_pyg):
    """PyG's to_hetero(GraphSAGE) trained through directgnn.pyg.NeighborLoader reads the
    relations: far above the 1/16 of chance on the mag generator's papers."""
    import torch.nn.functional as F
    from torch_geometric.nn import GraphSAGE, to_hetero
    torch.manual_seed(0)
    data = mag_pyg
    loader = directgnn.pyg.NeighborLoader(data, num_neighbors=[10, 5], batch_size=128,
                                          input_nodes=(PAPER, data[PAPER].train_mask),
                                          shuffle=True)
    emb = torch.nn.ModuleDict({t: torch.nn.Embedding(data[t].num_nodes, 32)
                               for t in data.node_types if "x" not in data[t]})
    model = to_hetero(GraphSAGE((-1, -1), 64, 2, out_channels=16), data.metadata(), aggr="sum")

    def inputs(b):
        return {**{t: b[t].x for t in b.node_types if "x" in b[t]},
                **{t: emb[t](b[t].n_id) for t in emb}}

    first = next(iter(loader))
    with torch.no_grad():
        model(inputs(first), first.edge_index_dict)  # lazy shapes
    opt = torch.optim.Adam([*model.parameters(), *emb.parameters()], lr=0.01)
    for _ in range(3):
        for b in loader:
            n = b[PAPER].batch_size
            loss = F.cross_entropy(model(inputs(b), b.edge_index_dict)[PAPER][:n], b[PAPER].y[:n])
            opt.zero_grad()
            loss.backward()
            opt.step()
    test = directgnn.pyg.NeighborLoader(data, num_neighbors=[10, 5], batch_size=512,
                                        input_nodes=(PAPER, data[PAPER].test_mask))
    correct = total = 0
    with torch.no_grad():
        for b in test:
            n = b[PAPER].batch_size
            pred = model(inputs(b), b.edge_index_dict)[PAPER][:n].argmax(-1)
            correct += int((pred == b[PAPER].y[:n]).sum())
            total += n
    assert correct / total > 0.6, correct / total


def test_a_partitioned_directory_gives_each_types_original_ids(mag, tmp_path):
    """`directgnn partition` renumbers every type by part; directgnn.load joins the parts' tables
    and gives node_ids, through which the rows, labels and edges are the original's."""
    import subprocess
    cli = os.environ.get("DIRECTGNN_CLI")
    if not cli:
        pytest.skip("DIRECTGNN_CLI (the directgnn binary) is not set")
    mag.save(tmp_path / "mag")
    subprocess.run([cli, "partition", str(tmp_path / "mag"), str(tmp_path / "parts"),
                    "--parts", "2", "--method", "random"], check=True, capture_output=True)
    parts = directgnn.load(tmp_path / "parts")
    assert set(parts.node_ids) == set(mag.node_types)
    ids = parts.node_ids[PAPER]
    assert torch.equal(torch.sort(ids).values, torch.arange(mag.num_nodes[PAPER]))
    assert torch.equal(parts.x[PAPER], mag.x[PAPER][ids])
    assert torch.equal(parts.y, mag.y[ids])
    assert torch.equal(ids[parts.splits[0]["train"].long()], mag.splits[0]["train"].long())

    def edges(ds, ids=None):
        indptr, indices = ds.indptr[WRITES], ds.indices[WRITES].long()
        dst = torch.repeat_interleave(torch.arange(indptr.numel() - 1), indptr.diff())
        src = indices
        if ids is not None:
            src, dst = ids["author"][src], ids[PAPER][dst]
        return sorted(zip(src.tolist(), dst.tolist()))
    assert edges(parts, parts.node_ids) == edges(mag)
    assert mag.node_ids == {}
    # Written back from Python, it is a plain dataset in the stored ids.
    parts.save(tmp_path / "again")
    again = directgnn.load(tmp_path / "again")
    assert again.partition is None and torch.equal(again.x[PAPER], parts.x[PAPER])
