"""EasyPortrait read exactly as each release ships, and as users commonly unpack it.

Layouts tested (the public README's "Structure" and the meta columns of each release):

    the downloads    images.zip and annotations.zip (members <split>/..., 1.0's meta.zip), 2.0's
                     meta.zip, unzipped as docs/protocols/easyportrait.md says; unzipped into the
                     data folder itself, or into images/images/ (refused, saying how to unzip)
    1.0 as shipped   images/<split>/*.jpg, annotations/<split>/*.png, annotations/meta.zip
    1.0 extracted    annotations/meta.csv (the zip unpacked where it lies), with or without the zip
    2.0 as shipped   the same folders, meta.zip beside them
    2.0 extracted    meta.csv beside them; meta.zip put in annotations/ (the README's "Annotations")
    an extra top folder from unzipping (one is accepted, two are refused)
    optional columns left out; a meta that contradicts the folders
"""

from __future__ import annotations

from pathlib import Path

import shutil
import zipfile

import pytest
from ep_fixtures import META_ZIP, download_zips, make_ep, meta_text, write_files, write_zip

from segbench.datasets import dataset_format, dataset_layout, read_dataset
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.provenance import build_manifest, read_manifest, verify_manifest
from segbench.stages.audit import audit_dataset
from segbench.synthetic import easyportrait

ROWS = [("a1", "u1", "train"), ("b1", "u2", "val"), ("c1", "u3", "test"), ("c2", "u3", "test")]
EXPECTED = [("a1", "u1", "train"), ("b1", "u2", "val"), ("c1", "u3", "test"), ("c2", "u3", "test")]


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("easyportrait")


def listed(frames):
    return [(f.frame_id, f.group_id, f.split) for f in frames]


@pytest.mark.parametrize(
    "version, meta, where",
    [
        ("1.0", "zip", "annotations/meta.zip"),
        ("1.0", "csv", "annotations/meta.csv"),
        ("2.0", "zip", "meta.zip"),
        ("2.0", "csv", "meta.csv"),
    ],
)
def test_both_releases_as_shipped_and_extracted(tmp_path, benchmark, version, meta, where):
    data = make_ep(tmp_path, ROWS, version, meta)
    frames = read_dataset(benchmark, data)
    assert listed(frames) == EXPECTED
    assert frames[2].image == data / "images/test/c1.jpg" and frames[2].label == data / "annotations/test/c1.png"
    assert dataset_layout(benchmark, data) == {"meta": where, "meta_version": version}
    assert dataset_format("easyportrait").index_files(data, [f.label for f in frames]) == [data / where]
    assert audit_dataset(data, benchmark, ["test"]).findings == []


@pytest.mark.parametrize("version, meta", [("1.0", "annotations/meta.zip"), ("2.0", "meta.zip"), ("2.0", "meta.csv")])
def test_the_downloads_unzipped_as_the_docs_say(tmp_path, benchmark, version, meta):
    images, annotations, *meta_zip = download_zips(tmp_path, ROWS, version)
    with zipfile.ZipFile(images) as archive:
        assert archive.namelist() == ["test/", "test/c1.jpg", "test/c2.jpg", "train/", "train/a1.jpg", "val/",
                                      "val/b1.jpg"]
    with zipfile.ZipFile(annotations) as archive:
        assert archive.namelist() == [*(["meta.zip"] if version == "1.0" else []), "test/", "test/c1.png",
                                      "test/c2.png", "train/", "train/a1.png", "val/", "val/b1.png"]
    data = tmp_path / "ep"  # mkdir ep && unzip images.zip -d ep/images && unzip annotations.zip -d ep/annotations
    zipfile.ZipFile(images).extractall(data / "images")
    zipfile.ZipFile(annotations).extractall(data / "annotations")
    if meta == "meta.zip":  # 2.0: cp meta.zip ep/
        shutil.copy(meta_zip[0], data)
    elif meta == "meta.csv":  # 2.0: or unzip meta.zip -d ep
        zipfile.ZipFile(meta_zip[0]).extractall(data)
    frames = read_dataset(benchmark, data)
    assert listed(frames) == EXPECTED
    assert frames[0].image == data / "images/train/a1.jpg" and frames[0].label == data / "annotations/train/a1.png"
    assert dataset_layout(benchmark, data) == {"meta": meta, "meta_version": version}
    assert audit_dataset(data, benchmark, ["test"]).findings == []


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_the_downloads_unzipped_into_the_data_folder_itself_are_refused(tmp_path, benchmark, version):
    data = tmp_path / "ep"  # cd ep && unzip ../images.zip && unzip ../annotations.zip: the splits' folders merge
    for download in download_zips(tmp_path, ROWS, version)[:2]:
        zipfile.ZipFile(download).extractall(data)
    if version == "2.0":
        shutil.copy(tmp_path / "meta.zip", data)
    assert sorted(p.name for p in (data / "test").iterdir()) == ["c1.jpg", "c1.png", "c2.jpg", "c2.png"]
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, data)
    assert str(exc.value) == (
        f"{data}: train/, val/, test/ lie in the data folder itself (images.zip and annotations.zip unzipped into it; "
        "their members are <split>/...); expected images/<split>/*.jpg, annotations/<split>/*.png and "
        f"annotations/meta.zip (1.0) or meta.zip (2.0): unzip images.zip -d {data}/images and annotations.zip -d "
        f"{data}/annotations"
    )


