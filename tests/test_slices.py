"""Slices by metadata: partitions of the frames, every metric per slice from the same counts, the
bootstrap inside a slice, a slice too small to resample, an empty bin, a missing value; the
config's list in place of the benchmark's (one parser, one schema, the `segbench slices` CLI)."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from segbench.core.bootstrap import Subject
from segbench.core.boundary import band_cells
from segbench.core.confusion import BandCounts, FrameCounts
from segbench.core.benchmark import SliceSpec
from segbench.protocols.definitions import load_benchmark, parse_slices, slices_from_json
from segbench.records.countsio import write_counts
from segbench.records.frameindex import INDEX_FORMAT, INDEX_VERSION, write_index
from segbench.workflow.config import check_config
from segbench.errors import SegbenchError
from segbench.core.evaluation import evaluate
from segbench.core.slices import MISSING, bin_labels, partition, slice_of, slice_results

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = load_benchmark("painting-vision")
TEN = BENCHMARK.space("painting-vision-10")
LIGHTING = SliceSpec("lighting", "lighting", None)
BRIGHTNESS = SliceSpec("brightness", "brightness", (0.0, 100.0, 130.0, 255.0))


def hist(cells: dict[tuple[int, int], int]) -> np.ndarray:
    out = np.zeros((256, 256), np.int64)
    for (gt, pred), n in cells.items():
        out[gt, pred] = n
    return out


# Four frames on four walls; raw values are the ten classes' ids (0 wall_unpainted, 1 wall_painted).
# aAcc in paint_state_metrics (the ten classes as they are) = correct / valid pixels.
FRAME_IDS = ("a1", "b1", "c1", "d1")
GROUPS = {"a1": "A", "b1": "B", "c1": "C", "d1": "D"}
META = {"a1": {"lighting": "left"}, "b1": {"lighting": "right"}, "c1": {"lighting": "right"}, "d1": {}}
MODEL = [hist({(0, 0): 10, (1, 0): 10}),  # 10 / 20
         hist({(0, 0): 30}),  # 30 / 30
         hist({(1, 1): 20, (1, 0): 20}),  # 20 / 40
         hist({(0, 0): 5, (0, 1): 5})]  # 5 / 10
BASELINE = [hist({(0, 0): 10, (1, 0): 10}),  # 10 / 20
            hist({(0, 0): 30}),  # 30 / 30
            hist({(1, 0): 40}),  # 0 / 40
            hist({(0, 0): 10})]  # 10 / 10


def subject(name: str, hists: list[np.ndarray]) -> Subject:
    return Subject(name, FrameCounts.from_histograms(FRAME_IDS, hists), TEN)


def by_label(slicing: dict) -> dict:
    return {entry["slice"]: entry for entry in slicing["slices"]}


@functools.cache
def results() -> dict:
    """The lighting slices of MODEL against BASELINE (no floor), label -> entry."""
    benchmark = dataclasses.replace(BENCHMARK, slices=(LIGHTING,))
    return by_label(slice_results(benchmark, subject("m", MODEL), {"baseline": subject("base", BASELINE), "floor": None},
                                  GROUPS, META, resamples=200, seed=0)["lighting"])


def test_categories_sorted_and_missing_last():
    assert partition(LIGHTING, FRAME_IDS, META) == {"left": ["a1"], "right": ["b1", "c1"], MISSING: ["d1"]}


def test_an_empty_value_is_missing_too():
    assert slice_of(LIGHTING, "x", {"lighting": " "}) == MISSING


def test_bins_are_half_open_and_the_last_closed_and_an_empty_bin_is_kept():
    assert bin_labels(BRIGHTNESS.bins) == ["[0, 100)", "[100, 130)", "[130, 255]"]
    meta = {"p": {"brightness": "100"}, "q": {"brightness": "255"}, "r": {"brightness": "129.99"}, "s": {}}
    assert partition(BRIGHTNESS, ["p", "q", "r", "s"], meta) == {
        "[0, 100)": [], "[100, 130)": ["p", "r"], "[130, 255]": ["q"], MISSING: ["s"]}


@pytest.mark.parametrize("value", ["256", "-1", "bright", "nan"])
def test_a_binned_value_outside_the_bins_names_the_frame(value):
    with pytest.raises(SegbenchError, match=rf"frame 'p': brightness '{value}' is not a number inside the bins "
                                            r"\[0.0, 100.0, 130.0, 255.0\] of slice 'brightness'"):
        slice_of(BRIGHTNESS, "p", {"brightness": value})


def test_a_frame_missing_from_the_index_is_refused():
    with pytest.raises(SegbenchError, match=r"1 scored frame\(s\) are not in the frame index: \['d1'\]"):
        partition(LIGHTING, FRAME_IDS, {k: v for k, v in META.items() if k != "d1"})


def test_subset_keeps_the_chosen_frames_cells_and_bands():
    rng = np.random.default_rng(1)
    masks = [(rng.integers(0, 3, (9, 11)).astype(np.uint8), rng.integers(0, 3, (9, 11)).astype(np.uint8))
             for _ in range(3)]
    lut = np.arange(256, dtype=np.int32)
    cells = [np.unique((g.astype(np.uint16) << 8 | p).ravel(), return_counts=True) for g, p in masks]
    bands = [[band_cells(g, p, lut, lut, 1)] for g, p in masks]
    counts = FrameCounts.from_cells(["x", "y", "z"], cells, BandCounts.from_cells(["s"], bands))
    expected = FrameCounts.from_cells(["z", "x"], [cells[2], cells[0]], BandCounts.from_cells(["s"], [bands[2], bands[0]]))
    chosen = counts.subset(["z", "x"])
    assert chosen.frame_ids == ("z", "x")
    for name in ("frame", "gt", "pred", "count"):
        assert np.array_equal(getattr(chosen, name), getattr(expected, name))
        assert np.array_equal(getattr(chosen.bands, name), getattr(expected.bands, name))
    assert np.array_equal(chosen.bands.flags, expected.bands.flags) and chosen.bands.spaces == ("s",)
    in_order = counts.subset(["x", "z"])  # frames kept in their order: the cells taken as they lie
    expected = FrameCounts.from_cells(["x", "z"], [cells[0], cells[2]], BandCounts.from_cells(["s"], [bands[0], bands[2]]))
    for name in ("frame", "gt", "pred", "count"):
        assert np.array_equal(getattr(in_order, name), getattr(expected, name))
        assert np.array_equal(getattr(in_order.bands, name), getattr(expected.bands, name))
    assert counts.subset([]).frame_ids == () and counts.subset([]).count.size == 0


def test_every_metric_of_a_slice_is_the_metric_of_its_frames():
    right = results()["right"]
    assert (right["frames"], right["units"]) == (2, 2)
    assert right["results"]["paint_state_metrics"]["aAcc"] == pytest.approx(50 / 70)
    assert right["results"] == evaluate(BENCHMARK, FrameCounts.from_histograms(["b1", "c1"], MODEL[1:3]), TEN)
    assert set(right["results"]) == {r.key for r in BENCHMARK.reports}


def test_two_units_resample_to_the_extremes():
    # Resamples draw B twice (aAcc 1.0), C twice (0.5) or one each (50/70), each pair with
    # probability 1/4 or more, so the 95% percentile interval is [0.5, 1.0].
    right = results()["right"]
    interval = right["intervals"]["paint_state_metrics.aAcc"]
    assert interval["value"] == pytest.approx(50 / 70)
    assert (interval["low"], interval["high"]) == (pytest.approx(0.5), pytest.approx(1.0))
    assert right["interval_note"] is None


def test_paired_difference_to_the_baseline_inside_the_slice():
    # Model minus baseline on the same walls: BB 1 - 1 = 0, CC 0.5 - 0 = 0.5, BC 50/70 - 30/70.
    paired = results()["right"]["comparisons"]["baseline"]
    assert paired["against"] == "base"
    aacc = paired["metrics"]["paint_state_metrics.aAcc"]
    assert aacc["difference"] == pytest.approx(20 / 70)
    assert (aacc["low"], aacc["high"]) == (pytest.approx(0.0), pytest.approx(0.5))
    assert aacc["excludes_zero"] is False
    assert results()["right"]["comparisons"]["floor"] is None


def test_one_unit_gives_values_and_differences_without_intervals():
    left = results()["left"]
    assert (left["frames"], left["units"]) == (1, 1)
    assert left["interval_note"] == "1 wall_id unit: too few to resample (at least 2 needed); values without intervals"
    interval = left["intervals"]["paint_state_metrics.aAcc"]
    assert interval == {"value": pytest.approx(0.5), "low": None, "high": None}
    difference = left["comparisons"]["baseline"]["metrics"]["paint_state_metrics.aAcc"]
    assert difference["difference"] == pytest.approx(0.0) and difference["low"] is None
    missing = results()[MISSING]
    assert missing["results"]["paint_state_metrics"]["aAcc"] == pytest.approx(0.5)
    assert missing["comparisons"]["baseline"]["metrics"]["paint_state_metrics.aAcc"]["difference"] == pytest.approx(-0.5)


def test_an_empty_bin_has_no_values():
    benchmark = dataclasses.replace(BENCHMARK, slices=(SliceSpec("b", "b", (0.0, 1.0, 2.0)),))
    meta = {f: {"b": "0.5"} for f in FRAME_IDS}
    slicing = slice_results(benchmark, subject("m", MODEL), {"baseline": None, "floor": None}, GROUPS, meta, 100, 0)["b"]
    assert slicing["bins"] == [0.0, 1.0, 2.0]
    empty = by_label(slicing)["[1, 2]"]
    assert empty == {"slice": "[1, 2]", "frames": 0, "units": 0, "results": None, "intervals": None,
                     "comparisons": None, "interval_note": "no frames"}
    assert by_label(slicing)["[0, 1)"]["frames"] == 4


# --- the metadata the readers give and the frame index carries ---------------------------------


def test_painting_vision_reads_extra_columns_as_metadata(tmp_path):
    from segbench.datasets.painting_vision import read_frames

    (tmp_path / "frames.csv").write_text("frame_id,wall_id,split,lighting,room\na,w1,test,left,\nb,w2,test,right,hall\n")
    frames = read_frames(tmp_path, ("test",))
    assert [dict(f.meta) for f in frames] == [{"lighting": "left", "room": ""}, {"lighting": "right", "room": "hall"}]
    assert slice_of(SliceSpec("room", "room", None), "a", frames[0].meta) == MISSING


@pytest.mark.parametrize("header", ["frame_id,wall_id,split,lighting,lighting", "frame_id,wall_id,split,",
                                    "frame_id,wall_id,split,split"])
def test_painting_vision_refuses_unnamed_or_repeated_metadata_columns(tmp_path, header):
    from segbench.datasets.painting_vision import read_frames

    (tmp_path / "frames.csv").write_text(header + "\n")
    with pytest.raises(SegbenchError, match=r"line 1: header is .*, expected 'frame_id,wall_id,split' and optionally "
                                            r"further, distinct, named metadata columns"):
        read_frames(tmp_path, ("test",))


def test_the_embedded_datasets_metadata():
    from segbench.datasets import read_dataset

    frames = {f.frame_id: f for f in read_dataset(load_benchmark("easyportrait"), "data-easyportrait")}
    assert frames["060036fc03d3e862"].meta == {"data_hash": "66a6a65aef39812e", "width": "1280", "height": "960",
                                               "brightness": "117.00"}
    idd = {f.frame_id: f.meta for f in read_dataset(load_benchmark("idd20k-icvgip2020"), "data-idd") if f.split == "test"}
    assert idd == {"105/105000": {"part": "II"}, "105/105001": {"part": "II"}, "106/106000": {"part": "I"},
                   "106/106001": {"part": "I"}}  # 105's images are JPEG (Part II), 106's PNG (Part I)
    lighting = {f.group_id: f.meta["lighting"] for f in read_dataset(BENCHMARK, "data") if f.split == "test"}
    assert lighting == {"w07": "lit_from_left", "w08": "lit_from_right", "w09": "lit_from_right",
                        "w12": "lit_from_right"}


def test_idd_without_images_has_no_part(idd_data):
    from segbench.datasets.idd import read_frames

    for image in (idd_data / "leftImg8bit").rglob("*.png"):
        image.unlink()
    assert all(dict(f.meta) == {} for f in read_frames(idd_data, ("train", "val")))


def test_the_frame_index_carries_the_metadata(tmp_path):
    from segbench.records.frameindex import build_index, index_frames, read_index, write_index
    from segbench.steps.dataset_identity import identify_dataset

    manifest, frames = identify_dataset(BENCHMARK, "data", "data_manifest.json")
    write_index(tmp_path / "frames.json", build_index(BENCHMARK.name, "data", frames, manifest))
    index = read_index(tmp_path / "frames.json", BENCHMARK.name)
    assert index["version"] == 3
    assert [f.meta for f in index_frames(index, "data")] == [dict(f.meta) for f in frames]


# --- the config's list in place of the benchmark's: one parser, one schema, the CLI ----------------


def config_with_slices(slices) -> dict:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["benchmarks"]["painting-vision"]["slices"] = slices
    return config


def test_one_parser_for_both_sources():
    entries = [{"key": "lighting", "column": "lighting"}, {"key": "b", "column": "brightness", "bins": [0, 100, 255]}]
    expected = (LIGHTING, SliceSpec("b", "brightness", (0.0, 100.0, 255.0)))
    assert parse_slices(entries, "x.yaml", "slices") == expected
    assert slices_from_json(json.dumps(entries), "--slicings") == expected
    assert slices_from_json("[]", "--slicings") == ()
    assert BENCHMARK.slices == parse_slices(yaml.safe_load(BENCHMARK.source.read_text())["slices"], "", "slices")


@pytest.mark.parametrize(("slices", "message"), [
    ([{"key": "b", "column": "b", "bins": [0, 2, 2]}],
     "config.yaml: field 'benchmarks/painting-vision/slices/0' ('b'): bins [0.0, 2.0, 2.0] are not increasing"),
    ([{"key": "a", "column": "a"}, {"key": "a", "column": "b"}],
     "config.yaml: field 'benchmarks/painting-vision/slices/1': key 'a' is used twice"),
])
def test_the_configs_list_is_checked_as_a_definitions_is(slices, message):
    with pytest.raises(SegbenchError) as exc:
        check_config(config_with_slices(slices), "config.yaml")
    assert str(exc.value) == message


@pytest.mark.parametrize(("slices", "message"), [
    ([{"key": "a"}], "field 'benchmarks/painting-vision/slices/0': 'column' is a required property"),
    ([{"key": "a b", "column": "a"}], "field 'benchmarks/painting-vision/slices/0/key': 'a b' does not match"),
    ([{"key": "a", "column": "a", "bins": [1]}], "field 'benchmarks/painting-vision/slices/0/bins': [1] is too short"),
    ([{"key": "a", "column": "a", "edges": [1, 2]}], "Additional properties are not allowed ('edges' was unexpected)"),
    ({"key": "a", "column": "a"}, "field 'benchmarks/painting-vision/slices': {'key': 'a', 'column': 'a'} is not of type 'array'"),
])
def test_the_configs_list_is_validated_by_the_slice_schema(slices, message):
    with pytest.raises(SegbenchError, match=re.escape(message)):
        check_config(config_with_slices(slices), "config.yaml")


def test_the_slice_schema_is_the_definitions_too(tmp_path):
    from segbench.io.schemas import validate

    doc = yaml.safe_load(BENCHMARK.source.read_text())
    doc["slices"] = [{"key": "a", "column": ""}]
    with pytest.raises(SegbenchError, match=re.escape("d.yaml: field 'slices/0/column': '' should be non-empty")):
        validate(doc, "benchmark", "d.yaml")


@pytest.mark.parametrize(("text", "message"), [
    ("[{", "--slicings: not JSON (Expecting property name enclosed in double quotes: line 1 column 3 (char 2)): [{"),
    ('[{"key": "a", "column": "a"}, {"key": "a", "column": "b"}]', "--slicings: field '1': key 'a' is used twice"),
    ('[{"key": "a", "column": "a", "bins": [3, 1]}]', "--slicings: field '0' ('a'): bins [3.0, 1.0] are not increasing"),
    ('[{"column": "a"}]', "invalid slice:\n  --slicings: field '0': 'key' is a required property"),
])
def test_the_json_list_is_checked_too(text, message):
    with pytest.raises(SegbenchError) as exc:
        slices_from_json(text, "--slicings")
    assert str(exc.value) == message


def write_inputs(folder: Path) -> dict[str, Path]:
    """MODEL's and BASELINE's counts (one shard each) and a frame index holding GROUPS and META."""
    classes = list(TEN.names)
    paths = {}
    for name, hists in (("m", MODEL), ("base", BASELINE)):
        paths[name] = folder / f"{name}.parquet"
        write_counts(paths[name], subject(name, hists).counts, {
            "benchmark": BENCHMARK.name, "split": "test",
            "model": {"name": name, "label_space": {"name": TEN.name, "classes": classes}}})
    paths["frames"] = folder / "frames.json"
    write_index(paths["frames"], {"format": INDEX_FORMAT, "version": INDEX_VERSION, "benchmark": BENCHMARK.name,
                                  "dataset_id": "x", "frames": [
        {"frame_id": f, "group_id": GROUPS[f], "split": "test", "image": f"{f}.png", "label": f"{f}.png",
         "prediction": None, "image_sha256": "", "label_sha256": "", "label_size": [1, 1], "labelled": True,
         "meta": META[f]}
        for f in FRAME_IDS]})
    return paths


def run_slices(tmp_path: Path, *slicings: str) -> dict:
    from segbench.commands.cli import main

    paths = write_inputs(tmp_path)
    out = tmp_path / "slices.json"
    assert main(["slices", "--benchmark", BENCHMARK.name, "--counts", str(paths["m"]), "--baseline-counts",
                 str(paths["base"]), "--frames", str(paths["frames"]), "--resamples", "200", "--seed", "0",
                 *slicings, "--out", str(out)]) == 0
    return json.loads(out.read_text())


def test_the_cli_slices_by_the_configs_list_in_place_of_the_benchmarks(tmp_path):
    # The frames of META by a column the definition does not slice by: 'lighting' under another
    # key, and aAcc per slice as by hand (left: a1 10/20; right: b1 + c1 50/70; missing: d1 5/10).
    document = run_slices(tmp_path, "--slicings", '[{"key": "light", "column": "lighting"}]')
    assert document["slicings_from"] == "config" and list(document["slicings"]) == ["light"]
    entries = by_label(document["slicings"]["light"])
    assert [(k, e["frames"], e["units"]) for k, e in entries.items()] == [("left", 1, 1), ("right", 2, 2),
                                                                           (MISSING, 1, 1)]
    assert {k: e["results"]["paint_state_metrics"]["aAcc"] for k, e in entries.items()} == pytest.approx(
        {"left": 0.5, "right": 50 / 70, MISSING: 0.5})
    # the same slices as the library's on the same counts, interval and paired difference included
    for label, entry in entries.items():
        assert {k: entry[k] for k in ("intervals", "comparisons")} == json.loads(json.dumps(
            {k: results()[label][k] for k in ("intervals", "comparisons")}))


def test_an_empty_config_list_slices_nothing_and_none_keeps_the_benchmarks(tmp_path):
    assert run_slices(tmp_path, "--slicings", "[]")["slicings"] == {}
    own = run_slices(tmp_path)
    assert own["slicings_from"] == "benchmark"
    assert list(own["slicings"]) == [s.key for s in BENCHMARK.slices] == ["lighting"]


def test_a_bad_json_list_is_one_line_and_writes_nothing(tmp_path, capsys):
    from segbench.commands.cli import main

    paths = write_inputs(tmp_path)
    assert main(["slices", "--counts", str(paths["m"]), "--frames", str(paths["frames"]), "--slicings",
                 '[{"key": "a", "column": "a"}, {"key": "a", "column": "a"}]', "--out", str(tmp_path / "s.json")]) == 1
    assert capsys.readouterr().err == "segbench: error: --slicings: field '1': key 'a' is used twice\n"
    assert not (tmp_path / "s.json").exists()
