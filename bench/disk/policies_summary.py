"""The table of bench/disk/policies.sh's runs: per run, the warm epochs' mean time (epochs 2 to
the last) and its ratio to the table in RAM (the training runs to `ram`, the load-only passes to
`ram-load`), the cache's hit rate, the distinct rows an epoch gathers, and the bytes read from
disk per epoch against the bytes of the distinct rows it missed. Writes OUT_DIR/summary.json.

    python bench/disk/policies_summary.py OUT_DIR
"""
import json
import pathlib
import re
import statistics
import sys


def warm_epochs(path):
    records = [json.loads(line) for line in open(path)]
    return [r for r in records if r.get("event") == "epoch"][1:]


def summarise(name, warm, log):
    row = {"run": name, "epochs": len(warm),
           "epoch_s": statistics.mean(r["epoch_time_s"] for r in warm),
           "epoch_times_s": [r["epoch_time_s"] for r in warm]}
    if "disk_bytes_gathered" in warm[0]:
        def mean(key):
            return statistics.mean(r[key] for r in warm)
        row.update(hit_rate=mean("disk_cache_hit_rate"), distinct_rows=mean("disk_distinct_rows"),
                   bytes_gathered=mean("disk_bytes_gathered"), bytes_asked=mean("disk_bytes_asked"),
                   distinct_bytes_missed=mean("disk_distinct_bytes_missed"),
                   read_s=mean("disk_read_s"))
        read = [r["disk_bytes_read"] for r in warm if r.get("disk_bytes_read") is not None]
        row["bytes_read"] = statistics.mean(read) if read else None
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", log)
    if rss:
        row["peak_rss_gib"] = int(rss.group(1)) * 1024 / 2**30
    cache = re.search(r"^Feature cache: .*$", log, re.M)
    if cache:
        row["cache"] = cache.group(0)
    return row


def main(out):
    out = pathlib.Path(out)
    rows = {}
    for jsonl in sorted(out.glob("*.jsonl")):
        warm = warm_epochs(jsonl)
        if warm:
            log = out / (jsonl.stem + ".log")
            rows[jsonl.stem] = summarise(jsonl.stem, warm, log.read_text() if log.exists() else "")
    print("| run | warm epoch | x RAM | hits | distinct rows | read / epoch | distinct missed | "
          "read / missed | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, row in rows.items():
        ref = rows.get("ram-load" if name.endswith("-load") else "ram")
        if ref is not None:
            row["x_ram"] = row["epoch_s"] / ref["epoch_s"]
        cells = [name, f"{row['epoch_s']:.2f} s",
                 f"{row['x_ram']:.2f}x" if "x_ram" in row else "",
                 f"{100 * row['hit_rate']:.1f}%" if "hit_rate" in row else "",
                 f"{row['distinct_rows']:.0f}" if "distinct_rows" in row else ""]
        if row.get("bytes_read") is not None:
            missed = row["distinct_bytes_missed"]
            cells += [f"{row['bytes_read'] / 1e9:.2f} GB", f"{missed / 1e9:.2f} GB",
                      f"{row['bytes_read'] / missed:.2f}x" if missed else ""]
        else:
            cells += ["", "", ""]
        cells.append(f"{row['peak_rss_gib']:.2f} GiB" if "peak_rss_gib" in row else "")
        print("| " + " | ".join(cells) + " |")
    (out / "summary.json").write_text(json.dumps(list(rows.values()), indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
