#!/usr/bin/env python3
"""Seed corpora for the fuzz targets (standard library only): small hand-made files of every
format, plus the members of the bundled datasets when ../shared/datasets is there.
Usage: make_corpus.py OUT_DIR [DATASETS_DIR]"""
import io
import os
import struct
import sys
import zipfile


def npy(descr, shape, body, version=1, fortran=False):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False",
        "(%s)" % "".join("%d," % s for s in shape) if len(shape) != 1 else "(%d,)" % shape[0])
    size_bytes = 2 if version == 1 else 4
    total = 6 + 2 + size_bytes + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode("latin1") + body


def small_npys():
    f4 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    return {
        "f4_2x3.npy": npy("<f4", (2, 3), f4),
        "f4_v2.npy": npy("<f4", (3, 2), f4, version=2),
        "f4_v3.npy": npy("<f4", (6,), f4, version=3),
        "f2.npy": npy("<f2", (4,), struct.pack("<4e", 1, 2, 3, 4)),
        "f8.npy": npy("<f8", (2,), struct.pack("<2d", 1, 2)),
        "i4.npy": npy("<i4", (3,), struct.pack("<3i", 1, -2, 3)),
        "i8.npy": npy("<i8", (2, 2), struct.pack("<4q", 0, 1, 2, 3)),
        "i1.npy": npy("|i1", (3,), b"\x01\xff\x02"),
        "u1.npy": npy("|u1", (3,), b"\x01\xff\x02"),
        "b1.npy": npy("|b1", (4,), b"\x00\x01\x01\x00"),
        "scalar.npy": npy("<i8", (), struct.pack("<q", 7)),
        "empty.npy": npy("<f4", (0, 5), b""),
        "fortran.npy": npy("<f4", (2, 3), f4, fortran=True),
        "unicode.npy": npy("<U3", (1,), "abc".encode("utf-32-le")),
        "object.npy": npy("|O", (1,), b"\x80\x04N."),
    }


def zip_of(members, method, zip64=False):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as z:
        for name, data in members.items():
            with z.open(name, "w", force_zip64=zip64) as f:
                f.write(data)
    return out.getvalue()


def hetero_metas():
    head = (b'{"format_version": 2, "kind": "heterogeneous", "name": "mag", "node_types": '
            b'[{"name": "author", "count": 3, "feat_dim": 0}, {"name": "paper", "count": 4, '
            b'"feat_dim": 2, "feat_dtype": "float16", "features_checked": {"bytes": 144, '
            b'"mtime_ns": 1, "inode": 2}}], ')
    rels = (b'"relations": [{"src": "author", "rel": "writes", "dst": "paper", "num_edges": 5}, '
            b'{"src": "paper", "rel": "cites", "dst": "paper", "num_edges": 3}]')
    return {
        "labelled.json": head + rels + b', "target": {"type": "paper", "num_classes": 3, '
                         b'"class_names": ["a", "b", "c"]}, "num_splits": 2}',
        "unlabelled.json": head + rels + b', "num_splits": 0}',
        "null_target.json": head + rels + b', "target": null}',
        "escape.json": head + b'"relations": [{"src": "author", "rel": "../up", "dst": '
                       b'"paper", "num_edges": 0}]}',
        "unknown_type.json": head + b'"relations": [{"src": "book", "rel": "r", "dst": '
                             b'"paper", "num_edges": 1}]}',
        "twice.json": b'{"format_version": 2, "kind": "heterogeneous", "node_types": '
                      b'[{"name": "a", "count": 1}, {"name": "a", "count": 2}], "relations": []}',
        "homogeneous.json": b'{"format_version": 2, "num_nodes": 1}',
    }


