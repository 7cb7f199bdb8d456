"""records/identity: a model's identity record written and read back, its label space the
benchmark's own when the names agree, and the records refused."""

import json

import pytest

from segbench.core.model_spec import ModelSpec
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.identity import ModelIdentity, identity_document, read_identity, space_named, write_identity

PV = load_benchmark("painting-vision")
SPEC = ModelSpec.from_entry("best", {"kind": "checkpoint", "path": "artifacts/best.pt", "label_space": "painting-vision-10"})
IDENTITY = ModelIdentity("best", "checkpoint", "painting-vision-10", "ab" * 32)


def test_the_document_holds_the_classes_the_path_and_the_spec():
    space = PV.space("painting-vision-10")
    assert identity_document(IDENTITY, space, SPEC) == {
        "name": "best", "kind": "checkpoint", "label_space": "painting-vision-10", "classes": list(space.names),
        "checkpoint_sha256": "ab" * 32, "path": "artifacts/best.pt", "spec": SPEC.entry()}


def test_written_and_read_back(tmp_path):
    space = PV.space("painting-vision-10")
    write_identity(tmp_path / "identity.json", IDENTITY, space, SPEC)
    identity, read_space, spec = read_identity(tmp_path / "identity.json", PV)
    assert identity == IDENTITY
    assert read_space is space  # the benchmark's own
    assert spec == SPEC


def test_a_space_of_a_known_name_but_other_classes_is_its_own():
    own = space_named(PV, "painting-vision-10", list(PV.space("painting-vision-10").names))
    assert own is PV.space("painting-vision-10")
    other = space_named(PV, "painting-vision-10", ["wall", "window"])
    assert other is not own and other.name == "painting-vision-10" and list(other.names) == ["wall", "window"]
    assert list(space_named(PV, "mine", ["a"]).names) == ["a"]


def test_records_that_are_not_identities(tmp_path):
    path = tmp_path / "identity.json"
    path.write_text("[]")
    with pytest.raises(SegbenchError, match=r"identity\.json: identity record must be a JSON object$"):
        read_identity(path, PV)
    path.write_text(json.dumps({"name": "best", "kind": "checkpoint", "label_space": "x", "classes": []}))
    with pytest.raises(SegbenchError, match=r"identity\.json: identity record lacks the field\(s\) "
                                            r"\['checkpoint_sha256', 'path', 'spec'\] \(written by `segbench identify`\)$"):
        read_identity(path, PV)
    with pytest.raises(SegbenchError, match=r"missing\.json: identity record \(written by `segbench identify`\) not found$"):
        read_identity(tmp_path / "missing.json", PV)
