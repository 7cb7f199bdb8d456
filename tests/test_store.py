"""The content-addressed store: a local folder and S3 (a local moto server), the same behaviour."""

from __future__ import annotations

import hashlib
import logging

import pytest

from segbench.errors import SegbenchError
from segbench.server.store import FolderStore, object_key, open_store

BUCKET = "segbench-store-test"


@pytest.fixture(scope="module")
def s3_url(tmp_path_factory):
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    settings = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s",
                "AWS_DEFAULT_REGION": "us-east-1"}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in settings.items():
            patch.setenv(key, value)
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        yield f"s3://{BUCKET}/deployment"
    server.stop()


@pytest.fixture(params=["folder", "s3"])
def store(request, tmp_path):
    return open_store(str(tmp_path / "store") if request.param == "folder" else request.getfixturevalue("s3_url"))


def blob(tmp_path, data: bytes):
    path = tmp_path / "blob"
    path.write_bytes(data)
    return path, hashlib.sha256(data).hexdigest()


def test_an_object_is_kept_and_read_back_by_its_digest(store, tmp_path):
    path, sha = blob(tmp_path, b"counts")
    assert not store.has(sha)
    store.put(path, sha)
    store.put(path, sha)  # the same bytes again: nothing new
    assert store.has(sha)
    assert store.fetch(sha, tmp_path / "back").read_bytes() == b"counts"


def test_a_missing_object_is_an_error_naming_it(store, tmp_path):
    sha = hashlib.sha256(b"never stored").hexdigest()
    with pytest.raises(SegbenchError, match=sha):
        store.fetch(sha, tmp_path / "back")


def test_a_damaged_object_is_refused_when_read(tmp_path):
    store = FolderStore(tmp_path / "store")
    path, sha = blob(tmp_path, b"right bytes")
    store.put(path, sha)
    store.path(sha).write_bytes(b"wrong bytes")
    with pytest.raises(SegbenchError, match=f"object {sha} holds bytes of SHA-256 {hashlib.sha256(b'wrong bytes').hexdigest()}"):
        store.fetch(sha, tmp_path / "back")
    assert not (tmp_path / "back").exists()


def test_a_folder_store_lays_objects_out_by_digest(tmp_path):
    store = FolderStore(tmp_path / "store")
    path, sha = blob(tmp_path, b"x")
    store.put(path, sha)
    assert [p.relative_to(tmp_path / "store").as_posix() for p in (tmp_path / "store").rglob("*") if p.is_file()] == [
        f"sha256/{sha[:2]}/{sha}"]


@pytest.mark.parametrize("key", ["../../etc/passwd", "A" * 64, "0" * 63, ""])
def test_only_a_sha256_digest_names_an_object(key):
    with pytest.raises(SegbenchError, match="not a SHA-256 digest"):
        object_key(key)


@pytest.mark.parametrize(("bucket", "problem"), [("no-such-bucket", "no such bucket"),
                                                 ("a bucket", 'Parameter validation failed: Invalid bucket name "a bucket"')])
def test_an_s3_store_that_cannot_be_opened_is_refused_when_opened(s3_url, bucket, problem):
    with pytest.raises(SegbenchError) as refused:
        open_store(f"s3://{bucket}/deployment")
    assert str(refused.value).startswith(f"s3://{bucket}/deployment: cannot open the S3 store: {problem}")


def test_init_refuses_a_store_it_cannot_open_before_it_makes_the_database(tmp_path, capsys):
    from segbench.commands.cli import main

    (tmp_path / "a-file").write_text("")
    store = tmp_path / "a-file" / "store"
    assert main(["server", "init", "--db", f"sqlite:///{tmp_path / 'server.db'}", "--store", str(store)]) == 1
    assert capsys.readouterr().err == (f"segbench: error: {store}: file not found: {tmp_path / 'a-file'} is a file, "
                                       "not a folder\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
