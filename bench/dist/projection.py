"""Projects the network time of a sharded epoch on a larger graph over M machines from a
measured run's feature exchange (issue 45 part 5; docs/distributed.md, "Projection").

    python3 bench/dist/projection.py METRICS.jsonl [--seeds 1207179] [--batch 1024]
        [--row-bytes 512] [--rows N ...] [--machines 4 8 16] [--gbits 25 100]

METRICS.jsonl is a sharded run's metrics (`directgnn train ... --metrics`): its epochs'
"exchange" records give the distinct input rows a minibatch reads (rows asked / gathers).
The projection assumes a hash partition (a row is remote with probability (M - 1) / M, as the
measured run's remote share checks), one rank per machine, every machine taking
seeds / (batch * M) steps an epoch, and the link moving bytes at its line rate, ids and
headers left out. --rows adds other per-minibatch row counts (e.g. an estimate for a graph
whose neighbourhoods repeat less). Prints one Markdown table: per row count, machines and
link, the GB a machine receives an epoch and the seconds that takes on the wire: the least
time an epoch can take unless the transfers hide behind the steps.
"""
import argparse
import json


def measured(path):
    rows = gathers = remote = 0
    for line in open(path):
        record = json.loads(line)
        ex = record.get("exchange")
        if record.get("event") != "epoch" or not ex:
            continue
        steps = round(ex["bytes_received"] / ex["bytes_received_per_step"])
        rows += ex["rows"]
        remote += ex["remote_rows"]
        gathers += steps
    if gathers == 0:
        raise SystemExit(f"{path}: no epoch with an exchange record; give a sharded run's metrics")
    return rows / gathers, remote / rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("metrics")
    p.add_argument("--seeds", type=int, default=1_207_179, help="training seeds an epoch "
                   "(ogbn-papers100M's: 1,207,179)")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--row-bytes", type=int, default=512, help="512: 128-d float32")
    p.add_argument("--rows", type=float, nargs="*", default=[], help="more rows per minibatch")
    p.add_argument("--machines", type=int, nargs="+", default=[4, 8, 16])
    p.add_argument("--gbits", type=float, nargs="+", default=[25, 100])
    a = p.parse_args()
    rows, remote = measured(a.metrics)
    print(f"measured: {rows:,.0f} distinct rows a minibatch, {100 * remote:.1f}% remote")
    print("| rows a minibatch | machines | steps a machine | GB in a machine an epoch | "
          + " | ".join(f"s on the wire at {g:g} Gb/s" for g in a.gbits) + " |")
    print("|---" * (4 + len(a.gbits)) + "|")
    for count in [rows] + a.rows:
        for m in a.machines:
            steps = a.seeds / (a.batch * m)
            gb = steps * count * a.row_bytes * (m - 1) / m / 1e9
            wire = " | ".join(f"{gb * 8 / g:.1f}" for g in a.gbits)
            print(f"| {count:,.0f} | {m} | {steps:.0f} | {gb:.1f} | {wire} |")


if __name__ == "__main__":
    main()
