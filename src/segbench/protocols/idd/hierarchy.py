"""The IDD label spaces and the mappings between them, derived from the label table.

    idd-level3            the ground truth: 26 classes; raw values >= 26 (255 included) are void
    idd-level3-misc       the challenge's prediction space: the 26 classes + misc (26), raw values
                          >= 26 fold into misc, so a misc/255 prediction on a valid pixel is a miss
    idd-level2            16 classes, level-3 classes grouped by the table's level2Id
    idd-level1            7 classes, level-2 classes grouped by the table's level1Id (corrected)
    idd-level1-reference  7 classes as the reference evaluator groups them: its level-2 -> level-1
                          lists applied to LEVEL-3 ids (a bug since 2018; level-3 ids 16..25 drop out)

Misc has no level-2 or level-1 class: a pixel predicted misc is dropped there, as in the
reference. The files config/label_spaces/idd-*.yaml and config/mappings/idd-levels.yaml are
written from these documents by tools/build_idd_label_spaces.py; a test checks they agree.
"""

from __future__ import annotations

from typing import Any

import yaml

from .table import LabelTable, LevelClass

GROUND_TRUTH = "idd-level3"
PREDICTION = "idd-level3-misc"
LEVEL2 = "idd-level2"
LEVEL1 = "idd-level1"
LEVEL1_REFERENCE = "idd-level1-reference"
MAPPING_FILE = "idd-levels"
GENERATED_BY = "tools/build_idd_label_spaces.py from config/label_tables/idd.yaml"


def _row(c: LevelClass, color: tuple[int, int, int] | None) -> dict[str, Any]:
    return {"id": c.id, "name": c.name, "color": list(color if color is not None else c.color)}


def _first_member_colors(table: LabelTable, parent_of: dict[int, int]) -> dict[int, tuple[int, int, int]]:
    """A coarser class's colour: that of its lowest level-3 member (the table gives none)."""
    colors: dict[int, tuple[int, int, int]] = {}
    for level3 in table.level3:
        colors.setdefault(parent_of[level3.id], level3.color)
    return colors


def level3_to_level2(table: LabelTable) -> dict[int, int]:
    return table.level2_of_level3()


def level3_to_level1(table: LabelTable) -> dict[int, int]:
    level1_of = table.level1_of_level2()
    return {l3: level1_of[l2] for l3, l2 in table.level2_of_level3().items()}


def level3_to_level1_reference(table: LabelTable) -> dict[int, int]:
    """The reference's level 1: level-3 id j goes where LEVEL-2 id j goes (ids without a level-2 class drop)."""
    level1_of = table.level1_of_level2()
    return {l3.id: level1_of[l3.id] for l3 in table.level3 if l3.id in level1_of}


def space_documents(table: LabelTable) -> dict[str, dict[str, Any]]:
    """Each IDD label space as the table config/label_spaces/<name>.yaml holds."""
    level3 = [_row(c, None) for c in table.level3]
    misc = table.misc
    level2_colors = _first_member_colors(table, level3_to_level2(table))
    level1_colors = _first_member_colors(table, level3_to_level1(table))
    level1 = [_row(c, level1_colors[c.id]) for c in table.level1]
    return {
        GROUND_TRUTH: {"name": GROUND_TRUTH, "version": table.version, "void_from": misc.id, "classes": level3},
        PREDICTION: {
            "name": PREDICTION,
            "version": table.version,
            "fold_values_from": {"value": misc.id, "into": misc.name},
            "classes": level3 + [_row(misc, None)],
        },
        LEVEL2: {
            "name": LEVEL2,
            "version": table.version,
            "void": [table.void],
            "classes": [_row(c, level2_colors[c.id]) for c in table.level2],
        },
        LEVEL1: {"name": LEVEL1, "version": table.version, "void": [table.void], "classes": level1},
        LEVEL1_REFERENCE: {"name": LEVEL1_REFERENCE, "version": table.version, "void": [table.void], "classes": level1},
    }


def _grouping(table: LabelTable, source: str, target: str, parent_of: dict[int, int], targets: tuple[LevelClass, ...]) -> dict[str, Any]:
    """The rule mapping `source` (a level-3 space) to `target`: each target class with its level-3 members."""
    classes = {t.name: [c.name for c in table.level3 if parent_of.get(c.id) == t.id] for t in targets}
    return {"from": source, "to": target, "classes": {k: v for k, v in classes.items() if v}, "default": None}


def mapping_rules(table: LabelTable) -> list[dict[str, Any]]:
    """Every mapping the IDD benchmark needs; misc (prediction space only) is never listed, so it drops."""
    identity = {c.id: c.id for c in table.level3}
    rules = [_grouping(table, GROUND_TRUTH, PREDICTION, identity, table.level3)]
    for target, parent_of, classes in (
        (LEVEL2, level3_to_level2(table), table.level2),
        (LEVEL1, level3_to_level1(table), table.level1),
        (LEVEL1_REFERENCE, level3_to_level1_reference(table), table.level1),
    ):
        rules += [_grouping(table, source, target, parent_of, classes) for source in (GROUND_TRUTH, PREDICTION)]
    return rules


def _flow(value: Any) -> str:
    """`value` as one line of YAML (a scalar without the document-end marker PyYAML adds)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False)
    return text.removesuffix("...\n").strip()


def render_space(doc: dict[str, Any]) -> str:
    """A label-space YAML file: header, top-level fields, one class per line."""
    lines = [f"# Generated by {GENERATED_BY}; do not edit.", "# IDD label space; see docs/protocols/idd20k-icvgip2020.md."]
    for key, value in doc.items():
        if key == "classes":
            lines.append("classes:")
            lines += [f"  - {_flow(row)}" for row in value]
        else:
            lines.append(f"{key}: {_flow(value)}")
    return "\n".join(lines) + "\n"


def render_mappings(rules: list[dict[str, Any]]) -> str:
    lines = [
        f"# Generated by {GENERATED_BY}; do not edit.",
        "# The IDD level-3 -> level-2 -> level-1 groupings; see docs/protocols/idd20k-icvgip2020.md.",
        "mappings:",
    ]
    for rule in rules:
        lines += [f"  - from: {rule['from']}", f"    to: {rule['to']}", "    classes:"]
        lines += [f"      {_flow(name)}: {_flow(members)}" for name, members in rule["classes"].items()]
        lines.append("    default: null")
    return "\n".join(lines) + "\n"


def generated_files(table: LabelTable) -> dict[str, str]:
    """Path relative to config/ -> text, for every file derived from the table."""
    files = {f"label_spaces/{name}.yaml": render_space(doc) for name, doc in space_documents(table).items()}
    files[f"mappings/{MAPPING_FILE}.yaml"] = render_mappings(mapping_rules(table))
    return files
