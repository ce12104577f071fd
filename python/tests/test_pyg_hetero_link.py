"""directgnn.pyg.LinkNeighborLoader on heterogeneous graphs: the batches' fields mean what PyG's
heterogeneous LinkNeighborLoader gives (label edges of the edge type between sampled nodes of
the right types, PyG's binary and triplet layouts, real edges in global ids through n_id and
e_id), for a HeteroData, a directgnn HeteroDataset and a store pair, and a to_hetero model
learns links from them."""

import pytest
import torch

import directgnn

pyg = pytest.importorskip("torch_geometric")
from torch_geometric.sampler import NegativeSampling  # noqa: E402

import directgnn.pyg  # noqa: E402

WRITES = ("author", "writes", "paper")
CITES = ("paper", "cites", "paper")


@pytest.fixture(scope="module")
def mag():
    return directgnn.hetero.mag(0.002, seed=2)


@pytest.fixture(scope="module")
def data(mag):
    return mag.to_pyg()


def pairs(edge_index):
    return set(map(tuple, edge_index.t().tolist()))


def global_ids(batch, edge_type, local):
    """A [2, E] index of local ids of ``edge_type``'s endpoint types, in global ids."""
    return torch.stack([batch[edge_type[0]].n_id[local[0]], batch[edge_type[-1]].n_id[local[1]]])


def check_sampled_edges(batch, data):
    """Every sampled edge of every edge type is an edge of the graph, the one its e_id names,
    between sampled nodes of the edge type's endpoint types."""
    for et in data.edge_types:
        local = batch[et].edge_index
        if local.numel() == 0:
            continue
        assert int(local[0].max()) < batch[et[0]].n_id.numel()
        assert int(local[1].max()) < batch[et[-1]].n_id.numel()
        assert torch.equal(global_ids(batch, et, local), data[et].edge_index[:, batch[et].e_id])


def test_binary_batches_label_the_input_edges_then_random_pairs(data):
    edges = data[WRITES].edge_index
    loader = directgnn.pyg.LinkNeighborLoader(
        data, num_neighbors=[5, 3], edge_label_index=(WRITES, None), batch_size=64, shuffle=True,
        neg_sampling=NegativeSampling("binary", 2))
    real = pairs(edges)
    for i, batch in enumerate(loader):
        store = batch[WRITES]
        b = store.input_id.numel()
        assert store.edge_label_index.shape == (2, 3 * b)
        assert torch.equal(store.edge_label, torch.cat([torch.ones(b), torch.zeros(2 * b)]))
        label_edges = global_ids(batch, WRITES, store.edge_label_index)
        # The positives are the input edges, in order: real author -> paper edges.
        assert torch.equal(label_edges[:, :b], edges[:, store.input_id])
        assert pairs(label_edges[:, :b]) <= real
        # Every endpoint is a seed: the first nodes of its type, sorted and distinct.
        for t, row in (("author", 0), ("paper", 1)):
            seeds = batch[t].n_id[:batch[t].num_sampled_nodes[0]]
            assert torch.equal(seeds, label_edges[row].unique())
        check_sampled_edges(batch, data)
        if i == 3:
            break


def test_triplet_batches_give_k_destinations_per_source(data):
    edges = data[WRITES].edge_index
    for amount in (1, 3):
        loader = directgnn.pyg.LinkNeighborLoader(
            data, num_neighbors=[4, 2], edge_label_index=(WRITES, None), batch_size=32,
            neg_sampling=NegativeSampling("triplet", amount))
        batch = next(iter(loader))
        author, paper, store = batch["author"], batch["paper"], batch[WRITES]
        assert "edge_label_index" not in store and "edge_label" not in store
        ids = store.input_id
        assert torch.equal(author.n_id[author.src_index], edges[0, ids])
        assert torch.equal(paper.n_id[paper.dst_pos_index], edges[1, ids])
        shape = (32, ) if amount == 1 else (32, amount)
        assert paper.dst_neg_index.shape == shape
        assert int(paper.dst_neg_index.max()) < paper.num_sampled_nodes[0]  # seeds, so first
        check_sampled_edges(batch, data)


def test_same_source_and_destination_type_share_one_seed_list(data):
    edges = data[CITES].edge_index
    loader = directgnn.pyg.LinkNeighborLoader(
        data, num_neighbors=[3, 3], edge_label_index=(CITES, edges[:, :200]), batch_size=50,
        neg_sampling_ratio=1.0)
    for batch in loader:
        store, paper = batch[CITES], batch["paper"]
        label_edges = global_ids(batch, CITES, store.edge_label_index)
        assert torch.equal(label_edges[:, :50], edges[:, store.input_id])
        assert torch.equal(paper.n_id[:paper.num_sampled_nodes[0]], label_edges.unique())
        assert batch["author"].num_sampled_nodes[0] == 0  # no seeds of the other types
        check_sampled_edges(batch, data)


def test_without_negatives_the_label_edges_are_among_the_sampled_edges(data):
    """PyG's link loader leaves the input edges in the sampled subgraph: with every neighbour
    drawn, each label edge is a sampled edge, and the given labels come through."""
    edges = data[WRITES].edge_index[:, :120]
    label = torch.arange(120) % 3
    loader = directgnn.pyg.LinkNeighborLoader(
        data, num_neighbors={et: [-1] if et == WRITES else [0] for et in data.edge_types},
        edge_label_index=(WRITES, edges), edge_label=label, batch_size=40, shuffle=True)
    for batch in loader:
        store = batch[WRITES]
        assert torch.equal(store.edge_label, label[store.input_id])
        assert pairs(store.edge_label_index) <= pairs(store.edge_index)