@pytest.mark.parametrize("sub", ["images", "annotations"])
def test_a_zip_with_a_top_folder_unzipped_into_its_namesake_is_refused(tmp_path, benchmark, sub):
    data = make_ep(tmp_path, ROWS)  # unzip images.zip -d ep/images, had images.zip held images/<split>/...
    (data / sub).rename(tmp_path / sub)
    (data / sub).mkdir()
    (tmp_path / sub).rename(data / sub / sub)
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, data)
    assert str(exc.value) == (
        f"{data}/{sub}/{sub}: {sub}.zip has a top folder {sub}/ and was unzipped into {data}/{sub}; expected "
        f"{sub}/<split>/...: unzip it into {data} instead"
    )


def test_a_2_0_meta_zip_in_annotations_is_read(tmp_path, benchmark):
    """The 2.0 README's "Annotations" section still names annotations/meta.zip: the columns tell the release."""
    data = make_ep(tmp_path, ROWS, "2.0")
    (data / "meta.zip").rename(data / "annotations/meta.zip")
    assert listed(read_dataset(benchmark, data)) == EXPECTED
    assert dataset_layout(benchmark, data) == {"meta": "annotations/meta.zip", "meta_version": "2.0"}


def test_the_zip_and_its_extracted_csv_are_one_meta_file(tmp_path, benchmark):
    data = make_ep(tmp_path, ROWS, "1.0")
    (data / "annotations/meta.csv").write_text(meta_text(ROWS, "1.0"))
    assert listed(read_dataset(benchmark, data)) == EXPECTED
    assert dataset_layout(benchmark, data)["meta"] == "annotations/meta.zip"
    assert audit_dataset(data, benchmark, ["test"]).findings == []  # neither counts as an unlisted file


def test_two_different_meta_files_are_refused(tmp_path, benchmark):
    data = make_ep(tmp_path, ROWS, "1.0")
    (data / "meta.csv").write_text(meta_text(ROWS[:2], "2.0"))
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, data)
    assert str(exc.value) == (
        f"{data}: 2 different meta files (annotations/meta.zip, meta.csv); keep the one that came with the download"
    )


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_an_extra_top_folder_from_unzipping_is_accepted(tmp_path, benchmark, version):
    data = make_ep(tmp_path, ROWS, version, top="easyportrait")
    frames = read_dataset(benchmark, data)
    assert listed(frames) == EXPECTED
    assert frames[0].image == data / "easyportrait/images/train/a1.jpg"
    assert dataset_layout(benchmark, data)["meta"] == f"easyportrait/{META_ZIP[version].as_posix()}"
    assert audit_dataset(data, benchmark, ["test"]).findings == []


def test_two_top_folders_are_refused(tmp_path, benchmark):
    data = make_ep(tmp_path, ROWS, top="v1")
    write_files(data / "v2", "test", "c1")
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, data)
    assert str(exc.value).startswith(f"{data}: 2 folders hold images or annotations or meta.csv or meta.zip (v1, v2); "
                                     "expected one dataset (images/<split>/*.jpg")


