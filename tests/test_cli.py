"""The `segbench` command (segbench.commands.cli): a bare predictions folder and a label space scored and
measured without any config; the model named by its resolved config entry; errors in one line."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pv_fixtures import clean_frames
from segbench.commands.cli import COMMANDS, main, parser


TEST_FRAMES = [f for f, _, split, _ in clean_frames() if split == "test"]


def predictions(tmp_path: Path, wrong: bool) -> Path:
    """The test frames' labels as masks, encoded otherwise than the labels (a mask that is its label
    byte for byte is refused); with `wrong`, every pixel of class 9 predicted as 8."""
    folder = tmp_path / "preds"
    folder.mkdir()
    for frame_id, _, split, label in clean_frames():
        if split == "test":
            mask = np.where(label == 9, 8, label).astype(np.uint8) if wrong else label
            Image.fromarray(mask).save(folder / f"{frame_id}.png", format="PNG", compress_level=0)
    return folder


def run(*argv: str) -> int:
    return main([str(a) for a in argv])


def test_a_bare_predictions_folder_is_scored_and_measured_with_a_label_space(tmp_path, pv_data, capsys):
    folder = predictions(tmp_path, wrong=False)
    assert run("metrics", "--predictions", folder, "--label-space", "painting-vision-10", "--data", pv_data,
               "--out", tmp_path / "m.json") == 0
    results = json.loads((tmp_path / "m.json").read_text())
    assert results["kind"] == "predictions" and results["model"] == "preds" and results["split"] == "test"
    assert main(["manifest", "--data", str(pv_data)]) == 0  # prints the data's dataset_id
    assert results["dataset_id"] == capsys.readouterr().out.splitlines()[-1]  # the data it was checked against
    assert results["results"]["shared_metrics"]["mIoU"] == 1.0  # the labels themselves: perfect
    assert results["results"]["paint_state_metrics"]["mIoU_full_10class"] == 1.0


def test_the_direct_route_equals_score_then_metrics(tmp_path, pv_data):
    folder = predictions(tmp_path, wrong=True)
    assert run("score", "--predictions", folder, "--label-space", "painting-vision-10", "--data", pv_data, "--split", "test",
               "--out", tmp_path / "c.parquet") == 0
    assert run("metrics", "--counts", tmp_path / "c.parquet", "--out", tmp_path / "via-counts.json") == 0
    assert run("metrics", "--predictions", folder, "--label-space", "painting-vision-10", "--data", pv_data,
               "--out", tmp_path / "direct.json") == 0
    via, direct = (json.loads((tmp_path / n).read_text()) for n in ("via-counts.json", "direct.json"))
    assert via["results"] == direct["results"] and via["frames"] == direct["frames"] == len(TEST_FRAMES)
    # Ten classes, all present; class 9's pixels predicted as 8: IoU(8) = 1/2, IoU(9) = 0, the rest 1.
    assert direct["results"]["paint_state_metrics"]["mIoU_full_10class"] == pytest.approx((8 + 0.5 + 0) / 10)


@pytest.mark.parametrize(("argv", "needle"), [
    (["metrics", "--out", "m.json"], "metrics of --counts FILE... or of --predictions DIR"),
    (["metrics", "--predictions", "preds", "--out", "m.json"], "--predictions needs --label-space"),
    (["score", "--data", "data", "--split", "test", "--out", "c.parquet"], "name the model"),
    (["identify", "--model-spec", "{\"kind\": 1}", "--out", "i.json"], "--model-spec: not a model entry"),
    (["server", "init", "--db", "notaurl", "--store", "store"], "the database URL (--db or $SEGBENCH_DB) is not a URL"),
    (["server", "init", "--db", "mysql://u@h/db", "--store", "store"], "the server runs on sqlite or postgresql, not 'mysql'"),
    (["server", "add-team", "a", "--db", "sqlite://"], "the server's SQLite database is a file: sqlite:///PATH"),
    (["server", "worker", "--db", "postgresql+psycopg2://u@h/db"], "through psycopg, not psycopg2"),
    (["submissions", "--server", "127.0.0.1:8000", "--token", "t"], "'127.0.0.1:8000' is not http(s)://HOST[:PORT]"),
    (["submit", "up.zip", "--server", "ftp://h", "--token", "t", "--benchmark", "painting-vision",
      "--phase", "test"], "'ftp://h' is not http(s)://"),
    (["submissions", "--server", "http://h:99999", "--token", "t"], "'http://h:99999' is not http(s)://HOST[:PORT]"),
    (["server", "worker", "--db", "sqlite:///s.db", "--lease-seconds", "-5"], "--lease-seconds -5.0: must be a number above 0"),
    (["server", "run", "--db", "sqlite:///s.db", "--uploads-per-hour", "0"],
     "--uploads-per-hour 0: must be a whole number above 0"),
    (["server", "worker", "--db", "sqlite:///s.db", "--seed", "-1"], "--seed -1: must be a whole number 0 or more"),
])
def test_bad_arguments_get_one_line(tmp_path, pv_data, monkeypatch, capsys, argv, needle):
    monkeypatch.chdir(tmp_path)  # the dataset is tmp_path/data
    before = sorted(tmp_path.rglob("*"))
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert sorted(tmp_path.rglob("*")) == before  # nothing written


@pytest.mark.parametrize(("argv", "needle"), [
    (["server", "add-phase", "--db", "sqlite:///s.db", "--phas", "test", "--data", "d", "--dataset-manifest", "m"],
     "unrecognized arguments: --phas test"),  # argparse took it for --phase, and `--phase` for --phases
    (["score", "--dat", "data", "--split", "test", "--out", "c.parquet"], "the following arguments are required: --data"),
])
def test_an_option_is_taken_only_as_spelt_in_full(tmp_path, monkeypatch, capsys, argv, needle):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and needle in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_add_phase_names_the_phase_with_phase_as_reveal_and_rescore_do():
    server = next(a for a in parser()._actions if a.dest == "command").choices["server"]
    actions = next(a for a in server._actions if a.dest == "server_command").choices
    args = actions["add-phase"].parse_args(["--phase", "dev", "--phases", "p.yaml", "--data", ".",
                                            "--dataset-manifest", "m.json"])
    assert (args.phase, str(args.phases)) == ("dev", "p.yaml")
    for name in ("reveal", "rescore"):
        assert "--phase" in actions[name]._option_string_actions


def test_identify_acts_on_the_spec_it_is_given_and_records_it(tmp_path):
    spec = {"name": "mine", "kind": "predictions", "path": str(tmp_path / "preds"), "label_space": "painting-vision-10"}
    predictions(tmp_path, wrong=False)
    assert run("identify", "--model-spec", json.dumps(spec), "--out", tmp_path / "identity.json") == 0
    record = json.loads((tmp_path / "identity.json").read_text())
    assert record["spec"] == {**spec, "role": "model"} and record["name"] == "mine"
    assert record["label_space"] == "painting-vision-10" and len(record["classes"]) == 10


def test_every_subcommand_has_a_step_module_and_help():
    names = [c.name for c in COMMANDS]
    assert len(names) == len(set(names))
    sub = next(a for a in parser()._actions if a.dest == "command")
    assert sorted(sub.choices) == sorted(names)
    assert all(c.help and c.step for c in COMMANDS)


def test_help_lists_the_commands_people_use_apart_from_the_workflows_steps(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    people, steps = text.split("\n\ncommands:\n")[1].split("\n\nthe workflow's steps (its rules run these; runnable by hand):\n")
    assert [line.split()[0] for line in people.splitlines()] == [
        "manifest", "audit", "infer", "metrics", "idd-labels", "results", "export-onnx", "export-torchscript",
        "import-checkpoint", "export", "check-submission", "server", "submit", "submissions"]
    assert [line.split()[0] for line in steps.splitlines()[:-2]] == [
        "identify", "score", "record", "pull", "uncertainty", "slices", "figures", "overlays", "plot-data",
        "check-results"]
    assert "  export-torchscript  write a segbench checkpoint as a TorchScript archive" in people


def test_every_flag_has_help_with_its_default_and_choices():
    sub = next(a for a in parser()._actions if a.dest == "command")
    for name, command in sub.choices.items():
        for action in command._actions:
            assert action.help, (name, action.option_strings or action.dest)
    audit = sub.choices["audit"].format_help()
    assert "--benchmark {easyportrait,idd20k-icvgip2020,painting-vision}" in audit
    assert "benchmark name (config/benchmarks/NAME.yaml) (default:\n                        painting-vision)" in audit
    assert "(default: None)" not in audit and "(default: [])" not in audit


def test_audit_without_report_files_prints_the_report(pv_data, capsys):
    assert main(["audit", "--data", str(pv_data), "--split", "test"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"Dataset audit of {pv_data} (benchmark painting-vision, evaluating split 'test')"
    assert out[2] == "Result: PASSED: 0 error(s), 0 warning(s)" and len(out) == 3


RENAMED = [  # (command and its other required arguments, new flag, old flag, value, dest)
    (["audit", "--data", "d"], "--json-out", "--json", "a.json", "json_out"),
    (["audit", "--data", "d"], "--text-out", "--text", "a.txt", "text_out"),
    (["manifest", "--data", "d"], "--dataset-manifest", "--verify", "m.json", "dataset_manifest"),
    (["overlays", "--data", "d", "--split", "test", "--counts", "c.parquet", "--predictions", "p"], "--out",
     "--out-dir", "o", "out"),
    (["overlays", "--data", "d", "--split", "test", "--counts", "c.parquet", "--predictions", "p", "--out", "o"],
     "--examples", "--frames", "3", "examples"),
    (["check-results"], "--results", "--out", "r", "results"),
    (["server", "add-phase", "--data", "d"], "--dataset-manifest", "--manifest", "m.json", "dataset_manifest"),
]


@pytest.mark.parametrize(("argv", "new", "old", "value", "dest"), RENAMED, ids=[f"{r[0][0]} {r[2]}" for r in RENAMED])
def test_a_flag_renamed_to_the_convention_keeps_its_old_spelling_for_one_release(argv, new, old, value, dest, capsys):
    command = " ".join(itertools.takewhile(lambda word: not word.startswith("-"), argv))  # a subcommand's prog
    parsed = int(value) if value.isdigit() else Path(value)
    assert getattr(parser().parse_args([*argv, new, value]), dest) == parsed
    assert capsys.readouterr().err == ""
    assert getattr(parser().parse_args([*argv, old, value]), dest) == parsed
    assert capsys.readouterr().err == (f"segbench {command}: warning: {old} is deprecated, use {new} (the old name goes "
                                       "in the next release)\n")


def test_audit_writes_its_reports_under_the_new_and_the_old_names(pv_data, tmp_path, capsys):
    assert main(["audit", "--data", str(pv_data), "--split", "test", "--json-out", str(tmp_path / "a.json"),
                 "--text-out", str(tmp_path / "a.txt")]) == 0
    assert main(["audit", "--data", str(pv_data), "--split", "test", "--json", str(tmp_path / "b.json"),
                 "--text", str(tmp_path / "b.txt")]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    assert capsys.readouterr().err.count("is deprecated") == 2


def test_submissions_lists_each_with_its_released_score_or_its_error(capsys):
    """`segbench submissions`, a line each: the Ladder's release (with its digits) where the phase
    shows scores, a failed upload's error (its first line)."""
    from types import SimpleNamespace

    from segbench.commands.runs import run_submissions
    from segbench.server import client

    base = {"benchmark": "painting-vision", "phase": "test", "submitted_at": "2026-12-07T10:00:00Z", "error": None}
    views = [{**base, "id": "a1", "status": "scored", "method": "m1",
              "ladder": {"public_score": 0.7, "decimals": 2, "released": True, "note": "first score"}},
             {**base, "id": "b2", "status": "scored", "method": "m2"},  # show_scores false: no ladder
             {**base, "id": "c3", "status": "failed", "method": "m3", "error": "the workers stopped\nsecond line"},
             {**base, "id": "d4", "status": "queued", "method": ""}]
    step = SimpleNamespace(submissions=lambda server, token: views, listing_line=client.listing_line)
    run_submissions(step, SimpleNamespace(server="http://127.0.0.1:8000", token="t"))
    assert capsys.readouterr().out.splitlines() == [
        "a1  painting-vision/test  scored   2026-12-07T10:00:00Z  m1  public 0.70 (first score)",
        "b2  painting-vision/test  scored   2026-12-07T10:00:00Z  m2",
        "c3  painting-vision/test  failed   2026-12-07T10:00:00Z  m3  error: the workers stopped",
        "d4  painting-vision/test  queued   2026-12-07T10:00:00Z  "]
