"""A command's outputs never written onto or inside one of its inputs: each output path is compared
with each input path after both are resolved (symbolic links and `..` followed), and an output
that is an input, or lies inside an input folder, is refused naming both. Nothing is written
before the check, so a refused command leaves its inputs as they were."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import SegbenchError

Named = tuple[str, Path]  # (how the command names the path, e.g. '--out', the path as given)


def overlaps(inputs: Iterable[Named], outputs: Iterable[Named]) -> list[str]:
    """Each output that is an input or inside an input folder, said with both."""
    sources = [(name, path, Path(path).resolve()) for name, path in inputs]
    found = []
    for out_name, out_path in outputs:
        target = Path(out_path).resolve()
        for in_name, in_path, source in sources:
            if target == source:
                found.append(f"{out_name} {out_path}: is the input {in_name} {in_path}; refusing to write onto an input")
            elif source in target.parents:
                found.append(f"{out_name} {out_path}: inside the input {in_name} {in_path}; refusing to write into "
                             "an input")
    return found


def refuse_overlaps(inputs: Iterable[Named], outputs: Iterable[Named]) -> None:
    """Raise SegbenchError for the first output that is an input or inside an input folder."""
    found = overlaps(inputs, outputs)
    if found:
        raise SegbenchError(found[0])