@pytest.mark.parametrize(
    "version, columns",
    [
        ("1.0", ("attachment_id", "user_id", "train", "test", "valid")),
        ("1.0", ("valid", "test", "train", "user_id", "attachment_id", "brightness")),
        ("2.0", ("image_name", "user_id", "set")),
    ],
)
def test_optional_columns_are_optional(tmp_path, benchmark, version, columns):
    data = make_ep(tmp_path, ROWS, version, columns=columns)
    assert listed(read_dataset(benchmark, data)) == EXPECTED


@pytest.mark.parametrize(
    "text, message",
    [
        ("name,user_id,set\n", "line 1: header is 'name,user_id,set', expected the 1.0 columns attachment_id,user_id,"
                               "data_hash,width,height,brightness,train,test,valid or the 2.0 columns image_name,user_id,"
                               "height,width,set,brightness"),
        ("attachment_id,user_id,train,test\n", "line 1: header is 'attachment_id,user_id,train,test', expected the 1.0 "
                                               "columns attachment_id,user_id,data_hash,width,height,brightness,train,"
                                               "test,valid (missing: valid)"),
        ("attachment_id,user_id,train,test,valid\nx,u,True,True,False\n",
         "line 2: train=True, valid=False, test=True: exactly one of train, test, valid must be True (frame 'x')"),
        ("attachment_id,user_id,train,test,valid\nx,u,False,False,False\n",
         "line 2: train=False, valid=False, test=False: exactly one of train, test, valid must be True (frame 'x')"),
        ("attachment_id,user_id,train,test,valid\nx,u,yes,False,False\n",
         "line 2: train is 'yes', expected True or False (frame 'x')"),
    ],
)
def test_1_0_meta_errors_name_the_zip_member_and_line(tmp_path, benchmark, text, message):
    data = tmp_path / "ep"
    zipped = write_zip(data / "annotations/meta.zip", {"meta.csv": text})
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, data)
    assert str(exc.value) == f"{zipped} (member meta.csv): {message}"


def test_1_0_boolean_spellings(tmp_path, benchmark):
    data = tmp_path / "ep"
    write_zip(data / "annotations/meta.zip", {"meta.csv": "attachment_id,user_id,train,test,valid\n"
                                                          "x,u,true,false,false\ny,v,0,0,1\n"})
    assert listed(read_dataset(benchmark, data)) == [("x", "u", "train"), ("y", "v", "val")]


def test_the_zip_member_may_sit_in_a_folder(tmp_path, benchmark):
    data = tmp_path / "ep"
    write_zip(data / "meta.zip", {"meta/": "", "meta/meta.csv": meta_text(ROWS, "2.0"), "__MACOSX/meta/._meta.csv": "x"})
    assert listed(read_dataset(benchmark, data)) == EXPECTED


@pytest.mark.parametrize(
    "members, found",
    [
        ({}, "found 0: an empty zip"),
        ({"readme.txt": "x"}, "found 0: readme.txt"),
        ({"a.csv": "x", "b.csv": "y"}, "found 2: a.csv, b.csv"),
    ],
)
def test_a_zip_without_one_csv_is_refused(tmp_path, benchmark, members, found):
    data = tmp_path / "ep"
    zipped = write_zip(data / "meta.zip", members)
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, data)
    assert str(exc.value) == f"{zipped}: expected one .csv member (the meta file), {found}"


def test_a_broken_zip_is_refused(tmp_path, benchmark):
    data = tmp_path / "ep"
    (data / "annotations").mkdir(parents=True)
    (data / "annotations/meta.zip").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(SegbenchError, match=r"annotations/meta\.zip: not a readable zip \(File is not a zip file\)"):
        read_dataset(benchmark, data)


