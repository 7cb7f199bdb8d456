"""protocols/phases: config/phases/*.yaml into Phase, every field's value and default; errors
name the file, the line and the field."""

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from segbench.core.phase import Phase
from segbench.errors import SegbenchError
from segbench.protocols.definitions import known_benchmarks
from segbench.protocols.phases import load_phases, phases_path

FULL = """\
benchmark: painting-vision
phases:
  - name: dev
    split: val
    start: 2026-03-01T00:00:00Z
    end: "2026-04-01T02:00:00+02:00"
    quota_per_day: 3
    quota_total: 20
    selection: 2
    show_scores: false
    private_fraction: 0.25
  - name: test
    split: test
    private_fraction: 0.5
"""


def write(tmp_path: Path, text: str, name: str = "painting-vision") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_every_field_read_and_the_defaults(tmp_path):
    assert load_phases(write(tmp_path, FULL)) == {
        "dev": Phase(name="dev", benchmark="painting-vision", split="val",
                     start=datetime(2026, 3, 1, tzinfo=timezone.utc),
                     end=datetime(2026, 4, 1, tzinfo=timezone.utc),  # 02:00 at +02:00 is midnight UTC
                     quota_per_day=3, quota_total=20, selection=2, show_scores=False, private_fraction=0.25),
        "test": Phase(name="test", benchmark="painting-vision", split="test", start=None, end=None,
                      quota_per_day=None, quota_total=None, selection=1, show_scores=True, private_fraction=0.5),
    }


def test_the_times_are_utc(tmp_path):
    end = load_phases(write(tmp_path, FULL))["dev"].end
    assert end.utcoffset() == timedelta(0) and end.tzinfo == timezone.utc


def test_each_embedded_benchmark_has_a_test_phase_on_its_test_split():
    for name in known_benchmarks():
        assert load_phases(phases_path(name)) == {"test": Phase(
            name="test", benchmark=name, split="test", start=None, end=None, quota_per_day=5, quota_total=None,
            selection=1, show_scores=True, private_fraction=0.5)}


def refusal(tmp_path: Path, text: str, name: str = "painting-vision") -> str:
    path = write(tmp_path, text, name)
    with pytest.raises(SegbenchError) as info:
        load_phases(path)
    return str(info.value).replace(str(path), "F")


def edit(old: str, new: str) -> str:
    assert old in FULL
    return FULL.replace(old, new, 1)


@pytest.mark.parametrize(("text", "message"), [
    (edit("    split: val\n", "    split: holdout\n"),
     "F:4: field 'phases/0/split': 'holdout' is not a split of painting-vision ['train', 'val', 'test']"),
    (edit("  - name: test\n", "  - name: dev\n"), "F:12: field 'phases/1/name': phase 'dev' is defined twice"),
    (edit("2026-04-01T02:00:00+02:00", "2026-03-01T00:00:00Z"),
     "F:6: field 'phases/0/end': 2026-03-01T00:00:00+00:00 is not after the start 2026-03-01T00:00:00+00:00"),
    (edit("quota_per_day: 3", "quota_per_day: 30"), "F:7: field 'phases/0/quota_per_day': 30 is more than quota_total 20"),
    (edit("2026-03-01T00:00:00Z", "2026-02-30T00:00:00Z"),
     "F:5: field 'phases/0/start': '2026-02-30T00:00:00Z' is not a time: day is out of range for month"),
    (edit("benchmark: painting-vision", "benchmark: easyportrait"),
     "F:1: field 'benchmark': 'easyportrait' is not the file's stem 'painting-vision'"),
])
def test_a_wrong_value_is_named_with_its_line_and_field(tmp_path, text, message):
    assert refusal(tmp_path, text) == message


@pytest.mark.parametrize(("text", "line"), [
    (edit("2026-03-01T00:00:00Z", "2026-03-01T00:00:00"),  # no offset: not a UTC time
     "F:5: field 'phases/0/start': '2026-03-01T00:00:00' does not match"),
    (edit("2026-03-01T00:00:00Z", "2026-03-01"), "F:5: field 'phases/0/start': '2026-03-01' does not match"),
    (edit("private_fraction: 0.25", "private_fraction: 1"),
     "F:11: field 'phases/0/private_fraction': 1 is greater than or equal to the maximum of 1"),
    (edit("quota_total: 20", "quota_total: 0"), "F:8: field 'phases/0/quota_total': 0 is less than the minimum of 1"),
    (edit("selection: 2", "selection: best"), "F:9: field 'phases/0/selection': 'best' is not of type 'integer'"),
    (edit("show_scores: false", "show_score: false"),
     "F:3: field 'phases/0': Additional properties are not allowed ('show_score' was unexpected)"),
    (edit("    private_fraction: 0.5\n", ""), "F:12: field 'phases/1': 'private_fraction' is a required property"),
])
def test_a_schema_error_is_named_with_its_line_and_field(tmp_path, text, line):
    message = refusal(tmp_path, text)
    assert message.startswith("invalid phases:\n  " + line), message


def test_an_unknown_benchmark_and_a_file_that_is_not_yaml(tmp_path):
    assert refusal(tmp_path, "benchmark: nope\nphases: [{name: a, split: test, private_fraction: 0}]\n", "nope") == (
        f"unknown benchmark 'nope' (no {phases_path('x').parents[1] / 'benchmarks' / 'nope.yaml'}); "
        f"known: {known_benchmarks()}")
    assert refusal(tmp_path, "benchmark: [\n").startswith("F: not valid YAML: ")
    assert refusal(tmp_path, "").startswith("invalid phases:\n  F: field '(top level)': None is not of type 'object'")
