"""One rank of test_distributed.py's link run, started by torchrun: a directgnn.LinkLoader
over a partitioned dataset whose feature table is sharded over the ranks
(directgnn.load(shard=True)), its batches checked against the whole table. Writes
OUT/rank-R.json."""

import json
import os
import sys

import torch
import torch.distributed as dist

import directgnn


def main(path, out, assignment):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.set_num_threads(1)
    data = directgnn.load(path, shard=True)
    whole = directgnn.load(path)
    # Every rank passes the same positives: the graph's first 1,200 edges (source, destination).
    dst = torch.repeat_interleave(torch.arange(whole.num_nodes), whole.indptr.diff())
    edges = torch.stack([whole.indices.long(), dst], 1)[:1200]
    loader = directgnn.LinkLoader(data, edges, fanouts=[5, 5], batch_size=64, device="cpu",
                                  seed_assignment=assignment)
    starts = torch.tensor(data.partition["offsets"][1:-1])
    report = {"rank": loader.rank, "steps": len(loader), "batches": 0, "rows_match": True,
              "own_edges": True, "x_rows": int(data.x.shape[0])}
    for _ in range(2):
        for batch in loader:
            report["batches"] += 1
            report["rows_match"] &= bool(torch.equal(batch.x, whole.x[batch.n_id]))
            if assignment == "part":
                owner = torch.searchsorted(starts, batch.edges[:, 0].contiguous(), right=True)
                report["own_edges"] &= bool((owner == rank).all())
    report["exchange"] = loader.exchange_stats()
    with open(os.path.join(out, f"rank-{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
