"""The client's upload (`segbench submit`): `Expect: 100-continue`, so a refusal the server gives
from the request's head reaches the team, against small standard-library servers that answer
the ways a server may: 100 Continue then the answer, a final answer before the body, 417, or no
interim answer at all (an HTTP/1.0 server: the body is sent after the wait); each plain and
behind TLS."""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from segbench.errors import SegbenchError
from segbench.server import client


class Recorder(BaseHTTPRequestHandler):
    """Answers a POST with the SHA-free facts of what it received: its Expect header and its body."""

    protocol_version = "HTTP/1.1"  # http.server sends "100 Continue" for HTTP/1.1 requests that ask
    received: list[tuple[str | None, bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.headers.get("Expect"), body))
        self.answer(201, {"id": "s1", "status": "queued", "path": self.path})

    def answer(self, status: int, document: dict) -> None:
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


class Refuser(Recorder):
    """Refuses from the head, as the segbench server refuses a wrong token, before any body."""

    def handle_expect_100(self) -> bool:
        self.answer(401, {"error": "the token is not a live team's"})
        self.close_connection = True
        return False


class UnsizedRefuser(Recorder):
    """Refuses from the head with no Content-Length: its answer ends with the connection."""

    def handle_expect_100(self) -> bool:
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(json.dumps({"error": "the token is not a live team's"}).encode())
        self.close_connection = True
        return False


class Unexpecting(Recorder):
    """Answers an expectation with 417 Expectation Failed (as an old proxy does), and takes the
    upload sent again without one."""

    def handle_expect_100(self) -> bool:
        self.answer(417, {"error": "expectations are not supported"})
        self.close_connection = True
        return False


class Silent(Recorder):
    """An HTTP/1.0 server: no interim answer; reads the body when it comes."""

    protocol_version = "HTTP/1.0"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """(certificate, key) of a self-signed certificate for 127.0.0.1, as a TLS proxy in front of the
    server would hold one; the client trusts it through $SSL_CERT_FILE."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(hours=1))
                   .not_valid_after(now + timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    return folder / "cert.pem", folder / "key.pem"


@pytest.fixture(params=["http", "https"])
def serving(request, certificate, monkeypatch):
    """serving(handler) -> (server, its URL): plain, or behind TLS (over TLS the socket turns
    readable with the session tickets, before any answer)."""
    monkeypatch.setattr(client, "CONTINUE_WAIT", 0.2)
    monkeypatch.setattr(client, "TIMEOUT", 20.0)  # a client waiting for an answer that never comes fails soon
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))

    def serve(handler: type[Recorder]):
        handler.received = []
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        if request.param == "https":
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*certificate)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server, f"{request.param}://127.0.0.1:{server.server_address[1]}"

    return serve


@pytest.fixture
def upload(tmp_path) -> Path:
    path = tmp_path / "upload.zip"
    path.write_bytes(bytes(range(256)) * 40_000)  # 10 MB: more than a socket's buffers hold
    return path


@pytest.mark.parametrize("handler", [Recorder, Silent])
def test_the_body_is_sent_after_100_continue_or_after_the_wait(serving, handler, upload):
    server, url = serving(handler)
    try:
        answer = client.submit(url, "t", "painting-vision", "test", upload, "m 1")
    finally:
        server.shutdown()
    assert answer == {"id": "s1", "status": "queued",
                      "path": "/api/v1/benchmarks/painting-vision/phases/test/submissions?method=m+1&description="}
    assert handler.received == [("100-continue", upload.read_bytes())]


def test_a_server_that_fails_the_expectation_is_sent_the_upload_again_without_it(serving, upload):
    server, url = serving(Unexpecting)
    try:
        answer = client.submit(url, "t", "painting-vision", "test", upload)
    finally:
        server.shutdown()
    assert answer["id"] == "s1" and Unexpecting.received == [(None, upload.read_bytes())]


@pytest.mark.parametrize("refuser", [Refuser, UnsizedRefuser])
def test_a_refusal_from_the_head_is_read_before_the_body_is_sent(serving, refuser, upload):
    server, url = serving(refuser)
    try:
        with pytest.raises(SegbenchError) as info:
            client.submit(url, "t", "painting-vision", "test", upload)
    finally:
        server.shutdown()
    assert str(info.value) == f"{url}: refused (401): the token is not a live team's"
    assert refuser.received == []


def test_a_closed_port_cannot_be_reached(upload):
    with socket.socket() as probe:  # a port nothing listens on once this is closed
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(SegbenchError) as info:
        client.submit(url, "t", "painting-vision", "test", upload)
    assert str(info.value) == f"{url}: cannot reach the server ([Errno 111] Connection refused)"


def test_the_upload_goes_through_the_environments_proxy(monkeypatch):
    monkeypatch.setenv("http_proxy", "http://proxy.example:3128")
    monkeypatch.setenv("https_proxy", "http://proxy.example:3129")
    monkeypatch.delenv("no_proxy", raising=False)
    plain, target = client.connection_to(client.urllib.parse.urlsplit("http://bench.example/api/v1/x?a=1"))
    assert (plain.host, plain.port, target) == ("proxy.example", 3128, "http://bench.example/api/v1/x?a=1")
    tunnelled, target = client.connection_to(client.urllib.parse.urlsplit("https://bench.example:8443/api/v1/x"))
    assert (tunnelled.host, tunnelled.port, target) == ("proxy.example", 3129, "/api/v1/x")
    monkeypatch.setenv("no_proxy", "bench.example")
    direct, target = client.connection_to(client.urllib.parse.urlsplit("https://bench.example:8443/api/v1/x"))
    assert (direct.host, direct.port, target) == ("bench.example", 8443, "/api/v1/x")
