"""Starting `segbench server run` as a process and learning where it serves: the server binds its
port before its first request and announces the address in one line (`serving on URL`), so a
caller asking for port 0 gets a port no other process can take in between (a port probed free
and then handed to the server can be taken by another server first, and the caller would then
talk to that one)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from ..errors import SegbenchError

SERVING = "serving on "  # the line's start; the URL follows


def start_server(db_url: str, *options: str, log: Path, port: int = 0, env: dict[str, str] | None = None,
                 timeout: float = 120.0, **popen) -> tuple[subprocess.Popen, str]:
    """`segbench server run --db DB_URL --port PORT OPTIONS` as a process writing its output to
    `log`, and its URL once it answers (`popen`: further arguments of subprocess.Popen)."""
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, "-m", "segbench", "server", "run", "--db", db_url, "--port", str(port),
                                    *options], env=env, stdout=output, stderr=subprocess.STDOUT, **popen)
    try:
        return process, wait_until_serving(process, log, timeout)
    except BaseException:
        process.kill()
        process.wait()
        raise


def wait_until_serving(process: subprocess.Popen, log: Path, timeout: float) -> str:
    """The URL `process` announced in `log`, once the server answers there."""
    deadline = time.monotonic() + timeout
    url = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SegbenchError(f"the server stopped (exit status {process.returncode}); its output ({log}):\n"
                                f"{log.read_text(errors='replace')}")
        url = url or announced(log)
        if url is not None:
            try:
                with urllib.request.urlopen(f"{url}/api/v1/phases", timeout=5):
                    return url
            except OSError:  # bound, not yet listening
                pass
        time.sleep(0.1)
    raise SegbenchError(f"the server did not answer within {timeout:.0f} s; its output: {log}")


def announced(log: Path) -> str | None:
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith(SERVING):
            return line[len(SERVING):].strip()
    return None
