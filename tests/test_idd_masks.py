"""Level-3 masks drawn from hand-made IDD polygon JSON, as the reference's createLabels draws them."""

from __future__ import annotations

import json

import numpy as np
import PIL
import pytest
from idd_fixtures import box, write_polygons
from PIL import Image

from segbench.errors import SegbenchError
from segbench.io.limits import Limits
from segbench.protocols.idd.masks import RECORD, main, mask_of, rasterise, read_record, write_masks
from segbench.protocols.idd.table import load_table

ROAD, CAR, PERSON, POLE, SKY, VOID = 0, 9, 4, 20, 25, 255


def draw(objects, size=(8, 6)):
    return rasterise({"imgWidth": size[0], "imgHeight": size[1], "objects": objects}, load_table(), "test.json")


def test_background_is_255_and_size_is_the_json_size():
    mask = draw([], size=(5, 3))
    assert mask.shape == (3, 5) and mask.dtype == np.uint8
    assert (mask == VOID).all()


def test_painters_order_void_labels_deleted_and_short_polygons():
    mask = draw(
        [
            box("road", 0, 0, 7, 5),
            box("cargroup", 1, 1, 3, 3),  # unknown label: "group" is stripped -> car
            box("license plate", 2, 3, 3, 3),  # void, drawn as 255 over the car
            box("bus", 0, 0, 7, 5, deleted=1),  # deleted: not drawn
            {"label": "truck", "polygon": [[0, 0], [7, 5]]},  # two points: not drawn
            box("person", 3, 2, 5, 2),  # drawn over the car (later wins)
            box("polegroup", 6, 0, 6, 1),  # a label of its own (pole), not "pole" + "group"
        ]
    )
    expected = np.full((6, 8), ROAD, dtype=np.uint8)
    expected[1:4, 1:4] = CAR
    expected[3, 2:4] = VOID
    expected[2, 3:6] = PERSON
    expected[0:2, 6] = POLE
    np.testing.assert_array_equal(mask, expected)


def test_float_coordinates_fill_their_pixels():
    # Coordinates whose floor and rounding agree: the pixels covered do not depend on the rule.
    mask = draw([box("sky", 5.2, 0.1, 7.3, 1.4), box("road", 0.4, 3.1, 2.1, 5.0)])
    expected = np.full((6, 8), VOID, dtype=np.uint8)
    expected[0:2, 5:8] = SKY
    expected[3:6, 0:3] = ROAD
    np.testing.assert_array_equal(mask, expected)


def test_matches_pillow_polygon_fill():
    """Edges are Pillow's: the mask is exactly ImageDraw.polygon(points, fill=level3Id) in order."""
    rng = np.random.default_rng(0)
    objects = [{"label": "car", "polygon": rng.uniform(0, 40, (7, 2)).round(2).tolist()} for _ in range(5)]
    expected = Image.new("L", (40, 30), 255)
    from PIL import ImageDraw

    pen = ImageDraw.Draw(expected)
    for obj in objects:
        pen.polygon([tuple(p) for p in obj["polygon"]], fill=CAR)
    np.testing.assert_array_equal(draw(objects, size=(40, 30)), np.asarray(expected))


@pytest.mark.parametrize(
    "label, message",
    [
        ("spaceship", "test.json: objects/1: unknown label 'spaceship' (not in the IDD label table"),
        ("spaceshipgroup", "test.json: objects/1: unknown label 'spaceshipgroup'"),
    ],
)
def test_unknown_label_names_file_and_label(label, message):
    with pytest.raises(SegbenchError) as exc:
        draw([box("road", 0, 0, 7, 5), box(label, 1, 1, 2, 2)])
    assert str(exc.value).startswith(message)


