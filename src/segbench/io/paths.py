"""Where the project's data files (config/, workflow/schemas/) live."""

import os
from pathlib import Path


def project_root() -> Path:
    """The repository root: $SEGBENCH_ROOT, else the checkout this package was installed from."""
    env = os.environ.get("SEGBENCH_ROOT")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3]


def schema_dir() -> Path:
    return project_root() / "workflow" / "schemas"


def schema_path(name: str) -> Path:
    return schema_dir() / f"{name}.schema.json"


def config_dir() -> Path:
    return project_root() / "config"
