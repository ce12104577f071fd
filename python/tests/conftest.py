import os

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def dataset_path(name):
    """A real dataset from $DIRECTGNN_DATA or ../shared/datasets beside the checkout."""
    roots = [os.environ.get("DIRECTGNN_DATA", ""), os.path.join(HERE, "../../../shared/datasets")]
    for root in roots:
        if root and os.path.exists(os.path.join(root, name)):
            return os.path.join(root, name)
    pytest.skip(f"{name} not found in $DIRECTGNN_DATA or ../shared/datasets; skipped")


@pytest.fixture
def cora_path():
    return dataset_path("cora.npz")


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU; none is visible")
