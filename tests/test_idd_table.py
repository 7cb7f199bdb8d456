"""The IDD label table (protocols/idd/table.py): its facts, and the inconsistent or ill-formed tables it refuses."""

from __future__ import annotations

import copy

import pytest

from segbench.errors import SegbenchError
from segbench.protocols.definitions import read_yaml
from segbench.protocols.idd.table import load_table, parse_table, table_path


def test_table_facts():
    table = load_table()
    assert len(table.labels) == 40 and len(table.level3) == 26 and len(table.level2) == 16 and len(table.level1) == 7
    assert [label.name for label in table.labels if label.level3 == 255] == [
        "unlabeled", "ego vehicle", "rectification border", "out of roi", "license plate"
    ]
    assert {label.name for label in table.labels if label.level3 == 12} == {"caravan", "trailer", "train", "vehicle fallback"}
    assert table.label("polegroup").level3 == 20 and table.label("cargroup") is None


def doc():
    return copy.deepcopy(read_yaml(table_path()))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["labels"][1].update(level2Id=2), "level3 class 1 belongs to level2 classes [1, 2]"),
        (lambda d: d["labels"][0].update(level3Id=30), "label 'road': level3 id 30 is not a level3 class"),
        (lambda d: d["labels"][35].update(level2Id=3), "label 'unlabeled': void at some levels but not all"),
        (lambda d: d["labels"][1].update(name="road"), "label name 'road' appears twice"),
        (lambda d: d["level1"].append({"id": 7, "name": "water"}), "level1 class 7 'water' has no label"),
    ],
)
def test_inconsistent_tables_are_refused(edit, message):
    broken = doc()
    edit(broken)
    with pytest.raises(SegbenchError, match="inconsistent IDD label table") as exc:
        parse_table(broken, "idd.yaml")
    assert message in str(exc.value)


def test_schema_errors_name_the_field():
    broken = doc()
    del broken["labels"][3]["level2Id"]
    with pytest.raises(SegbenchError, match=r"idd.yaml: field 'labels/3': 'level2Id' is a required property"):
        parse_table(broken, "idd.yaml")
