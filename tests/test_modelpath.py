"""commands/modelpath.py: the adapter and the name a model gets from its path on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from segbench.commands.modelpath import checkpoint_kind, model_name
from segbench.errors import SegbenchError


def folder(tmp_path: Path, *files: str) -> Path:
    made = tmp_path / "model"
    made.mkdir()
    for name in files:
        (made / name).write_bytes(b"")
    return made


@pytest.mark.parametrize(("files", "kind"), [
    (("config.json", "model.safetensors"), "hf"),
    (("config.json", "best.pt"), "hf"),  # config.json decides
    (("w01_f1.png", "w01_f2.png"), "predictions"),
    ((), "predictions"),  # empty: the predictions intake says what is missing
])
def test_a_folder_is_a_hugging_face_model_or_masks(tmp_path, files, kind):
    assert checkpoint_kind(folder(tmp_path, *files)) == kind


@pytest.mark.parametrize(("name", "kind"), [("m.ts", "torchscript"), ("m.torchscript", "torchscript"),
                                            ("m.onnx", "onnx"), ("m.pt", "checkpoint"), ("m.ckpt", "checkpoint"),
                                            ("masks.zip", "predictions"), ("masks.tar.gz", "predictions")])
def test_a_file_is_read_by_its_suffix(tmp_path, name, kind):
    path = tmp_path / name
    path.write_bytes(b"")
    assert checkpoint_kind(path) == kind


@pytest.mark.parametrize(("files", "message"), [
    (("pytorch_model.bin", "model.safetensors"), "holds model weights (model.safetensors, pytorch_model.bin) but no "
                                                 "config.json: a Hugging Face model folder needs its config.json "
                                                 "(or pass --checkpoint-kind)"),
    (("best.pt", "best.onnx", "best.pt.dvc"), "a folder of models (best.onnx, best.pt), not a model or a folder of "
                                              "masks: name one model's file"),
    (("a.pt", "b.pt", "c.ts", "d.onnx"), "a folder of models (a.pt, b.pt, c.ts, ...), not a model or a folder of "
                                         "masks: name one model's file"),
])
def test_a_folder_of_weights_or_of_models_is_refused(tmp_path, files, message):
    made = folder(tmp_path, *files)
    with pytest.raises(SegbenchError) as refused:
        checkpoint_kind(made)
    assert str(refused.value) == f"{made}: {message}"


@pytest.mark.parametrize(("name", "expected"), [("best.pt", "best"), ("masks.tar.gz", "masks"), ("run.v2.onnx", "run.v2"),
                                                ("segformer-ade", "segformer-ade")])
def test_the_name_is_the_file_name_without_its_suffix(name, expected):
    assert model_name(Path("artifacts") / name) == expected
