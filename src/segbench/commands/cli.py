"""`segbench`: one subcommand per step, for people and for the workflow's rules.

Thin on purpose: COMMANDS pairs each subcommand with its arguments (commands.arguments), its run
(commands.runs) and the step module the run calls, imported only when that subcommand runs. The
workflow derives a rule's code dependencies from that module (segbench.workflow.codedeps), so
nothing here imports the package at its top but the errors, the version, the interrupt message, those
two tables and the check that no output is an input (segbench.io.overlap).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType

from .. import __version__
from ..errors import AuditFailed, SegbenchError
from ..io.oserrors import EXIT_READER_GONE, file_problem, output_reader_gone
from ..io.overlap import refuse_overlaps
from . import INTERRUPTED, arguments, runs


@dataclass(frozen=True)
class Command:
    name: str
    step: str  # the module (below segbench) this subcommand calls
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[ModuleType, argparse.Namespace], None]
    group: str = "use"  # a key of GROUPS


# `segbench --help` lists the commands people type apart from the workflow's steps.
GROUPS = {"use": "commands", "step": "the workflow's steps (its rules run these; runnable by hand)"}


COMMANDS = [
    Command("manifest", "steps.dataset_identity", "build data_manifest.json and the dataset_id, or verify against one",
            arguments.args_manifest, runs.run_manifest),
    Command("audit", "steps.audit", "audit the dataset; exit 1 on any error", arguments.args_audit, runs.run_audit),
    Command("identify", "steps.model_identity", "checkpoint_sha256 and label space of a model: its identity record",
            arguments.args_identify, runs.run_identify, group="step"),
    Command("infer", "steps.inference", "predicted masks for the frames of a split (or one shard of it)",
            arguments.args_infer, runs.run_infer),
    Command("score", "steps.scoring", "per-frame confusion counts of predicted masks (or of the floor)",
            arguments.args_score, runs.run_score, group="step"),
    Command("metrics", "steps.metrics", "merge counts and compute every metric of the benchmark",
            arguments.args_metrics, runs.run_metrics),
    Command("record", "steps.submission", "write the schema-checked submission record", arguments.args_record,
            runs.run_record, group="step"),
    Command("idd-labels", "protocols.idd.masks", "draw IDD level-3 masks from the polygon JSONs, as the reference does",
            arguments.args_idd_labels, runs.run_idd_labels),
    Command("pull", "workflow.pinning", "restore DVC-pinned inputs (datasets, checkpoints) that are missing", arguments.args_pull, runs.run_pull, group="step"),
    Command("results", "steps.results", "the results table with bootstrap intervals: STEM.{csv,md,json,html}",
            arguments.args_results, runs.run_results),
    Command("uncertainty", "steps.uncertainty", "bootstrap intervals over groups, paired comparisons with baseline and floor",
            arguments.args_uncertainty, runs.run_uncertainty, group="step"),
    Command("slices", "steps.slices", "every metric per slice of the frames' metadata, with intervals and paired differences",
            arguments.args_slices, runs.run_slices, group="step"),
    Command("figures", "steps.plots", "every figure of a model: per-class IoU, confusion heatmaps, per-frame fractions",
            arguments.args_figures, runs.run_figures, group="step"),
    Command("overlays", "steps.overlays", "worst and best frames: image | ground truth | prediction | error",
            arguments.args_overlays, runs.run_overlays, group="step"),
    Command("plot-data", "steps.plots", "gather per-model plot data into the files dvc plots reads",
            arguments.args_plot_data, runs.run_plot_data, group="step"),
    Command("export-onnx", "models.onnx", "write a segbench checkpoint as an ONNX file (kind onnx) with its metadata",
            arguments.args_export_onnx, runs.run_export_onnx),
    Command("export-torchscript", "models.torchscript",
            "write a segbench checkpoint as a TorchScript archive (kind torchscript) with its metadata",
            arguments.args_export_torchscript, runs.run_export_torchscript),
    Command("import-checkpoint", "models.importing",
            "a plain state dict (.pt/.pth/.ckpt/.safetensors) -> a segbench checkpoint",
            arguments.args_import_checkpoint, runs.run_import_checkpoint),
    Command("export", "steps.export", "the upload in the benchmark's official format (zip): of masks, or of a model run on the split",
            arguments.args_export, runs.run_export),
    Command("check-submission", "stages.uploads", "check an upload against the dataset manifest, without labels",
            arguments.args_check_submission, runs.run_check_submission),
    Command("check-results", "workflow.results_check", "the results tree against dvc.lock: find (and remove) damaged outputs",
            arguments.args_check_results, runs.run_check_results, group="step"),
    Command("server", "server.host", "the hosted evaluation: its database and store, teams, phases, web app and workers",
            arguments.args_server, runs.run_server),
    Command("submit", "server.client", "send an upload to a hosted evaluation; print its id (and with --wait its result)",
            arguments.args_submit, runs.run_submit),
    Command("submissions", "server.client", "list your team's submissions on a hosted evaluation",
            arguments.args_submissions, runs.run_submissions),
]
COMMAND = {c.name: c for c in COMMANDS}



def command_list() -> str:
    """The commands by group, one line each with its help (the root parser's epilog)."""
    width = max(len(c.name) for c in COMMANDS) + 2
    return "\n\n".join(f"{title}:\n" + "\n".join(f"  {c.name:<{width}}{c.help}" for c in COMMANDS if c.group == group)
                       for group, title in GROUPS.items())


def parser() -> argparse.ArgumentParser:
    root = arguments.Parser(prog="segbench", description=__doc__.split("\n\n")[0],
                                   epilog=command_list() + "\n\n`segbench COMMAND --help`: its flags (docs/cli.md)",
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    root.add_argument("--version", action="version", version=f"segbench {__version__}")
    sub = root.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of those below")
    for command in COMMANDS:  # no help= here: the epilog lists them, grouped
        command.arguments(sub.add_parser(command.name, description=command.help, formatter_class=arguments.Help))
    return root


def main(argv: list[str] | None = None) -> int:
    root = parser()
    args = root.parse_args(argv)
    command = COMMAND[args.command]
    try:
        inputs, args.written_paths = arguments.named_paths(root, args)
        refuse_overlaps(inputs, args.written_paths)  # before anything is written
        command.run(import_module(f"..{command.step}", __package__), args)
    except AuditFailed as exc:
        print(f"segbench: audit failed: {exc}", file=sys.stderr)
        return 1
    except SegbenchError as exc:
        print(f"segbench: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except OSError as exc:  # the file system refused (read-only, full, permissions) outside a named write
        if output_reader_gone(exc):
            return EXIT_READER_GONE  # quiet, as a Unix tool is when `| head` has read enough
        print(f"segbench: error: {file_problem(exc, doing='access')}", file=sys.stderr)
        return 1
    return 0


def captured(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, standard output, standard error) of `segbench ARGV` run in this process, as its
    own process would end, argparse's refusals included: for a caller that runs several commands
    without an interpreter's start and imports for each (tools/serve.py, the tests)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse's refusals (and --help, --version)
            status = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return status, out.getvalue(), err.getvalue()


if __name__ == "__main__":
    sys.exit(main())
