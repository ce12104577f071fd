"""One rank of test_distributed.py's heterogeneous run, started by torchrun: a
directgnn.HeteroLoader over a partitioned heterogeneous dataset whose featured tables are
sharded over the ranks (directgnn.load(shard=True)), its batches checked against the whole
tables. Writes OUT/rank-R.json."""

import json
import os
import sys

import torch
import torch.distributed as dist

import directgnn


def main(path, out, assignment, features):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.set_num_threads(1)
    data = directgnn.load(path, shard=True)
    whole = directgnn.load(path)
    loader = directgnn.HeteroLoader(data, data.splits[0]["train"], fanouts=[4, 4],
                                    batch_size=64, seed_assignment=assignment, features=features,
                                    feature_cache_gib=0.0005 if features == "disk" else 0.0)
    offsets = data.partition["offsets"][data.target]
    report = {"rank": loader.rank, "cache": loader.feature_cache, "steps": len(loader), "batches": 0, "rows_match": True,
              "own_seeds": True, "x_rows": {t: int(x.shape[0]) for t, x in data.x.items()},
              "labels_match": True}
    for _ in range(2):
        for batch in loader:
            report["batches"] += 1
            for t, x in batch.x.items():
                report["rows_match"] &= bool(torch.equal(x, whole.x[t][batch.node[t]]))
            report["labels_match"] &= bool(torch.equal(batch.y, whole.y[batch.seeds]))
            if assignment == "part":
                mine = (batch.seeds >= offsets[rank]) & (batch.seeds < offsets[rank + 1])
                report["own_seeds"] &= bool(mine.all())
    report["exchange"] = loader.exchange_stats()
    with open(os.path.join(out, f"rank-{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4])
