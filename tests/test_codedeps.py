"""Code dependencies derived from imports (segbench.workflow.codedeps): what each subcommand runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from segbench.commands.cli import COMMAND, COMMANDS
from segbench.workflow.codedeps import CodeGraph

ROOT = Path(__file__).resolve().parents[1]
SRC = "src/segbench"
GRAPH = CodeGraph(ROOT)


def files(command: str) -> set[str]:
    return set(GRAPH.command_files(COMMAND[command].step))


def test_inference_runs_the_models_but_no_metric_or_scoring_code():
    infer = files("infer")
    assert {f"{SRC}/stages/inference.py", f"{SRC}/stages/inference_kernels.py", f"{SRC}/models/checkpoint.py",
            f"{SRC}/steps/inference.py", f"{SRC}/commands/cli.py"} <= infer
    assert not {f"{SRC}/core/metrics.py", f"{SRC}/core/evaluation.py", f"{SRC}/stages/scoring.py", f"{SRC}/core/cellcount.py",
                f"{SRC}/core/bootstrap.py"} & infer


def test_scoring_runs_no_model_or_metric_code():
    score = files("score")
    assert {f"{SRC}/stages/scoring.py", f"{SRC}/core/cellcount.py", f"{SRC}/records/countsio.py", f"{SRC}/steps/scoring.py"} <= score
    assert not {f"{SRC}/stages/inference.py", f"{SRC}/core/metrics.py", f"{SRC}/core/evaluation.py"} & score
    assert not any(f.startswith(f"{SRC}/models/") for f in score)


def test_metrics_run_the_metric_code_but_no_inference():
    metrics = files("metrics")
    assert {f"{SRC}/core/metrics.py", f"{SRC}/core/metric_values.py", f"{SRC}/core/evaluation.py", f"{SRC}/steps/metrics.py"} <= metrics
    assert not {f"{SRC}/stages/inference.py", f"{SRC}/stages/inference_modes.py"} & metrics
    assert not any(f.startswith(f"{SRC}/models/") for f in metrics)
    # `segbench metrics --predictions` scores a folder itself: the scoring code is the step's too
    # (a change there re-scores every shard first, so the metrics re-run anyway)
    assert f"{SRC}/stages/scoring.py" in metrics


def test_a_registry_imported_by_name_depends_on_every_module_of_its_package():
    # datasets/__init__ picks its reader with import_module: every reader is a dependency
    readers = {f"{SRC}/datasets/{name}.py" for name in ("painting_vision", "idd", "easyportrait")}
    assert readers <= files("manifest")
    assert {f"segbench.datasets.{n}" for n in ("painting_vision", "idd", "easyportrait")} <= GRAPH.imports_of("segbench.datasets")


def test_lazy_imports_count_and_data_files_read_by_fixed_path_too():
    # steps.inference imports segbench.models inside infer(): still a dependency
    assert "segbench.models" in GRAPH.imports_of("segbench.steps.inference")
    assert "workflow/schemas/submission.schema.json" in files("record")
    assert "config/label_tables/idd.yaml" in files("idd-labels")


def test_modules_no_step_imports_are_in_no_command():
    every = set().union(*(files(c.name) for c in COMMANDS))
    assert not any(f.startswith(f"{SRC}/synthetic/") for f in every)
    assert f"{SRC}/commands/oneshot.py" not in every and f"{SRC}/workflow/plan.py" not in every


def test_closure_is_transitive():
    assert "segbench.core.labels" in GRAPH.closure(["segbench.steps.metrics"])  # via evaluation -> labels


def rule_blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^(?:rule|checkpoint) (\w+):\n(.*?)(?=^\S|\Z)", text, re.S | re.M)


@pytest.mark.parametrize("smk", sorted((ROOT / "workflow" / "rules").glob("*.smk")), ids=lambda p: p.name)
def test_every_rule_declares_the_code_of_the_command_it_runs(smk: Path):
    for rule, body in rule_blocks(smk.read_text()):
        runs = re.findall(r'cli\(\s*"([a-z-]+)"', body)
        if re.search(r"^    run:$", body, re.M):  # Python in Snakemake's process (content_key): no command
            assert not runs and "rerun_when_code_changes" not in body, f"{smk.name}: rule {rule}"
            continue
        params = re.search(r"^    params:\n((?:        .*\n|            .*\n)*)", body, re.M)
        declared = re.findall(r'^        rerun_when_code_changes=code\("([a-z-]+)"\),$', params.group(1) if params else "", re.M)
        assert runs == declared and len(runs) == 1, f"{smk.name}: rule {rule} runs {runs}, declares {declared} as a parameter"


def package(root: Path, modules: dict[str, str]) -> CodeGraph:
    """A checkout at `root` holding src/segbench/<module path>.py with the given sources."""
    for name, source in modules.items():
        path = root / "src" / f"{name.replace('.', '/')}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return CodeGraph(root)


TOY = {
    "segbench.__init__": "",
    "segbench.commands.__init__": "",
    "segbench.commands.cli": "import argparse\n",
    "segbench.steps.__init__": "",
    "segbench.steps.report": (
        '"""A step."""\n'
        "from ..core import (  # the two it uses\n"
        "    tables,\n"
        "    figures as drawn,\n"
        ")\n"
        "import segbench.io.files as files, json\n"
        "def late():\n"
        "    from ..core.text import render  # lazy: still its code\n"
    ),
    "segbench.core.__init__": "",
    "segbench.core.tables": "x = 'from segbench.core import unused'  # in a string: not matched at a line's start\n",
    "segbench.core.figures": "",
    "segbench.core.text": "",
    "segbench.core.unused": "",
    "segbench.io.__init__": "",
    "segbench.io.files": "",
}


def test_imports_of_every_spelling(tmp_path):
    graph = package(tmp_path, TOY)
    assert graph.imports_of("segbench.steps.report") == {  # and the packages whose __init__ runs first
        "segbench", "segbench.core", "segbench.core.tables", "segbench.core.figures", "segbench.core.text",
        "segbench.io", "segbench.io.files"}
    assert graph.command_files("steps.report") == [f"src/segbench/{m}.py" for m in (
        "__init__", "commands/__init__", "commands/cli", "core/__init__", "core/figures", "core/tables",
        "core/text", "io/__init__", "io/files", "steps/__init__", "steps/report")]


def test_command_key_follows_the_bytes_of_the_commands_files_only(tmp_path):
    key = package(tmp_path, TOY).command_key("steps.report")
    figures = tmp_path / "src" / "segbench" / "core" / "figures.py"
    figures.write_text("")  # the same bytes, a new time
    assert CodeGraph(tmp_path).command_key("steps.report") == key
    (tmp_path / "src" / "segbench" / "core" / "unused.py").write_text("changed = True\n")
    assert CodeGraph(tmp_path).command_key("steps.report") == key  # a module the step does not import
    figures.write_text("changed = True\n")
    changed = CodeGraph(tmp_path).command_key("steps.report")
    assert changed != key and len(changed) == 64
