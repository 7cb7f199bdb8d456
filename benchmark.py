#!/usr/bin/env python3
"""The Painting Vision specification's one-shot command; a thin shim over segbench.commands.oneshot.

    python3 benchmark.py --data data --checkpoint artifacts/best.pt --baseline segformer-ade \\
        --split test --dataset-manifest data_manifest.json --emit-submission submission.json
"""

import sys
from pathlib import Path

try:
    from segbench.commands.oneshot import main
except ModuleNotFoundError:  # run from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))
    try:
        from segbench.commands.oneshot import main
    except ModuleNotFoundError as missing:  # a python without the set-up's packages: say how, in one line
        sys.exit(f"benchmark.py: {sys.executable} lacks the package '{missing.name}': run `make setup`, then "
                 ".venv/bin/python benchmark.py ...")

if __name__ == "__main__":
    sys.exit(main())
