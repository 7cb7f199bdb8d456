"""io/schemas: the errors name the source and the field, the first ten of them; one schema may refer
to another by file name; the compiled check decides and the walk words the refusal."""

import fastjsonschema
import pytest

from segbench.errors import SegbenchError
from segbench.io.schemas import compiled, validate, validate_compiled

INTEGERS = {"type": "object", "properties": {f"k{i:02d}": {"type": "integer"} for i in range(12)}}


def refusal(*args) -> str:
    with pytest.raises(SegbenchError) as info:
        validate(*args)
    return str(info.value)


def test_an_error_names_the_source_and_the_field():
    schema = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}}}}
    assert refusal({"a": {"b": "x"}}, "config", "f.yaml", schema) == (
        "invalid config:\n  f.yaml: field 'a/b': 'x' is not of type 'integer'")
    assert refusal([], "config", "f.yaml", schema) == "invalid config:\n  f.yaml: field '(top level)': [] is not of type 'object'"
    validate({"a": {"b": 1}}, "config", "f.yaml", schema)  # valid: nothing raised


def test_the_first_ten_errors_in_field_order():
    document = {f"k{i:02d}": "x" for i in reversed(range(12))}
    lines = refusal(document, "config", "f", INTEGERS).splitlines()
    assert lines[0] == "invalid config:"
    assert lines[1:] == [f"  f: field 'k{i:02d}': 'x' is not of type 'integer'" for i in range(10)]


def test_a_schema_refers_to_another_by_file_name():
    assert refusal({}, "config", "f", {"$ref": "config.schema.json"}) == (
        "invalid config:\n  f: field '(top level)': 'benchmarks' is a required property\n"
        "  f: field '(top level)': 'models' is a required property")


def test_validate_compiled_passes_a_valid_document_and_words_a_refusal_as_validate():
    check = compiled(INTEGERS)
    validate_compiled({"k00": 1}, "config", "f", INTEGERS, check)
    with pytest.raises(SegbenchError) as info:
        validate_compiled({"k00": "x"}, "config", "f", INTEGERS, check)
    assert str(info.value) == "invalid config:\n  f: field 'k00': 'x' is not of type 'integer'"


def test_validate_compiled_where_only_the_compiled_check_refuses():
    def refusing(document):
        raise fastjsonschema.JsonSchemaValueException("data.k00 must be integer")  # what a compiled check raises

    with pytest.raises(SegbenchError) as info:
        validate_compiled({"k00": 1}, "config", "f", INTEGERS, refusing)
    assert str(info.value) == "invalid config:\n  f: data.k00 must be integer"
