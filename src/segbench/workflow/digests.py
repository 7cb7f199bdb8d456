"""The SHA-256 of the files the workflow identifies by content, computed when the DAG is built and
kept between starts, so that a start reads each unchanged file's state (one stat) and not its bytes.

A digest is kept per file identity (device and inode) with the size and modification time it was
computed at: a touched file is hashed again (and found the same), a file moved within its disk
keeps its digest, a copy elsewhere is hashed once. The store is a JSON file under .snakemake/,
written only when something was hashed (a dry run after a change writes it too: it holds what the
files are, not what the workflow did).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from ..errors import SegbenchError
from ..io.fileio import atomic_write_text, sha256_file
from ..io.maskio import image_size
from ..io.oserrors import file_error

STORE_VERSION = 1


class DigestCache:
    """Each file's SHA-256 (and, for a ground truth, its image size), by file identity and state."""

    def __init__(self, store: Path | None):
        self.store = store
        self._entries: dict[str, list] = {}
        self._changed = False
        if store is not None and store.is_file():
            try:
                kept = json.loads(store.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                kept = None  # unreadable: every file is hashed again and the store rewritten
            if isinstance(kept, dict) and kept.get("version") == STORE_VERSION:
                self._entries = kept.get("files", {})

    def _entry(self, path: str) -> tuple[str, list]:
        try:
            st = os.stat(path)
        except OSError as exc:
            raise file_error(exc, Path(path)) from None
        if not stat.S_ISREG(st.st_mode):
            raise SegbenchError(f"{path}: not a file")
        key = f"{st.st_dev}:{st.st_ino}"
        entry = self._entries.get(key)
        if entry is None or entry[0] != st.st_size or entry[1] != st.st_mtime_ns:
            entry = [st.st_size, st.st_mtime_ns, sha256_file(Path(path)), None]
            self._entries[key] = entry
            self._changed = True
        return key, entry

    def sha256(self, path: str) -> str:
        return self._entry(path)[1][2]

    def image_size(self, path: str) -> list[int]:
        """[width, height] from the image's header, kept with its digest."""
        key, entry = self._entry(path)
        if entry[3] is None:
            entry[3] = list(image_size(Path(path)))
            self._changed = True
        return entry[3]

    def folder(self, path: str) -> dict[str, str]:
        """Every file under a folder, by its path relative to the folder, with its SHA-256."""
        root = Path(path)
        files = sorted(f for f in root.rglob("*") if f.is_file())
        return {f.relative_to(root).as_posix(): self.sha256(str(f)) for f in files}

    def save(self) -> None:
        """Keep what was hashed for the next start (nothing to do when nothing was)."""
        if self.store is None or not self._changed:
            return
        try:
            self.store.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.store, json.dumps({"version": STORE_VERSION, "files": self._entries},
                                                     separators=(",", ":")))
        except (OSError, SegbenchError):
            return  # a read-only work folder: hashed again at the next start
        self._changed = False
