"""The label spaces and mappings derived from the IDD label table (the table itself: test_idd_table.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from segbench.core.labels import DROP
from segbench.io.paths import config_dir
from segbench.protocols.definitions import load_label_space
from segbench.protocols.idd.hierarchy import generated_files, level3_to_level1_reference, level3_to_level2
from segbench.protocols.idd.table import load_table

ROOT = Path(__file__).resolve().parents[1]


def test_generated_files_are_up_to_date():
    for relative, text in generated_files(load_table()).items():
        assert (config_dir() / relative).read_text() == text, f"config/{relative} is out of date: run tools/build_idd_label_spaces.py"


def test_tool_check_mode():
    done = subprocess.run([sys.executable, "tools/build_idd_label_spaces.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


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
