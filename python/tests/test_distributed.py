"""A PyG training script under torchrun on a partitioned dataset whose feature table is
sharded over two ranks (directgnn.load(shard=True) and directgnn.Loader): every batch's rows
are the whole table's, each rank serves its part, and the model learns."""

import json
import os
import subprocess
import sys

import pytest
import torch

import directgnn

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_sharded_worker.py")


@pytest.fixture
def parts_path(cora_path, tmp_path):
    cli = os.environ.get("DIRECTGNN_CLI")
    if not cli:
        pytest.skip("DIRECTGNN_CLI (the directgnn binary) is not set")
    out = tmp_path / "cora-2"
    metis = subprocess.run([cli, "partition", cora_path, str(out), "--parts", "2", "--method",
                            "metis"], capture_output=True, text=True)
    if metis.returncode != 0:
        # A build without METIS (the GPU day's pack) says so; the random parts serve as well.
        assert "this build has no METIS" in metis.stderr + metis.stdout, metis.stderr
        subprocess.run([cli, "partition", cora_path, str(out), "--parts", "2", "--method",
                        "random"], check=True, capture_output=True)
    return str(out)


def run_workers(worker, out, *args):
    """Runs `worker` on two ranks under torch.distributed.run; returns each rank's report."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         worker, *[str(a) for a in args]],
        env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads((out / f"rank-{r}.json").read_text()) for r in range(2)]


def run_ranks(path, out, assignment, epochs, features):
    return run_workers(WORKER, out, path, out, assignment, epochs, features)


# Owners serve from memory, or from their part's file on disk through a RAM cache.
@pytest.mark.parametrize("assignment,features",
                         [("part", "auto"), ("global", "auto"), ("part", "disk")])
def test_two_ranks_train_pyg_sage_on_a_sharded_table(parts_path, tmp_path, assignment,
                                                     features):
    whole = directgnn.load(parts_path)
    offsets = whole.partition["offsets"]
    reports = run_ranks(parts_path, tmp_path, assignment, 10, features)
    for r, report in enumerate(reports):
        assert report["rank"] == r
        assert report["x_rows"] == offsets[r + 1] - offsets[r]  # its part's rows only
        assert report["rows_match"] and report["own_seeds"]
        assert report["batches"] == 10 * report["steps"]
        ex = report["exchange"]
        assert ex["gathers"] == report["batches"]
        assert 0 < ex["remote_rows"] < ex["rows"]
        assert bool(report["cache"]) == (features == "disk")
    assert reports[0]["steps"] == reports[1]["steps"]
    # What one rank sends, the other receives.
    assert reports[0]["exchange"]["bytes_sent"] == reports[1]["exchange"]["bytes_received"]
    # DDP keeps one model: both ranks score the same, well above chance (1/7).
    assert reports[0]["test_acc"] == reports[1]["test_acc"]
    assert reports[0]["test_acc"] > 0.7


def test_shard_needs_a_process_group_and_a_partitioned_dataset(parts_path, cora_path):
    with pytest.raises(RuntimeError, match="torch.distributed has no process group"):
        directgnn.load(parts_path, shard=True)
    data = directgnn.load(parts_path)
    with pytest.raises(RuntimeError, match="needs a torch.distributed process group"):
        directgnn.Loader(data, torch.arange(10), fanouts=[5], sharded=True, device="cpu")
    with pytest.raises(ValueError, match="sharded=True needs a partitioned dataset"):
        directgnn.Loader(directgnn.load(cora_path), torch.arange(10), fanouts=[5],
                         sharded=True, device="cpu")
    with pytest.raises(ValueError, match="seed_assignment='spread'"):
        directgnn.Loader(data, torch.arange(10), fanouts=[5], seed_assignment="spread",
                         device="cpu")


def test_shard_refuses_a_dataset_with_other_parts(parts_path, tmp_path):
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0,
                            world_size=1)
    try:
        with pytest.raises(ValueError, match="has 2 parts and the process group 1 ranks"):
            directgnn.load(parts_path, shard=True)
    finally:
        dist.destroy_process_group()


HETERO_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "_sharded_hetero_worker.py")


@pytest.mark.parametrize("assignment,features",
                         [("part", "auto"), ("global", "auto"), ("part", "disk")])
def test_two_ranks_load_a_heterogeneous_dataset_by_part(tmp_path, assignment, features):
    """A partitioned heterogeneous dataset under torchrun: each rank holds its part of the paper
    table (in memory, or read from its part's file through a cache of the rows of its part that
    every rank reads most), and the HeteroLoader's batches carry the whole table's rows, each
    type's fetched through its own exchange."""
    cli = os.environ.get("DIRECTGNN_CLI")
    if not cli:
        pytest.skip("DIRECTGNN_CLI (the directgnn binary) is not set")
    directgnn.hetero.mag(0.002, seed=1).save(tmp_path / "mag")
    parts = tmp_path / "mag-2"
    subprocess.run([cli, "partition", str(tmp_path / "mag"), str(parts), "--parts", "2",
                    "--method", "random"], check=True, capture_output=True)
    whole = directgnn.load(parts)
    offsets = whole.partition["offsets"]["paper"]
    reports = run_workers(HETERO_WORKER, tmp_path, parts, tmp_path, assignment, features)
    for r, report in enumerate(reports):
        assert report["rank"] == r
        assert report["x_rows"] == {"paper": offsets[r + 1] - offsets[r]}
        assert report["rows_match"] and report["labels_match"] and report["own_seeds"]
        assert report["batches"] == 2 * report["steps"] > 0
        ex = report["exchange"]
        assert ex["gathers"] == report["batches"]
        assert 0 < ex["remote_rows"] < ex["rows"]
        assert ("of this rank's part" in report["cache"]) == (features == "disk")
    assert reports[0]["steps"] == reports[1]["steps"]
    assert reports[0]["exchange"]["bytes_sent"] == reports[1]["exchange"]["bytes_received"]


