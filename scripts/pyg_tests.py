#!/usr/bin/env python3
"""Runs PyG's own loader and store tests against directgnn.pyg.

    .venv/bin/python scripts/pyg_tests.py SNAPSHOT [--rev 2.8.0.post1] [--json out.json]
        [-- pytest arguments]

SNAPSHOT is a PyG checkout or bare git directory (for example what the search tool's fetch
gives for pyg-team/pytorch_geometric); the tests are read from it at --rev (a tag or commit;
a checkout without git is read as it is). Nothing of PyG's is copied into this repository:
the files go to a temporary directory and are changed there, as the harness of issue 30
describes:
- `from directgnn.pyg import LinkNeighborLoader, NeighborLoader` after each module's imports, and PyG's reference
  stores (`MyFeatureStore`, `MyGraphStore`) replaced by subclasses of directgnn's stores of the
  same names;
- PyG's sampler gates lifted: `onlyNeighborSampler` and `withPackage('pyg_lib')` /
  `withPackage('torch_sparse')` made no-ops, and the test modules' `WITH_*` sampler flags set
  true (directgnn needs neither pyg-lib nor torch-sparse). A gate naming both stays: those
  tests compare pyg-lib's sampler with torch-sparse's and never reach directgnn. Other gates
  (CUDA, torch_frame) stay; PyG's test/conftest.py gives the dataset fixtures.

It prints one line per test and a summary: passed, failed, raised NotImplementedError (the
documented limits), skipped; with --json it writes them. It exits 1 when a test fails for
another reason than NotImplementedError.
"""

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

TESTS = [
    "test/loader/test_neighbor_loader.py",
    "test/loader/test_link_neighbor_loader.py",
    "test/data/test_feature_store.py",
    "test/data/test_graph_store.py",
]

FLAGS = ["WITH_PYG_LIB", "WITH_TORCH_SPARSE", "WITH_WEIGHTED_NEIGHBOR_SAMPLE",
         "WITH_EDGE_TIME_NEIGHBOR_SAMPLE"]

# Loaded before the test modules: lifts the sampler gates in torch_geometric.testing.
CONFTEST = '''
import re

import pytest
import torch_geometric.testing as testing

pytest_plugins = ["pyg_conftest"]  # PyG's own test/conftest.py: its dataset fixtures

_gated = {"pyg_lib", "torch_sparse"}
_with_package = testing.withPackage


def _with_package_lifted(*packages):
    names = {re.split("[<>=]", p)[0] for p in packages}
    if names >= _gated:  # the tests that compare pyg-lib with torch-sparse keep their gate
        return _with_package(*packages)
    rest = [p for p in packages if re.split("[<>=]", p)[0] not in _gated]
    return _with_package(*rest) if rest else (lambda func: func)


testing.withPackage = _with_package_lifted
testing.onlyNeighborSampler = lambda func: func

_outcomes = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.when == "call" or report.outcome != "passed":
        kind = report.outcome
        if report.failed and call.excinfo is not None and call.excinfo.errisinstance(
                NotImplementedError):
            kind = "not_implemented"
        if item.nodeid not in _outcomes or kind != "passed":
            _outcomes[item.nodeid] = (kind, str(call.excinfo.value)[:300]
                                      if call.excinfo is not None else "")


def pytest_sessionfinish(session, exitstatus):
    import json, os
    with open(os.environ["DIRECTGNN_PYG_OUTCOMES"], "w") as f:
        json.dump(_outcomes, f, indent=1)
'''

# The reference stores' names, over directgnn's stores.
STORES = '''
import directgnn.pyg


class MyFeatureStore(directgnn.pyg.FeatureStore):
    """directgnn's feature store under the name of PyG's reference store."""

    def __init__(self):
        super().__init__("cpu")


class MyGraphStore(directgnn.pyg.GraphStore):
    """directgnn's graph store under the name of PyG's reference store."""
'''


def read_test(snapshot: Path, rev: str, path: str) -> str:
    if (snapshot / path).is_file() and not rev:
        return (snapshot / path).read_text()
    return subprocess.run(["git", "--git-dir", str(git_dir(snapshot)), "show", f"{rev}:{path}"],
                          check=True, capture_output=True, text=True).stdout


def git_dir(snapshot: Path) -> Path:
    return snapshot / ".git" if (snapshot / ".git").exists() else snapshot


def end_of_imports(source: str) -> int:
    """The line after the module's last top-level import (1-based lines)."""
    last = 0
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            last = node.end_lineno
    return last


def patch(source: str) -> str:
    lines = source.split("\n")
    at = end_of_imports(source)
    added = ["", "# directgnn's harness (scripts/pyg_tests.py):",
             "from directgnn.pyg import LinkNeighborLoader, NeighborLoader  # noqa",
             "from directgnn_stores import MyFeatureStore, MyGraphStore  # noqa"]
    added += [f"{flag} = True" for flag in FLAGS if flag in source]
    return "\n".join(lines[:at] + added + lines[at:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--rev", default="2.8.0.post1")
    parser.add_argument("--json", type=Path)
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pyg-tests-") as tmp:
        root = Path(tmp)
        for path in TESTS:
            (root / Path(path).name).write_text(patch(read_test(args.snapshot, args.rev, path)))
        (root / "conftest.py").write_text(CONFTEST)
        (root / "pyg_conftest.py").write_text(read_test(args.snapshot, args.rev,
                                                        "test/conftest.py"))
        (root / "directgnn_stores.py").write_text(STORES)
        outcomes = root / "outcomes.json"
        env = dict(os.environ, DIRECTGNN_PYG_OUTCOMES=str(outcomes), PYTHONPATH=os.pathsep.join(
            [str(root)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-rN", str(root), *args.pytest_args], env=env, cwd=root)
        results = json.loads(outcomes.read_text()) if outcomes.exists() else {}
    return report(results, args.json)


def report(results: dict, json_path) -> int:
    counts = {}
    for test, (kind, message) in sorted(results.items()):
        counts[kind] = counts.get(kind, 0) + 1
        print(f"{kind:16} {test}" + (f"\n{'':16} {message.splitlines()[0]}" if message and
                                      kind != "passed" else ""))
    summary = ", ".join(f"{counts.get(k, 0)} {k}" for k in
                        ("passed", "failed", "not_implemented", "skipped"))
    print(f"pyg tests: {summary}")
    if json_path:
        json_path.write_text(json.dumps({"summary": counts, "tests": results}, indent=1) + "\n")
    return 1 if counts.get("failed") else 0


if __name__ == "__main__":
    sys.exit(main())
