"""The object store: uploads and per-frame counts kept by the SHA-256 of their bytes, in a local
folder or in S3 (boto3; the endpoint from boto3's own settings, e.g. AWS_ENDPOINT_URL).

Content addressing makes every write idempotent (the same bytes land on the same key, so a
worker that scores twice stores nothing new) and every read checkable (the bytes fetched must
hash to their key)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Protocol

from ..core.confusion import FrameCounts
from ..errors import SegbenchError
from ..io.fileio import sha256_file
from ..records.countsio import read_counts


def object_key(sha256: str) -> str:
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise SegbenchError(f"not a SHA-256 digest: {sha256!r}")
    return f"sha256/{sha256[:2]}/{sha256}"


class Store(Protocol):
    url: str

    def put(self, source: Path, sha256: str) -> None:
        """Keep the file `source` (whose SHA-256 is `sha256`) under its digest."""

    def has(self, sha256: str) -> bool: ...

    def fetch(self, sha256: str, destination: Path) -> Path:
        """The object's bytes at `destination`, checked against their digest."""


def checked(path: Path, sha256: str, url: str) -> Path:
    found = sha256_file(path)
    if found != sha256:
        path.unlink()
        raise SegbenchError(f"{url}: object {sha256} holds bytes of SHA-256 {found}: the store is damaged")
    return path


class FolderStore:
    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.url = str(self.folder)

    def path(self, sha256: str) -> Path:
        return self.folder / object_key(sha256)

    def put(self, source: Path, sha256: str) -> None:
        target = self.path(sha256)
        if target.exists():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        # A name of its own per writer (two workers may store the same counts at once), renamed
        # into place: the object appears whole or not at all.
        handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{sha256}.")
        os.close(handle)
        try:
            shutil.copyfile(source, partial)
            os.replace(partial, target)
        finally:
            if os.path.exists(partial):
                os.unlink(partial)

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def fetch(self, sha256: str, destination: Path) -> Path:
        source = self.path(sha256)
        if not source.is_file():
            raise SegbenchError(f"{self.url}: no object {sha256}")
        shutil.copyfile(source, destination)
        return checked(destination, sha256, self.url)


class S3Store:
    def __init__(self, url: str):
        import boto3

        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        if not bucket:
            raise SegbenchError(f"{url}: an S3 store is s3://BUCKET or s3://BUCKET/PREFIX")
        self.url, self.bucket, self.prefix = url, bucket, prefix.strip("/")
        self.client = boto3.client("s3")
        self.check()

    def check(self) -> None:
        """Refuse a bucket that cannot be reached now (no such bucket, no access, no credentials, no
        endpoint, an invalid name): at start, not at the first upload."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            problem = {"404": "no such bucket", "NoSuchBucket": "no such bucket", "403": "access denied"}.get(code, str(exc))
            raise SegbenchError(f"{self.url}: cannot open the S3 store: {problem}") from None
        except BotoCoreError as exc:  # no credentials, an endpoint that does not answer, a malformed name
            raise SegbenchError(f"{self.url}: cannot open the S3 store: {' '.join(str(exc).split())}") from None

    def key(self, sha256: str) -> str:
        return "/".join(p for p in (self.prefix, object_key(sha256)) if p)

    def put(self, source: Path, sha256: str) -> None:
        if not self.has(sha256):
            self.client.upload_file(str(source), self.bucket, self.key(sha256))  # an S3 object appears whole

    def has(self, sha256: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self.key(sha256))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise SegbenchError(f"{self.url}: {exc}") from None
        return True

    def fetch(self, sha256: str, destination: Path) -> Path:
        from botocore.exceptions import ClientError

        try:
            self.client.download_file(self.bucket, self.key(sha256), str(destination))
        except ClientError as exc:
            raise SegbenchError(f"{self.url}: cannot read object {sha256} ({exc})") from None
        return checked(destination, sha256, self.url)


def keep(store: Store, path: Path) -> str:
    """Put the file in the store under its SHA-256; returns the digest."""
    sha = sha256_file(path)
    store.put(path, sha)
    return sha


def stored_counts(store: Store, sha256: str) -> FrameCounts:
    """The per-frame counts kept under `sha256` (fetched to a temporary file, checked, read)."""
    with tempfile.TemporaryDirectory(prefix="segbench-counts-") as folder:
        counts, _ = read_counts(store.fetch(sha256, Path(folder) / "counts.parquet"))
    return counts


def open_store(url: str) -> Store:
    """A store from its URL: s3://BUCKET[/PREFIX], or a local folder (made if missing)."""
    if url.startswith("s3://"):
        return S3Store(url)
    folder = Path(url)
    folder.mkdir(parents=True, exist_ok=True)
    if not os.access(folder, os.W_OK):
        raise SegbenchError(f"{folder}: the store folder is not writable")
    return FolderStore(folder)
