"""The workflow configuration (config/config.yaml, with --configfile files and --config values
over it): validated by its schema, defaults filled, names and paths checked; every refusal names
the file and line that holds the value (or --config)."""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SegbenchError
from ..io.schemas import load_schema, validate
from ..io.yamlfile import YamlFile, read_yaml_file
from ..protocols.definitions import SAFE_LOADER, known_benchmarks, load_benchmark, parse_slices

OVERRIDES = "--config"  # where Snakemake's command-line values are named


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


@dataclass(frozen=True)
class ConfigSource(YamlFile):
    """One layer of the config: a file with the line of each field it sets, or the --config
    values (no lines), or a name alone (a document checked on its own)."""

    def depth(self, at: tuple[str, ...]) -> int:
        """How many leading components of the field `at` this layer sets."""
        node = self.document
        for n, part in enumerate(at):
            if isinstance(node, Mapping) and part in {str(k): k for k in node}:
                node = node[{str(k): k for k in node}[part]]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return n
        return len(at)


def read_config_file(path: Path) -> ConfigSource:
    """A config file as a layer: its document and the line of every field (a syntax error named
    with the file and its line)."""
    read = read_yaml_file(path, SAFE_LOADER)
    return ConfigSource(read.name, read.document, read.lines)


def readable_config(path: str) -> str:
    """`path`, once it is found to be valid YAML (for the Snakefile's `configfile:`, which would
    say only "Config file is not valid JSON or YAML", naming neither the file nor the line)."""
    if Path(path).is_file():
        read_config_file(Path(path))
    return path


class ConfigSources:
    """Where each value of a merged config comes from: the layers in the order they were merged
    (later ones set over earlier ones), so a field is named in the last layer that sets it."""

    def __init__(self, layers: Sequence[ConfigSource]):
        self.layers = list(layers)

    @classmethod
    def of(cls, source: str | Path | ConfigSources) -> ConfigSources:
        return source if isinstance(source, ConfigSources) else cls([ConfigSource(str(source))])

    @classmethod
    def workflow(cls, files: Sequence[str | Path], overrides: Mapping[str, Any]) -> ConfigSources:
        """The layers Snakemake merged: the config files (the Snakefile's, then each --configfile),
        then the --config values. A file inside the working directory is named relative to it."""
        layers = [read_config_file(Path(os.path.relpath(f)) if not os.path.relpath(f).startswith("..") else Path(f))
                  for f in files]
        return cls(layers + ([ConfigSource(OVERRIDES, dict(overrides))] if overrides else []))

    def where(self, field_path: Sequence[Any]) -> str:
        """'file:line' (or --config) of the layer that sets `field_path`, or its deepest part
        that is set; the first layer when none sets any of it (a field missing everywhere)."""
        at = tuple(str(p) for p in field_path)
        depths = [layer.depth(at) for layer in self.layers]
        deepest = max(depths)
        if deepest == 0:
            return self.layers[0].name
        layer = self.layers[max(i for i, d in enumerate(depths) if d == deepest)]
        return layer.at(at[:deepest])


def is_within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def check_paths(config: dict[str, Any], sources: ConfigSources) -> None:
    """The output folders are folders of their own: not the filesystem root, not the working
    directory or one above it (they would hold the workflow, its data and its code), and no
    output inside an input (a dataset, a manifest, a model) nor an input inside an output."""
    here = Path.cwd().resolve()
    inputs = [(("benchmarks", b, "data"), e["data"]) for b, e in config["benchmarks"].items()]
    inputs += [(("benchmarks", b, "manifest"), e["manifest"]) for b, e in config["benchmarks"].items() if e["manifest"]]
    inputs += [(("models", m, "path"), e["path"]) for m, e in config["models"].items()]
    for name in ("results", "logs", "metrics_file"):
        value = config[name]
        resolved = Path(value).resolve()
        where = f"{sources.where((name,))}: field '{name}': '{value}'"
        if name != "metrics_file" and is_within(here, resolved):
            what = "the filesystem root" if resolved == Path(resolved.anchor) else "the working directory or a folder above it"
            raise SegbenchError(f"{where} is {what}, which holds the workflow, its data and its code: name a folder "
                                f"of the outputs' own (default: '{load_schema('config')['properties'][name]['default']}')")
        for field_path, path in inputs:
            source = Path(path).resolve()
            if is_within(resolved, source) or is_within(source, resolved):
                relation = "is" if resolved == source else "is inside" if is_within(resolved, source) else "holds"
                raise SegbenchError(f"{where} {relation} the input '{path}' (field '{'/'.join(field_path)}', "
                                    f"{sources.where(field_path)}): outputs are never written onto or inside inputs")


def check_config(config: dict[str, Any], source: str | Path | ConfigSources) -> dict[str, Any]:
    """Validate, fill defaults, and check the names the config refers to exist, its paths, and a
    benchmark entry's own `slices` as a definition's are checked. `source`: where the values come
    from (a name, or the layers with their lines)."""
    sources = ConfigSources.of(source)
    validate(config, "config", sources.where)
    fill_defaults(config, load_schema("config"))
    if "floor" in config["models"]:
        raise SegbenchError(f"{sources.where(('models', 'floor'))}: field 'models/floor': the name 'floor' is reserved "
                            "for the floor predictor")
    for bench_name, bench in config["benchmarks"].items():
        at = ("benchmarks", bench_name)
        if bench_name not in known_benchmarks():
            raise SegbenchError(
                f"{sources.where(at)}: field 'benchmarks/{bench_name}': unknown benchmark (known: {known_benchmarks()})"
            )
        benchmark = load_benchmark(bench_name)
        for i, split in enumerate(bench["splits"]):
            if split not in benchmark.splits:
                raise SegbenchError(
                    f"{sources.where((*at, 'splits', i))}: field 'benchmarks/{bench_name}/splits': unknown split "
                    f"'{split}' (splits: {list(benchmark.splits)})"
                )
        for i, model in enumerate(bench["models"]):
            if model not in config["models"]:
                raise SegbenchError(
                    f"{sources.where((*at, 'models', i))}: field 'benchmarks/{bench_name}/models': model '{model}' is "
                    f"not defined under 'models' (defined: {sorted(config['models'])})"
                )
            space = config["models"][model]["label_space"]
            if space not in benchmark.spaces:
                raise SegbenchError(
                    f"{sources.where(('models', model, 'label_space'))}: field 'models/{model}/label_space': '{space}' "
                    f"is not a label space of benchmark '{bench_name}' ({sorted(benchmark.spaces)})"
                )
        if "slices" in bench:  # replaces the definition's (its items were checked by slice.schema.json)
            parse_slices(bench["slices"], sources.where((*at, "slices")), f"benchmarks/{bench_name}/slices")
    check_paths(config, sources)
    return config


def load_config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise SegbenchError(f"{path}: config file not found")
    layer = read_config_file(path)
    config = layer.document if layer.document is not None else {}
    return check_config(config, ConfigSources([ConfigSource(str(path), config, layer.lines)]))
