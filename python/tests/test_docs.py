"""Every Python snippet of README.md, docs/python.md and the package's docstrings runs as
written: the fenced ```python blocks of the two documents, and the blocks that follow a
docstring line ending in "::". Each runs in a fresh namespace in a scratch directory holding
cora.npz (snippets that load it are skipped where the dataset is absent)."""

import inspect
import os
import re
import shutil
import subprocess
import textwrap

import pytest

import directgnn
import directgnn.pyg
from conftest import HERE

ROOT = os.path.join(HERE, "../..")
DOCUMENTS = ["README.md", "docs/python.md"]


def fenced_blocks(path):
    text = open(os.path.join(ROOT, path)).read()
    for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        line = text[:m.start()].count("\n") + 1
        yield f"{path}:{line}", m.group(1)


def docstring_blocks(obj, name):
    doc = inspect.getdoc(obj) or ""
    lines = doc.split("\n")
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("::"):
            continue
        block = []
        for follow in lines[i + 1:]:
            if follow.strip() and not follow.startswith(" "):
                break
            block.append(follow)
        code = textwrap.dedent("\n".join(block)).strip("\n")
        if code:
            yield f"{name} docstring, line {i + 2}", code + "\n"


def documented_objects():
    modules = [directgnn, directgnn.pyg] + [getattr(directgnn, m) for m in
                                            ("tensor", "loader", "sampler", "data", "datasets",
                                             "checkpoint")]
    for module in modules:
        yield module.__name__, module
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            yield f"{module.__name__}.{name}", obj
            for attr, member in vars(obj).items() if inspect.isclass(obj) else ():
                if not attr.startswith("_") and callable(member):
                    yield f"{module.__name__}.{name}.{attr}", member


def snippets():
    for path in DOCUMENTS:
        yield from fenced_blocks(path)
    for name, obj in documented_objects():
        yield from docstring_blocks(obj, name)


SNIPPETS = list(snippets())


def test_the_documents_have_snippets():
    where = {w.split(":")[0] for w, _ in SNIPPETS}
    assert set(DOCUMENTS) <= where, where
    assert any("docstring" in w for w, _ in SNIPPETS)


@pytest.mark.parametrize("where,code", SNIPPETS, ids=[w for w, _ in SNIPPETS])
def test_the_snippet_runs(where, code, tmp_path, monkeypatch):
    if "cora.npz" in code:
        from conftest import dataset_path
        shutil.copy(dataset_path("cora.npz"), tmp_path / "cora.npz")
    if "load_checkpoint(\"ck\")" in code:
        # A snippet reading a checkpoint gets one trained on cora by the CLI.
        cli = os.environ.get("DIRECTGNN_CLI")
        if not cli:
            pytest.skip("DIRECTGNN_CLI (the directgnn binary) is not set")
        from conftest import dataset_path
        subprocess.run([cli, "train", "--dataset", dataset_path("cora.npz"), "--epochs", "1",
                        "--threads", "1", "--checkpoint", str(tmp_path / "ck")], check=True,
                       capture_output=True)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, where, "exec"), {"__name__": "__snippet__"})
