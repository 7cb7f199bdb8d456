"""The package's layers (docs/ARCHITECTURE.md): every import goes down the layers, and no two
modules import each other, directly or around a loop. The graph is segbench.workflow.codedeps's:
every segbench import anywhere in a module (lazy ones too), by ast, nothing imported."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from segbench.workflow.codedeps import CodeGraph

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "segbench"

# Bottom to top: a module may import its own layer and those before it, never one after it.
LAYERS = (
    "base",       # segbench (the version), segbench.errors
    "core",       # pure computation: no I/O
    "io",         # files, masks, schemas: nothing about a benchmark
    "protocols",  # benchmark definitions from config/, IDD's specifics
    "datasets",   # one reader per on-disk format
    "records",    # the harness's documents: manifest, frame index, identity, counts, predictions
    "models",     # the model adapters
    "stages",     # audit, inference, scoring, submission, results, figures, uploads
    "steps",      # one module per step of the harness, composing the stages
    "workflow",   # config, plan, pins, code dependencies
    "server",     # the hosted evaluation: database, store, intake, workers, web app, client
    "commands",   # the `segbench` command and the one-shot command
    "synthetic",  # the embedded default's builders: nothing in the library imports them
)
BASE = {"segbench", "segbench.errors"}
TOP = {"segbench.__main__": "commands"}


def layer_of(module: str) -> str:
    if module in BASE:
        return "base"
    if module in TOP:
        return TOP[module]
    layer = module.split(".")[1]
    if layer not in LAYERS:
        raise AssertionError(f"{module} is in no layer: put it in one of the subpackages {LAYERS[1:]}")
    return layer


def modules() -> list[str]:
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        parts = path.relative_to(SOURCE.parent).with_suffix("").parts
        found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def ancestors(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def edges(graph: CodeGraph, names: list[str]) -> dict[str, set[str]]:
    """Each module's imports, less its own packages (whose __init__ Python runs first: that is
    the package's order of loading, not a dependency of the module on what the package holds)."""
    return {m: set(graph.imports_of(m)) - ancestors(m) for m in names}


def upward(imports: Mapping[str, set[str]], layer: Callable[[str], str]) -> list[str]:
    rank = {name: i for i, name in enumerate(LAYERS)}
    return sorted(
        f"{m} ({layer(m)}) imports {t} ({layer(t)})"
        for m, targets in imports.items() for t in targets if rank[layer(t)] > rank[layer(m)]
    )


def cycle(imports: Mapping[str, set[str]]) -> list[str] | None:
    """One loop of imports (its modules in order), or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for target in sorted(imports.get(module, ())):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        state[module] = "done"
        path.pop()
        return None

    for module in sorted(imports):
        if module not in state and (found := visit(module)):
            return found
    return None


GRAPH = CodeGraph(ROOT)
IMPORTS = edges(GRAPH, modules())


def test_every_module_is_in_a_layer():
    assert {layer_of(m) for m in IMPORTS} == set(LAYERS)


def test_imports_only_go_down_the_layers():
    assert upward(IMPORTS, layer_of) == []


def test_no_loop_of_imports():
    assert cycle(IMPORTS) is None


def test_nothing_in_the_library_imports_the_embedded_defaults_builders():
    users = {m for m, targets in IMPORTS.items() if layer_of(m) != "synthetic"
             for t in targets if layer_of(t) == "synthetic"}
    assert users == set()


def test_the_core_imports_nothing_but_the_core_and_the_base():
    assert {layer_of(t) for m, ts in IMPORTS.items() if layer_of(m) == "core" for t in ts} <= {"base", "core"}


# The checks themselves, on small made-up graphs: they must find what they look for.
def fake_layer(module: str) -> str:
    return module.split(".")[0]


def test_an_upward_import_is_reported_with_both_layers():
    imports = {"core.a": {"stages.b"}, "stages.b": {"core.c"}, "core.c": set()}
    assert upward(imports, fake_layer) == ["core.a (core) imports stages.b (stages)"]


@pytest.mark.parametrize(
    ("imports", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"a": {"a"}}, ["a", "a"]),
        ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, None),  # a diamond is no loop
    ],
)
def test_a_loop_is_found_and_a_diamond_is_not(imports, expected):
    assert cycle(imports) == expected


def test_a_module_outside_the_subpackages_is_in_no_layer():
    with pytest.raises(AssertionError, match="segbench.nowhere is in no layer"):
        layer_of("segbench.nowhere")
