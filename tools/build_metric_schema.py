#!/usr/bin/env python3
"""Write workflow/schemas/metric.schema.json, the schema of one metric entry of a benchmark
report, derived from the metric registry (segbench.core.metric_registry).

    .venv/bin/python tools/build_metric_schema.py          # writes the file
    .venv/bin/python tools/build_metric_schema.py --check  # exit 1 if it is out of date

tests/test_metric_registry.py runs the check.
"""

from __future__ import annotations

import argparse
import json
import sys

from segbench.core.metric_registry import schema
from segbench.io.paths import schema_path


def schema_text() -> str:
    return json.dumps(schema(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only report whether the file is out of date")
    args = parser.parse_args(argv)
    path = schema_path("metric")
    if path.is_file() and path.read_text() == schema_text():
        return 0
    if args.check:
        print(f"out of date: {path} (run tools/build_metric_schema.py)")
        return 1
    path.write_text(schema_text())
    print(f"wrote: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
