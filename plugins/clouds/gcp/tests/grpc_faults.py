"""A fault-injecting gRPC proxy for the Firestore emulator: the kits' HTTP/1.1 `FaultProxy` cannot sit in front
of a gRPC (HTTP/2) service, so this one forwards every call as raw bytes and fails the next N with the gRPC
status that matches the injected HTTP fault (503 → UNAVAILABLE, 429 → RESOURCE_EXHAUSTED)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
from agentenv_testing.faults import Fault

_SERVER_STREAMING = {"RunQuery", "BatchGetDocuments", "RunAggregationQuery", "PartitionQuery"}
_CODES = {503: grpc.StatusCode.UNAVAILABLE, 429: grpc.StatusCode.RESOURCE_EXHAUSTED}


class GrpcFaultProxy:
    def __init__(self, upstream: str) -> None:
        self.channel = grpc.insecure_channel(upstream)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.add_generic_rpc_handlers([_Forward(self)])
        self._lock = threading.Lock()
        self._pending: list[Fault] = []
        self.injected = 0
        self.forwarded = 0

    @property
    def url(self) -> str:
        return f"127.0.0.1:{self.port}"

    def fail_next(self, count: int, fault: Fault | None = None) -> None:
        with self._lock:
            self._pending.extend([fault or Fault()] * count)

    def take(self) -> Fault | None:
        with self._lock:
            if self._pending:
                self.injected += 1
                return self._pending.pop(0)
            self.forwarded += 1
            return None

    def start(self) -> GrpcFaultProxy:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop(grace=None)
        self.channel.close()


class _Forward(grpc.GenericRpcHandler):
    def __init__(self, proxy: GrpcFaultProxy) -> None:
        self.proxy = proxy

    def service(self, details: Any) -> Any:
        method: str = details.method
        proxy = self.proxy

        def metadata(context: Any) -> list[tuple[str, str]]:
            return [(k, v) for k, v in context.invocation_metadata() if not k.startswith((":", "grpc-"))]

        def check(context: Any) -> None:
            fault = proxy.take()
            if fault is not None:
                context.abort(_CODES.get(fault.status, grpc.StatusCode.INTERNAL), f"injected {fault.status}")

        if method.rsplit("/", 1)[-1] in _SERVER_STREAMING:

            def stream(request: bytes, context: Any) -> Iterator[bytes]:
                check(context)
                try:
                    yield from proxy.channel.unary_stream(method)(request, metadata=metadata(context))
                except grpc.RpcError as exc:
                    context.abort(exc.code(), exc.details())

            return grpc.unary_stream_rpc_method_handler(stream)

        def unary(request: bytes, context: Any) -> bytes:
            check(context)
            try:
                response: bytes = proxy.channel.unary_unary(method)(request, metadata=metadata(context))
            except grpc.RpcError as exc:
                context.abort(exc.code(), exc.details())
            return response

        return grpc.unary_unary_rpc_method_handler(unary)
