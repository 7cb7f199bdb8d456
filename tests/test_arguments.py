"""What the subcommands take (commands/arguments.py): the shared frame and model arguments and their
defaults (every subcommand's parser and help: test_cli.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from segbench.commands.arguments import (DEFAULT_CONFIG, add_frames, add_model, add_renamed, input_path, named_paths,
                                         output_path, port_number, positive_int, seconds,
                                         seed_number)


def parser(*adders) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(exit_on_error=False)
    for add in adders:
        add(p)
    return p


def test_frame_arguments_and_their_defaults():
    args = parser(add_frames).parse_args(["--data", "d", "--split", "val"])
    assert vars(args) == {
        "benchmark": "painting-vision", "data": Path("d"), "split": "val", "frames": None, "shard": None, "shards": None
    }
    args = parser(add_frames).parse_args(["--data", "d", "--split", "val", "--shard", "1", "--shards", "4"])
    assert (args.shard, args.shards) == (1, 4)


def test_data_and_split_are_required(capsys):
    with pytest.raises(SystemExit):
        parser(add_frames).parse_args(["--data", "d"])
    assert "the following arguments are required: --split" in capsys.readouterr().err


def test_model_arguments_default_to_the_project_config():
    args = parser(add_model).parse_args([])
    assert vars(args) == {"model": None, "config": DEFAULT_CONFIG, "model_spec": None}
    assert DEFAULT_CONFIG == Path("config/config.yaml")


@pytest.mark.parametrize("kind, text, problem", [
    (positive_int, "0", "must be a positive integer, got 0"), (positive_int, "-3", "must be a positive integer, got -3"),
    (positive_int, "2.5", "'2.5' is not an integer"), (positive_int, "", "'' is not an integer"),
    (port_number, "65536", "a port is 0 to 65535, got 65536"), (port_number, "-1", "a port is 0 to 65535, got -1"),
    (port_number, "http", "'http' is not an integer"), (seconds, "-1", "must be 0 or more seconds, got -1"),
    (seconds, "nan", "must be 0 or more seconds, got nan"), (seconds, "inf", "must be 0 or more seconds, got inf"),
    (seconds, "10s", "'10s' is not a number of seconds"), (seed_number, "-1", "a seed is 0 or more, got -1"),
    (seed_number, "0.5", "'0.5' is not an integer"),
])
def test_a_number_argument_refuses_what_is_out_of_its_range(kind, text, problem):
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        kind(text)
    assert str(refused.value) == problem


def test_a_count_is_1_or_more_a_port_0_for_one_the_system_chooses_a_duration_and_a_seed_0_or_more():
    assert (positive_int("1"), positive_int("640"), positive_int(" 8 ")) == (1, 640, 8)
    assert (port_number("0"), port_number("8000"), port_number("65535")) == (0, 8000, 65535)
    assert (seconds("0"), seconds("2.5"), seconds("3600")) == (0.0, 2.5, 3600.0)
    assert (seed_number("0"), seed_number("42")) == (0, 42)


def every_parser():
    """Each subcommand's parser and the one-shot command's."""
    from segbench.commands import cli, oneshot

    for command in cli.COMMANDS:
        p = argparse.ArgumentParser()
        command.arguments(p)
        yield command.name, p
    yield "benchmark.py", oneshot.parser()


def test_every_path_argument_says_whether_it_is_read_or_written():
    """A path argument without a role would escape the check that no output is an input."""
    untyped = [(name, action.dest) for name, p in every_parser() for action in p._actions
               if isinstance(action.default, Path) and action.type not in (input_path, output_path)
               or action.type is Path]
    assert untyped == []


def test_named_paths_of_a_subcommand_by_role():
    from segbench.commands import cli

    root = cli.parser()
    args = root.parse_args(["metrics", "--counts", "a.parquet", "b.parquet", "--out", "m.json"])
    assert named_paths(root, args) == ([("--counts", Path("a.parquet")), ("--counts", Path("b.parquet"))],
                                       [("--out", Path("m.json"))])
    args = root.parse_args(["check-results"])  # defaults count too; a command that writes nothing has no outputs
    assert named_paths(root, args) == ([("--results", Path("results")), ("--lock", Path("dvc.lock")),
                                        ("--listings", Path(".snakemake/segbench/results-listings")),
                                        ("--metadata", Path(".snakemake/metadata"))],
                                       [])


def test_a_renamed_flag_takes_its_old_spelling_with_a_warning_and_its_new_one_without(capsys):
    p = argparse.ArgumentParser(prog="segbench audit")
    add_renamed(p, "--json-out", "--json", type=output_path, required=True, help="write the report as JSON here")
    assert p.parse_args(["--json-out", "a.json"]).json_out == Path("a.json")
    assert capsys.readouterr().err == ""
    assert p.parse_args(["--json", "a.json"]).json_out == Path("a.json")
    assert capsys.readouterr().err == ("segbench audit: warning: --json is deprecated, use --json-out (the old name goes "
                                       "in the next release)\n")
    assert "write the report as JSON here (--json: its old name, deprecated)" in " ".join(p.format_help().split())
    with pytest.raises(SystemExit):  # required under either name
        p.parse_args([])
    assert "the following arguments are required: --json-out/--json" in capsys.readouterr().err
    assert named_paths(p, p.parse_args(["--json", "a.json"])) == ([], [("--json-out", Path("a.json"))])


def test_a_renamed_flag_is_named_by_its_new_name_whichever_spelling_was_typed(capsys):
    p = argparse.ArgumentParser(prog="segbench overlays")
    add_renamed(p, "--out", "--out-dir", type=output_path, help="the folder written")
    assert named_paths(p, p.parse_args(["--out-dir", "o"])) == ([], [("--out", Path("o"))])