def test_unknown_label_of_a_deleted_object_is_skipped():
    assert (draw([box("spaceship", 1, 1, 2, 2, deleted=1)]) == VOID).all()


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"imgWidth": 4, "objects": []}, "field 'imgHeight' is missing"),
        ({"imgWidth": "wide", "imgHeight": 4, "objects": []}, "field 'imgWidth' must be an integer"),
        ({"imgWidth": 4, "imgHeight": 4}, "expected an object with a list 'objects'"),
        ({"imgWidth": 4, "imgHeight": 4, "objects": [{"label": "road"}]}, "objects/0: an object needs"),
        ({"imgWidth": 4, "imgHeight": 4, "objects": [{"label": "road", "polygon": [[0, 0], [1], [2, 2]]}]},
         "objects/0/polygon/1: a polygon point must be [x, y] finite numbers"),
        ({"imgWidth": 200000, "imgHeight": 4, "objects": []}, "field 'imgWidth' must be from 1 to 16384, got 200000"),
        ({"imgWidth": 4, "imgHeight": 0, "objects": []}, "field 'imgHeight' must be from 1 to 16384, got 0"),
        ({"imgWidth": 4, "imgHeight": 4, "objects": [{"label": "road", "polygon": [[0, 0], [1, 1], [float("nan"), 2]]}]},
         "objects/0/polygon/2: a polygon point must be [x, y] finite numbers, got [nan, 2]"),
        ({"imgWidth": 4, "imgHeight": 4, "objects": [{"label": "road", "polygon": [[0, float("inf")], [1, 1], [2, 2]]}]},
         "objects/0/polygon/0: a polygon point must be [x, y] finite numbers, got [0, inf]"),
        ({"imgWidth": 4, "imgHeight": 4, "objects": [{"label": "road", "polygon": [[0, 0], [10**400, 1], [2, 2]]}]},
         "objects/0/polygon/1: a polygon point must be [x, y] finite numbers, got [1000"),  # more digits than a float
    ],
)
def test_malformed_json_is_named(doc, message):
    with pytest.raises(SegbenchError) as exc:
        rasterise(doc, load_table(), "f.json")
    assert message in str(exc.value) and str(exc.value).startswith("f.json")


def test_write_masks_names_outputs_and_records_pillow(tmp_path):
    data = tmp_path / "idd"
    json_path = write_polygons(data, "val", "12", "000123", [box("road", 0, 0, 15, 11)])
    record = write_masks(data)
    mask_file = json_path.with_name("000123_gtFine_labellevel3Ids.png")
    assert Image.open(mask_file).mode == "L"
    assert (np.asarray(Image.open(mask_file)) == ROAD).all()
    assert record["pillow"] == PIL.__version__ and record["id_type"] == "level3Id"
    assert set(record["masks"]) == {"val/12/000123_gtFine_labellevel3Ids.png"}
    assert read_record(data) == record == json.loads((data / RECORD).read_text())
    np.testing.assert_array_equal(mask_of(json_path), np.asarray(Image.open(mask_file)))


def test_write_masks_stops_on_an_unknown_label_without_a_record(tmp_path):
    data = tmp_path / "idd"
    bad = write_polygons(data, "train", "1", "000001", [box("zeppelin", 0, 0, 3, 3)])
    with pytest.raises(SegbenchError, match=f"{bad}: objects/0: unknown label 'zeppelin'"):
        write_masks(data)
    assert not (data / RECORD).exists()


def test_command_line(tmp_path, capsys):
    data = tmp_path / "idd"
    write_polygons(data, "train", "1", "000001", [box("road", 0, 0, 3, 3)])
    assert main(["--data", str(data)]) == 0
    assert f"1 level-3 masks written with Pillow {PIL.__version__}" in capsys.readouterr().out
    assert main(["--data", str(tmp_path / "none")]) == 1
    assert "data folder not found" in capsys.readouterr().err


def test_a_polygon_file_larger_than_the_limit_is_refused_unparsed(tmp_path, monkeypatch):
    path = write_polygons(tmp_path / "idd", "val", "12", "000123", [box("road", 0, 0, 7, 5)])
    size = path.stat().st_size
    monkeypatch.setattr("segbench.protocols.idd.masks.LIMITS", Limits(max_text_bytes=size - 1))
    with pytest.raises(SegbenchError) as info:
        mask_of(path)
    assert str(info.value) == f"{path}: more than the limit of {size - 1} bytes"
