import multiprocessing
import os

import numpy as np
import pytest
import torch

import directgnn
from conftest import needs_gpu


def table(dtype, rows=100, dim=7, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(rows, dim, generator=g) * 10).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("id_dtype", [torch.int64, torch.int32])
def test_rows_equal_indexing(dtype, id_dtype):
    t = table(dtype)
    ids = torch.tensor([5, 0, 99, 5, 5, 42], dtype=id_dtype)  # duplicates included
    expected = t[ids.long()]
    assert torch.equal(directgnn.gather(t, ids), expected)
    u = directgnn.UnifiedTensor(t)
    assert torch.equal(u[ids], expected)
    assert u.shape == t.shape and u.dtype == dtype and len(u) == 100


def test_empty_ids_give_an_empty_table():
    t = table(torch.float32)
    for ids in (torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int32)):
        out = directgnn.UnifiedTensor(t)[ids]
        assert out.shape == (0, 7) and out.dtype == torch.float32


def test_memory_mapped_tables_are_read_in_place(tmp_path):
    t = table(torch.float32, rows=1000, dim=16)
    path = tmp_path / "x.npy"
    np.save(path, t.numpy())
    mapped = np.load(path, mmap_mode="r")
    u = directgnn.UnifiedTensor(mapped)
    assert u.tensor.data_ptr() == mapped.ctypes.data  # no copy
    ids = torch.tensor([999, 3, 3, 500])
    assert torch.equal(u[ids], t[ids])
    raw = tmp_path / "x.bin"
    t.numpy().tofile(raw)
    from_file = torch.from_file(str(raw), size=t.numel(), dtype=torch.float32).view(1000, 16)
    assert torch.equal(directgnn.UnifiedTensor(from_file)[ids], t[ids])


def test_labels_as_a_one_dimensional_unified_tensor():
    y = torch.arange(50) * 3
    ids = torch.tensor([49, 0, 7])
    assert torch.equal(directgnn.unified(y)[ids], y[ids])


def test_out_of_range_ids_name_the_id():
    t = table(torch.float32)
    with pytest.raises(IndexError, match="100"):
        directgnn.gather(t, torch.tensor([3, 100]))
    with pytest.raises(IndexError, match="-1"):
        directgnn.UnifiedTensor(t)[torch.tensor([-1])]


def test_bad_arguments_raise_clear_errors():
    t = table(torch.float32)
    with pytest.raises(ValueError, match="not a gather method"):
        directgnn.gather(t, torch.tensor([1]), method="fast")
    with pytest.raises(ValueError, match="2-D"):
        directgnn.gather(torch.zeros(10), torch.tensor([1]))
    with pytest.raises(TypeError, match="int32 or int64"):
        directgnn.gather(t, torch.tensor([1.0]))
    with pytest.raises(ValueError, match="not contiguous"):
        directgnn.UnifiedTensor(t.t())
    with pytest.raises(ValueError, match="GPU"):
        directgnn.gather(t, torch.tensor([1]), method="aligned")  # CPU ids: CPU gather only


def test_gather_into_out():
    t = table(torch.float16)
    ids = torch.tensor([9, 8, 7])
    out = torch.empty(3, 7, dtype=torch.float16)
    res = directgnn.gather(t, ids, out=out)
    assert res.data_ptr() == out.data_ptr() and torch.equal(out, t[ids])
    grown = directgnn.gather(t, ids, out=torch.empty(0, dtype=torch.float16))
    assert torch.equal(grown, t[ids])
    with pytest.raises(ValueError, match="shape"):
        directgnn.gather(t, ids, out=torch.empty(2, 7, dtype=torch.float16))


def test_torch_compile_traces_gather():
    t = table(torch.float32)

    @torch.compile(fullgraph=True, backend="eager")
    def rows_sum(ids):
        return directgnn.gather(t, ids).sum(dim=1) * 2

    ids = torch.tensor([1, 2, 3, 1])
    assert torch.allclose(rows_sum(ids), t[ids].sum(dim=1) * 2)


