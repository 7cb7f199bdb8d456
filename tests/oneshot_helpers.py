"""The specification's one-shot command (benchmark.py) as the tests run it: from the repository root,
on the embedded default."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The specification's command line, less its output (--emit-submission).
SPEC_ARGS = ["--data", "data", "--checkpoint", "artifacts/best.pt", "--baseline", "segformer-ade", "--split", "test",
             "--dataset-manifest", "data_manifest.json"]


def oneshot(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "benchmark.py", *args], cwd=ROOT, capture_output=True, text=True)
