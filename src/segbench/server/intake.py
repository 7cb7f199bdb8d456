"""An upload's intake: the body streamed to a temporary file (the size limit enforced while it is
read, the SHA-256 computed as it goes, never held whole in memory), then the CLI's own checks
(`segbench check-submission`: stages.uploads.check_upload) against the phase's hidden split.

A refusal carries the CLI's message, with the temporary file's path replaced by the name the
upload is known by (`upload.zip`) and the hidden data's folder by `<hidden data>`."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import SegbenchError
from ..stages.uploads import check_upload
from .hidden import HiddenSplit

UPLOAD_NAME = "upload.zip"
HIDDEN_DATA = "<hidden data>"


class TooLarge(SegbenchError):
    """The body passed the size limit while it was read."""


@dataclass(frozen=True)
class Received:
    path: Path
    sha256: str
    size: int


async def receive(chunks: AsyncIterator[bytes], limit: int) -> Received:
    """Write the body to a new temporary file, refusing it as soon as it passes `limit` bytes.
    The caller removes the file (`discard`) once it is stored or refused."""
    digest, size = hashlib.sha256(), 0
    handle, name = tempfile.mkstemp(prefix="upload-", suffix=".zip")
    try:
        with os.fdopen(handle, "wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise TooLarge(f"{UPLOAD_NAME}: more than the upload limit of {limit} bytes")
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        os.unlink(name)
        raise
    return Received(Path(name), digest.hexdigest(), size)


def discard(received: Received) -> None:
    received.path.unlink(missing_ok=True)


def check(hidden: HiddenSplit, upload: Path, shown_as: str = UPLOAD_NAME) -> dict:
    """The CLI's checks of an upload against the hidden split; a SegbenchError names the upload
    `shown_as` (a team's: `upload.zip`)."""
    try:
        return check_upload(hidden.benchmark, hidden.listed, hidden.dataset_id, upload,
                            hidden.benchmark.ground_truth, hidden.data)
    except SegbenchError as exc:  # the server's folders are nobody's business
        message = str(exc).replace(str(upload), shown_as).replace(str(hidden.data), HIDDEN_DATA)
        raise SegbenchError(message) from None
