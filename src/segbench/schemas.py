"""JSON Schema validation of data files, with errors that name the file and the field."""

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from .errors import SegbenchError
from .paths import schema_path


@cache
def load_schema(name: str) -> dict[str, Any]:
    return json.loads(schema_path(name).read_text())


def field_path(error: jsonschema.ValidationError) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def validate(document: Any, schema_name: str, source: str | Path) -> None:
    """Raise SegbenchError naming `source`, the field and what was expected, on the first error."""
    schema = load_schema(schema_name)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{source}: field '{field_path(e)}': {e.message}" for e in errors[:10]]
        raise SegbenchError("invalid " + schema_name + ":\n  " + "\n  ".join(lines))
