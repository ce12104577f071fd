"""The Python API behaves like torch: a differentiable gather, a unified tensor that indexes
like a tensor, and entry points that take tensors, numpy arrays, lists and bool masks alike."""

import numpy as np
import pytest
import torch

import directgnn


class _Densify(torch.autograd.Function):
    """Identity whose backward turns a sparse gradient dense, so gradcheck can compare the
    sparse gradient with finite differences."""

    @staticmethod
    def forward(ctx, t):
        return t.view_as(t)

    @staticmethod
    def backward(ctx, grad):
        assert grad.is_sparse
        return grad.to_dense()


def test_gather_is_differentiable_dense_and_sparse():
    table = torch.randn(12, 3, dtype=torch.double, requires_grad=True)
    ids = torch.tensor([1, 4, 4, 11, 0])
    assert torch.autograd.gradcheck(lambda t: directgnn.gather(t, ids), (table,))
    assert torch.autograd.gradcheck(
        lambda t: directgnn.gather(_Densify.apply(t), ids, sparse=True), (table,))
    # The sparse gradient holds only the gathered rows, as nn.Embedding(sparse=True) does.
    directgnn.gather(table, ids, sparse=True).pow(2).sum().backward()
    assert table.grad.is_sparse
    want = torch.zeros_like(table).index_add_(0, ids, 2 * table.detach()[ids])
    assert torch.allclose(table.grad.to_dense(), want)
    assert set(table.grad.coalesce().indices()[0].tolist()) == {0, 1, 4, 11}


def test_a_parameter_learns_through_gather():
    weight = torch.nn.Parameter(torch.zeros(5, 2))
    opt = torch.optim.SGD([weight], lr=1.0)
    directgnn.gather(weight, torch.tensor([3])).sum().neg().backward()
    opt.step()
    assert weight[3].tolist() == [1.0, 1.0] and weight[[0, 1, 2, 4]].abs().sum() == 0
    sparse = torch.nn.Parameter(torch.zeros(5, 2))
    opt = torch.optim.SparseAdam([sparse], lr=0.1)
    directgnn.gather(sparse, [2, 2], sparse=True).sum().neg().backward()
    opt.step()
    assert bool((sparse[2] > 0).all()) and sparse[[0, 1, 3, 4]].abs().sum() == 0
    with pytest.raises(RuntimeError, match="out="):
        directgnn.gather(weight, torch.tensor([1]), out=torch.empty(0))
    with torch.no_grad():
        assert directgnn.gather(weight, torch.tensor([3])).grad_fn is None


def test_the_unified_tensor_indexes_like_a_tensor():
    t = torch.arange(40.0).view(20, 2)
    u = directgnn.UnifiedTensor(t)
    mask = torch.zeros(20, dtype=torch.bool)
    mask[[2, 7]] = True
    for index in (3, -1, slice(2, 6), slice(None, None, 5), [4, 1, 4], np.array([0, 19]),
                  torch.tensor([5]), mask, mask.numpy(), np.int64(2)):
        assert torch.equal(u[index], t[index]), index
    assert u.shape == u.size() == t.shape and u.size(1) == 2 and u.dim() == 2
    assert u.dtype == t.dtype and u.device == torch.device("cpu") and len(u) == 20
    assert torch.equal(u.to(torch.float64), t.double())
    labels = directgnn.UnifiedTensor(torch.arange(20))
    assert torch.equal(labels[[3, 4]], torch.tensor([3, 4])) and labels[-2] == 18
    with pytest.raises(IndexError, match="20 is out of range"):
        u[20]
    with pytest.raises(IndexError, match="out of range"):
        u[[1, 20]]
    with pytest.raises(IndexError, match="bool mask of 3 entries for 20 rows"):
        u[torch.tensor([True, False, True])]


def test_numpy_arrays_and_lists_work_everywhere():
    data = directgnn.datasets.synthetic(300, 5, 4, seed=1)
    table = data.x.numpy()
    assert torch.equal(directgnn.gather(table, [1, 2]), data.x[[1, 2]])
    assert torch.equal(directgnn.gather(data.x, np.array([7, 0])), data.x[[7, 0]])
    sampler = directgnn.NeighborSampler(data.indptr.numpy(), data.indices.numpy(), [3])
    a = sampler.sample(np.array([1, 5]), seed=3)
    b = directgnn.NeighborSampler(data.indptr, data.indices, [3]).sample([1, 5], seed=3)
    assert torch.equal(a.node, b.node)
    mask = np.zeros(300, dtype=bool)
    mask[[1, 5]] = True
    assert torch.equal(sampler.sample(mask, seed=3).node, a.node)
    loader = directgnn.Loader((data.indptr.numpy(), data.indices.numpy(), table, data.y.numpy()),
                              [0, 1, 2], fanouts=[2], device="cpu", shuffle=False)
    assert next(iter(loader)).seeds.tolist() == [0, 1, 2]


def test_the_loader_takes_bool_masks_and_pyg_data_and_batches_move():
    pyg_data = pytest.importorskip("torch_geometric.data")
    data = directgnn.datasets.synthetic(300, 5, 4, seed=1)
    mask = torch.zeros(300, dtype=torch.bool)
    mask[10:20] = True
    loader = directgnn.Loader(data, mask, fanouts=[2], batch_size=4, device="cpu", shuffle=False)
    assert torch.equal(torch.cat([b.seeds for b in loader]), torch.arange(10, 20))
    with pytest.raises(IndexError, match="bool mask of 5 entries for 300 rows"):
        directgnn.Loader(data, mask[:5], fanouts=[2], device="cpu")
    # A PyG Data: edge_index from source to target, x and y; its graph by destination.
    src = torch.repeat_interleave(torch.arange(300), data.indptr[1:] - data.indptr[:-1])
    d = pyg_data.Data(x=data.x, y=data.y.view(-1, 1), edge_index=torch.stack([
        data.indices.long(), src]))
    from_pyg = directgnn.Loader(d, mask, fanouts=[-1], batch_size=10, device="cpu",
                                shuffle=False)
    direct = directgnn.Loader(data, mask, fanouts=[-1], batch_size=10, device="cpu",
                              shuffle=False)
    a, b = next(iter(from_pyg)), next(iter(direct))
    assert torch.equal(a.n_id, b.n_id) and torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
    moved = a.to("cpu")
    assert isinstance(moved, directgnn.Batch) and torch.equal(moved.blocks[0].indices,
                                                              a.blocks[0].indices)
    with pytest.raises(ValueError, match="integer class labels"):
        directgnn.Loader(pyg_data.Data(x=data.x, y=data.x[:, 0], edge_index=d.edge_index),
                         mask, fanouts=[2], device="cpu")