def test_a_frame_in_test_marked_train(tmp_path, benchmark):
    data = make_ep(tmp_path, ROWS)
    write_zip(data / "annotations/meta.zip", {"meta.csv": meta_text([*ROWS[:3], ("c2", "u3", "train")], "1.0")})
    report = audit_dataset(data, benchmark, ["test"])
    assert [(f.code, f.message) for f in report.errors] == [
        ("group-crosses-splits", "user 'u3' is in more than one split: test (c1); train (c2)"),
        ("meta-contradicts-folders", "frame 'c2': annotations/meta.zip puts it in split 'train', but its files are in "
                                     "images/test/ or annotations/test/"),
        ("missing-image", "frame 'c2' (user 'u3', split train): no image (images/train/c2.jpg)"),
        ("missing-label", "frame 'c2' (user 'u3', split train): no label (annotations/train/c2.png)"),
    ]  # the files in test/ are the frame's, not also unlisted files


def test_a_listed_frame_without_files_and_a_file_not_in_the_meta(tmp_path, benchmark):
    data = make_ep(tmp_path, ROWS)
    write_zip(data / "annotations/meta.zip", {"meta.csv": meta_text([*ROWS[:3], ("c3", "u3", "test")], "1.0")})
    report = audit_dataset(data, benchmark, ["test"])
    assert [(f.code, f.message) for f in report.errors] == [
        ("missing-image", "frame 'c3' (user 'u3', split test): no image (images/test/c3.jpg)"),
        ("missing-label", "frame 'c3' (user 'u3', split test): no label (annotations/test/c3.png)"),
        ("unlisted-file", "annotations/test/c2.png: file not listed in the meta file"),
        ("unlisted-file", "images/test/c2.jpg: file not listed in the meta file"),
    ]


def test_the_manifest_records_the_release(tmp_path, benchmark):
    one = make_ep(tmp_path / "one", ROWS, "1.0")
    two = make_ep(tmp_path / "two", ROWS, "2.0")
    frames_one, frames_two = read_dataset(benchmark, one), read_dataset(benchmark, two)
    manifest = build_manifest(one, frames_one, "ep", "user_id", dataset_layout(benchmark, one))
    assert manifest["layout"] == {"meta": "annotations/meta.zip", "meta_version": "1.0"}
    assert verify_manifest(manifest, one, frames_one, "ep", "user_id", layout=dataset_layout(benchmark, one)) == (
        manifest["dataset_id"]
    )
    # the same images and masks listed by the 2.0 meta: the same frames, another release
    assert build_manifest(two, frames_two, "ep", "user_id")["dataset_id"] == manifest["dataset_id"]
    with pytest.raises(SegbenchError) as exc:
        verify_manifest(manifest, two, frames_two, "ep", "user_id", layout=dataset_layout(benchmark, two))
    assert str(exc.value).endswith(
        "(2 difference(s)); refusing to evaluate:\n  layout meta is 'meta.zip', the manifest says 'annotations/meta.zip'"
        "\n  layout meta_version is '2.0', the manifest says '1.0'"
    )


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """The embedded default's generator, both releases."""
    root = tmp_path_factory.mktemp("synthetic")
    return {version: (root / version, easyportrait.build_dataset(root / version, version=version))
            for version in ("1.0", "2.0")}


def test_the_synthetic_builder_writes_both_releases(synthetic, benchmark):
    (one, rows), (two, _) = synthetic["1.0"], synthetic["2.0"]
    assert sorted(p.relative_to(one).as_posix() for p in one.glob("**/meta.*")) == ["annotations/meta.zip"]
    assert sorted(p.relative_to(two).as_posix() for p in two.glob("**/meta.*")) == ["meta.zip"]
    frames_one, frames_two = read_dataset(benchmark, one), read_dataset(benchmark, two)
    assert listed(frames_one) == listed(frames_two) == [(r["image_name"], r["user_id"], r["set"]) for r in rows]
    assert dataset_layout(benchmark, two) == {"meta": "meta.zip", "meta_version": "2.0"}
    for data in (one, two):
        assert audit_dataset(data, benchmark, ["test"]).ok


def test_the_embedded_default_is_the_1_0_layout():
    manifest = read_manifest(Path(__file__).resolve().parents[1] / "data-easyportrait_manifest.json", "ep", "user_id")
    assert manifest["layout"] == {"meta": "annotations/meta.zip", "meta_version": "1.0"}
