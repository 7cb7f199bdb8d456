"""Where a download's folders are once unpacked: in the data folder itself, or in the one folder
that unzipping put there (an archive with a top folder, unpacked into a folder of its own).

More than one candidate folder is ambiguous and refused, naming them: guessing would score some
other copy of the data.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import SegbenchError


def holds_any(folder: Path, names: Sequence[str]) -> bool:
    return any((folder / name).exists() for name in names)


def unpacked_root(data_dir: Path, names: Sequence[str], expected: str) -> Path:
    """`data_dir` when it holds one of `names`; else its only sub-folder that does.

    `expected` describes the layout, for the error when neither is found.
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise SegbenchError(f"{data_dir}: data folder not found")
    if holds_any(data_dir, names):
        return data_dir
    found = sorted(p for p in data_dir.iterdir() if p.is_dir() and holds_any(p, names))
    if len(found) == 1:
        return found[0]
    wanted = " or ".join(names)
    if found:
        raise SegbenchError(
            f"{data_dir}: {len(found)} folders hold {wanted} ({', '.join(p.name for p in found)}); expected one "
            f"dataset ({expected}): point --data at one of them, or unpack the archives so that their folders merge"
        )
    raise SegbenchError(f"{data_dir}: no {wanted} here or in a sub-folder; expected {expected}")
