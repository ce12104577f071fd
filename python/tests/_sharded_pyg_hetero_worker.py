"""One rank of test_distributed.py's heterogeneous directgnn.pyg run, started by torchrun:
directgnn.pyg.stores over a heterogeneous dataset loaded with shard=True (two featured types,
each sharded), iterated by directgnn.pyg.NeighborLoader with every rank's own seeds of the
target type, each batch's rows of every type checked against the whole tables. Writes
OUT/rank-R.json."""

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
    # Every rank as many seeds (so as many batches): its share of the first 320 training nodes.
    train = whole.splits[0]["train"][:320]
    seeds = train.view(ranks, -1)[rank]
    loader = directgnn.pyg.NeighborLoader((feature_store, graph_store), num_neighbors=[4, 3],
                                          input_nodes=(whole.target, seeds), batch_size=24,
                                          shuffle=True)
    report = {"batches": 0, "rows_match": True, "labels_match": True, "types_seen": [],
              "x_rows": {t: int(feature_store._tables[(t, "x")].shape[0]) for t in whole.x},
              "size": {t: list(feature_store.get_tensor_size(group_name=t, attr_name="x"))
                       for t in whole.x}}
    seen = set()
    for _ in range(2):
        for batch in loader:
            report["batches"] += 1
            for t in whole.x:
                if t in batch.node_types and "x" in batch[t]:
                    seen.add(t)
                    want = whole.x[t][batch[t].n_id]
                    report["rows_match"] &= bool(torch.equal(batch[t].x, want))
            target = batch[whole.target]
            report["labels_match"] &= bool(torch.equal(target.y, whole.y[target.n_id]))
    report["types_seen"] = sorted(seen)
    report["exchange"] = feature_store.exchange_stats()
    with open(os.path.join(out, f"rank-{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
