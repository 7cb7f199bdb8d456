"""How a subcommand's run names its model (commands/runs.py: model_spec): by --model-spec JSON, by
--model from --config, or not at all (the runs themselves: test_cli.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from segbench.commands.runs import model_spec
from segbench.errors import SegbenchError

CONFIG = Path(__file__).resolve().parents[1] / "config" / "config.yaml"


def arguments(**given) -> argparse.Namespace:
    return argparse.Namespace(**{"model": None, "model_spec": None, "config": CONFIG, **given})


def test_a_spec_given_as_json():
    entry = {"name": "mine", "kind": "torchscript", "path": "m.ts", "label_space": "painting-vision-10"}
    spec = model_spec(arguments(model_spec=json.dumps(entry)))
    assert (spec.name, spec.kind, spec.path, spec.label_space, spec.role) == (
        "mine", "torchscript", Path("m.ts"), "painting-vision-10", "model"
    )


def test_a_model_named_in_the_config():
    spec = model_spec(arguments(model="best"))  # config/config.yaml's embedded checkpoint
    assert (spec.name, spec.kind, spec.path, spec.label_space) == (
        "best", "checkpoint", Path("artifacts/best.pt"), "painting-vision-10"
    )


def test_no_model_named():
    with pytest.raises(SegbenchError) as info:
        model_spec(arguments())
    assert str(info.value) == "name the model: --model NAME (from --config), --model-spec JSON or --identity RECORD"