LINK_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_sharded_link_worker.py")


@pytest.mark.parametrize("assignment", ["part", "global"])
def test_two_ranks_iterate_links_over_a_sharded_table(parts_path, tmp_path, assignment):
    """directgnn.LinkLoader over a sharded table: every batch's rows are the whole table's, and
    with part seeds each rank takes the positives whose source its part owns."""
    whole = directgnn.load(parts_path)
    offsets = whole.partition["offsets"]
    reports = run_workers(LINK_WORKER, tmp_path, parts_path, tmp_path, assignment)
    for r, report in enumerate(reports):
        assert report["rank"] == r
        assert report["x_rows"] == offsets[r + 1] - offsets[r]
        assert report["rows_match"] and report["own_edges"]
        assert report["batches"] == 2 * report["steps"] > 0
        assert len(report["wire_errors"]) == 2
        assert "exchange_device='gpu' lands the exchanged rows in a GPU's memory, but this " \
               "loader's device is cpu" in report["wire_errors"][0]
        assert "exchange_device='fast': use 'auto', 'cpu' or 'gpu'" in report["wire_errors"][1]
        ex = report["exchange"]
        assert ex["gathers"] == report["batches"]
        assert 0 < ex["remote_rows"] < ex["rows"]
    assert reports[0]["steps"] == reports[1]["steps"]
    assert reports[0]["exchange"]["bytes_sent"] == reports[1]["exchange"]["bytes_received"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_two_ranks_sharing_a_gpu_exchange_rows_in_its_memory(parts_path, tmp_path):
    """exchange_device='gpu' on ranks sharing the GPU (a Gloo group, which carries GPU tensors):
    each owner's GPU gathers its rows, which arrive in GPU memory, the whole table's."""
    reports = run_workers(LINK_WORKER, tmp_path, parts_path, tmp_path, "part", "cuda", "gpu")
    for report in reports:
        assert report["x_device"].startswith("cuda")
        assert report["rows_match"] and report["own_edges"]
        assert 0 < report["exchange"]["remote_rows"] < report["exchange"]["rows"]


PYG_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_sharded_pyg_worker.py")


def test_two_ranks_read_a_sharded_table_through_pyg_stores(parts_path, tmp_path):
    """directgnn.pyg's stores over a dataset loaded with shard=True: PyG's loader asks the
    feature store for each batch's rows in the script's own process, every rank as often, so
    each request's exchange pairs up; the rows are the whole table's."""
    pytest.importorskip("torch_geometric")
    whole = directgnn.load(parts_path)
    offsets = whole.partition["offsets"]
    reports = run_workers(PYG_WORKER, tmp_path, parts_path, tmp_path)
    for r, report in enumerate(reports):
        assert report["x_rows"] == offsets[r + 1] - offsets[r]
        assert report["size"] == list(whole.x.shape)  # the whole table's, as PyG asks it
        assert report["rows_match"] and report["labels_match"]
        assert report["batches"] == 2 * -(-240 // 32)  # two passes of ceil(240 / 32)
        ex = report["exchange"]
        assert ex["gathers"] == report["batches"]
        assert 0 < ex["remote_rows"] < ex["rows"]
    assert reports[0]["exchange"]["bytes_sent"] == reports[1]["exchange"]["bytes_received"]


PYG_HETERO_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "_sharded_pyg_hetero_worker.py")


def test_two_ranks_read_sharded_heterogeneous_tables_through_pyg_stores(tmp_path):
    """directgnn.pyg's stores over a heterogeneous dataset loaded with shard=True: each featured
    type's table is sharded (the paper table stored by part, an author table of float16), and
    each of PyG's feature requests runs one round of every table's exchange, so the ranks'
    collectives pair up whichever types a batch holds; the rows are the whole tables'."""
    pytest.importorskip("torch_geometric")
    cli = os.environ.get("DIRECTGNN_CLI")
    if not cli:
        pytest.skip("DIRECTGNN_CLI (the directgnn binary) is not set")
    data = directgnn.hetero.mag(0.002, seed=1)
    data.x["author"] = torch.randn(data.num_nodes["author"], 6).half()
    data.save(tmp_path / "mag")
    parts = tmp_path / "mag-2"
    subprocess.run([cli, "partition", str(tmp_path / "mag"), str(parts), "--parts", "2",
                    "--method", "random"], check=True, capture_output=True)
    whole = directgnn.load(parts)
    reports = run_workers(PYG_HETERO_WORKER, tmp_path, parts, tmp_path)
    for r, report in enumerate(reports):
        for t in ("paper", "author"):
            offsets = whole.partition["offsets"][t]
            assert report["x_rows"][t] == offsets[r + 1] - offsets[r]
            assert report["size"][t] == list(whole.x[t].shape)
        assert report["types_seen"] == ["author", "paper"]
        assert report["rows_match"] and report["labels_match"]
        assert report["batches"] == 2 * -(-160 // 24)
        ex = report["exchange"]
        assert ex["gathers"] == report["batches"]
        assert 0 < ex["remote_rows"] < ex["rows"]
    assert reports[0]["exchange"]["bytes_sent"] == reports[1]["exchange"]["bytes_received"]
