"""directgnn.LinkLoader: link prediction's minibatches from the C++ link sampler."""

import pytest
import torch

import directgnn


@pytest.fixture
def split():
    return directgnn.datasets.synthetic(1500, 8, 8, seed=3).random_link_split(seed=1)


def link_loader(*args, **kwargs):
    """A LinkLoader delivering to the CPU (CI has no GPU; "auto" would say so in a warning)."""
    kwargs.setdefault("device", "cpu")
    return directgnn.LinkLoader(*args, **kwargs)


def graph_edges(ds):
    dst = torch.repeat_interleave(torch.arange(ds.num_nodes), ds.indptr.diff())
    return set(zip(ds.indices.tolist(), dst.tolist()))


def block_edges(batch):
    out = set()
    for block in batch.blocks:
        src, dst = block.edge_index
        n = batch.n_id
        out |= set(zip(n[src].tolist(), n[dst].tolist()))
    return out


def test_binary_batches_index_their_positives_and_leave_them_out(split):
    loader = link_loader(split, split.link["train"], fanouts=[-1, -1], batch_size=100,
                                  neg_ratio=2, shuffle=False)
    seen = 0
    for batch in loader:
        b = batch.edges.shape[0]
        assert batch.edge_label_index.shape == (2, 3 * b)
        assert batch.edge_label.tolist() == [1.0] * b + [0.0] * (2 * b)
        src, dst = batch.n_id[batch.edge_label_index[:, :b]]
        assert torch.equal(torch.stack([src, dst], 1), batch.edges)
        sampled = block_edges(batch)
        for u, v in batch.edges.tolist():  # excluded, with their reverses
            assert (u, v) not in sampled and (v, u) not in sampled
        assert torch.equal(batch.x, split.x[batch.n_id])
        seen += b
    assert seen == split.link["train"].shape[0] and len(loader) == -(-seen // 100)


def test_kept_seed_edges_appear_with_every_neighbour(split):
    loader = link_loader(split, split.link["train"][:50], fanouts=[-1], batch_size=50,
                                  exclude_seed_edges=False, shuffle=False)
    batch = next(iter(loader))
    sampled = block_edges(batch)
    assert all((u, v) in sampled for u, v in batch.edges.tolist())


def test_triplets_exact_negatives_and_repeatable_passes(split):
    edges = graph_edges(split)
    kwargs = dict(fanouts=[5, 5], batch_size=64, neg_sampling="triplet", neg_ratio=4,
                  neg_dist="degree", exact_negatives=True, seed=7)
    a = next(iter(link_loader(split, split.link["train"], **kwargs)))
    b = next(iter(link_loader(split, split.link["train"], **kwargs)))
    assert a.dst_neg_index.shape == (64, 4) and a.edge_label_index is None
    assert torch.equal(a.n_id, b.n_id) and torch.equal(a.dst_neg_index, b.dst_neg_index)
    src = a.n_id[a.src_index]
    for u, row in zip(src.tolist(), a.n_id[a.dst_neg_index].tolist()):
        assert all(v != u and (u, v) not in edges and (v, u) not in edges for v in row)


def test_bad_arguments_say_what_to_give(split):
    with pytest.raises(ValueError, match=r"\[E, 2\]"):
        link_loader(split, split.link["train"].t(), fanouts=[2])
    with pytest.raises(ValueError, match="neg_ratio"):
        link_loader(split, split.link["train"], fanouts=[2], neg_ratio=0)
    with pytest.raises(ValueError, match="binary"):
        link_loader(split, split.link["train"], fanouts=[2], neg_sampling="pairs")
    with pytest.raises(IndexError, match="out of range"):
        bad = torch.tensor([[0, split.num_nodes]])
        next(iter(link_loader(split, bad, fanouts=[2])))


def same_batches(a, b):
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x.edges, y.edges) and torch.equal(x.n_id, y.n_id)
        assert torch.equal(x.edge_label_index, y.edge_label_index)
        assert torch.equal(x.x, y.x)


# Rows read from disk, batches prepared ahead by two workers: the batches of a loader that does
# neither, in the same order.
def test_disk_features_and_prefetching_give_the_same_batches(split, tmp_path):
    split.save(tmp_path / "d")
    stored = directgnn.load(tmp_path / "d")
    kwargs = dict(fanouts=[4, 3], batch_size=200, seed=5)
    plain = link_loader(stored, stored.link["train"], prefetch=0, **kwargs)
    ahead = link_loader(stored, stored.link["train"], features="disk", prefetch=3, workers=2,
                        **kwargs)
    assert plain.prefetch == 0 and ahead.prefetch == 3
    assert "disk" in repr(ahead) and ahead.device == torch.device("cpu")
    same_batches(plain, ahead)
    # A pass left after one batch stops its workers; the next pass (the loader's second, in a
    # new order) still matches the other loader's second.
    again = link_loader(stored, stored.link["train"], features="disk", prefetch=3, **kwargs)
    it = iter(again)
    next(it)
    it.close()
    same_batches(plain, again)


def test_disk_features_need_a_dataset_directory(split):
    with pytest.raises(ValueError, match="dataset directory"):
        link_loader(split, split.link["train"], fanouts=[2], features="disk")
