import functools

import pytest
import torch

import directgnn
from conftest import needs_gpu


@pytest.fixture(scope="module")
def data():
    return directgnn.datasets.synthetic(3000, 6, 12, seed=5)


def run_epoch(loader, data):
    seen = []
    for batch in loader:
        assert batch.x.device == loader.device
        n_id = batch.n_id.cpu()
        assert torch.equal(n_id[: batch.batch_size], batch.seeds)
        assert torch.equal(batch.x.cpu(), data.x[n_id])
        assert torch.equal(batch.y.cpu(), data.y[batch.seeds])
        assert batch.blocks[0].num_src == n_id.numel()
        assert batch.blocks[-1].num_dst == batch.batch_size
        seen.append(batch.seeds)
    return torch.cat(seen)


@pytest.mark.parametrize("prefetch,workers", [(0, 1), (2, 1), (3, 2)])
def test_one_epoch_yields_every_seed_once(data, prefetch, workers):
    seeds = data.train_idx
    loader = directgnn.Loader(data, seeds, fanouts=[5, 5], batch_size=100, device="cpu",
                              prefetch=prefetch, workers=workers, seed=1)
    assert len(loader) == (seeds.numel() + 99) // 100
    got = run_epoch(loader, data)
    assert torch.equal(got.sort().values, seeds.sort().values)
    again = run_epoch(loader, data)  # a new pass, a new order
    assert not torch.equal(got, again)


def test_pyg_mode_batches_carry_pyg_hops(data):
    loader = directgnn.Loader(data, data.train_idx, fanouts=[4, 3], batch_size=64, device="cpu",
                              mode="pyg", seed=2)
    got = run_epoch(loader, data)
    assert torch.equal(got.sort().values, data.train_idx.sort().values)
    batch = next(iter(loader))
    s = batch.sample
    assert s.num_sampled_nodes[0] == batch.batch_size
    assert sum(s.num_sampled_nodes) == batch.n_id.numel()
    assert torch.equal(data.indices[s.edge].long(), batch.n_id[s.row])
    assert torch.equal(batch.blocks[0].indices, s.row)


def test_the_order_does_not_depend_on_prefetching(data):
    def first_batch(prefetch):
        loader = directgnn.Loader(data, data.val_idx, fanouts=[4], batch_size=64, device="cpu",
                                  prefetch=prefetch, seed=9)
        return next(iter(loader))

    a, b = first_batch(0), first_batch(3)
    assert torch.equal(a.n_id, b.n_id) and torch.equal(a.blocks[0].indices, b.blocks[0].indices)


def test_passes_are_independent(data):
    loader = directgnn.Loader(data, data.train_idx, fanouts=[3], batch_size=500, device="cpu",
                              prefetch=2)
    outer = iter(loader)
    first = next(outer)
    inner = [b.seeds for b in loader]  # a second pass runs whole beside the first
    assert torch.equal(torch.cat(inner).sort().values, data.train_idx.sort().values)
    rest = [first.seeds] + [b.seeds for b in outer]  # and the first goes on where it was
    assert torch.equal(torch.cat(rest).sort().values, data.train_idx.sort().values)
    assert not torch.equal(torch.cat(rest), torch.cat(inner))  # two passes, two orders
    abandoned = iter(loader)
    next(abandoned)
    abandoned.close()  # stops that pass's workers
    assert sum(1 for _ in loader) == len(loader)


def test_a_tuple_of_tensors_works_and_bad_input_raises(data):
    loader = directgnn.Loader((data.indptr, data.indices, data.x, data.y), torch.arange(10),
                              fanouts=[3], batch_size=4, device="cpu", shuffle=False)
    assert torch.equal(run_epoch(loader, data), torch.arange(10))
    with pytest.raises(ValueError, match="appears twice"):
        list(directgnn.Loader(data, torch.tensor([1, 1]), fanouts=[3], device="cpu"))
    with pytest.raises(IndexError, match="out of range"):
        list(directgnn.Loader(data, torch.tensor([3000]), fanouts=[3], device="cpu"))
    with pytest.raises(ValueError, match="features must be"):
        directgnn.Loader((data.indptr, data.indices, data.x[:10], data.y), torch.arange(3),
                         fanouts=[3], device="cpu")
    with pytest.raises(ValueError, match="batch_size"):
        directgnn.Loader(data, torch.arange(3), fanouts=[3], batch_size=0)


@needs_gpu
@pytest.mark.parametrize("features,sampler", [("pinned", "gpu"), ("host", "cpu"),
                                              ("device", "gpu"), ("pinned", "cpu")])