def test_draws_repeat_for_a_seed_and_differ_across_seeds(data):
    def batches(seed):
        torch.manual_seed(0)  # negatives come from PyG's NegativeSampling, on torch's generator
        loader = directgnn.pyg.LinkNeighborLoader(
            data, num_neighbors=[3, 2], edge_label_index=(WRITES, None), batch_size=64,
            neg_sampling_ratio=1.0, seed=seed)
        out = []
        for batch in loader:
            out.append(batch)
            if len(out) == 3:
                return out

    first, again, other = batches(5), batches(5), batches(6)
    for a, b in zip(first, again):
        for t in data.node_types:
            assert torch.equal(a[t].n_id, b[t].n_id)
        for et in data.edge_types:
            assert torch.equal(a[et].edge_index, b[et].edge_index)
        assert torch.equal(a[WRITES].edge_label_index, b[WRITES].edge_label_index)
    assert any(not torch.equal(a["paper"].n_id, c["paper"].n_id) for a, c in zip(first, other))


def test_dataset_and_store_pair_give_the_hetero_datas_batches(mag, data):
    """The same graph as a HeteroData, a directgnn HeteroDataset and a directgnn store pair:
    with every neighbour drawn, the same nodes, features and label edges."""
    index = (WRITES, data[WRITES].edge_index[:, ::7])

    def first(source):
        torch.manual_seed(1)
        loader = directgnn.pyg.LinkNeighborLoader(source, num_neighbors=[-1], batch_size=40,
                                                  edge_label_index=index, neg_sampling_ratio=1.0)
        return next(iter(loader))

    want = first(data)
    for got in (first(mag), first(directgnn.pyg.stores(mag)), first(directgnn.pyg.stores(data))):
        for t in data.node_types:
            assert torch.equal(got[t].n_id.sort()[0], want[t].n_id.sort()[0])
        assert torch.equal(got["paper"].x, data["paper"].x[got["paper"].n_id])
        assert torch.equal(global_ids(got, WRITES, got[WRITES].edge_label_index),
                           global_ids(want, WRITES, want[WRITES].edge_label_index))
        for et in data.edge_types:
            assert pairs(global_ids(got, et, got[et].edge_index)) == pairs(
                global_ids(want, et, want[et].edge_index))


@pytest.mark.parametrize("option, value", [("disjoint", True), ("replace", True),
                                           ("sampler", "cuda"), ("subgraph_type", "induced"),
                                           ("edge_label_time", torch.zeros(13707))])
def test_refuses_what_it_does_not_offer_by_name(data, option, value):
    name = "sampler" if option == "sampler" else option.replace("edge_label_time", "temporal")
    with pytest.raises(NotImplementedError, match=name if option != "sampler" else "CPU"):
        directgnn.pyg.LinkNeighborLoader(data, [2], edge_label_index=(WRITES, None),
                                         batch_size=8, **{option: value})


def test_to_hetero_graphsage_learns_author_paper_links(data):
    """PyG's to_hetero(GraphSAGE) with a dot-product decoder, trained on directgnn's batches:
    the loss falls, and held-out author -> paper edges outscore random pairs."""
    import torch.nn.functional as F
    from torch_geometric.nn import GraphSAGE, to_hetero
    torch.manual_seed(0)
    edges = data[WRITES].edge_index
    perm = torch.randperm(edges.size(1))
    train, held_out = edges[:, perm[:4000]], edges[:, perm[-1000:]]
    emb = torch.nn.ModuleDict({t: torch.nn.Embedding(data[t].num_nodes, 32)
                               for t in data.node_types if "x" not in data[t]})
    model = to_hetero(GraphSAGE((-1, -1), 64, 2, out_channels=32), data.metadata(), aggr="mean")

    def scores(batch):
        x = {**{t: batch[t].x for t in batch.node_types if "x" in batch[t]},
             **{t: emb[t](batch[t].n_id) for t in emb}}
        h = model(x, batch.edge_index_dict)
        src, dst = batch[WRITES].edge_label_index
        return (h["author"][src] * h["paper"][dst]).sum(-1)

    loader = directgnn.pyg.LinkNeighborLoader(data, num_neighbors=[8, 4], batch_size=256,
                                              edge_label_index=(WRITES, train), shuffle=True,
                                              neg_sampling_ratio=1.0)
    with torch.no_grad():
        scores(next(iter(loader)))  # lazy shapes
    opt = torch.optim.Adam([*model.parameters(), *emb.parameters()], lr=0.01)
    epoch_loss = []
    for _ in range(4):
        total = 0.0
        for batch in loader:
            loss = F.binary_cross_entropy_with_logits(scores(batch), batch[WRITES].edge_label)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        epoch_loss.append(total / len(loader))
    assert epoch_loss[-1] < 0.75 * epoch_loss[0], epoch_loss
    test = directgnn.pyg.LinkNeighborLoader(data, num_neighbors=[8, 4], batch_size=1000,
                                            edge_label_index=(WRITES, held_out),
                                            neg_sampling_ratio=1.0)
    with torch.no_grad():
        batch = next(iter(test))
        s, y = scores(batch), batch[WRITES].edge_label
    # The share of (positive, negative) pairs ranked correctly: the AUC; chance is 0.5.
    auc = float((s[y == 1][:, None] > s[y == 0][None, :]).float().mean())
    assert auc > 0.75, (auc, epoch_loss)
