"""One line on a run's warm epochs (2 to the last) from its --metrics JSONL: the median epoch
time, and for a table on disk the rows gathered, the cache's hit rate and the bytes asked and
read per epoch; given the run's log with /usr/bin/time -v's report, its peak RSS; and the last
epoch's accuracies when it evaluated.

    python bench/hetero/warm_epochs.py RUN.jsonl [RUN.log]
"""
import json
import re
import statistics
import sys


def main(jsonl, log=None):
    records = [json.loads(line) for line in open(jsonl)]
    epochs = [r for r in records if r.get("event") == "epoch"]
    warm = epochs[1:]
    times = [r["epoch_time_s"] for r in warm]
    text = (f"  warm epochs {len(times)}: median {statistics.median(times):.2f} s "
            f"({', '.join(f'{t:.2f}' for t in times)})")
    if warm and "disk_bytes_gathered" in warm[0]:
        gathered = statistics.mean(r["disk_bytes_gathered"] for r in warm)
        asked = statistics.mean(r["disk_bytes_asked"] for r in warm)
        read = [r["disk_bytes_read"] for r in warm if r["disk_bytes_read"] is not None]
        hit = statistics.mean(r["disk_cache_hit_rate"] for r in warm)
        text += (f"; rows {gathered / 1e9:.3f} GB an epoch, hit {100 * hit:.1f}%, asked "
                 f"{asked / 1e9:.3f} GB, read from disk "
                 f"{statistics.mean(read) / 1e9 if read else float('nan'):.3f} GB")
    if log is not None:
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(log).read())
        if rss:
            text += f"; peak RSS {int(rss.group(1)) * 1024 / 2**30:.2f} GiB"
    if epochs and "test_acc" in epochs[-1]:
        text += f"; val {epochs[-1]['val_acc']:.4f}, test {epochs[-1]['test_acc']:.4f}"
    print(text)


if __name__ == "__main__":
    main(*sys.argv[1:3])
