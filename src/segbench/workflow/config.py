"""The workflow configuration (config/config.yaml): validated by its schema, defaults filled."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any


from ..errors import SegbenchError
from ..io.schemas import load_schema, validate
from ..protocols.definitions import known_benchmarks, load_benchmark, parse_slices, read_yaml


def fill_defaults(document: Any, schema: dict[str, Any]) -> None:
    """Insert each property's `default` where it is missing (as snakemake.utils.validate does)."""
    if not isinstance(document, dict) or schema.get("type") != "object":
        return
    for key, sub in schema.get("properties", {}).items():
        if key not in document and "default" in sub:
            document[key] = copy.deepcopy(sub["default"])
        if key in document:
            fill_defaults(document[key], sub)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key, value in document.items():
            if key not in schema.get("properties", {}):
                fill_defaults(value, extra)


def check_config(config: dict[str, Any], source: str | Path) -> dict[str, Any]:
    """Validate, fill defaults, and check the names the config refers to exist, and a benchmark
    entry's own `slices` as a definition's are checked."""
    validate(config, "config", source)
    fill_defaults(config, load_schema("config"))
    if "floor" in config["models"]:
        raise SegbenchError(f"{source}: field 'models/floor': the name 'floor' is reserved for the floor predictor")
    for bench_name, bench in config["benchmarks"].items():
        if bench_name not in known_benchmarks():
            raise SegbenchError(
                f"{source}: field 'benchmarks/{bench_name}': unknown benchmark (known: {known_benchmarks()})"
            )
        benchmark = load_benchmark(bench_name)
        for split in bench["splits"]:
            if split not in benchmark.splits:
                raise SegbenchError(
                    f"{source}: field 'benchmarks/{bench_name}/splits': unknown split '{split}' "
                    f"(splits: {list(benchmark.splits)})"
                )
        for model in bench["models"]:
            if model not in config["models"]:
                raise SegbenchError(
                    f"{source}: field 'benchmarks/{bench_name}/models': model '{model}' is not defined under "
                    f"'models' (defined: {sorted(config['models'])})"
                )
            space = config["models"][model]["label_space"]
            if space not in benchmark.spaces:
                raise SegbenchError(
                    f"{source}: field 'models/{model}/label_space': '{space}' is not a label space of benchmark "
                    f"'{bench_name}' ({sorted(benchmark.spaces)})"
                )
        if "slices" in bench:  # replaces the definition's (its items were checked by slice.schema.json)
            parse_slices(bench["slices"], source, f"benchmarks/{bench_name}/slices")
    return config


def load_config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise SegbenchError(f"{path}: config file not found")
    config = read_yaml(path)
    return check_config(config if config is not None else {}, path)
