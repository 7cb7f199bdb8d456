"""Procedural, offline generators of small synthetic datasets."""

from pathlib import Path


def empty_output_folder(out_dir: Path) -> Path:
    """`out_dir`, which must be absent or empty, so that no stale frame outlives a rebuild."""
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir}: not empty; build the synthetic dataset into a new folder")
    return out_dir
