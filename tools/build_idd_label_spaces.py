#!/usr/bin/env python3
"""Write the IDD label spaces and level mappings derived from config/label_tables/idd.yaml.

    .venv/bin/python tools/build_idd_label_spaces.py          # writes config/label_spaces/idd-*.yaml
                                                              # and config/mappings/idd-levels.yaml
    .venv/bin/python tools/build_idd_label_spaces.py --check  # exit 1 if any file is out of date

The derivation itself is segbench.protocols.idd.hierarchy; tests/test_idd_hierarchy.py runs the check.
"""

from __future__ import annotations

import argparse
import sys

from segbench.io.paths import config_dir
from segbench.protocols.idd.hierarchy import generated_files
from segbench.protocols.idd.table import load_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only report files that differ")
    args = parser.parse_args(argv)
    stale = []
    for relative, text in generated_files(load_table()).items():
        path = config_dir() / relative
        if path.is_file() and path.read_text() == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for path in stale:
        print(f"{'out of date' if args.check else 'wrote'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
