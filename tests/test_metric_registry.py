"""The metric registry (segbench.core.metric_registry) and the metric schema derived from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from segbench.core.metric_registry import REGISTRY, schema
from segbench.io.schemas import load_schema

ROOT = Path(__file__).resolve().parents[1]


def test_metric_schema_is_derived_from_the_registry():
    assert load_schema("metric") == schema()
    assert load_schema("metric")["properties"]["fn"]["enum"] == list(REGISTRY)
    done = subprocess.run([sys.executable, "tools/build_metric_schema.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
