"""A TCP relay from a container's private network to the endpoints a harness may reach, and nothing else.

A harness in the Docker sandbox sits on an `internal` network: no route out, so it cannot phone home or reach
anything but what the relay forwards. The relay listens on the network's gateway address (the host's side of
the bridge), one port per endpoint (the world's MCP server, the model), and copies bytes both ways to the
real endpoint, which may listen on this host's loopback (a stand-in model, a world served in process) or
anywhere the host can reach. It is a byte pipe: TLS to a remote endpoint passes through untouched (the
container names the endpoint's host, mapped to the gateway address, so the certificate still matches).

Threads, not asyncio: it lives as long as the agent, beside whatever event loop the run uses.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from dataclasses import dataclass, field

CHUNK = 64 * 1024


def is_loopback_host(host: str) -> bool:
    """Whether a URL's host is this machine's loopback (a container reaches such an endpoint only by relay)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class _Listener:
    server: socket.socket
    target: tuple[str, int]
    connections: set[socket.socket] = field(default_factory=set)


class _Pair:
    """One relayed connection: both sockets close once both directions are done."""

    def __init__(self, *sockets: socket.socket) -> None:
        self.sockets = sockets
        self._open = 2
        self._lock = threading.Lock()

    def done(self) -> bool:
        with self._lock:
            self._open -= 1
            return self._open == 0

    def cut(self) -> None:
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()


class Relay:
    """Listens on `bind_host`; each `forward(host, port)` opens one port that copies bytes to `host:port`."""

    def __init__(self, bind_host: str) -> None:
        self.bind_host = bind_host
        self._listeners: list[_Listener] = []
        self._lock = threading.Lock()
        self._closed = False

    def forward(self, host: str, port: int) -> int:
        """A new port on `bind_host` that relays to `host:port`; returns the port."""
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((self.bind_host, 0))
        server.listen(64)
        listener = _Listener(server, (host, port))
        with self._lock:
            self._listeners.append(listener)
        threading.Thread(target=self._accept, args=(listener,), name="harness-relay", daemon=True).start()
        return int(server.getsockname()[1])

    def _accept(self, listener: _Listener) -> None:
        while True:
            try:
                inbound, _ = listener.server.accept()
            except OSError:  # closed
                return
            try:
                outbound = socket.create_connection(listener.target, timeout=10)
                outbound.settimeout(None)
            except OSError:
                inbound.close()
                continue
            for sock in (inbound, outbound):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                if self._closed:
                    inbound.close()
                    outbound.close()
                    return
                listener.connections.update((inbound, outbound))
            pair = _Pair(inbound, outbound)
            for source, sink in ((inbound, outbound), (outbound, inbound)):
                threading.Thread(
                    target=self._pump, args=(listener, pair, source, sink), name="harness-relay-pipe", daemon=True
                ).start()

    def _pump(self, listener: _Listener, pair: _Pair, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(CHUNK):
                sink.sendall(data)
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)  # a half-close: the other direction may still be talking
        except OSError:
            pair.cut()
        if pair.done():
            with self._lock:
                listener.connections.difference_update(pair.sockets)
            pair.close()

    def close(self) -> None:
        """Stop listening and cut every open connection."""
        with self._lock:
            self._closed = True
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            with contextlib.suppress(OSError):
                listener.server.shutdown(socket.SHUT_RDWR)
            listener.server.close()
            for sock in list(listener.connections):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
