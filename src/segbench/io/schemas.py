"""JSON Schema validation of data files, with errors that name the file and the field."""

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
from referencing import Registry, Resource

from ..errors import SegbenchError
from .paths import schema_dir, schema_path

SUFFIX = ".schema.json"


@cache
def load_schema(name: str) -> dict[str, Any]:
    return json.loads(schema_path(name).read_text())


@cache
def registry() -> Registry:
    """Every schema of workflow/schemas by file name, so one may `$ref` another ("x.schema.json#/...")."""
    return Registry().with_resources(
        (path.name, Resource.from_contents(load_schema(path.name.removesuffix(SUFFIX))))
        for path in sorted(schema_dir().glob(f"*{SUFFIX}"))
    )


def error_path(error: jsonschema.ValidationError) -> list[Any]:
    """The field an error is about: a key that breaks `propertyNames` is a field of its own."""
    at = list(error.absolute_path)
    return at + [error.instance] if "propertyNames" in error.absolute_schema_path else at


def field_path(error: jsonschema.ValidationError) -> str:
    return "/".join(str(p) for p in error_path(error)) or "(top level)"


def validate(document: Any, schema_name: str, source: str | Path | Callable[[list[Any]], str],
             schema: dict[str, Any] | None = None) -> None:
    """Raise SegbenchError naming `source`, the field and what was expected, on the first error.
    `source`: a name, or a function giving the place ('file:line') of a field's path.
    `schema`: a variant of the named one to check against instead (with a benchmark's field names)."""
    schema = load_schema(schema_name) if schema is None else schema
    validator = jsonschema.Draft202012Validator(schema, registry=registry())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{source(error_path(e)) if callable(source) else source}: field '{field_path(e)}': {e.message}"
                 for e in errors[:10]]
        raise SegbenchError("invalid " + schema_name + ":\n  " + "\n  ".join(lines))


def compiled(schema: dict[str, Any]) -> Callable[[Any], Any]:
    """`schema` compiled to Python (fastjsonschema), for documents read often and large: it passes
    a valid manifest of 20,000 frames in a small fraction of jsonschema's time."""
    return fastjsonschema.compile(schema)


def validate_compiled(document: Any, schema_name: str, source: str | Path, schema: dict[str, Any],
                      check: Callable[[Any], Any]) -> None:
    """validate(), with `check` (compiled(schema)) deciding: only a document it refuses is walked by
    jsonschema, whose errors name every field as validate() words them."""
    try:
        check(document)
    except fastjsonschema.JsonSchemaException as exc:
        validate(document, schema_name, source, schema)
        raise SegbenchError(f"invalid {schema_name}:\n  {source}: {exc.message}") from None
