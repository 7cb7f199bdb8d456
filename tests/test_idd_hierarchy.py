"""The IDD label table and the label spaces and mappings derived from it."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

from segbench.core.labels import DROP
from segbench.errors import SegbenchError
from segbench.io.paths import config_dir
from segbench.protocols.definitions import load_label_space, read_yaml
from segbench.protocols.idd.hierarchy import generated_files, level3_to_level1_reference, level3_to_level2
from segbench.protocols.idd.table import load_table, parse_table, table_path

ROOT = Path(__file__).resolve().parents[1]


def test_generated_files_are_up_to_date():
    for relative, text in generated_files(load_table()).items():
        assert (config_dir() / relative).read_text() == text, f"config/{relative} is out of date: run tools/build_idd_label_spaces.py"


def test_tool_check_mode():
    done = subprocess.run([sys.executable, "tools/build_idd_label_spaces.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_table_facts():
    table = load_table()
    assert len(table.labels) == 40 and len(table.level3) == 26 and len(table.level2) == 16 and len(table.level1) == 7
    assert [label.name for label in table.labels if label.level3 == 255] == [
        "unlabeled", "ego vehicle", "rectification border", "out of roi", "license plate"
    ]
    assert {label.name for label in table.labels if label.level3 == 12} == {"caravan", "trailer", "train", "vehicle fallback"}
    assert table.label("polegroup").level3 == 20 and table.label("cargroup") is None


def test_level2_is_the_reference_mapping_2_to_3():
    grouped = {}
    for l3, l2 in level3_to_level2(load_table()).items():
        grouped.setdefault(l2, []).append(l3)
    assert [grouped[k] for k in sorted(grouped)] == [
        [0], [1], [2], [3], [4], [5], [6, 7], [8, 9], [10, 11, 12], [13, 14], [15, 16], [17, 18, 19], [20, 21], [22, 23],
        [24], [25],
    ]


def test_reference_level1_groups_level3_ids_with_level2_lists():
    grouped = {}
    for l3, l1 in level3_to_level1_reference(load_table()).items():
        grouped.setdefault(l1, []).append(l3)
    assert [grouped[k] for k in sorted(grouped)] == [[0, 1], [2, 3], [4, 5], [6, 7, 8], [9, 10, 11, 12], [13, 14], [15]]


def test_spaces_read_raw_values_as_the_reference():
    gt = load_label_space("idd-level3").raw_lut()
    assert list(gt[:26]) == list(range(26)) and set(gt[26:]) == {DROP}  # 26..255 are the ignored GT misc
    pred = load_label_space("idd-level3-misc").raw_lut()
    assert list(pred[:26]) == list(range(26)) and set(pred[26:]) == {26}  # 26..255 are a misc prediction


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
