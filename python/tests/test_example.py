import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "../../examples/sage_loop.py")


def test_the_plain_pytorch_loop_learns_cora(cora_path):
    out = subprocess.run([sys.executable, EXAMPLE, "--dataset", cora_path, "--seeds", "0", "1",
                          "2"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    mean = float(re.search(r"mean test accuracy ([0-9.]+)", out.stdout).group(1))
    assert mean >= 0.77, out.stdout


def test_the_link_prediction_example_learns_cora(cora_path):
    """examples/link_pred.py: PyG's GraphSAGE and RandomLinkSplit through
    directgnn.pyg.LinkNeighborLoader."""
    script = os.path.join(HERE, "../../examples/link_pred.py")
    out = subprocess.run([sys.executable, script, "--dataset", cora_path, "--seeds", "0",
                          "--epochs", "5"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    auc = float(re.search(r"directgnn: mean test ROC-AUC ([0-9.]+)", out.stdout).group(1))
    assert auc >= 0.75, out.stdout