def typed_csvs():
    # The first byte: low two bits pick the reader (fuzz_typed_csv.cc); for edge lists, bits
    # 2-4 and 5-7 give the source and destination types' sizes less one.
    sizes = (7 << 2) | (7 << 5)
    return {
        "nodes.csv": b"\x00type,count\n# a comment\nauthor,3\n\npaper, 4\n",
        "nodes_bad.csv": b"\x00author,3\npaper,many\n",
        "file.csv": b"\x01author___writes___paper.csv.gz",
        "file_bad.csv": b"\x01author___paper.tsv",
        "edges.csv": bytes([2 | sizes]) + b"src,dst\n0,1\n# c\n1,2\n7,7\n1,2\n",
        "edges_out.csv": bytes([3 | (1 << 2)]) + b"0 1\n2 0\n",
    }


def link_splits():
    # The graph of fuzz_link_split.cc: 16 nodes, i -> i+1 and i -> i+5 (mod 16). The first
    # byte: bit 0 directed, bits 1-2 negatives (none, shared, per_source), bit 3
    # eval_edges_in_graph, bit 4 published.
    def pairs(rows, dtype="<i8"):
        fmt = "<%d%s" % (2 * len(rows), "q" if dtype == "<i8" else "i")
        return npy(dtype, (len(rows), 2), struct.pack(fmt, *[v for r in rows for v in r]))

    n = 16
    train = pairs([(i, (i + 1) % n) for i in range(n)] + [(i, (i + 5) % n) for i in range(4)])
    val = pairs([(i, (i + 2) % n) for i in range(4)], "<i4")
    test = pairs([(i, (i + 3) % n) for i in range(4, 8)])
    shared = {"val_neg": pairs([(i, (i + 7) % n) for i in range(6)]),
              "test_neg": pairs([(i, (i + 8) % n) for i in range(6)])}
    per_source = {"val_neg": npy("<i8", (4, 3), struct.pack(
                      "<12q", *[(i + k) % n for i in range(4) for k in (6, 7, 8)])),
                  "test_neg": npy("<i8", (4, 3), struct.pack(
                      "<12q", *[(i + k) % n for i in range(4, 8) for k in (6, 7, 8)]))}
    base = {"train.npy": train, "val.npy": val, "test.npy": test}

    def archive(flags, extra=None):
        members = dict(base)
        for k, v in (extra or {}).items():
            members[k + ".npy"] = v
        return bytes([flags]) + zip_of(members, zipfile.ZIP_STORED)

    repeated = pairs([(i, (i + 3) % n) for i in range(4, 8)] + [(7, 4)])
    return {
        "none.npz": archive(0),
        "directed.npz": archive(1),
        "shared.npz": archive(2, shared),
        "per_source.npz": archive(4, per_source),
        "in_graph.npz": archive(8 | 2, shared),
        "repeated.npz": archive(0, {"test": repeated}),
        "published.npz": archive(16, {"test": repeated}),
        "negative_edge.npz": archive(2, {"val_neg": pairs([(0, 1)]),
                                         "test_neg": shared["test_neg"]}),
    }