def test_gpu_minibatches_match_the_tables(data, features, sampler):
    loader = directgnn.Loader(data, data.train_idx, fanouts=[5, 5], batch_size=256,
                              device="cuda", features=features, sampler=sampler)
    got = run_epoch(loader, data)
    assert torch.equal(got.sort().values, data.train_idx.sort().values)


def write_dataset_dir(data, path):
    """The dataset directory of docs/formats.md, written with numpy."""
    import json

    import numpy as np

    path.mkdir()
    np.save(path / "indptr.npy", data.indptr.numpy())
    np.save(path / "indices.npy", data.indices.numpy())
    np.save(path / "features.npy", data.x.numpy())
    np.save(path / "labels.npy", data.y.numpy())
    for k in ("train", "val", "test"):
        np.save(path / f"{k}_idx.npy", data.splits[0][k].numpy())
    json.dump(dict(name="disk", format_version=2, num_nodes=data.num_nodes,
                   num_edges=data.num_edges, feat_dim=data.x.shape[1], feat_dtype="float32",
                   num_classes=data.num_classes, directed=False, num_splits=1),
              open(path / "meta.json", "w"))
    return directgnn.load(path)


# features="disk" reads rows from the directory's features.npy, as `directgnn train --features
# disk` does, with and without the hot-row cache, whatever its policy: the same minibatches as
# the table in memory.
@pytest.mark.parametrize("cache_gib,policy", [(0.0, "auto"), (1e-4, "static"), (1e-4, "sieve"),
                                              (1e-4, "lookahead")])
def test_disk_features_give_the_rows_of_the_table(data, tmp_path, cache_gib, policy):
    stored = write_dataset_dir(data, tmp_path / "d")
    assert stored.features_path.endswith("features.npy")
    loader = directgnn.Loader(stored, stored.train_idx, fanouts=[4, 3], batch_size=128,
                              device="cpu", features="disk", feature_cache_gib=cache_gib, seed=3,
                              feature_cache_policy=policy)
    assert loader.mode.startswith("disk")
    assert bool(loader.feature_cache) == (cache_gib > 0)
    got = run_epoch(loader, data)
    assert torch.equal(got.sort().values, stored.train_idx.sort().values)


def test_a_lookahead_cache_takes_one_worker_and_its_window_needs_it(data, tmp_path):
    stored = write_dataset_dir(data, tmp_path / "d")
    make = functools.partial(directgnn.Loader, stored, stored.train_idx, fanouts=[3],
                             device="cpu", features="disk", feature_cache_gib=1e-4)
    with pytest.raises(ValueError, match="workers: a look-ahead cache serves batches in the order"):
        next(iter(make(feature_cache_policy="lookahead", workers=2, prefetch=2)))
    with pytest.raises(ValueError, match="lookahead_batches: sizes the look-ahead cache's window"):
        make(feature_cache_policy="static", lookahead_batches=4)
    assert next(iter(make(feature_cache_policy="lookahead", lookahead_batches=3))).x.shape[0] > 0


def test_disk_features_need_a_dataset_directory(data):
    with pytest.raises(ValueError, match="dataset directory"):
        directgnn.Loader(data, data.train_idx, fanouts=[3], device="cpu", features="disk")


# An I/O failure of the library reaches Python as OSError: here rows read from a features.npy
# that was cut short after the loader opened it.
def test_a_feature_file_cut_short_raises_oserror(data, tmp_path):
    import os

    stored = write_dataset_dir(data, tmp_path / "d")
    loader = directgnn.Loader(stored, stored.train_idx, fanouts=[4], batch_size=64, device="cpu",
                              features="disk", prefetch=0)
    os.truncate(stored.features_path, 200)
    with pytest.raises(OSError, match="short read"):
        next(iter(loader))


def test_reprs_show_the_shapes(data):
    loader = directgnn.Loader(data, data.train_idx[:100], fanouts=[4, 3], batch_size=64,
                              device="cpu")
    assert repr(loader).startswith("Loader(seeds=100, fanouts=[4, 3], batch_size=64, batches=2")
    batch = next(iter(loader))
    text = repr(batch)
    assert text.startswith(f"Batch(seeds=64, n_id={batch.n_id.numel()}, x=[")
    assert f"{batch.blocks[0].num_dst}<-{batch.blocks[0].num_src}" in text
    sampler = directgnn.NeighborSampler(data.indptr, data.indices, [2, 2])
    assert repr(sampler) == (f"NeighborSampler(nodes={data.num_nodes}, fanouts=[2, 2], "
                             "device=cpu, mode='dgl', weighted=False)")


def test_the_cpu_note_is_a_warning_not_a_print(data, capsys):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.warns(UserWarning, match="training on the CPU"):
        directgnn.Loader(data, data.train_idx, fanouts=[3])
    assert capsys.readouterr().out == ""