def test_a_method_for_cuda_ids_leaves_cpu_ids_on_the_cpu_gather():
    t = table(torch.float32)
    u = directgnn.UnifiedTensor(t, method="aligned")
    ids = torch.tensor([4, 2])
    assert torch.equal(u[ids], t[ids])


def test_torch_compile_traces_gather_into_out():
    t = table(torch.float32)

    @torch.compile(fullgraph=True, backend="eager")
    def into(ids, out):
        directgnn.gather(t, ids, out=out)
        return out * 2

    ids = torch.tensor([3, 1])
    assert torch.equal(into(ids, torch.empty(2, 7)), t[ids] * 2)


def test_a_non_contiguous_table_is_refused_not_copied():
    wide = table(torch.float32, dim=14)
    with pytest.raises(ValueError, match="not contiguous"):
        directgnn.gather(wide[:, ::2], torch.tensor([1]))


def test_pinning_an_empty_tensor_is_a_no_op_both_ways():
    empty = torch.empty(0, 4)
    torch.ops.directgnn.pin_(empty)
    torch.ops.directgnn.unpin_(empty)
    assert not torch.ops.directgnn.is_pinned(empty)


def test_pinning_without_a_gpu_says_so_both_ways():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    t = table(torch.float32)
    for read_only in (True, False):
        with pytest.raises(RuntimeError, match="needs a GPU"):
            torch.ops.directgnn.pin_(t, read_only=read_only)


@needs_gpu
def test_memory_pinned_read_only_is_not_pinned_writable_on_top():
    t = table(torch.float32, rows=1024, dim=32)
    torch.ops.directgnn.pin_(t)  # read-only by default
    with pytest.raises(ValueError, match="already pinned read-only"):
        torch.ops.directgnn.pin_(t, read_only=False)
    torch.ops.directgnn.unpin_(t)
    torch.ops.directgnn.pin_(t, read_only=False)
    ids = torch.arange(1024, device="cuda")
    assert torch.equal(directgnn.gather(t, ids).cpu(), t)
    torch.ops.directgnn.unpin_(t)
    assert not torch.ops.directgnn.is_pinned(t)


def _child(u):
    return u.shape


def test_a_unified_tensor_cannot_cross_processes():
    u = directgnn.UnifiedTensor(table(torch.float32))
    ctx = multiprocessing.get_context("spawn")
    with pytest.raises(TypeError, match="cannot be sent to another process"):
        with ctx.Pool(1) as pool:
            pool.apply(_child, (u,))


def test_without_a_gpu_nothing_is_pinned():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    u = directgnn.UnifiedTensor(table(torch.float32))
    assert not u.is_pinned


@needs_gpu
def test_cuda_ids_read_the_pinned_table_in_place():
    t = table(torch.float32, rows=4096, dim=33)
    u = directgnn.UnifiedTensor(t)
    assert u.is_pinned and torch.ops.directgnn.is_pinned(t)
    ids = torch.randint(0, 4096, (1000,), device="cuda")
    for method in ("aligned", "zero-copy", "cpu-copy"):
        u.method = method
        got = u[ids]
        assert got.device == ids.device and torch.equal(got.cpu(), t[ids.cpu()])
    assert torch.equal(directgnn.gather(t, ids).cpu(), t[ids.cpu()])  # pinned: aligned by default
    with pytest.raises(IndexError, match="4096"):
        u[torch.tensor([4096], device="cuda")]


@needs_gpu
def test_pinning_twice_is_safe_and_releasing_unpins():
    t = table(torch.float32, rows=2048, dim=64)
    a = directgnn.UnifiedTensor(t)
    b = directgnn.UnifiedTensor(t)
    del a  # b still reads the memory in place
    ids = torch.arange(2048, device="cuda")
    assert torch.ops.directgnn.is_pinned(t) and torch.equal(b[ids].cpu(), t)
    del b
    assert not torch.ops.directgnn.is_pinned(t)
    torch.ops.directgnn.pin_(t)
    torch.ops.directgnn.pin_(t)
    torch.ops.directgnn.unpin_(t)
    assert torch.ops.directgnn.is_pinned(t)
    torch.ops.directgnn.unpin_(t)
    assert not torch.ops.directgnn.is_pinned(t)
