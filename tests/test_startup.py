"""The Snakefile's start (segbench.workflow.startup): the config checked and planned, naming the
layer a refusal comes from, and the inference jobs' GPU request."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import yaml

from segbench.errors import SegbenchError
from segbench.workflow.startup import checked_plan, gpu_resources


def settings(replace: bool = False, configfiles: tuple[str, ...] = (), overrides: dict | None = None) -> SimpleNamespace:
    return SimpleNamespace(replace_workflow_config=replace, configfiles=list(configfiles), config=overrides or {})


def embedded_default() -> dict:
    with open("config/config.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def test_the_embedded_default_is_planned():
    config = embedded_default()
    plan = checked_plan(config, settings())
    assert sorted(plan.benchmarks) == sorted(config["benchmarks"])


def test_a_refusal_names_the_layer_holding_the_value():
    config = embedded_default()
    config["shard_size"] = 0
    with pytest.raises(SegbenchError, match=r"--config"):
        checked_plan(config, settings(overrides={"shard_size": 0}))


@pytest.mark.parametrize(("inference", "resources"), [
    ({"gpu": 0}, {"gpu": 0}),
    ({"gpu": 0, "gpu_model": "h100"}, {"gpu": 0}),  # no GPU asked for: no model named
    ({"gpu": 2}, {"gpu": 2}),
    ({"gpu": 1, "gpu_model": "h100"}, {"gpu": 1, "gpu_model": "h100"}),
])
def test_the_gpu_request_of_the_inference_jobs(inference, resources):
    assert gpu_resources(inference) == resources
