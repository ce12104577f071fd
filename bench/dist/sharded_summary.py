"""Summarises bench/dist/sharded.sh's runs: one row per metrics file in DIR.

    python3 bench/dist/sharded_summary.py DIR

Per run (rank 0's view): mean epoch time (all epochs, and from the second on), the remote share
of feature rows and megabytes received a step from the feature exchange, the cache's share of
remote rows, the remote share of sampled frontier rows and megabytes a step from the hop
exchange, seconds in both exchanges an epoch, peak resident memory, and the final accuracy when
the run evaluated.
"""
import json
import pathlib
import sys


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def row(path):
    epochs, final = [], {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("event") == "epoch":
            epochs.append(record)
        elif "param_digest" in record:
            final = record
    times = [e["epoch_time_s"] for e in epochs]
    ex = [e["exchange"] for e in epochs if "exchange" in e]
    hops = [e["sampling"] for e in epochs if "sampling" in e]
    steps = final.get("steps_per_epoch") or 1
    cells = [path.stem, f"{mean(times):.2f} s ({mean(times[1:]):.2f} s)"]
    if ex:
        cells += [f"{100 * mean([x['remote_row_fraction'] for x in ex]):.1f}%",
                  f"{mean([x['bytes_received_per_step'] for x in ex]) / 1e6:.2f}",
                  f"{100 * mean([x['cache_hit_rate'] for x in ex]):.1f}%"]
    else:
        cells += ["", "", ""]
    if hops:
        cells += [f"{100 * mean([h['remote_row_fraction'] for h in hops]):.1f}%",
                  f"{mean([h['bytes_received'] for h in hops]) / steps / 1e6:.2f}"]
    else:
        cells += ["", ""]
    seconds = mean([x["seconds"] for x in ex]) + (mean([h["seconds"] for h in hops]) if hops else 0)
    cells.append(f"{seconds:.1f} s" if ex or hops else "")
    cells.append(f"{max(e.get('peak_rss_bytes', 0) for e in epochs) / 2**30:.2f} GiB"
                 if epochs else "")
    acc = final.get("test_acc")
    cells.append(f"{acc:.4f}" if isinstance(acc, float) and final.get("best_epoch", -1) >= 0 else "")
    return "| " + " | ".join(cells) + " |"


def main():
    directory = pathlib.Path(sys.argv[1])
    print("| run | epoch, mean (from the 2nd) | remote rows | MB in a step | cache served "
          "| remote frontier | hop MB in a step | in exchanges an epoch | peak RSS | test acc |")
    print("|---" * 10 + "|")
    for path in sorted(directory.glob("*.jsonl")):
        print(row(path))


if __name__ == "__main__":
    main()
