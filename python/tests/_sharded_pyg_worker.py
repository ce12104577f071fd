"""One rank of test_distributed.py's directgnn.pyg run, started by torchrun:
directgnn.pyg.stores over a dataset loaded with shard=True, iterated by
directgnn.pyg.NeighborLoader with every rank's own seeds, its batches checked against the whole
table. Writes OUT/rank-R.json."""

import json
import os
import sys

import torch
import torch.distributed as dist

import directgnn
import directgnn.pyg


def main(path, out):
    dist.init_process_group("gloo")
    rank, ranks = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    data = directgnn.load(path, shard=True)
    whole = directgnn.load(path)
    feature_store, graph_store = directgnn.pyg.stores(data)
    # Every rank as many seeds (so as many batches): its share of the first 480 nodes.
    seeds = torch.arange(480).view(ranks, -1)[rank]
    loader = directgnn.pyg.NeighborLoader((feature_store, graph_store), num_neighbors=[5, 5],
                                          input_nodes=seeds, batch_size=32, shuffle=True)
    report = {"batches": 0, "rows_match": True, "labels_match": True,
              "size": list(feature_store.get_tensor_size(group_name=None, attr_name="x")),
              "x_rows": int(feature_store._tables[(None, "x")].shape[0])}
    for _ in range(2):
        for batch in loader:
            report["batches"] += 1
            report["rows_match"] &= bool(torch.equal(batch.x, whole.x[batch.n_id]))
            report["labels_match"] &= bool(torch.equal(batch.y, whole.y[batch.n_id]))
    report["exchange"] = feature_store.exchange_stats()
    with open(os.path.join(out, f"rank-{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