def main():
    out = sys.argv[1]
    datasets = sys.argv[2] if len(sys.argv) > 2 else None
    for target in ("npy", "npz", "text", "meta", "csv", "hetero_meta", "typed_csv",
                   "link_split"):
        os.makedirs(os.path.join(out, target), exist_ok=True)

    def put(target, name, data):
        with open(os.path.join(out, target, name), "wb") as f:
            f.write(data)

    npys = small_npys()
    for name, data in npys.items():
        put("npy", name, data)
    arrays = {"x.npy": npys["f4_2x3.npy"], "y.npy": npys["i8.npy"], "m.npy": npys["b1.npy"]}
    put("npz", "stored.npz", zip_of(arrays, zipfile.ZIP_STORED))
    put("npz", "deflate.npz", zip_of(arrays, zipfile.ZIP_DEFLATED))
    put("npz", "zip64.npz", zip_of(arrays, zipfile.ZIP_DEFLATED, zip64=True))
    put("npz", "unicode.npz", zip_of({"names.npy": npys["unicode.npy"]}, zipfile.ZIP_STORED))
    if datasets and os.path.isdir(datasets):
        for file in sorted(os.listdir(datasets)):
            if not file.endswith(".npz"):
                continue
            path = os.path.join(datasets, file)
            with zipfile.ZipFile(path) as z:
                for info in z.infolist():
                    data = z.read(info)
                    if len(data) <= 65536:
                        put("npy", file + "." + info.filename, data)
                    # A smaller archive of each member keeps the layout numpy writes.
                    put("npz", file + "." + info.filename + ".npz",
                        zip_of({info.filename: data[:4096]}, info.compress_type,
                               zip64=info.compress_type == zipfile.ZIP_DEFLATED))

    # Text: the first byte picks the reader (fuzz_text.cc): 0 edge list, 1 strict CSV edges,
    # 2 integer column (6: with nan), 3 feature rows (3 + 4k: k + 1 rows).
    texts = {
        "edges.txt": b"\x00# comment\n% another\nsrc dst\n0 1\n1\t2\n2,0\n\n3 4 0.5\n",
        "edges_crlf.txt": b"\x000,1\r\n1,2\r\n",
        "edges.csv": b"\x010,1\n1,2\n2,3\n",
        "bad_edges.txt": b"\x000 1\nheader after\n-1 2\n",
        "column.csv": b"\x023\n1\n0\n",
        "labels.csv": b"\x06nan\n3.0\n1\n",
        "features.csv": b"\x0b0.5,1.5,-2\n1e3,2,3\n1,2,3\n",
        "features_short.csv": b"\x070.5,1.5\n1\n",
    }
    for name, data in texts.items():
        put("text", name, data)

    # CSV: the first byte picks the reader (fuzz_csv.cc): even records, odd labels.
    csvs = {
        "records.csv": b'\x00a,"b,c","say ""hi""\r\nthere"\r\n1,2,3\r\n',
        "bom.csv": b"\x00\xef\xbb\xbfid,label\n0,x\n",
        "labels.csv": b'\x01id,name,label\n0,"Zo\xc3\xab, A",b\n3,x,a\n\n15,"q""",a\n',
        "numeric.csv": b"\x01label,id\n10,1\n2,2\n",
        "unclosed.csv": b'\x00a,"b\n',
        "bad_labels.csv": b"\x01id,label\n0,\n1,a\n1,b\n99,c\n",
    }
    for name, data in csvs.items():
        put("csv", name, data)

    metas = {
        "meta.json": b'{"name": "cora", "format_version": 2, "num_nodes": 2708, '
                     b'"num_edges": 10556, "feat_dim": 1433, "feat_dtype": "float32", '
                     b'"num_classes": 7, "directed": false, "num_splits": 1}',
        "minimal.json": b'{"format_version": 1, "num_nodes": 1, "num_edges": 0, '
                        b'"feat_dim": 1, "num_classes": 2}',
        "directed_v1.json": b'{"format_version": 1, "num_nodes": 3, "num_edges": 2, '
                            b'"feat_dim": 1, "num_classes": 2, "directed": true}',
        "wrong_types.json": b'{"format_version": "1", "num_nodes": 2.5, "directed": "yes"}',
        "array.json": b"[1, 2, 3]",
        "class_names.json": b'{"format_version": 1, "num_nodes": 3, "num_edges": 0, '
                            b'"feat_dim": 1, "num_classes": 2, "class_names": ["a", "\\u00eb"]}',
    }
    metas["link.json"] = (b'{"format_version": 2, "num_nodes": 16, "num_edges": 64, '
                          b'"feat_dim": 1, "num_classes": 0, "link": {"negatives": "shared", '
                          b'"eval_edges_in_graph": false, "published": true}}')
    for name, data in metas.items():
        put("meta", name, data)
    for name, data in hetero_metas().items():
        put("hetero_meta", name, data)
    for name, data in typed_csvs().items():
        put("typed_csv", name, data)
    for name, data in link_splits().items():
        put("link_split", name, data)


if __name__ == "__main__":
    main()
