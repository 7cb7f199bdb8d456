"""The one wording of an OS error on a file (segbench.io.oserrors), from real errors made in
tmp_path, and the same wording from every reader that meets them."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from segbench.errors import SegbenchError
from segbench.io.fileio import atomic_write_text, read_json, sha256_file
from segbench.io.maskio import read_mask, read_rgb
from segbench.io.oserrors import file_error, file_problem, from_the_file_system
from segbench.io.yamlfile import read_yaml_file
from segbench.records.countsio import read_counts
from segbench.records.provenance import read_manifest_text


def raised(call) -> OSError | UnicodeDecodeError:
    with pytest.raises((OSError, UnicodeDecodeError)) as info:
        call()
    return info.value


def test_a_missing_file_is_not_found_by_its_role(tmp_path):
    exc = raised(lambda: (tmp_path / "gone.json").read_text())
    assert file_problem(exc, tmp_path / "gone.json") == f"{tmp_path / 'gone.json'}: file not found"
    assert file_problem(exc, tmp_path / "gone.json", "data manifest") == f"{tmp_path / 'gone.json'}: data manifest not found"
    assert file_problem(exc) == f"{tmp_path / 'gone.json'}: file not found"  # the exception's own file name


def test_a_folder_where_a_file_is_expected(tmp_path):
    exc = raised(lambda: tmp_path.read_bytes())
    assert file_problem(exc, tmp_path, "counts file") == f"{tmp_path}: is a folder, expected a file"
    assert file_problem(exc, tmp_path, doing="write") == f"{tmp_path}: cannot write: it is a folder"


def test_a_path_through_a_regular_file_names_that_file(tmp_path):
    (tmp_path / "plain").write_text("x")
    path = tmp_path / "plain" / "sub" / "m.json"
    exc = raised(lambda: path.read_text())
    assert errno_name(exc) == "ENOTDIR"
    assert file_problem(exc, path, "data manifest") == (
        f"{path}: data manifest not found: {tmp_path / 'plain'} is a file, not a folder")
    made = raised(lambda: path.parent.mkdir(parents=True, exist_ok=True))
    assert file_problem(made, path, doing="write") == f"{path}: cannot write: {tmp_path / 'plain'} is a file, not a folder"


def test_a_symbolic_link_loop(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    exc = raised(lambda: (tmp_path / "a").read_text())
    assert errno_name(exc) == "ELOOP"
    assert file_problem(exc, tmp_path / "a") == f"{tmp_path / 'a'}: cannot read: a loop of symbolic links"


def test_a_name_too_long(tmp_path):
    path = tmp_path / ("n" * 300)
    exc = raised(lambda: path.read_text())
    assert errno_name(exc) == "ENAMETOOLONG"
    assert file_problem(exc, path, doing="write") == f"{path}: cannot write: the path, or a name in it, is too long"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file without read permission")
def test_a_file_without_read_permission(tmp_path):
    path = tmp_path / "secret.json"
    path.write_text("{}")
    path.chmod(0)
    exc = raised(lambda: path.read_text())
    assert file_problem(exc, path) == f"{path}: cannot read: permission denied"
    with pytest.raises(SegbenchError) as info:
        read_json(path)
    assert str(info.value) == f"{path}: cannot read: permission denied"


@pytest.mark.parametrize("code, wording", [
    (errno.ENOSPC, "cannot write: no space left on the device"),
    (errno.EROFS, "cannot write: read-only file system"),
    (errno.EDQUOT, "cannot write: over the disk quota"),
    (errno.EACCES, "cannot write: permission denied"),  # made by hand too: the suite may run as root
    (errno.EIO, "cannot write: input/output error"),  # not in the table: the system's words
])
def test_what_keeps_a_file_from_being_written(code, wording):
    exc = OSError(code, os.strerror(code), "out/x.json")
    assert file_problem(exc, doing="write") == f"out/x.json: {wording}"


def test_an_error_without_errno_or_file_name():
    assert file_problem(FileNotFoundError(), "m.parquet", "counts file") == "m.parquet: counts file not found"
    assert file_problem(OSError("odd"), doing="access") == "cannot access: odd"
    assert not from_the_file_system(OSError("image file is truncated"))  # Pillow's: a decoder's complaint
    assert from_the_file_system(FileNotFoundError()) and not from_the_file_system(ValueError())


def test_not_utf8_text(tmp_path):
    (tmp_path / "latin.txt").write_bytes(b"ok \xe9t\xe9")
    exc = raised(lambda: (tmp_path / "latin.txt").read_text(encoding="utf-8"))
    assert file_problem(exc, "L") == "L: not UTF-8 text (invalid continuation byte at byte 3)"
    assert isinstance(file_error(exc, "L"), SegbenchError)


def readers(path: Path) -> dict[str, object]:
    """Each reader of a file, on `path`."""
    return {
        "sha256_file": lambda: sha256_file(path),
        "read_json": lambda: read_json(path),
        "read_mask": lambda: read_mask(path),
        "read_rgb": lambda: read_rgb(path),
        "read_counts": lambda: read_counts(path),
        "read_yaml_file": lambda: read_yaml_file(path, yaml.SafeLoader),
        "read_manifest_text": lambda: read_manifest_text(path),
    }


def errors_of(path: Path) -> dict[str, str]:
    found = {}
    for name, call in readers(path).items():
        with pytest.raises(SegbenchError) as info:
            call()
        found[name] = str(info.value)
    return found


def test_every_reader_words_an_os_error_the_same(tmp_path):
    (tmp_path / "plain").write_text("x")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    roles = {"read_counts": "counts file", "read_manifest_text": "data manifest"}
    cases = {
        tmp_path / "gone": "{path}: {what} not found",
        tmp_path: "{path}: is a folder, expected a file",
        tmp_path / "plain" / "x": "{path}: {what} not found: " + f"{tmp_path / 'plain'} is a file, not a folder",
        tmp_path / "loop": "{path}: cannot read: a loop of symbolic links",
    }
    for path, wording in cases.items():
        assert errors_of(path) == {name: wording.format(path=path, what=roles.get(name, "file"))
                                   for name in readers(path)}, path


def test_a_write_into_a_path_through_a_file(tmp_path):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(SegbenchError) as info:
        atomic_write_text(tmp_path / "plain" / "t.txt", "y")
    assert str(info.value) == f"{tmp_path / 'plain' / 't.txt'}: cannot write: {tmp_path / 'plain'} is a file, not a folder"


def errno_name(exc: OSError) -> str:
    return errno.errorcode[exc.errno]


# A process writing to stdout until the reader has gone, then to a second pipe whose reader has gone.
READER_GONE = """
import os, sys
from segbench.io.oserrors import output_reader_gone
own_read, own_write = os.pipe()
os.close(own_read)
try:
    os.write(own_write, b"x")
except BrokenPipeError as exc:
    print("another pipe:", output_reader_gone(exc), file=sys.stderr)
try:
    while True:
        sys.stdout.write("line\\n" * 1000)
        sys.stdout.flush()
except BrokenPipeError as exc:
    print("stdout:", output_reader_gone(exc), file=sys.stderr)
"""


def test_only_stdouts_own_broken_pipe_is_its_reader_gone_and_the_exit_stays_quiet():
    """`segbench ... | head`: stdout's broken pipe ends the command quietly (EXIT_READER_GONE);
    a broken pipe of anything else is an error like any other."""
    with subprocess.Popen([sys.executable, "-c", READER_GONE], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        child.stdout.read(10)
        child.stdout.close()
        _, err = child.communicate(timeout=60)
    assert (child.returncode, err.decode()) == (0, "another pipe: False\nstdout: True\n")
