"""workflow/config: defaults filled as the schema gives them, and the names a config refers to
checked, each refusal naming the field."""

import copy
from pathlib import Path

import pytest
import yaml

from segbench.errors import SegbenchError
from segbench.workflow.config import ConfigSources, check_config, fill_defaults, load_config, readable_config

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


# --- names and paths -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../../escape", "a/b", ".hidden", "-x", ""])
def test_a_model_name_that_is_not_one_safe_path_component(name):
    config = embedded()
    config["models"][name] = config["models"]["best"]
    assert refused(config) == (f"invalid config:\n  c.yaml: field 'models/{name}': '{name}' does not match "
                               "'^[A-Za-z0-9][A-Za-z0-9_.-]*$'")


@pytest.mark.parametrize("field", ["results", "logs", "metrics_file"])
def test_an_empty_output_path(field):
    assert refused(embedded() | {field: ""}) == f"invalid config:\n  c.yaml: field '{field}': '' should be non-empty"


def test_an_empty_input_path():
    config = embedded()
    config["models"]["best"]["path"] = ""
    assert refused(config) == "invalid config:\n  c.yaml: field 'models/best/path': '' should be non-empty"


@pytest.mark.parametrize(("value", "what", "default"), [
    ("/", "the filesystem root", "results"),
    (".", "the working directory or a folder above it", "results"),
    ("..", "the working directory or a folder above it", "results"),
])
def test_results_at_the_root_or_around_the_workflow(value, what, default):
    assert refused(embedded() | {"results": value}) == (
        f"c.yaml: field 'results': '{value}' is {what}, which holds the workflow, its data and its code: name a "
        f"folder of the outputs' own (default: '{default}')")


def test_logs_in_the_working_directory():
    assert refused(embedded() | {"logs": "./"}).startswith("c.yaml: field 'logs': './' is the working directory")


@pytest.mark.parametrize(("field", "value", "relation", "field_path", "path"), [
    ("results", "data/results", "is inside", "benchmarks/painting-vision/data", "data"),
    ("logs", "artifacts/segformer-ade/logs", "is inside", "models/segformer-ade/path", "artifacts/segformer-ade"),
    ("results", "artifacts", "holds", "models/best/path", "artifacts/best.pt"),
    ("metrics_file", "data_manifest.json", "is", "benchmarks/painting-vision/manifest", "data_manifest.json"),
])
def test_outputs_onto_or_around_inputs(field, value, relation, field_path, path):
    assert refused(embedded() | {field: value}) == (
        f"c.yaml: field '{field}': '{value}' {relation} the input '{path}' (field '{field_path}', c.yaml): outputs "
        "are never written onto or inside inputs")


# --- errors name the file and the line holding the value ------------------------------------------


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


OTHER = """\
models:
  best:
    kind: checkpoint
    path: artifacts/best.pt
    label_space: easyportrait-9
"""


def merged(*documents) -> dict:
    """The layers merged as Snakemake merges them (mappings key by key, anything else replaced)."""
    result: dict = {}

    def update(into, new):
        for key, value in new.items():
            if isinstance(value, dict) and isinstance(into.get(key), dict):
                update(into[key], value)
            else:
                into[key] = copy.deepcopy(value)

    for document in documents:
        update(result, document)
    return result


def test_a_bad_value_is_named_in_the_configfile_that_sets_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = write(tmp_path / "config.yaml", (ROOT / "config" / "config.yaml").read_text())
    other = write(tmp_path / "other.yaml", OTHER)
    sources = ConfigSources.workflow([base, other], {})
    config = merged(yaml.safe_load(base.read_text()), yaml.safe_load(OTHER))
    with pytest.raises(SegbenchError) as info:
        check_config(config, sources)
    assert str(info.value).startswith("other.yaml:5: field 'models/best/label_space': 'easyportrait-9' is not a label")


def test_a_value_given_with_config_is_named_so_and_a_base_value_by_its_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "config" / "config.yaml").read_text()
    base = write(tmp_path / "config.yaml", text)
    overrides = {"results": "data/out"}
    config = merged(yaml.safe_load(text), overrides)
    with pytest.raises(SegbenchError) as info:
        check_config(config, ConfigSources.workflow([base], overrides))
    data_line = 1 + text.splitlines().index("    data: data")
    assert str(info.value).startswith(f"--config: field 'results': 'data/out' is inside the input 'data' (field "
                                      f"'benchmarks/painting-vision/data', config.yaml:{data_line})")


def test_a_schema_error_names_the_line(tmp_path):
    text = (ROOT / "config" / "config.yaml").read_text().replace("shard_size: 8", "shard_size: -3")
    path = write(tmp_path / "c.yaml", text)
    line = 1 + text.splitlines().index("shard_size: -3")
    with pytest.raises(SegbenchError) as info:
        load_config(path)
    assert str(info.value) == f"invalid config:\n  {path}:{line}: field 'shard_size': -3 is less than the minimum of 1"


def test_a_list_item_is_named_by_its_line(tmp_path):
    text = (ROOT / "config" / "config.yaml").read_text().replace("models: [idd-best]", "models:\n      - idd-best\n      - ghost")
    path = write(tmp_path / "c.yaml", text)
    line = 1 + text.splitlines().index("      - ghost")
    with pytest.raises(SegbenchError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:{line}: field 'benchmarks/idd20k-icvgip2020/models': model 'ghost' is "
                                      "not defined under 'models'")


def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path):
    path = write(tmp_path / "c.yaml", "results: results\nmodels: [unclosed\n")
    message = (f"{path}:3: not valid YAML: did not find expected ',' or ']' "
               "(while parsing a flow sequence at line 2)")
    for read in (load_config, lambda p: readable_config(str(p))):
        with pytest.raises(SegbenchError) as info:
            read(path)
        assert str(info.value) == message
    assert readable_config(str(ROOT / "config" / "config.yaml")) == str(ROOT / "config" / "config.yaml")
