"""workflow/config: defaults filled as the schema gives them, and the names a config refers to
checked, each refusal naming the field."""

import copy
from pathlib import Path

import pytest
import yaml

from segbench.errors import SegbenchError
from segbench.workflow.config import check_config, fill_defaults, load_config

ROOT = Path(__file__).resolve().parents[1]
EMBEDDED = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def embedded() -> dict:
    return copy.deepcopy(EMBEDDED)


def test_fill_defaults_nested_and_under_additional_properties():
    schema = {"type": "object", "properties": {
        "a": {"type": "integer", "default": 1},
        "b": {"type": "object", "default": {}, "properties": {"c": {"type": "array", "default": [0]}}},
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"r": {"default": "x"}}}}}}
    document = {"m": {"one": {}, "two": {"r": "y"}}}
    fill_defaults(document, schema)
    assert document == {"a": 1, "b": {"c": [0]}, "m": {"one": {"r": "x"}, "two": {"r": "y"}}}
    other = {}
    fill_defaults(other, schema)
    other["b"]["c"].append(1)
    assert schema["properties"]["b"]["properties"]["c"]["default"] == [0]  # each document its own copy
    kept = {"a": 5}
    fill_defaults(kept, schema)
    assert kept["a"] == 5
    not_an_object = [1]
    fill_defaults(not_an_object, schema)
    assert not_an_object == [1]


def test_the_embedded_config_gets_its_defaults():
    config = check_config(embedded(), "config.yaml")
    assert (config["logs"], config["metrics_file"], config["max_shards"]) == ("logs", "metrics.json", 100)
    assert config["inference"]["gpu_model"] is None
    assert config["models"]["best"] == {"kind": "checkpoint", "path": "artifacts/best.pt",
                                        "label_space": "painting-vision-10", "role": "model", "inference_size": None}


def refused(config) -> str:
    with pytest.raises(SegbenchError) as info:
        check_config(config, "c.yaml")
    return str(info.value)


def test_floor_is_a_reserved_model_name():
    config = embedded()
    config["models"]["floor"] = config["models"]["best"]
    assert refused(config) == "c.yaml: field 'models/floor': the name 'floor' is reserved for the floor predictor"


def test_an_unknown_benchmark_or_split():
    config = embedded()
    config["benchmarks"]["nope"] = config["benchmarks"].pop("easyportrait")
    assert refused(config).startswith("c.yaml: field 'benchmarks/nope': unknown benchmark (known: [")
    config = embedded()
    config["benchmarks"]["painting-vision"]["splits"] = ["test", "dev"]
    assert refused(config) == ("c.yaml: field 'benchmarks/painting-vision/splits': unknown split 'dev' "
                               "(splits: ['train', 'val', 'test'])")


def test_a_model_not_defined_or_in_a_label_space_the_benchmark_lacks():
    config = embedded()
    config["benchmarks"]["painting-vision"]["models"].append("ghost")
    assert refused(config).startswith("c.yaml: field 'benchmarks/painting-vision/models': model 'ghost' is not "
                                      "defined under 'models' (defined: ['")
    config = embedded()
    config["models"]["best"]["label_space"] = "easyportrait-9"
    assert refused(config).startswith("c.yaml: field 'models/best/label_space': 'easyportrait-9' is not a label space "
                                      "of benchmark 'painting-vision' ([")


def test_load_config_missing_or_empty(tmp_path):
    with pytest.raises(SegbenchError, match=r"c\.yaml: config file not found$"):
        load_config(tmp_path / "c.yaml")
    (tmp_path / "c.yaml").write_text("")
    with pytest.raises(SegbenchError, match=r"invalid config:\n  .*c\.yaml: field '\(top level\)': 'benchmarks' is a "
                                            r"required property"):
        load_config(tmp_path / "c.yaml")
