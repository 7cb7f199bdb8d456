"""io/archives: which entry names are refused, the ratio and size limits, a model zip's checks."""

import zipfile

import pytest

from segbench.errors import SegbenchError
from segbench.io.archives import (ARCHIVE_OVER_LIMITS, ENTRY_TOO_LARGE, REFUSED_ENTRY, bad_name, is_archive,
                                  member_checks, ratio_problem, verify_model_zip)
from segbench.io.limits import LIMITS
from segbench.io.problems import Problems


@pytest.mark.parametrize("name, problem", [
    ("/etc/passwd", "an absolute name"),
    ("C:evil.png", "an absolute name"),
    ("a\\b.png", "a name with a backslash"),
    ("a/../b.png", "a name with '..'"),
    ("..", "a name with '..'"),
    ("a//b.png", "a name with an empty or '.' part"),
    ("./a.png", "a name with an empty or '.' part"),
    ("a.png", None),
    ("sub/", None),  # a folder entry: its trailing slash is no empty part
    ("..a/b..png", None),
])
def test_bad_name(name, problem):
    assert bad_name(name) == problem


def test_ratio_problem_at_and_over_the_limit():
    assert ratio_problem(LIMITS.max_ratio * 10, 10) is None
    assert ratio_problem(LIMITS.max_ratio * 10 + 1, 10) == (
        f"compresses {LIMITS.max_ratio * 10 + 1} bytes into 10, a ratio above the limit of {LIMITS.max_ratio}")
    assert ratio_problem(5, 0) is None  # a stored empty member


@pytest.mark.parametrize("name, archive", [("p.zip", True), ("P.TAR.GZ", True), ("p.tgz", True), ("p.tar", True),
                                           ("p.gz", False), ("p.png", False), ("zip", False)])
def test_is_archive(name, archive):
    assert is_archive(name) is archive


def test_member_checks_name_each_entry_over_a_limit_and_the_total():
    entries = [("a.png", None, 6), ("../b.png", "a name with '..'", 1), ("c.png", None, 5)]
    problems = Problems()
    assert member_checks("s.zip", entries, archive_bytes=100, max_entry=5, max_total=11, problems=problems) is True
    assert problems.by_kind == {
        REFUSED_ENTRY: ["s.zip: ../b.png: refused: a name with '..'"],
        ENTRY_TOO_LARGE: ["s.zip: a.png: 6 bytes uncompressed, more than the limit of 5"],
        ARCHIVE_OVER_LIMITS: ["s.zip: 12 bytes uncompressed in all, more than the limit of 11"],
    }
    at_limits = Problems()
    assert member_checks("s.zip", [("a.png", None, 6)], archive_bytes=100, max_entry=6, max_total=6,
                         problems=at_limits) is False
    assert len(at_limits) == 0


def test_an_entry_over_its_limit_alone_does_not_refuse_the_archive_as_a_whole():
    problems = Problems()
    assert member_checks("s.zip", [("a.png", None, 6), ("b.png", None, 1)], archive_bytes=100, max_entry=5,
                         max_total=100, problems=problems) is False
    assert problems.by_kind == {ENTRY_TOO_LARGE: ["s.zip: a.png: 6 bytes uncompressed, more than the limit of 5"]}


def test_member_checks_refuse_an_archive_bomb_as_a_whole():
    total = LIMITS.max_ratio * 3 + 1
    problems = Problems()
    assert member_checks("s.zip", [("a", None, total)], archive_bytes=3, max_entry=total, max_total=total,
                         problems=problems) is True
    assert problems.by_kind == {ARCHIVE_OVER_LIMITS: [
        f"s.zip: {total} bytes uncompressed from 3 bytes, a ratio above the limit of {LIMITS.max_ratio} "
        "(an archive bomb?)"]}


def test_verify_model_zip_leaves_other_files_to_torch(tmp_path):
    (tmp_path / "m.pt").write_bytes(b"not a zip")
    assert verify_model_zip(tmp_path / "m.pt") is None


def test_verify_model_zip_checks_every_members_crc(tmp_path):
    path = tmp_path / "m.pt"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("m/data.pkl", b"payload-bytes")
    verify_model_zip(path)  # intact
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b"payload-bytes", b"payload-bytez"))
    with pytest.raises(SegbenchError, match=r"m\.pt: member m/data\.pkl is damaged \(Bad CRC-32 for file 'm/data\.pkl'\)$"):
        verify_model_zip(path)


def test_verify_model_zip_refuses_a_member_named_outside(tmp_path):
    path = tmp_path / "m.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("../escape", b"x")
    with pytest.raises(SegbenchError, match=r"m\.pt: archive refused: 1 problem:\n  refused entries \(1\):\n    .*m\.pt: \.\./escape: "
                                            r"refused: a name with '\.\.'$"):
        verify_model_zip(path)
