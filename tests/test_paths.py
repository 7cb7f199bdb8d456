"""Where the project's data files live (io/paths.py): the checkout, or $SEGBENCH_ROOT."""

from __future__ import annotations

from pathlib import Path

from segbench.io.paths import config_dir, project_root, schema_dir, schema_path

CHECKOUT = Path(__file__).resolve().parents[1]


def test_default_root_is_the_checkout(monkeypatch):
    monkeypatch.delenv("SEGBENCH_ROOT", raising=False)
    assert project_root() == CHECKOUT
    assert config_dir() == CHECKOUT / "config"
    assert schema_dir() == CHECKOUT / "workflow" / "schemas"


def test_environment_variable_moves_every_path(monkeypatch, tmp_path):
    monkeypatch.setenv("SEGBENCH_ROOT", str(tmp_path))
    assert project_root() == tmp_path
    assert config_dir() == tmp_path / "config"
    assert schema_path("manifest") == tmp_path / "workflow" / "schemas" / "manifest.schema.json"


def test_empty_environment_variable_is_unset(monkeypatch):
    monkeypatch.setenv("SEGBENCH_ROOT", "")
    assert project_root() == CHECKOUT
