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


def main(path, out, assignment, device="cpu", exchange_device="auto"):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.set_num_threads(1)
    data = directgnn.load(path, shard=True)
    whole = directgnn.load(path)
    # Every rank passes the same positives: the graph's first 1,200 edges (source, destination).
    dst = torch.repeat_interleave(torch.arange(whole.num_nodes), whole.indptr.diff())
    edges = torch.stack([whole.indices.long(), dst], 1)[:1200]
    # Rows landing in a GPU's memory need a loader on a GPU; both ranks refuse alike, before
    # any collective.
    wire_errors = []
    for wire in ("gpu", "fast"):
        try:
            directgnn.LinkLoader(data, edges, fanouts=[5], batch_size=64, device="cpu",
                                 exchange_device=wire)
        except ValueError as e:
            wire_errors.append(str(e))
    loader = directgnn.LinkLoader(data, edges, fanouts=[5, 5], batch_size=64, device=device,
                                  seed_assignment=assignment, exchange_device=exchange_device)
    starts = torch.tensor(data.partition["offsets"][1:-1])
    report = {"rank": loader.rank, "steps": len(loader), "batches": 0, "rows_match": True,
              "own_edges": True, "x_rows": int(data.x.shape[0]), "wire_errors": wire_errors}
    for _ in range(2):
        for batch in loader:
            report["batches"] += 1
            report["x_device"] = str(batch.x.device)
            report["rows_match"] &= bool(torch.equal(batch.x.cpu(), whole.x[batch.n_id.cpu()]))
            if assignment == "part":
                owner = torch.searchsorted(starts, batch.edges[:, 0].cpu().contiguous(),
                                           right=True)
                report["own_edges"] &= bool((owner == rank).all())
    report["exchange"] = loader.exchange_stats()
    with open(os.path.join(out, f"rank-{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:])
