"""stages/text_table: report dictionaries flattened into named columns, and the terminal table."""

from segbench.stages.text_table import cell, flatten, render_text


def test_flatten_names_each_leaf_by_its_path():
    results = {"shared": {"mIoU": 0.5, "iou": {"wall": 0.25, "sky": None}}, "frames": 3, "empty": {}}
    assert flatten(results) == {"shared.mIoU": 0.5, "shared.iou.wall": 0.25, "shared.iou.sky": None, "frames": 3}
    assert flatten({"a": 1}, "x.") == {"x.a": 1}


def test_cells():
    assert [cell(None), cell(True), cell(False), cell(0.123456), cell(1.0), cell(7), cell("m")] == [
        "—", "yes", "NO", "0.1235", "1.0000", "7", "m"]


def test_render_text_pads_each_column_to_its_widest_cell():
    text = render_text(["model", "main.mIoU"], [{"model": "segformer", "main.mIoU": 0.5}, {"model": "f"}])
    assert text.split("\n") == [
        "model      main.mIoU",
        "---------  ---------",
        "segformer  0.5000   ",
        "f          —        ",
    ]
    assert render_text(["a"], []) == "a\n-"
