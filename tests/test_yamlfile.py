"""io/yamlfile.py: a YAML file with the line of every field, and syntax errors named by file and line."""

from __future__ import annotations

import pytest
import yaml

from segbench.errors import SegbenchError
from segbench.io.yamlfile import read_yaml_file

TEXT = "a: 1\nb:\n  c: x\n  d:\n    - 5\n    - e: 6\n"


def test_every_field_has_its_line(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text(TEXT)
    read = read_yaml_file(path, yaml.SafeLoader, name="F")
    assert read.document == {"a": 1, "b": {"c": "x", "d": [5, {"e": 6}]}}
    assert read.lines == {("a",): 1, ("b",): 2, ("b", "c"): 3, ("b", "d"): 4, ("b", "d", "0"): 5,
                          ("b", "d", "1"): 6, ("b", "d", "1", "e"): 6}
    assert read.at(["b", "d", 1, "e"]) == "F:6"
    assert read.at(["b", "missing"]) == "F:2"  # a missing field is named where its parent is
    assert read.at(["nowhere"]) == "F"


@pytest.mark.parametrize("text, message", [
    ("a: [\n", "F:2: not valid YAML: expected the node content, but found '<stream end>' (while parsing a flow node at line 2)"),
    ("a: 1\n b: 2\n", "F:2: not valid YAML: mapping values are not allowed here"),
])
def test_a_syntax_error_names_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(SegbenchError) as err:
        read_yaml_file(path, yaml.SafeLoader, name="F")
    assert str(err.value) == message


def test_unreadable_and_not_utf8(tmp_path):
    with pytest.raises(SegbenchError, match=r"^F: file not found$"):
        read_yaml_file(tmp_path / "absent.yaml", yaml.SafeLoader, name="F")
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"a: \xe9\n")
    with pytest.raises(SegbenchError, match=r"^F: not UTF-8 text \(invalid continuation byte at byte 3\)$"):
        read_yaml_file(path, yaml.SafeLoader, name="F")
