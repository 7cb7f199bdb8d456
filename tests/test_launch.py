"""segbench.server.launch: a server asked for port 0 announces where it serves, and a server that
stops before serving is reported with its output."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_fixtures import environment

from segbench.errors import SegbenchError
from segbench.server.launch import SERVING, announced, start_server


def test_the_announced_url_is_read_from_the_servers_output(tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_text("phase painting-vision/test: 20 frames\n")
    assert announced(log) is None
    log.write_text(f"phase painting-vision/test: 20 frames\n{SERVING}http://127.0.0.1:43117\n")
    assert announced(log) == "http://127.0.0.1:43117"


def test_a_server_that_stops_before_serving_is_reported_with_its_output(tmp_path: Path):
    missing = tmp_path / "none" / "server.db"
    with pytest.raises(SegbenchError) as raised:
        start_server(f"sqlite:///{missing}", log=tmp_path / "server.log", env=environment(), timeout=60)
    message = str(raised.value)
    assert message.startswith("the server stopped (exit status 1); its output (") and str(missing) in message
