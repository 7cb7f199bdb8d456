"""The IDD label table (config/label_tables/idd.yaml), loaded, validated and checked for consistency.

The table is the one source of the IDD label spaces: every level-3/2/1 space and every mapping
between them is derived from it (segbench.protocols.idd.hierarchy), and the polygon rasteriser reads the
label name -> level3Id column from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ...errors import SegbenchError
from ...io.paths import config_dir
from ...io.schemas import validate
from ..definitions import read_yaml


def table_path() -> Path:
    return config_dir() / "label_tables" / "idd.yaml"


@dataclass(frozen=True)
class LevelClass:
    id: int
    name: str
    color: tuple[int, int, int] | None


@dataclass(frozen=True)
class Label:
    """One row of the reference's label table (the columns the level-3 pipeline uses)."""

    name: str
    id: int
    level3: int
    level2: int
    level1: int
    color: tuple[int, int, int]


@dataclass(frozen=True)
class LabelTable:
    version: str
    void: int  # the level ids of void labels, and the mask background
    labels: tuple[Label, ...]
    level3: tuple[LevelClass, ...]
    misc: LevelClass  # the evaluator's extra bucket: every value >= len(level3)
    level2: tuple[LevelClass, ...]
    level1: tuple[LevelClass, ...]

    def label(self, name: str) -> Label | None:
        return next((label for label in self.labels if label.name == name), None)

    def evaluated(self) -> list[Label]:
        """The labels drawn with a level-3 class (not void)."""
        return [label for label in self.labels if label.level3 != self.void]

    def level2_of_level3(self) -> dict[int, int]:
        return {label.level3: label.level2 for label in self.evaluated()}

    def level1_of_level2(self) -> dict[int, int]:
        return {label.level2: label.level1 for label in self.evaluated()}


def _classes(rows: list[dict[str, Any]]) -> tuple[LevelClass, ...]:
    return tuple(LevelClass(r["id"], r["name"], tuple(r["color"]) if "color" in r else None) for r in rows)


def parse_table(doc: dict[str, Any], source: Path | str) -> LabelTable:
    validate(doc, "idd-label-table", source)
    table = LabelTable(
        version=doc["version"],
        void=doc["void_value"],
        labels=tuple(
            Label(r["name"], r["id"], r["level3Id"], r["level2Id"], r["level1Id"], tuple(r["color"]))
            for r in doc["labels"]
        ),
        level3=_classes(doc["level3"]),
        misc=LevelClass(len(doc["level3"]), doc["misc"]["name"], tuple(doc["misc"]["color"])),
        level2=_classes(doc["level2"]),
        level1=_classes(doc["level1"]),
    )
    check_table(table, source)
    return table


def check_table(table: LabelTable, source: Path | str) -> None:
    """Every id a label names exists at its level, every class has a label, and the levels nest."""
    problems = []
    names = [label.name for label in table.labels]
    problems += [f"label name '{n}' appears twice" for n in sorted({n for n in names if names.count(n) > 1})]
    levels = {"level3": table.level3, "level2": table.level2, "level1": table.level1}
    for level, classes in levels.items():
        if [c.id for c in classes] != list(range(len(classes))):
            problems.append(f"{level}: class ids must be 0..{len(classes) - 1} in order")
    for label in table.labels:
        ids = {"level3": label.level3, "level2": label.level2, "level1": label.level1}
        if table.void in ids.values() and set(ids.values()) != {table.void}:
            problems.append(f"label '{label.name}': void at some levels but not all ({ids})")
            continue
        problems += [
            f"label '{label.name}': {level} id {value} is not a {level} class"
            for level, value in ids.items()
            if value != table.void and value >= len(levels[level])
        ]
    # The levels nest: all labels of one level-3 class share a level-2 class, and so on up.
    for child, parent in (("level3", "level2"), ("level2", "level1")):
        parents: dict[int, set[int]] = {}
        for label in table.evaluated():
            parents.setdefault(getattr(label, child), set()).add(getattr(label, parent))
        problems += [f"{child} class {c} belongs to {parent} classes {sorted(p)}" for c, p in parents.items() if len(p) > 1]
    for level, classes in levels.items():
        used = {getattr(label, level) for label in table.evaluated()}
        problems += [f"{level} class {c.id} '{c.name}' has no label" for c in classes if c.id not in used]
    if problems:
        raise SegbenchError(f"{source}: inconsistent IDD label table:\n  " + "\n  ".join(problems))


@cache
def load_table() -> LabelTable:
    path = table_path()
    doc = read_yaml(path)
    if not isinstance(doc, dict):
        raise SegbenchError(f"{path}: expected a mapping at the top level")
    return parse_table(doc, path)
