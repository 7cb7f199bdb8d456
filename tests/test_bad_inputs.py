"""The bad-input catalogue: files from strangers (dataset, manifest, config, checkpoints of each
kind, predictions folders and archives) given to the one-shot command and the CLI.

Every case runs the command in-process (segbench.commands.oneshot.main / segbench.commands.cli.main) on a tiny
dataset and asserts the exit code, that the one error line names the offending file or field,
that no traceback is printed and that nothing is left behind (no submission record, no partial
file).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import tarfile
import zipfile
import zlib
from argparse import Namespace
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from pv_fixtures import clean_frames, make_dataset, write_png
from segbench.commands import cli, oneshot
from segbench.datasets import read_dataset
from segbench.io.fileio import sha256_file, write_json
from segbench.models.architectures import build
from segbench.models.checkpoint import save_checkpoint
from segbench.models.torchscript import save_torchscript
from segbench.protocols.definitions import load_benchmark, load_label_space
from segbench.records.provenance import build_manifest, write_manifest
from segbench.steps.frames import frames_of_split
from segbench.steps.metrics import metrics_document

ROOT = Path(__file__).resolve().parents[1]
PV = load_benchmark("painting-vision")
NORM = {"mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]}
WIDTHS = [4, 8, 8]


@dataclass(frozen=True)
class World:
    """A valid tiny dataset with its manifest, a checkpoint, a TorchScript archive and a
    predictions folder (the labels' pixels, re-encoded): each case damages a copy of one."""

    data: Path
    manifest: Path
    pt: Path
    ts: Path
    preds: Path
    test_frames: tuple[str, ...]
    record: Path  # the checkpoint's record from a valid run
    floor_metrics: Path
    metrics: Path  # the checkpoint's metrics from that run
    uncertainty: Path  # and its bootstrap document, paired with the floor


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    root = tmp_path_factory.mktemp("world")
    data = make_dataset(root, clean_frames())
    frames = frames_of_split(PV, data, "test")
    manifest = root / "manifest.json"
    write_manifest(manifest, build_manifest(data, read_dataset(PV, data)))
    torch.manual_seed(0)
    net = build("tiny-segnet", {"widths": WIDTHS}, 10).eval()
    space = load_label_space("painting-vision-10")
    save_checkpoint(root / "tiny.pt", net, "tiny-segnet", {"widths": WIDTHS}, space, NORM)
    save_torchscript(root / "tiny.ts", net, space, NORM, stride=8)
    preds = root / "preds"
    preds.mkdir()
    for frame in frames:  # the labels' pixels, encoded otherwise: a perfect honest prediction
        Image.open(frame.label).save(preds / frame.prediction, format="PNG", compress_level=0)
        assert (preds / frame.prediction).read_bytes() != frame.label.read_bytes()
    record = root / "valid" / "submission.json"
    work = root / "work"
    assert oneshot.main(["--data", str(data), "--checkpoint", str(root / "tiny.pt"), "--dataset-manifest", str(manifest),
                         "--emit-submission", str(record), "--work-dir", str(work), "--device", "cpu"]) == 0
    floor_metrics, metrics = root / "floor-metrics.json", root / "metrics.json"
    tiny = work / "painting-vision" / "test" / oneshot.model_folder("tiny", sha256_file(root / "tiny.pt"))
    write_json(floor_metrics, metrics_document(PV, [work / "painting-vision" / "test" / "floor" / "counts.parquet"]))
    write_json(metrics, metrics_document(PV, [tiny / "counts.parquet"]))
    return World(data, manifest, root / "tiny.pt", root / "tiny.ts", preds, tuple(f.frame_id for f in frames), record,
                 floor_metrics, metrics, tiny / "uncertainty.json")


@dataclass(frozen=True)
class Run:
    entry: str  # "oneshot" or "cli"
    argv: list[str]
    code: int
    needles: tuple[str, ...]  # each must appear in stderr
    unchanged: tuple[Path, ...] = ()  # inputs whose bytes the refused command must leave as they were


def oneshot_run(tmp: Path, checkpoint: Path, *extra: str, data: Path | None = None, code: int = 1,
                needles: tuple[str, ...] = (), world: World | None = None, unchanged: tuple[Path, ...] = ()) -> Run:
    argv = ["--data", str(data if data is not None else world.data), "--checkpoint", str(checkpoint),
            "--split", "test", "--emit-submission", str(tmp / "out" / "submission.json"),
            "--work-dir", str(tmp / "work"), "--device", "cpu", *extra]
    return Run("oneshot", argv, code, needles, unchanged)


def predictions_run(tmp: Path, w: World, folder: Path, *needles: str, code: int = 1) -> Run:
    return oneshot_run(tmp, folder, "--checkpoint-kind", "predictions", "--label-space", "painting-vision-10",
                       world=w, code=code, needles=needles)


def copy_preds(w: World, tmp: Path) -> Path:
    return Path(shutil.copytree(w.preds, tmp / "preds"))


def copy_data(w: World, tmp: Path) -> Path:
    return Path(shutil.copytree(w.data, tmp / "data"))


def png_bytes(width: int, height: int, bit_depth: int = 8, colour: int = 0, idat: bytes | None = None) -> bytes:
    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", width, height, bit_depth, colour, 0, 0, 0)
    body = idat if idat is not None else zlib.compress(b"\x00" * 16)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def png_of(mask: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(mask).save(buffer, format="PNG")
    return buffer.getvalue()


def corrupt_zip_member(path: Path, out: Path, pick: Callable[[str], bool]) -> Path:
    """`path` with bytes inside the first member `pick` accepts overwritten (its CRC now wrong)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = next(i for i in archive.infolist() if pick(i.filename) and i.file_size >= 8)
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26: info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    data[start: start + 4] = bytes(b ^ 0xFF for b in data[start: start + 4])
    out.write_bytes(bytes(data))
    return out


def checkpoint_doc(w: World) -> dict:
    return torch.load(w.pt, map_location="cpu", weights_only=True)


def save_doc(doc: object, path: Path) -> Path:
    torch.save(doc, path)
    return path


def zip_of(path: Path, members: dict[str, bytes], symlinks: tuple[str, ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, payload in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if name in symlinks:
                info.external_attr = (0o120777 << 16)
            archive.writestr(info, payload)
    return path


def pred_members(w: World) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(w.preds.iterdir())}


def tar_of(path: Path, w: World, extra: Callable[[tarfile.TarFile], None], mode: str = "w") -> Path:
    with tarfile.open(path, mode) as archive:
        for name, payload in pred_members(w).items():
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload))
        extra(archive)
    return path


def tar_entry(name: str, kind: bytes, target: str = "") -> Callable[[tarfile.TarFile], None]:
    def add(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = target
        archive.addfile(info)

    return add


# --- the cases: each returns the Run to make ---------------------------------------------------

CASES: dict[str, Callable[[World, Path], Run]] = {}


def case(name: str):
    def register(make: Callable[[World, Path], Run]) -> Callable[[World, Path], Run]:
        assert name not in CASES
        CASES[name] = make
        return make

    return register


def data_case(name: str, damage: Callable[[Path], str], *needles: str, code: int = 1) -> None:
    """A case that damages a copy of the dataset; `damage` returns a needle naming what it damaged."""

    def make(w: World, tmp: Path) -> Run:
        data = copy_data(w, tmp)
        named = damage(data)
        return oneshot_run(tmp, w.pt, data=data, code=code, needles=(named, *needles), world=w)

    case(f"dataset-{name}")(make)


def unlink(path: Path) -> str:
    path.unlink()
    return path.name


data_case("frames-csv-missing", lambda d: unlink(d / "frames.csv"))
data_case("label-missing", lambda d: unlink(d / "labels" / "d1.png"))
data_case("image-missing", lambda d: unlink(d / "images" / "d1.png") and "images/d1")


def label_is_folder(d: Path) -> str:
    (d / "labels" / "d1.png").unlink()
    (d / "labels" / "d1.png").mkdir()
    return "d1.png"


data_case("label-is-a-folder", label_is_folder, "folder")


def truncate(path: Path) -> str:
    path.write_bytes(path.read_bytes()[:40])
    return path.name


data_case("label-truncated", lambda d: truncate(d / "labels" / "e1.png"))
data_case("label-idat-crc-wrong", lambda d: wrong_idat_crc(d / "labels" / "e1.png"),
          "damaged PNG: the CRC of its IDAT chunk is wrong")
data_case("image-truncated", lambda d: truncate(d / "images" / "e1.png"))


def rgb_label(d: Path) -> str:
    write_png(d / "labels" / "e1.png", np.zeros((16, 20, 3), np.uint8))
    return "e1"


data_case("label-rgb", rgb_label)


def label_values(d: Path) -> str:
    write_png(d / "labels" / "e1.png", np.full((16, 20), 77, np.uint8))
    return "e1"


data_case("label-values-outside-taxonomy", label_values, "77")


def label_size(d: Path) -> str:
    write_png(d / "labels" / "e1.png", np.zeros((8, 20), np.uint8))
    return "e1"


data_case("label-size-differs-from-image", label_size)


def rewrite_csv(d: Path, text: str) -> str:
    (d / "frames.csv").write_text(text)
    return "frames.csv"


data_case("csv-bad-header", lambda d: rewrite_csv(d, "id,wall,split\na1,wA,train\n"))
data_case("csv-wall-in-two-splits", lambda d: rewrite_csv(
    d, "frame_id,wall_id,split\na1,wA,train\na2,wA,train\nb1,wB,train\nc1,wC,val\nd1,wA,test\ne1,wE,test\n") and "wA")
data_case("csv-empty-test-split", lambda d: rewrite_csv(
    d, "frame_id,wall_id,split\na1,wA,train\na2,wA,train\nb1,wB,train\nc1,wC,val\nd1,wD,val\ne1,wE,val\n") and "test")


data_case("csv-metadata-value-with-trailing-space", lambda d: rewrite_csv(
    d, "frame_id,wall_id,split,lighting\na1,wA,train,lit\na2,wA,train,lit\nb1,wB,train,lit\nc1,wC,val,lit\n"
       "d1,wD,test,lit \ne1,wE,test,lit\n"), "line 6: lighting 'lit ' has leading or trailing white space (frame 'd1')")


@case("dataset-label-is-a-folder-against-the-manifest")
def _(w: World, tmp: Path) -> Run:
    data = copy_data(w, tmp)
    label_is_folder(data)
    return oneshot_run(tmp, w.pt, "--dataset-manifest", str(w.manifest), data=data, world=w,
                       needles=("\n  labels/d1.png: a folder, not a file (frame 'd1'; manifest sha256 ",))


@case("dataset-folder-missing")
def _(w: World, tmp: Path) -> Run:
    return oneshot_run(tmp, w.pt, data=tmp / "nowhere", needles=("nowhere",), world=w)


# --- manifests ---------------------------------------------------------------------------------


def manifest_case(name: str, damage: Callable[[dict, Path], str | bytes], *needles: str) -> None:
    def make(w: World, tmp: Path) -> Run:
        document = json.loads(w.manifest.read_text())
        path = tmp / "manifest.json"
        text = damage(document, path)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return oneshot_run(tmp, w.pt, "--dataset-manifest", str(path), needles=("manifest.json", *needles), world=w)

    case(f"manifest-{name}")(make)


def redo_id(document: dict) -> str:
    from segbench.records.provenance import dataset_id

    document["dataset_id"] = dataset_id(document["frames"], "pv1")
    return json.dumps(document)


manifest_case("not-json", lambda m, p: "{not json", "line 1")
manifest_case("not-utf8", lambda m, p: b"\xff\xfe{}", "UTF-8")
manifest_case("wrong-format", lambda m, p: json.dumps({**m, "format": "other"}), "format")
manifest_case("edited-dataset-id", lambda m, p: json.dumps({**m, "dataset_id": "pv1:" + "0" * 64}), "dataset_id")
manifest_case("label-bytes-changed", lambda m, p: (m["frames"][-1]["label"].update(sha256="0" * 64), redo_id(m))[1],
              "labels/e1.png", "bytes changed")
manifest_case("frame-missing", lambda m, p: (m["frames"].pop(), redo_id(m))[1], "e1")
manifest_case("bad-sha-field", lambda m, p: (m["frames"][0]["image"].update(sha256="xyz"), json.dumps(m))[1],
              "frames/0", "image/sha256")


def other_benchmark(m: dict, p: Path) -> str:
    for entry in m["frames"]:
        entry["drive_id"] = entry.pop("wall_id")
    from segbench.records.provenance import dataset_id

    m["dataset_id"] = dataset_id(m["frames"], "idd")
    return json.dumps(m)


manifest_case("another-benchmarks-manifest", other_benchmark, "another benchmark")


@case("manifest-not-found")
def _(w: World, tmp: Path) -> Run:
    return oneshot_run(tmp, w.pt, "--dataset-manifest", str(tmp / "gone.json"), needles=("gone.json", "not found"),
                       world=w)


# --- config (where baselines are defined) ------------------------------------------------------


def config_case(name: str, text: str, *needles: str, baseline: str = "best") -> None:
    def make(w: World, tmp: Path) -> Run:
        path = tmp / "config.yaml"
        path.write_text(text)
        return oneshot_run(tmp, w.pt, "--config", str(path), "--baseline", baseline,
                           needles=("config.yaml", *needles), world=w)

    case(f"config-{name}")(make)


GOOD_CONFIG = (ROOT / "config" / "config.yaml").read_text()
config_case("yaml-syntax-error", GOOD_CONFIG + "\nmodels: [unclosed\n", "line")
config_case("not-a-mapping", "- just\n- a list\n")
config_case("schema-violation", GOOD_CONFIG.replace("shard_size: 8", "shard_size: -3"),
            f"config.yaml:{GOOD_CONFIG.splitlines().index('shard_size: 8') + 1}: field 'shard_size'")
RESULTS_LINE = f"config.yaml:{GOOD_CONFIG.splitlines().index('results: results') + 1}: field 'results'"
config_case("results-empty", GOOD_CONFIG.replace("results: results", 'results: ""'), RESULTS_LINE, "non-empty")
config_case("results-root", GOOD_CONFIG.replace("results: results", "results: /"), RESULTS_LINE, "filesystem root")
config_case("results-inside-data", GOOD_CONFIG.replace("results: results", "results: data/results"), RESULTS_LINE,
            "inside the input 'data'")
config_case("model-name-escape", GOOD_CONFIG + "  ../../escape:\n    kind: checkpoint\n    path: artifacts/best.pt\n"
            "    label_space: painting-vision-10\n", f"config.yaml:{len(GOOD_CONFIG.splitlines()) + 1}",
            "field 'models/../../escape'")


@case("config-not-found")
def _(w: World, tmp: Path) -> Run:
    return oneshot_run(tmp, w.pt, "--config", str(tmp / "none.yaml"), "--baseline", "best",
                       needles=("none.yaml",), world=w)


@case("config-unknown-baseline")
def _(w: World, tmp: Path) -> Run:
    return oneshot_run(tmp, w.pt, "--baseline", "deeplab-coco", needles=("deeplab-coco",), world=w)


# --- checkpoints (.pt) -------------------------------------------------------------------------


def pt_case(name: str, make_file: Callable[[World, Path], Path], *needles: str) -> None:
    def make(w: World, tmp: Path) -> Run:
        path = make_file(w, tmp)
        return oneshot_run(tmp, path, needles=(path.name, *needles), world=w)

    case(f"checkpoint-{name}")(make)


def write(path: Path, payload: bytes) -> Path:
    path.write_bytes(payload)
    return path


def with_doc(change: Callable[[dict], object]) -> Callable[[World, Path], Path]:
    def make_file(w: World, tmp: Path) -> Path:
        doc = checkpoint_doc(w)
        changed = change(doc)
        return save_doc(changed if isinstance(changed, dict) else doc, tmp / "edited.pt")

    return make_file


pt_case("not-found", lambda w, t: t / "absent.pt", "not found")
pt_case("empty-file", lambda w, t: write(t / "empty.pt", b""))
pt_case("random-bytes", lambda w, t: write(t / "noise.pt", os.urandom(4096)))
pt_case("truncated", lambda w, t: write(t / "cut.pt", w.pt.read_bytes()[: w.pt.stat().st_size // 2]))
pt_case("member-crc-wrong", lambda w, t: corrupt_zip_member(w.pt, t / "crc.pt", lambda n: "/data/" in n), "damaged")
pt_case("needs-code-to-unpickle", lambda w, t: save_doc({"x": Namespace(a=1)}, t / "code.pt"), "argparse.Namespace")
pt_case("holds-a-tensor", lambda w, t: save_doc(torch.zeros(3), t / "tensor.pt"), "Tensor")
pt_case("missing-fields", with_doc(lambda d: {k: v for k, v in d.items() if k != "stride"}), "stride")
pt_case("wrong-format", with_doc(lambda d: d.update(format="other")), "format")
pt_case("unknown-architecture", with_doc(lambda d: d.update(architecture="resnet-9000")), "resnet-9000")
pt_case("hostile-widths-40000", with_doc(lambda d: d.update(arguments={"widths": [40000, 40000, 40000]})), "40000")
pt_case("hostile-widths-5000", with_doc(lambda d: d.update(arguments={"widths": [16, 5000, 5000]})), "5000")
pt_case("bad-widths-type", with_doc(lambda d: d.update(arguments={"widths": "wide"})), "widths")
pt_case("num-classes-in-arguments", with_doc(lambda d: d["arguments"].update(num_classes=3)), "num_classes")
pt_case("nan-weights", with_doc(lambda d: d["state_dict"]["classifier.bias"].fill_(float("nan"))), "non-finite")
pt_case("missing-weight", with_doc(lambda d: d["state_dict"].pop("classifier.bias")), "classifier.bias")
pt_case("unknown-label-space", with_doc(lambda d: d["label_space"].update(name="coco-80")), "coco-80")
pt_case("stride-not-multiple", with_doc(lambda d: d.update(stride=12)), "stride")
pt_case("normalization-bad", with_doc(lambda d: d.update(normalization={"mean": [0.5], "std": [0, 0, 0]})),
        "normalization")


def zero_strides(d: dict) -> None:
    """Every tensor one stored value repeated over its shape (torch.save keeps the strides)."""
    d["state_dict"] = {k: v.flatten()[:1].clone().expand(v.shape) if v.dim() else v for k, v in d["state_dict"].items()}


def widths_40000_of_zero_strides(d: dict) -> None:
    """An 8.7 KB file of tensors shaped for widths [40000]*3: the meta-device check of shapes passes."""
    d["arguments"] = {"widths": [40000, 40000, 40000]}
    with torch.device("meta"):
        d["state_dict"] = build("tiny-segnet", d["arguments"], 10).state_dict()
    zero_strides(d)


def overlapping_strides(d: dict) -> None:
    weight = d["state_dict"]["stage1.0.weight"]  # (4, 3, 3, 3): 108 values, here 30 of them overlapping
    d["state_dict"]["stage1.0.weight"] = torch.arange(30.0).as_strided(tuple(weight.shape), (3, 1, 1, 1))


def negative_running_variance(d: dict) -> None:
    d["state_dict"]["stage1.1.running_var"].fill_(-1.0)  # sqrt of a negative number: NaN logits


pt_case("zero-stride-tensors", with_doc(zero_strides),
        "state_dict refused: tensor 'stage1.0.weight' of shape (4, 3, 3, 3) has zero or overlapping strides "
        "(0, 0, 0, 0): 108 elements from 1 stored values (and 21 more tensors)")  # 5 a stage x 4, classifier 2
pt_case("zero-stride-tensors-shaped-for-widths-40000", with_doc(widths_40000_of_zero_strides),
        "architecture 'tiny-segnet' {'widths': [40000, 40000, 40000]} with 10 classes has 57602120014 parameters and "
        "buffers, more than the limit of 2147483648")
pt_case("overlapping-strides", with_doc(overlapping_strides),
        "state_dict refused: tensor 'stage1.0.weight' of shape (4, 3, 3, 3) has zero or overlapping strides "
        "(3, 1, 1, 1): 108 elements from 30 stored values")
pt_case("meta-tensors", with_doc(lambda d: d.update(state_dict={k: v.to("meta") for k, v in d["state_dict"].items()})),
        "state_dict refused: tensor 'stage1.0.weight' is on device 'meta', not values stored in the file "
        "(and 25 more tensors)")
pt_case("stride-2-30", with_doc(lambda d: d.update(stride=2**30)), "field 'stride' 1073741824 is above the limit of 1024")
pt_case("negative-running-variance", with_doc(negative_running_variance),
        "frame d1: the model's logits hold NaN or infinite values (a broken model: its mask would be arbitrary)")


def deflate_bomb_pt(w: World, tmp: Path) -> Path:
    path = tmp / "bomb.pt"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("bomb/data/0", "w", force_zip64=True) as member:
            block = bytes(1 << 20)
            for _ in range(64):
                member.write(block)
    return path


pt_case("zip-bomb-member", deflate_bomb_pt, "ratio")


def pinned_wrong(w: World, tmp: Path) -> Path:
    path = tmp / "pinned.pt"
    shutil.copyfile(w.pt, path)
    (tmp / "pinned.pt.dvc").write_text(f"outs:\n- md5: {'0' * 32}\n  size: {path.stat().st_size}\n  hash: md5\n"
                                       "  path: pinned.pt\n")
    return path


pt_case("differs-from-dvc-pin", pinned_wrong, "DVC pin")


# --- TorchScript -------------------------------------------------------------------------------


def ts_case(name: str, make_file: Callable[[World, Path], Path], *needles: str) -> None:
    def make(w: World, tmp: Path) -> Run:
        path = make_file(w, tmp)
        return oneshot_run(tmp, path, "--checkpoint-kind", "torchscript", needles=(path.name, *needles), world=w)

    case(f"torchscript-{name}")(make)


def rezip(w: World, tmp: Path, change: Callable[[str, bytes], bytes | None]) -> Path:
    path = tmp / "changed.ts"
    with zipfile.ZipFile(w.ts) as source, zipfile.ZipFile(path, "w") as target:
        for info in source.infolist():
            payload = change(info.filename, source.read(info))
            if payload is not None:
                target.writestr(info, payload)
    return path


ts_case("not-found", lambda w, t: t / "absent.ts", "not found")
ts_case("member-crc-wrong", lambda w, t: corrupt_zip_member(w.ts, t / "crc.ts", lambda n: "/code/" in n), "damaged")
ts_case("a-pt-file", lambda w, t: Path(shutil.copyfile(w.pt, t / "really-pt.ts")), "checkpoint")
ts_case("no-metadata", lambda w, t: rezip(w, t, lambda n, b: None if n.endswith("segbench.json") else b), "segbench.json")
ts_case("metadata-not-json", lambda w, t: rezip(w, t, lambda n, b: b"{" if n.endswith("segbench.json") else b),
        "segbench.json")
ts_case("random-bytes", lambda w, t: write(t / "noise.ts", os.urandom(2048)))


class RaisesOnLargeInputs(torch.nn.Module):
    """A graph that runs on small inputs and raises on a frame at the inference size."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] > 64:
            raise RuntimeError("this graph takes inputs of at most 64 columns")
        return x[:, :1].repeat(1, 10, 1, 1)


def raising_ts(w: World, tmp: Path) -> Path:
    save_torchscript(tmp / "raises.ts", RaisesOnLargeInputs(), load_label_space("painting-vision-10"), NORM, stride=8)
    return tmp / "raises.ts"


ts_case("forward-raises", raising_ts, "the model failed on frame(s) d1, e1 (input 512x640): "
        "builtins.RuntimeError: this graph takes inputs of at most 64 columns")
ts_case("stride-2-30", lambda w, t: rezip(w, t, lambda n, b: json.dumps({**json.loads(b), "stride": 2**30}).encode()
                                          if n.endswith("segbench.json") else b),
        "segbench.json: field 'stride' 1073741824 is above the limit of 1024")


# --- Hugging Face folders ----------------------------------------------------------------------


def hf_case(name: str, damage: Callable[[Path], None], *needles: str, kind: bool = True) -> None:
    def make(w: World, tmp: Path) -> Run:
        folder = Path(shutil.copytree(ROOT / "artifacts" / "segformer-ade", tmp / "hf"))
        damage(folder)
        extra = ["--checkpoint-kind", "hf-segformer"] if kind else []
        return oneshot_run(tmp, folder, *extra, needles=("hf", *needles), world=w)

    case(f"hf-{name}")(make)


hf_case("no-config-json", lambda f: (f / "config.json").unlink(), "config.json", kind=False)
hf_case("config-not-json", lambda f: (f / "config.json").write_text("{"), "config.json")
hf_case("weights-missing", lambda f: [p.unlink() for p in f.glob("*.safetensors")])
hf_case("weights-truncated", lambda f: truncate(f / "model.safetensors"), "model.safetensors")
hf_case("unknown-model-type", lambda f: (f / "config.json").write_text(json.dumps(
    {**json.loads((f / "config.json").read_text()), "model_type": "bert"})), "config.json", "'bert'")



def edit_processor(folder: Path, **changes) -> None:
    path = folder / "preprocessor_config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


hf_case("processor-unknown-setting", lambda f: edit_processor(f, do_gamma=True), "preprocessor_config.json",
        "setting 'do_gamma' = True is not one segbench can honour for SegformerImageProcessorPil")
hf_case("processor-unknown-class", lambda f: edit_processor(f, image_processor_type="VivitImageProcessor"),
        "preprocessor_config.json", "image processor VivitImageProcessor is not one segbench can follow")

def flip_middle_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@case("hf-differs-from-dvc-pin")
def _(w: World, tmp: Path) -> Run:
    """A pinned folder with one weight byte changed: refused against the folder's pin (`.dir`)."""
    folder = Path(shutil.copytree(ROOT / "artifacts" / "segformer-ade", tmp / "segformer-ade"))
    shutil.copyfile(ROOT / "artifacts" / "segformer-ade.dvc", tmp / "segformer-ade.dvc")
    flip_middle_byte(folder / "model.safetensors")
    return oneshot_run(tmp, folder, needles=("segformer-ade: bytes differ from its DVC pin", ".dir"), world=w)


# --- ONNX --------------------------------------------------------------------------------------


def onnx_case(name: str, make_file: Callable[[World, Path], Path], *needles: str) -> None:
    def make(w: World, tmp: Path) -> Run:
        path = make_file(w, tmp)
        return oneshot_run(tmp, path, needles=(path.name, *needles), world=w)

    case(f"onnx-{name}")(make)


def pinned_onnx(w: World, tmp: Path) -> Path:
    path = Path(shutil.copyfile(ROOT / "artifacts" / "best.onnx", tmp / "best.onnx"))
    shutil.copyfile(ROOT / "artifacts" / "best.onnx.dvc", tmp / "best.onnx.dvc")
    flip_middle_byte(path)
    return path


onnx_case("not-found", lambda w, t: t / "absent.onnx", "not found")
onnx_case("random-bytes", lambda w, t: write(t / "noise.onnx", os.urandom(4096)), "not an ONNX model")
onnx_case("truncated", lambda w, t: truncate(Path(shutil.copyfile(ROOT / "artifacts" / "best.onnx", t / "cut.onnx")))
          and t / "cut.onnx", "not an ONNX model")
onnx_case("a-pt-file", lambda w, t: Path(shutil.copyfile(w.pt, t / "really-pt.onnx")), "not an ONNX model")
onnx_case("differs-from-dvc-pin", pinned_onnx, "bytes differ from its DVC pin")


def onnx_graph(tmp: Path, name: str, tail: list, constants: list, stride: int = 8) -> Path:
    """x (N, 3, H, W) -> z: its channels tiled to 10 'classes'; `tail` maps z to the output y; with
    segbench metadata (painting-vision-10, NORM, `stride`)."""
    from onnx import TensorProto, helper, save

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10, "H", "W"])
    head = [helper.make_node("Concat", ["x", "x", "x", "x"], ["t"], axis=1),
            helper.make_node("Slice", ["t", "start", "end", "axis"], ["z"])]
    sliced = [helper.make_tensor(n, TensorProto.INT64, [1], [v]) for n, v in (("start", 0), ("end", 10), ("axis", 1))]
    constants = [helper.make_tensor(n, TensorProto.FLOAT if isinstance(v[0], float) else TensorProto.INT64, [len(v)], v)
                 for n, v in constants]
    model = helper.make_model(helper.make_graph(head + [helper.make_node(*node) for node in tail], "g", [x], [y],
                                                sliced + constants),
                              opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    space = load_label_space("painting-vision-10")
    entry = model.metadata_props.add()
    entry.key, entry.value = "segbench", json.dumps({
        "format": "segbench-onnx", "format_version": 1, "label_space": {"name": space.name, "classes": space.names},
        "normalization": NORM, "stride": stride})
    save(model, str(tmp / name))
    return tmp / name


onnx_case("stride-2-24", lambda w, t: onnx_graph(t, "wide.onnx", [("Identity", ["z"], ["y"])], [], stride=2**24),
          "field 'stride' 16777216 is above the limit of 1024")
onnx_case("multiplies-by-nan", lambda w, t: onnx_graph(t, "nan.onnx", [("Mul", ["z", "nan"], ["y"])],
                                                       [("nan", [float("nan")])]),
          "frame d1: the model's logits hold NaN or infinite values")
onnx_case("fails-beyond-the-probe", lambda w, t: onnx_graph(t, "fixed.onnx", [("Reshape", ["z", "shape"], ["y"])],
                                                            [("shape", [1, 10, 16, 16])]),
          "the model failed on frame(s) d1, e1 (input 512x640): [ONNXRuntimeError] : 1 : FAIL : Non-zero status code "
          "returned while running Reshape node.")


# --- predictions folders -----------------------------------------------------------------------


def preds_case(name: str, damage: Callable[[World, Path], str], *needles: str) -> None:
    def make(w: World, tmp: Path) -> Run:
        folder = copy_preds(w, tmp)
        named = damage(w, folder)
        return predictions_run(tmp, w, folder, named, *needles)

    case(f"predictions-{name}")(make)


def replace_with_link(w: World, folder: Path, target: str) -> str:
    for frame_id in w.test_frames:
        (folder / f"{frame_id}.png").unlink()
        (folder / f"{frame_id}.png").symlink_to(target.format(frame_id=frame_id, data=w.data))
    return f"{w.test_frames[0]}.png: refused: a symbolic link"


preds_case("symlinks-to-ground-truth", lambda w, f: replace_with_link(w, f, "{data}/labels/{frame_id}.png"))
preds_case("symlink-to-etc-passwd", lambda w, f: replace_with_link(w, f, "/etc/passwd"))
preds_case("broken-symlinks", lambda w, f: replace_with_link(w, f, "/nonexistent/{frame_id}.png"))


def hard_link(w: World, folder: Path) -> str:
    (folder / "d1.png").unlink()
    os.link(w.data / "labels" / "d1.png", folder / "d1.png")
    return "d1.png: refused: a hard link"


preds_case("hard-link-to-ground-truth", hard_link)


def nested(w: World, folder: Path) -> str:
    (folder / "more").mkdir()
    shutil.copyfile(folder / "d1.png", folder / "more" / "d1.png")
    return "more: refused: a nested folder"


preds_case("nested-folder", nested)
preds_case("extra-non-png", lambda w, f: (f / "notes.txt").write_text("hi") and "notes.txt", "extra file")
preds_case("extra-png", lambda w, f: shutil.copyfile(f / "d1.png", f / "zz.png") and "zz.png", "extra file")
preds_case("missing-one", lambda w, f: unlink(f / "e1.png"), "missing prediction for frame e1")


def fifo(w: World, folder: Path) -> str:
    (folder / "e1.png").unlink()
    os.mkfifo(folder / "e1.png")
    return "e1.png: refused: not a regular file"


preds_case("fifo", fifo)


def write_pred(name: str, payload: bytes) -> Callable[[World, Path], str]:
    def damage(w: World, folder: Path) -> str:
        (folder / name).write_bytes(payload)
        return name

    return damage


preds_case("rgb-png", write_pred("e1.png", png_bytes(20, 16, colour=2)), "RGB")
preds_case("16-bit-png", write_pred("e1.png", png_bytes(20, 16, bit_depth=16)), "16-bit")
preds_case("huge-header-bomb", write_pred("e1.png", png_bytes(25600, 20480)), "25600x20480", "largest accepted")
preds_case("other-aspect", write_pred("e1.png", png_bytes(30, 30)), "aspect")
preds_case("jpeg-named-png", write_pred("e1.png", b"\xff\xd8\xff\xe0" + bytes(100)), "not a PNG")
preds_case("truncated-png", lambda w, f: truncate(f / "e1.png"), "e1.png")
preds_case("values-outside-space", write_pred("e1.png", png_of(np.full((16, 20), 42, np.uint8))), "[42]")
preds_case("1x1-mask", write_pred("e1.png", png_of(np.zeros((1, 1), np.uint8))),
           "prediction is 1x1; the smallest accepted for a ground truth of 20x16 is 5x4 (at least 1/4 of each side)")


def wrong_idat_crc(path: Path) -> str:
    """The PNG at `path` with only its IDAT chunk's CRC changed (every pixel byte intact)."""
    data = path.read_bytes()
    start = data.index(b"IDAT") - 4
    crc = start + 8 + struct.unpack(">I", data[start: start + 4])[0]
    path.write_bytes(data[:crc] + bytes(b ^ 0xFF for b in data[crc: crc + 4]) + data[crc + 4:])
    return path.name


preds_case("idat-crc-wrong", lambda w, f: wrong_idat_crc(f / "e1.png"), "damaged PNG: the CRC of its IDAT chunk is wrong")


def copy_of_the_test_split(w: World, tmp: Path) -> Path:
    """The data with the test split alone (as a participant may hold it): its labels folder holds
    exactly the evaluated frames' names."""
    data = copy_data(w, tmp)
    rows = (data / "frames.csv").read_text().splitlines()
    (data / "frames.csv").write_text("\n".join([rows[0], *(r for r in rows[1:] if r.endswith(",test"))]) + "\n")
    for folder in ("images", "labels"):
        for path in (data / folder).iterdir():
            if path.stem not in w.test_frames:
                path.unlink()
    return data


def ground_truth_refusal(source: Path, copies: list[tuple[str, Path, Path]]) -> str:
    lines = [f"    frame {frame_id}: {mask} is {label}" for frame_id, mask, label in copies]
    count = f"{len(copies)} problem" + ("s" if len(copies) != 1 else "")
    return (f"benchmark.py: error: {source}: predictions refused: {count}:\n  masks that are their frame's ground-truth "
            f"label byte for byte (never scored as a prediction) ({len(copies)}):\n" + "\n".join(lines) + "\n")


@case("predictions-the-labels-folder-of-a-test-only-copy")
def _(w: World, tmp: Path) -> Run:
    data = copy_of_the_test_split(w, tmp)
    labels = data / "labels"
    run = predictions_run(tmp, w, labels, ground_truth_refusal(
        labels, [(f, labels / f"{f}.png", labels / f"{f}.png") for f in w.test_frames]))
    return Run(run.entry, [*run.argv, "--data", str(data)], run.code, run.needles)


@case("predictions-a-copy-of-one-label")
def _(w: World, tmp: Path) -> Run:
    folder = copy_preds(w, tmp)
    shutil.copyfile(w.data / "labels" / "d1.png", folder / "d1.png")
    return predictions_run(tmp, w, folder, ground_truth_refusal(
        folder, [("d1", folder / "d1.png", w.data / "labels" / "d1.png")]))


MUST_BE_GREY = ("a prediction must be an 8-bit single-channel PNG (greyscale, or palette read as its indices) holding "
                "class ids, not a colour rendering")


@case("predictions-every-problem-at-once")
def _(w: World, tmp: Path) -> Run:
    """The listing's problems and a mask's own in one refusal, as check-submission lists them."""
    folder = copy_preds(w, tmp)
    (folder / "e1.png").unlink()
    (folder / "notes.txt").write_text("hi")
    (folder / "d1.png").write_bytes(png_of(np.zeros((16, 20, 3), np.uint8)))
    return predictions_run(tmp, w, folder, (
        f"benchmark.py: error: {folder}: predictions refused: 3 problems:\n"
        f"  missing predictions (1):\n    missing prediction for frame e1: {folder}/e1.png\n"
        f"  extra files (1):\n    extra file not matching any evaluated frame: {folder}/notes.txt\n"
        f"  not 8-bit single-channel PNGs (1):\n    {folder}/d1.png: prediction is a 20x16, 8-bit RGB PNG; "
        f"{MUST_BE_GREY}\n"))


@case("predictions-no-label-space")
def _(w: World, tmp: Path) -> Run:
    return oneshot_run(tmp, w.preds, "--checkpoint-kind", "predictions", needles=("label space",), world=w)


@case("predictions-folder-missing")
def _(w: World, tmp: Path) -> Run:
    return predictions_run(tmp, w, tmp / "nothing", "nothing")


# --- predictions archives ----------------------------------------------------------------------


def archive_case(name: str, make_file: Callable[[World, Path], Path], *needles: str) -> None:
    def make(w: World, tmp: Path) -> Run:
        path = make_file(w, tmp)
        return predictions_run(tmp, w, path, path.name, *needles)

    case(f"archive-{name}")(make)


archive_case("zip-slip", lambda w, t: zip_of(t / "slip.zip", {**pred_members(w), "../evil.png": b"x"}), "'..'")
archive_case("zip-absolute-name", lambda w, t: zip_of(t / "abs.zip", {**pred_members(w), "/etc/x.png": b"x"}),
             "absolute")
archive_case("zip-symlink", lambda w, t: zip_of(t / "link.zip", {**pred_members(w), "d1.png": b"/etc/passwd"},
                                                symlinks=("d1.png",)), "symbolic link")
archive_case("zip-extra-file", lambda w, t: zip_of(t / "extra.zip", {**pred_members(w), "readme.txt": b"x"}),
             "readme.txt")
archive_case("zip-missing-frame", lambda w, t: zip_of(t / "short.zip", {"d1.png": pred_members(w)["d1.png"]}),
             "missing prediction for frame e1")
archive_case("zip-nested-folder", lambda w, t: zip_of(t / "nest.zip", {**pred_members(w), "sub/d1.png": b"x"}),
             "nested folder")
archive_case("zip-bomb", lambda w, t: zip_of(t / "bomb.zip", {**pred_members(w), "zz.png": bytes(50 << 20)}), "ratio")
archive_case("zip-not-an-archive", lambda w, t: write(t / "garbage.zip", os.urandom(1000)), "not a readable")
archive_case("zip-member-crc-wrong", lambda w, t: corrupt_zip_member(
    zip_of(t / "ok.zip", pred_members(w)), t / "crc.zip", lambda n: n == "e1.png"), "damaged")
archive_case("tar-symlink", lambda w, t: tar_of(t / "link.tar", w, tar_entry("x.png", tarfile.SYMTYPE, "/etc/passwd")),
             "symbolic link")
archive_case("tar-hard-link", lambda w, t: tar_of(t / "hard.tar", w, tar_entry("x.png", tarfile.LNKTYPE, "d1.png")),
             "hard link")
archive_case("tar-device", lambda w, t: tar_of(t / "dev.tar", w, tar_entry("x.png", tarfile.CHRTYPE)), "device")
archive_case("tar-dotdot", lambda w, t: tar_of(t / "dots.tar", w, tar_entry("../up.png", tarfile.REGTYPE)), "'..'")


def targz_bomb(w: World, tmp: Path) -> Path:
    def add(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("zz.png")
        info.size = 80 << 20
        archive.addfile(info, io.BytesIO(bytes(info.size)))

    return tar_of(tmp / "bomb.tar.gz", w, add, mode="w:gz")


archive_case("tar-gz-bomb", targz_bomb, "zz.png")


@case("archive-of-the-labels")
def _(w: World, tmp: Path) -> Run:
    path = zip_of(tmp / "labels.zip", {f"{f}.png": (w.data / "labels" / f"{f}.png").read_bytes() for f in w.test_frames})
    return predictions_run(tmp, w, path, ground_truth_refusal(
        path, [(f, f"{path}/{f}.png", w.data / "labels" / f"{f}.png") for f in w.test_frames]))


@case("archive-upload-for-another-dataset")
def _(w: World, tmp: Path) -> Run:
    path = zip_of(tmp / "upload.zip", {**pred_members(w), "dataset_id.txt": b"pv1:" + b"1" * 64})
    return predictions_run(tmp, w, path, "upload.zip: made for dataset pv1:1111")


@case("cli-metrics-of-an-upload-for-another-dataset")
def _(w: World, tmp: Path) -> Run:
    """The direct route refuses what check-submission and the one-shot command refuse."""
    path = zip_of(tmp / "upload.zip", {**pred_members(w), "dataset_id.txt": b"pv1:" + b"1" * 64})
    data_id = json.loads(w.record.read_text())["dataset_id"]
    return Run("cli", ["metrics", "--predictions", str(path), "--label-space", "painting-vision-10", "--data",
                       str(w.data), "--split", "test", "--out", str(tmp / "m.json")], 1,
               (f"segbench: error: {path}: predictions refused: 1 problem:\n  the dataset the upload was made for "
                f"(dataset_id.txt) (1):\n    {path}: made for dataset pv1:{'1' * 64} (dataset_id.txt), but the data is "
                f"{data_id}\n",))


@case("cli-metrics-every-problem-at-once")
def _(w: World, tmp: Path) -> Run:
    """The direct route lists the stated dataset, the listing's and each mask's problems in one refusal."""
    path = zip_of(tmp / "upload.zip", {"d1.png": png_of(np.full((16, 20), 42, np.uint8)),
                                       "e1.png": pred_members(w)["e1.png"], "readme.txt": b"x",
                                       "dataset_id.txt": b"pv1:" + b"1" * 64})
    data_id = json.loads(w.record.read_text())["dataset_id"]
    return Run("cli", ["metrics", "--predictions", str(path), "--label-space", "painting-vision-10", "--data",
                       str(w.data), "--split", "test", "--out", str(tmp / "out" / "m.json")], 1,
               (f"segbench: error: {path}: predictions refused: 3 problems:\n"
                f"  extra files (1):\n    extra file not matching any evaluated frame: {path}/readme.txt\n"
                f"  the dataset the upload was made for (dataset_id.txt) (1):\n    {path}: made for dataset "
                f"pv1:{'1' * 64} (dataset_id.txt), but the data is {data_id}\n"
                f"  masks with values outside the label space (1):\n    {path}/d1.png: frame d1: predicted values "
                f"[42] are outside the model's label space 'painting-vision-10' (0..9)\n",))


# --- the CLI's own inputs ----------------------------------------------------------------------


@case("oneshot-inference-size-zero")
def _(w: World, tmp: Path) -> Run:
    return oneshot_run(tmp, w.pt, "--inference-size", "0", code=2, needles=("--inference-size",), world=w)


@case("oneshot-inference-size-200000")
def _(w: World, tmp: Path) -> Run:
    return oneshot_run(tmp, w.pt, "--inference-size", "200000", world=w, needles=(
        "inference size 200000 is above the limit of 8192 (the long side a frame is resized to for the model)",))


@case("cli-import-checkpoint-widths-40000")
def _(w: World, tmp: Path) -> Run:
    weights = tmp / "weights.pt"
    torch.save(checkpoint_doc(w)["state_dict"], weights)
    return Run("cli", ["import-checkpoint", "--weights", str(weights), "--architecture", "tiny-segnet",
                       "--arguments", '{"widths": [40000, 40000, 40000]}', "--label-space", "painting-vision-10",
                       "--mean", "0.5", "0.5", "0.5", "--std", "0.25", "0.25", "0.25", "--out", str(tmp / "out" / "x.pt")],
               1, (f"{weights}: architecture 'tiny-segnet' {{'widths': [40000, 40000, 40000]}} with 10 classes has "
                   "57602120014 parameters and buffers, more than the limit of 2147483648",))


@case("cli-infer-batch-size-zero")
def _(w: World, tmp: Path) -> Run:
    return Run("cli", ["infer", "--data", str(tmp / "data"), "--split", "test", "--out", str(tmp / "out"),
                       "--batch-size", "0"], 2, ("--batch-size", "must be a positive integer, got 0"))


@case("cli-record-identity-missing-keys")
def _(w: World, tmp: Path) -> Run:
    for name, doc in (("identity.json", {"name": "best"}), ("metrics.json", {}), ("floor.json", {}),
                      ("dataset_id.json", {"dataset_id": "pv1:x"})):
        (tmp / name).write_text(json.dumps(doc))
    return Run("cli", ["record", "--metrics", str(tmp / "metrics.json"), "--floor-metrics", str(tmp / "floor.json"),
                       "--identity", str(tmp / "identity.json"), "--dataset-id", str(tmp / "dataset_id.json"),
                       "--uncertainty", str(w.uncertainty), "--out", str(tmp / "out" / "submission.json")], 1,
               ("identity.json", "checkpoint_sha256"))


IDD_IDENTITY = {"name": "idd-best", "kind": "checkpoint", "label_space": "idd-level3",
                "classes": [f"class-{i}" for i in range(26)], "checkpoint_sha256": "1" * 64,
                "path": "artifacts/idd-best.pt", "spec": {"name": "idd-best", "kind": "checkpoint",
                                                          "path": "artifacts/idd-best.pt", "label_space": "idd-level3"}}


def record_run(w: World, tmp: Path, *needles: str, identity: dict | None = None, dataset_id: str | None = None,
               metrics: Path | None = None, uncertainty: Path | None = None) -> Run:
    """`segbench record` of the catalogue's valid run, with one of its five inputs replaced."""
    record = json.loads(w.record.read_text())
    identity = identity or {"name": "tiny", "kind": "checkpoint", "label_space": "painting-vision-10",
                            "classes": list(load_label_space("painting-vision-10").names),
                            "checkpoint_sha256": record["checkpoint_sha256"], "path": str(w.pt),
                            "spec": {"name": "tiny", "kind": "checkpoint", "path": str(w.pt),
                                     "label_space": "painting-vision-10"}}
    (tmp / "identity.json").write_text(json.dumps(identity))
    (tmp / "dataset_id.json").write_text(json.dumps({"dataset_id": dataset_id or record["dataset_id"], "frames": 6}))
    return Run("cli", ["record", "--metrics", str(metrics or w.metrics), "--floor-metrics", str(w.floor_metrics),
                       "--identity", str(tmp / "identity.json"), "--dataset-id", str(tmp / "dataset_id.json"),
                       "--uncertainty", str(uncertainty or w.uncertainty), "--out", str(tmp / "out" / "submission.json")],
               1, needles)


@case("cli-record-of-another-models-identity")
def _(w: World, tmp: Path) -> Run:
    return record_run(w, tmp, f"segbench: error: {w.metrics} and {tmp / 'identity.json'} disagree on the label space: "
                              "'painting-vision-10' and 'idd-level3'; refusing to write a submission record from them\n",
                      identity=IDD_IDENTITY)


@case("cli-record-identity-spec-incomplete")
def _(w: World, tmp: Path) -> Run:
    spec = {k: v for k, v in IDD_IDENTITY["spec"].items() if k != "label_space"}
    return record_run(w, tmp, f"segbench: error: {tmp / 'identity.json'}: identity record's field 'spec' must be the "
                              "model's config entry with its name, kind, path and label_space (it lacks "
                              "['label_space'])\n", identity={**IDD_IDENTITY, "spec": spec})


@case("cli-record-of-another-checkpoint")
def _(w: World, tmp: Path) -> Run:
    """The metrics of the catalogue's checkpoint with the identity of other bytes under its name."""
    record = json.loads(w.record.read_text())
    identity = {"name": "tiny", "kind": "checkpoint", "label_space": "painting-vision-10",
                "classes": list(load_label_space("painting-vision-10").names), "checkpoint_sha256": "2" * 64,
                "path": str(w.pt), "spec": {"name": "tiny", "kind": "checkpoint", "path": str(w.pt),
                                            "label_space": "painting-vision-10"}}
    return record_run(w, tmp, f"segbench: error: {w.metrics} and {tmp / 'identity.json'} disagree on the "
                              f"checkpoint_sha256: '{record['checkpoint_sha256']}' and '{'2' * 64}'; refusing to write "
                              "a submission record from them\n", identity=identity)


@case("cli-record-metrics-of-unknown-data")
def _(w: World, tmp: Path) -> Run:
    """Metrics from counts scored without a frame index: they do not say which data they are of."""
    metrics = tmp / "metrics.json"
    metrics.write_text(json.dumps({**json.loads(w.metrics.read_text()), "dataset_id": None}))
    record = json.loads(w.record.read_text())
    return record_run(w, tmp, f"segbench: error: {metrics} does not state the dataset_id ({tmp / 'dataset_id.json'}: "
                              f"'{record['dataset_id']}'; counts scored with --frames INDEX and --identity RECORD do); "
                              "refusing to write a submission record\n", metrics=metrics)


@case("cli-record-of-another-datasets-metrics")
def _(w: World, tmp: Path) -> Run:
    record = json.loads(w.record.read_text())
    return record_run(w, tmp, f"segbench: error: {w.metrics} and {tmp / 'dataset_id.json'} disagree on the dataset_id: "
                              f"'{record['dataset_id']}' and 'pv1:{'3' * 64}'; refusing to write a submission record "
                              "from them\n", dataset_id="pv1:" + "3" * 64)


@case("cli-record-of-another-benchmarks-dataset")
def _(w: World, tmp: Path) -> Run:
    return record_run(w, tmp, f"segbench: error: {tmp / 'dataset_id.json'} and --benchmark disagree on the dataset_id "
                              "prefix: 'idd' and 'pv1'; refusing to write a submission record from them\n",
                      dataset_id="idd:" + "0" * 64)


@case("cli-record-floor-metrics-as-the-models")
def _(w: World, tmp: Path) -> Run:
    return record_run(w, tmp, f"segbench: error: {w.floor_metrics} and {tmp / 'identity.json'} disagree on the model: "
                              "'floor (floor)' and 'tiny (checkpoint)'; refusing to write a submission record from "
                              "them\n", metrics=w.floor_metrics)


@case("cli-record-uncertainty-of-another-model")
def _(w: World, tmp: Path) -> Run:
    floor = w.uncertainty.parent.parent / "floor" / "uncertainty.json"
    return record_run(w, tmp, f"segbench: error: {floor} and {w.metrics} disagree on the model: 'floor' and 'tiny'; "
                              "refusing to write a submission record from them\n", uncertainty=floor)


@case("cli-record-uncertainty-without-the-floor")
def _(w: World, tmp: Path) -> Run:
    """A bootstrap document made without --floor-counts: no paired comparison decides the verdict."""
    uncertainty = tmp / "uncertainty.json"
    uncertainty.write_text(json.dumps({**json.loads(w.uncertainty.read_text()), "comparisons": {"floor": None}}))
    return record_run(w, tmp, "segbench: error: the uncertainty document of 'tiny' has no paired comparison of "
                              "shared_metrics.mIoU with the floor (made with --floor-counts); no floor verdict "
                              "without it\n", uncertainty=uncertainty)


@case("cli-record-out-onto-its-metrics")
def _(w: World, tmp: Path) -> Run:
    metrics = Path(shutil.copyfile(w.metrics, tmp / "metrics.json"))
    run = record_run(w, tmp, f"segbench: error: --out {metrics}: is the input --metrics {metrics}; refusing to write "
                             "onto an input\n", metrics=metrics)
    return Run(run.entry, [*run.argv, "--out", str(metrics)], run.code, run.needles, (metrics,))


# --- outputs onto or inside an input -----------------------------------------------------------


@case("outputs-record-onto-a-label")
def _(w: World, tmp: Path) -> Run:
    data = copy_data(w, tmp)
    label = data / "labels" / "d1.png"
    return oneshot_run(tmp, w.pt, "--emit-submission", str(label), data=data, world=w, unchanged=(label,), needles=(
        f"benchmark.py: error: --emit-submission {label}: inside the input --data {data}; refusing to write into an "
        "input\n",))


@case("outputs-record-onto-the-checkpoint")
def _(w: World, tmp: Path) -> Run:
    pt = Path(shutil.copyfile(w.pt, tmp / "tiny.pt"))
    return oneshot_run(tmp, pt, "--emit-submission", str(pt), world=w, unchanged=(pt,), needles=(
        f"benchmark.py: error: --emit-submission {pt}: is the input --checkpoint {pt}; refusing to write onto an "
        "input\n",))


@case("outputs-record-through-a-link-and-dotdot")
def _(w: World, tmp: Path) -> Run:
    data = copy_data(w, tmp)
    (tmp / "alias").symlink_to(data / "labels")
    target = tmp / "alias" / ".." / "alias" / "e1.png"
    return oneshot_run(tmp, w.pt, "--emit-submission", str(target), data=data, world=w,
                       unchanged=(data / "labels" / "e1.png",), needles=(
        f"benchmark.py: error: --emit-submission {target}: inside the input --data {data}; refusing to write into an "
        "input\n",))


@case("outputs-work-dir-in-the-data")
def _(w: World, tmp: Path) -> Run:
    data = copy_data(w, tmp)
    return oneshot_run(tmp, w.pt, "--work-dir", str(data / "labels"), data=data, world=w, needles=(
        f"benchmark.py: error: --work-dir {data / 'labels'}: inside the input --data {data}; refusing to write into an "
        "input\n",))


@case("outputs-work-dir-holding-the-predictions")
def _(w: World, tmp: Path) -> Run:
    """Predictions kept where the work folder puts the results' tables (`<work>/<benchmark>/<split>/tables`)."""
    folder = Path(shutil.copytree(w.preds, tmp / "work" / "painting-vision" / "test" / "tables"))
    run = predictions_run(tmp, w, folder, f"benchmark.py: error: --work-dir {folder}: is the input --checkpoint "
                                          f"{folder}; refusing to write onto an input\n")
    return Run(run.entry, run.argv, run.code, run.needles, (folder / "d1.png",))


@case("cli-metrics-out-onto-a-prediction")
def _(w: World, tmp: Path) -> Run:
    folder = copy_preds(w, tmp)
    return Run("cli", ["metrics", "--predictions", str(folder), "--label-space", "painting-vision-10", "--data",
                       str(w.data), "--split", "test", "--out", str(folder / "d1.png")], 1,
               (f"segbench: error: --out {folder / 'd1.png'}: inside the input --predictions {folder}; refusing to "
                "write into an input\n",), (folder / "d1.png",))


@case("cli-identify-out-onto-the-model")
def _(w: World, tmp: Path) -> Run:
    pt = Path(shutil.copyfile(w.pt, tmp / "tiny.pt"))
    spec = json.dumps({"name": "tiny", "kind": "checkpoint", "path": str(pt), "label_space": "painting-vision-10"})
    return Run("cli", ["identify", "--model-spec", spec, "--out", str(pt)], 1,
               (f"segbench: error: --out {pt}: is the input model 'tiny' {pt}; refusing to write onto an input\n",),
               (pt,))


@case("cli-infer-out-into-the-data")
def _(w: World, tmp: Path) -> Run:
    data = copy_data(w, tmp)
    return Run("cli", ["infer", "--data", str(data), "--split", "test", "--model", "best", "--out",
                       str(data / "labels")], 1,
               (f"segbench: error: --out {data / 'labels'}: inside the input --data {data}; refusing to write into an "
                "input\n",), (data / "labels" / "d1.png",))


@case("cli-results-record-missing-shared-metrics")
def _(w: World, tmp: Path) -> Run:
    record = json.loads(w.record.read_text())
    del record["shared_metrics"]
    (tmp / "record.json").write_text(json.dumps(record))
    return Run("cli", ["results", "--submissions", str(tmp / "record.json"), "--floors", str(w.floor_metrics),
                       "--out", str(tmp / "out" / "board")], 1, ("record.json", "shared_metrics"))


@case("cli-score-symlinked-predictions")
def _(w: World, tmp: Path) -> Run:
    folder = copy_preds(w, tmp)
    replace_with_link(w, folder, "{data}/labels/{frame_id}.png")
    config = tmp / "config.yaml"
    config.write_text(GOOD_CONFIG.replace("models:\n", f"models:\n  theirs:\n    kind: predictions\n"
                                          f"    path: {folder}\n    label_space: painting-vision-10\n", 1))
    return Run("cli", ["score", "--data", str(w.data), "--split", "test", "--model", "theirs", "--config", str(config),
                       "--out", str(tmp / "out" / "counts.parquet")], 1, ("d1.png: refused: a symbolic link",))


@case("cli-score-every-problem-at-once")
def _(w: World, tmp: Path) -> Run:
    """The workflow's scoring step of a predictions folder: the listing's and a mask's problems in one refusal."""
    folder = copy_preds(w, tmp)
    (folder / "zz.png").write_bytes((folder / "d1.png").read_bytes())
    (folder / "e1.png").write_bytes(png_of(np.full((16, 20), 42, np.uint8)))
    config = tmp / "config.yaml"
    config.write_text(GOOD_CONFIG.replace("models:\n", f"models:\n  theirs:\n    kind: predictions\n"
                                          f"    path: {folder}\n    label_space: painting-vision-10\n", 1))
    return Run("cli", ["score", "--data", str(w.data), "--split", "test", "--model", "theirs", "--config", str(config),
                       "--out", str(tmp / "out" / "counts.parquet")], 1,
               (f"segbench: error: {folder}: predictions refused: 2 problems:\n"
                f"  extra files (1):\n    extra file not matching any evaluated frame: {folder}/zz.png\n"
                f"  masks with values outside the label space (1):\n    {folder}/e1.png: frame e1: predicted values "
                f"[42] are outside the model's label space 'painting-vision-10' (0..9)\n",))


@case("cli-score-of-an-upload-for-another-dataset")
def _(w: World, tmp: Path) -> Run:
    """The workflow's scoring step refuses what the one-shot and `metrics --predictions` refuse: the
    frame index names the data's dataset_id, the upload another."""
    path = zip_of(tmp / "upload.zip", {**pred_members(w), "dataset_id.txt": b"pv1:" + b"1" * 64})
    index = tmp / "frames.json"
    assert cli.main(["manifest", "--data", str(w.data), "--index-out", str(index)]) == 0
    config = tmp / "config.yaml"
    config.write_text(GOOD_CONFIG.replace("models:\n", f"models:\n  theirs:\n    kind: predictions\n"
                                          f"    path: {path}\n    label_space: painting-vision-10\n", 1))
    data_id = json.loads(w.record.read_text())["dataset_id"]
    return Run("cli", ["score", "--data", str(w.data), "--split", "test", "--frames", str(index), "--model", "theirs",
                       "--config", str(config), "--out", str(tmp / "out" / "counts.parquet")], 1,
               (f"segbench: error: {path}: predictions refused: 1 problem:\n  the dataset the upload was made for "
                f"(dataset_id.txt) (1):\n    {path}: made for dataset pv1:{'1' * 64} (dataset_id.txt), but the data is "
                f"{data_id}\n",))


# --- uploads: segbench check-submission --------------------------------------------------------


def upload_case(name: str, members: Callable[[World], dict[str, bytes]], *needles: str, data: bool = False) -> None:
    def make(w: World, tmp: Path) -> Run:
        path = zip_of(tmp / "upload.zip", members(w))
        extra = ["--data", str(w.data)] if data else []
        return Run("cli", ["check-submission", str(path), "--dataset-manifest", str(w.manifest), *extra], 1,
                   ("upload.zip", *needles))

    case(f"upload-{name}")(make)


def stated_id(w: World) -> bytes:
    return (json.loads(w.manifest.read_text())["dataset_id"] + "\n").encode()


upload_case("no-dataset-id", pred_members, "dataset_id.txt")
upload_case("other-dataset-id", lambda w: {**pred_members(w), "dataset_id.txt": b"pv1:" + b"0" * 64}, "dataset_id.txt",
            "pv1:0000")
upload_case("missing-frame", lambda w: {"d1.png": pred_members(w)["d1.png"], "dataset_id.txt": stated_id(w)},
            "missing prediction for frame e1")
upload_case("values-outside-space", lambda w: {**pred_members(w), "e1.png": png_of(np.full((16, 20), 42, np.uint8)),
                                               "dataset_id.txt": stated_id(w)}, "e1", "[42]")
upload_case("size-differs-from-image", lambda w: {**pred_members(w), "e1.png": png_of(np.zeros((8, 20), np.uint8)),
                                                  "dataset_id.txt": stated_id(w)}, "e1.png", "aspect", data=True)
upload_case("every-problem-at-once",
            lambda w: {"d1.png": png_of(np.zeros((16, 20, 3), np.uint8)), "notes.txt": b"x", "../../x.png": b"x",
                       "dataset_id.txt": b"pv1:" + b"0" * 64},
            "upload refused: 5 problems:\n", "  refused entries (1):\n", "../../x.png: refused: a name with '..'",
            "  missing predictions (1):\n", "missing prediction for frame e1", "  extra files (1):\n", "notes.txt",
            "  the dataset the upload was made for (dataset_id.txt) (1):\n", "dataset_id.txt says pv1:0000",
            "  not 8-bit single-channel PNGs (1):\n", "d1.png: prediction is a 20x16, 8-bit RGB PNG")
@case("upload-a-listing-problem-and-a-bad-mask")
def _(w: World, tmp: Path) -> Run:
    path = zip_of(tmp / "upload.zip", {"d1.png": png_of(np.full((16, 20), 42, np.uint8)), "e1.png": b"not a png",
                                       "notes.txt": b"x", "dataset_id.txt": stated_id(w)})
    return Run("cli", ["check-submission", str(path), "--dataset-manifest", str(w.manifest)], 1, (
        f"segbench: error: {path}: upload refused: 3 problems:\n"
        f"  extra files (1):\n    extra file not matching any evaluated frame: {path}/notes.txt\n"
        f"  masks with values outside the label space (1):\n    {path}/d1.png: frame d1: values [42] are outside "
        f"'painting-vision-10'\n"
        f"  not PNG files (1):\n    {path}/e1.png: not a PNG file (no PNG signature and IHDR header)\n",))


upload_case("zip-slip", lambda w: {**pred_members(w), "../../x.png": b"x", "dataset_id.txt": stated_id(w)}, "'..'")


@case("upload-not-a-zip")
def _(w: World, tmp: Path) -> Run:
    path = tar_of(tmp / "upload.tar", w, lambda archive: None)
    return Run("cli", ["check-submission", str(path), "--dataset-manifest", str(w.manifest)], 1,
               ("upload.tar", "zip"))


@case("export-predictions-with-symlinks")
def _(w: World, tmp: Path) -> Run:
    folder = copy_preds(w, tmp)
    replace_with_link(w, folder, "{data}/labels/{frame_id}.png")
    return Run("cli", ["export", "--dataset-manifest", str(w.manifest), "--predictions", str(folder),
                       "--out", str(tmp / "out" / "upload.zip")], 1, ("refused: a symbolic link",))


def export_model_run(w: World, tmp: Path, data: Path, *model: str, needles: tuple[str, ...]) -> Run:
    return Run("cli", ["export", "--dataset-manifest", str(w.manifest), "--split", "test", "--data", str(data), *model,
                       "--device", "cpu", "--out", str(tmp / "out" / "upload.zip")], 1, needles)


@case("export-model-on-data-that-differ-from-the-manifest")
def _(w: World, tmp: Path) -> Run:
    data = copy_data(w, tmp)
    write_png(data / "images" / "e1.png", np.zeros((16, 20, 3), np.uint8))
    return export_model_run(w, tmp, data, "--checkpoint", str(w.pt), needles=("images/e1.png",))


@case("export-model-that-is-a-predictions-folder")
def _(w: World, tmp: Path) -> Run:
    return export_model_run(w, tmp, w.data, "--checkpoint", str(w.preds), needles=("preds", "no inference step"))


@case("export-predictions-and-a-model")
def _(w: World, tmp: Path) -> Run:
    run = export_model_run(w, tmp, w.data, "--checkpoint", str(w.pt), needles=("--predictions", "not both"))
    return Run(run.entry, [*run.argv, "--predictions", str(w.preds)], run.code, run.needles)


# --- forgeries: void predictions are accepted, and earn nothing --------------------------------
# A void value (255) in a prediction is not refused (an upload may abstain on a pixel) but is a miss
# of the pixel's ground-truth class; dropping it, as ground-truth void is, let a blank upload score
# 1.0. Each case's command succeeds, says how many pixels were void, and scores what they earned.


@dataclass(frozen=True)
class Forgery:
    run: Run  # code 0; needles in stdout + stderr
    check: Callable[[Path], None]  # on the case's tmp folder, after the run


FORGERIES: dict[str, Callable[[World, Path], Forgery]] = {}


def forgery(name: str):
    def register(make: Callable[[World, Path], Forgery]) -> Callable[[World, Path], Forgery]:
        assert name not in FORGERIES
        FORGERIES[name] = make
        return make

    return register


def voided_preds(w: World, tmp: Path, keep: Callable[[np.ndarray], np.ndarray]) -> Path:
    """The labels as predictions, 255 wherever `keep(label)` is False."""
    folder = tmp / "forged"
    folder.mkdir()
    for frame_id in w.test_frames:
        label = np.asarray(Image.open(w.preds / f"{frame_id}.png"))
        write_png(folder / f"{frame_id}.png", np.where(keep(label), label, 255).astype(np.uint8))
    return folder


def one_pixel(label: np.ndarray) -> np.ndarray:
    """The first labelled pixel of each frame."""
    first = np.zeros(label.size, bool)
    first[np.flatnonzero(label.ravel() != 255)[0]] = True
    return first.reshape(label.shape)


def blank_record_check(pixels_kept: int) -> Callable[[Path], None]:
    def check(tmp: Path) -> None:
        record = json.loads((tmp / "out" / "submission.json").read_text())
        floor = record["floor"]
        assert record["pixels_predicted_void"] == record["pixels_evaluated"] - pixels_kept > 0
        assert record["shared_metrics"]["mIoU"] <= floor["value"] and floor["beaten"] is False
        if pixels_kept == 0:  # every class present has IoU 0
            assert record["shared_metrics"]["iou"] == {"other": 0.0, "wall": 0.0, "window": 0.0}
            assert record["paint_state_metrics"]["mIoU_full_10class"] == 0.0

    return check


@forgery("oneshot-predictions-all-void")
def _(w: World, tmp: Path) -> Forgery:
    folder = voided_preds(w, tmp, lambda label: np.zeros(label.shape, bool))
    run = predictions_run(tmp, w, folder, "pixels predicted as void", "counted as misses", code=0)
    return Forgery(run, blank_record_check(0))


@forgery("oneshot-predictions-void-but-one-right-pixel-a-frame")
def _(w: World, tmp: Path) -> Forgery:
    folder = voided_preds(w, tmp, one_pixel)
    run = predictions_run(tmp, w, folder, "pixels predicted as void", code=0)
    return Forgery(run, blank_record_check(len(w.test_frames)))


def void_warning(frame_id: str, pixels: int) -> str:
    return f"frame {frame_id}: {pixels:,} pixels predicted as void (255) in 'painting-vision-10', counted as misses"


@forgery("check-submission-of-void-masks")
def _(w: World, tmp: Path) -> Forgery:
    folder = voided_preds(w, tmp, one_pixel)
    members = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    path = zip_of(tmp / "upload.zip", {**members, "dataset_id.txt": stated_id(w)})
    size = np.asarray(Image.open(folder / f"{w.test_frames[0]}.png")).size
    needles = tuple(void_warning(f, size - 1) for f in w.test_frames)
    return Forgery(Run("cli", ["check-submission", str(path), "--dataset-manifest", str(w.manifest)], 0,
                       ("accepted", *needles)), lambda tmp: None)


@forgery("export-of-void-masks")
def _(w: World, tmp: Path) -> Forgery:
    folder = voided_preds(w, tmp, lambda label: label != 0)  # abstains on the class 'other'
    counts = {f: int((np.asarray(Image.open(w.preds / f"{f}.png")) == 0).sum()) for f in w.test_frames}

    def check(tmp: Path) -> None:
        with zipfile.ZipFile(tmp / "out" / "upload.zip") as upload:
            assert sorted(upload.namelist()) == sorted([f"{f}.png" for f in w.test_frames] + ["dataset_id.txt"])

    return Forgery(Run("cli", ["export", "--dataset-manifest", str(w.manifest), "--predictions", str(folder),
                               "--out", str(tmp / "out" / "upload.zip")], 0,
                       tuple(void_warning(f, n) for f, n in counts.items())), check)


# --- IDD and EasyPortrait files: the embedded copies, damaged ---------------------------------

IDD_POLYGONS = Path("gtFine/val/104/104000_gtFine_polygons.json")


def idd_labels_case(name: str, change: Callable[[dict], None], needle: str) -> None:
    """`segbench idd-labels` on a copy of the embedded IDD data with one polygon file changed."""

    def make(w: World, tmp: Path) -> Run:
        data = Path(shutil.copytree(ROOT / "data-idd", tmp / "data-idd"))
        doc = json.loads((data / IDD_POLYGONS).read_text())
        change(doc)
        (data / IDD_POLYGONS).write_text(json.dumps(doc))
        return Run("cli", ["idd-labels", "--data", str(data)], 1, (f"{data / IDD_POLYGONS}: {needle}",))

    case(f"idd-polygons-{name}")(make)


idd_labels_case("img-width-200000", lambda d: d.update(imgWidth=200000),
                "field 'imgWidth' must be from 1 to 16384, got 200000")
idd_labels_case("nan-coordinate", lambda d: d["objects"][1]["polygon"].__setitem__(2, [float("nan"), 3]),
                "objects/1/polygon/2: a polygon point must be [x, y] finite numbers, got [nan, 3]")
idd_labels_case("infinite-coordinate", lambda d: d["objects"][1]["polygon"].__setitem__(0, [0, float("-inf")]),
                "objects/1/polygon/0: a polygon point must be [x, y] finite numbers, got [0, -inf]")


@case("export-idd-png-bomb")
def _(w: World, tmp: Path) -> Run:
    """A 28800x38400 mask header (1.1 GB decoded) among IDD masks: refused at the header, nothing written."""
    frames = [f for f in json.loads((ROOT / "data-idd_manifest.json").read_text())["frames"] if f["split"] == "val"]
    for frame in frames:
        mask = tmp / "preds" / f"{frame['frame_id']}_gtFine_labellevel3Ids.png"
        mask.parent.mkdir(parents=True, exist_ok=True)
        mask.write_bytes(png_of(np.zeros((720, 1280), np.uint8)))
    mask.write_bytes(png_bytes(28800, 38400))
    return Run("cli", ["export", "--benchmark", "idd20k-icvgip2020", "--dataset-manifest",
                       str(ROOT / "data-idd_manifest.json"), "--split", "val", "--predictions", str(tmp / "preds"),
                       "--out", str(tmp / "out" / "upload.zip")], 1,
               (f"{mask.name}: prediction is 28800x38400; the largest accepted for the evaluation size of 1280x720 is "
                "5120x2880 (at most 4x each side)",))


def patched_meta_zip(path: Path, flag_bits: int = 0, file_size: int | None = None) -> None:
    """The one-member meta.zip at `path` with its member's flag bits or stated size changed in both
    its local and its central header (zipfile reads the central one)."""
    data = bytearray(path.read_bytes())
    for signature, flags_at, size_at in ((b"PK\x03\x04", 6, 22), (b"PK\x01\x02", 8, 24)):
        start = data.index(signature)
        flags = struct.unpack("<H", data[start + flags_at: start + flags_at + 2])[0]
        data[start + flags_at: start + flags_at + 2] = struct.pack("<H", flags | flag_bits)
        if file_size is not None:
            data[start + size_at: start + size_at + 4] = struct.pack("<I", file_size)
    path.write_bytes(bytes(data))


def easyportrait_meta_case(name: str, flag_bits: int, file_size: int | None, needle: str) -> None:
    def make(w: World, tmp: Path) -> Run:
        data = Path(shutil.copytree(ROOT / "data-easyportrait", tmp / "data-easyportrait"))
        meta = data / "annotations" / "meta.zip"
        patched_meta_zip(meta, flag_bits, file_size)
        with zipfile.ZipFile(meta) as archive:
            member = archive.namelist()[0]
        return oneshot_run(tmp, ROOT / "artifacts" / "easyportrait-best.pt", "--benchmark", "easyportrait", data=data,
                           world=w, needles=(f"{meta} (member {member}): {needle}",))

    case(f"dataset-easyportrait-meta-{name}")(make)


easyportrait_meta_case("3-gib-csv", 0, 3 << 30, f"{3 << 30} bytes uncompressed, more than the limit of {64 << 20}")
easyportrait_meta_case("encrypted-member", 0x1, None, "refused: an encrypted member (the meta file ships unencrypted)")


# --- the runner --------------------------------------------------------------------------------


def test_catalogue_is_large_enough():
    assert len(CASES) >= 60


def test_the_valid_inputs_pass(world):
    """The control: the catalogue's inputs before damage are accepted (the world fixture ran them)."""
    record = json.loads(world.record.read_text())
    assert record["frames"] == 2 and record["checkpoint_sha256"] == sha256_file(world.pt)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_refused_cleanly(name, world, tmp_path, capsys):
    run = CASES[name](world, tmp_path)
    before = {path: path.read_bytes() for path in run.unchanged}
    main = oneshot.main if run.entry == "oneshot" else cli.main
    try:
        code = main(run.argv)
    except SystemExit as exit_:  # argparse refuses bad arguments with exit status 2
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == run.code, err
    assert "Traceback" not in out + err
    for needle in run.needles:
        assert needle in err, f"{needle!r} not in {err!r}"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*")), "output left behind"
    assert not [p for p in tmp_path.rglob("*.partial")], "partial file left behind"
    assert {path: path.read_bytes() for path in run.unchanged} == before, "an input was changed"


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_void_predictions_are_accepted_and_earn_nothing(name, world, tmp_path, capsys):
    forged = FORGERIES[name](world, tmp_path)
    main = oneshot.main if forged.run.entry == "oneshot" else cli.main
    code = main(forged.run.argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Traceback" not in out + err
    for needle in forged.run.needles:
        assert needle in out + err, f"{needle!r} not in {out + err!r}"
    forged.check(tmp_path)


@pytest.mark.parametrize("form", ["folder", "zip", "tar.gz"])
def test_valid_predictions_pass_as_folder_or_archive(form, world, tmp_path, capsys):
    """The predictions control: the same masks as a folder, a zip and a tar.gz score the same,
    and an archive's checkpoint_sha256 is the SHA-256 of its bytes."""
    if form == "folder":
        source = world.preds
    elif form == "zip":
        source = zip_of(tmp_path / "submission.zip", pred_members(world))
    else:
        source = tar_of(tmp_path / "submission.tar.gz", world, lambda archive: None, mode="w:gz")
    run = predictions_run(tmp_path, world, source, code=0)
    assert oneshot.main(run.argv) == 0, capsys.readouterr().err
    record = json.loads((tmp_path / "out" / "submission.json").read_text())
    assert record["shared_metrics"]["mIoU"] == 1.0  # the masks hold the labels' pixels
    if form != "folder":
        assert record["checkpoint_sha256"] == sha256_file(source)


def test_valid_predictions_are_decoded_once(world, tmp_path, monkeypatch, capsys):
    """The intake decodes a mask only where the listing is refused already: a valid upload's masks
    are decoded once each, by the scoring, on the direct route and the one-shot's."""
    import segbench.records.intake as intake

    decoded: list[str] = []
    decode = intake.decode_mask
    monkeypatch.setattr(intake, "decode_mask", lambda data, where, *a, **k: decoded.append(where) or decode(
        data, where, *a, **k))
    upload = zip_of(tmp_path / "upload.zip", pred_members(world))
    assert cli.main(["metrics", "--predictions", str(upload), "--label-space", "painting-vision-10", "--data",
                     str(world.data), "--split", "test", "--out", str(tmp_path / "m.json")]) == 0, capsys.readouterr().err
    assert sorted(decoded) == [f"{upload}/{f}.png" for f in world.test_frames]
    decoded.clear()
    assert oneshot.main(predictions_run(tmp_path, world, upload, code=0).argv) == 0, capsys.readouterr().err
    assert sorted(decoded) == [f"{upload}/{f}.png" for f in world.test_frames]


def test_read_only_folder_for_the_records(world, tmp_path, monkeypatch, capsys):
    """--emit-submission into a read-only folder (EROFS on writing and on cleaning up): one error
    naming the record, no record written."""
    import errno

    real_write, real_unlink = Path.write_text, Path.unlink

    def read_only(call):
        def refuse_in_out(self, *args, **kwargs):
            if tmp_path / "out" in self.parents:
                raise OSError(errno.EROFS, "Read-only file system", str(self))
            return call(self, *args, **kwargs)

        return refuse_in_out

    monkeypatch.setattr(Path, "write_text", read_only(real_write))
    monkeypatch.setattr(Path, "unlink", read_only(real_unlink))
    run = oneshot_run(tmp_path, world.pt, world=world)
    assert oneshot.main(run.argv) == 1
    err = capsys.readouterr().err
    assert "submission.json.partial: cannot write: read-only file system; none of" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "submission.json").exists()


def baseline_config(w: World, tmp: Path) -> Path:
    config = tmp / "config.yaml"
    config.write_text(GOOD_CONFIG.replace("models:\n", f"models:\n  tinyb:\n    kind: checkpoint\n    path: {w.pt}\n"
                                          "    label_space: painting-vision-10\n", 1))
    return config


def test_records_are_written_all_or_none(world, tmp_path, capsys):
    """The baseline's record cannot be written (its path is a folder): the checkpoint's is not
    written either, and the error says so."""
    (tmp_path / "out" / "submission.tinyb.json").mkdir(parents=True)
    earlier = tmp_path / "out" / "submission.json"
    earlier.write_text("{}")  # a record of an earlier run, replaced first: it must come back
    run = oneshot_run(tmp_path, world.pt, "--baseline", "tinyb", "--config", str(baseline_config(world, tmp_path)),
                      world=world)
    assert oneshot.main(run.argv) == 1
    err = capsys.readouterr().err
    assert "submission.tinyb.json" in err and "none of" in err and "Traceback" not in err
    assert f"records of an earlier run left unchanged: {earlier}" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["submission.json", "submission.tinyb.json"]
    assert earlier.read_text() == "{}"


def test_a_failed_rerun_says_which_earlier_records_it_left(world, tmp_path, capsys):
    (tmp_path / "out").mkdir()
    earlier = tmp_path / "out" / "submission.json"
    earlier.write_text("{}")
    run = oneshot_run(tmp_path, tmp_path / "absent.pt", world=world)
    assert oneshot.main(run.argv) == 1
    err = capsys.readouterr().err
    assert f"records of an earlier run left unchanged: {earlier}" in err
    assert earlier.read_text() == "{}"


def test_the_record_step_takes_agreeing_inputs(world, tmp_path, capsys):
    """The control of the `segbench record` cases: the valid run's four files give its record."""
    run = record_run(world, tmp_path)
    assert cli.main(run.argv) == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "out" / "submission.json").read_text()) == json.loads(world.record.read_text())
