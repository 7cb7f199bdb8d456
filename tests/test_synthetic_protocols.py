"""The synthetic IDD20K and EasyPortrait datasets: exact on-disk formats, byte-reproducible, clean audits."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.protocols.definitions import load_benchmark
from segbench.stages.audit import audit_dataset
from segbench.synthetic import easyportrait, idd


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_idd_is_byte_reproducible(synthetic_idd, tmp_path):
    idd.build_dataset(tmp_path / "again")
    assert files(tmp_path / "again") == files(synthetic_idd)


def test_idd_frames_hold_every_class_and_every_annotation_case(synthetic_idd):
    masks = sorted(synthetic_idd.glob("gtFine/*/*/*_gtFine_labellevel3Ids.png"))
    assert len(masks) == 12
    sizes = set()
    for mask in masks:
        values = np.unique(np.asarray(Image.open(mask)))
        assert set(values) == set(range(26)) | {255}
        sizes.add(Image.open(mask).size)
        objects = json.loads(mask.with_name(mask.name.replace("labellevel3Ids.png", "polygons.json")).read_text())["objects"]
        labels = {o["label"] for o in objects}
        assert {"cargroup", "ego vehicle", "license plate", "out of roi"} <= labels
        assert any(o["deleted"] for o in objects) and any(len(o["polygon"]) < 3 for o in objects)
        assert any(not float(x).is_integer() for o in objects for x, _ in o["polygon"])
    assert sizes == {(1920, 1080), (1280, 720)}
    assert {p.suffix for p in synthetic_idd.glob("leftImg8bit/*/*/*")} == {".jpg", ".png"}


@pytest.mark.parametrize("name", ["idd20k-icvgip2020", "easyportrait"])
def test_audits_are_clean(name, synthetic_idd, synthetic_ep):
    data = synthetic_idd if name.startswith("idd") else synthetic_ep
    report = audit_dataset(data, load_benchmark(name), ["test"])
    assert report.findings == [], report.to_text()


def test_easyportrait_is_byte_reproducible_and_split_by_user(synthetic_ep, tmp_path):
    rows = easyportrait.build_dataset(tmp_path / "again")
    assert files(tmp_path / "again") == files(synthetic_ep)
    users = {}
    for row in rows:
        users.setdefault(row["user_id"], set()).add(row["set"])
    assert all(len(splits) == 1 for splits in users.values())
    test_masks = [np.asarray(Image.open(p)) for p in synthetic_ep.glob("annotations/test/*.png")]
    assert set(np.unique(np.concatenate([m.ravel() for m in test_masks]))) == set(range(9))
