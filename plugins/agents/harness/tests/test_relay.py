"""The relay between a harness container's network and the endpoints it may reach (no Docker needed here: the
relay is plain TCP, bound on loopback in these tests), and how the Docker place rewrites endpoint URLs."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_harness.docker_place import DockerPlace
from agentenv_harness.relay import Relay, is_loopback_host


@pytest.fixture
def upper_server() -> Iterator[tuple[str, int]]:
    """A server that answers each connection with what it received, upper-cased, once the client half-closed."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                received = b""
                while chunk := connection.recv(65536):
                    received += chunk
                connection.sendall(received.upper())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield "127.0.0.1", server.getsockname()[1]
    server.shutdown(socket.SHUT_RDWR)  # wakes the accept(): a close alone leaves the thread in it for good
    server.close()
    thread.join(10)


def test_the_relay_copies_both_ways_and_keeps_a_half_close(upper_server: tuple[str, int]) -> None:
    relay = Relay("127.0.0.1")
    try:
        port = relay.forward(*upper_server)
        assert port != upper_server[1]
        payload = b"post /v1/messages " * 10_000  # more than one chunk
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(payload)
            client.shutdown(socket.SHUT_WR)  # the answer still comes back after the client is done sending
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        assert answer == payload.upper()
    finally:
        relay.close()


def test_closing_the_relay_cuts_open_connections_and_stops_listening(upper_server: tuple[str, int]) -> None:
    relay = Relay("127.0.0.1")
    port = relay.forward(*upper_server)
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(b"waiting")
    relay.close()
    client.settimeout(10)
    with contextlib.suppress(ConnectionResetError):  # cut (closed or reset), not left hanging
        assert client.recv(10) == b""
    client.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2)


def test_endpoint_urls_as_the_container_sees_them(tmp_path: Path) -> None:
    place = object.__new__(DockerPlace)  # no engine: only the URL rewriting, on a relay bound on loopback
    place.relay, place.gateway, place.ports, place.hosts = Relay("127.0.0.1"), "10.9.0.1", {}, {}
    try:
        local = place.url("http://127.0.0.1:8788/v1?x=1")
        assert local.startswith("http://10.9.0.1:") and local.endswith("/v1?x=1")
        assert place.url("http://127.0.0.1:8788/mcp").split("/mcp")[0] == local.split("/v1")[0]  # one port each
        assert place.url("http://localhost:9000/").startswith("http://10.9.0.1:")
        remote = place.url("https://api.anthropic.com/v1")
        assert remote.startswith("https://api.anthropic.com:")  # the name stays (TLS), pointed at the relay
        assert place.hosts == {"api.anthropic.com": "10.9.0.1"}
        assert place.url("http://192.0.2.7:80/").startswith("http://10.9.0.1:")
        assert len(place.ports) == 4
    finally:
        place.relay.close()
    assert is_loopback_host("::1") and not is_loopback_host("example.com")
