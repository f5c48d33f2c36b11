"""An answer handed on as it arrives (a streamed plan): its pieces go to the caller's sink as the server sends
them, and an answer cut short after a piece was handed on is a ServiceError, never sent again to another replica
(the sink would see the start twice). Against small in-process HTTP/1.1 servers that answer chunked."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from hms_catalog.errors import ServiceError
from hms_catalog.remote import CatalogServiceClient

PIECES = [b'{"a":[1,', b"2,3],", b'"b":"c"}']


class ChunkedServer:
    """Answers every POST with ``PIECES`` as chunks; ``cut``: the first chunk, then the connection closed."""

    def __init__(self, cut: bool = False) -> None:
        self.cut = cut
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for piece in PIECES[:1] if server.cut else PIECES:
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                if server.cut:
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@pytest.fixture
def servers() -> Iterator[tuple[ChunkedServer, ChunkedServer]]:
    started = (ChunkedServer(cut=True), ChunkedServer())
    yield started
    for server in started:
        server.close()


def test_the_pieces_go_to_the_sink_as_they_arrive(servers: tuple[ChunkedServer, ChunkedServer]) -> None:
    client = CatalogServiceClient(servers[1].url, "t" * 24, timeout=10)
    try:
        received: list[bytes] = []
        assert client.plan("c", "d", "t", into=received.append) == ""
        assert b"".join(received) == b"".join(PIECES)
        assert client.plan("c", "d", "t") == b"".join(PIECES).decode()  # without a sink: the whole text, as before
    finally:
        client.close()


def test_an_answer_cut_after_a_piece_is_an_error_and_not_sent_again(servers: tuple[ChunkedServer, ChunkedServer]) -> None:
    cut, whole = servers
    client = CatalogServiceClient([cut.url, whole.url], "t" * 24, timeout=10)
    try:
        received: list[bytes] = []
        with pytest.raises(ServiceError, match="cut its answer short after 8 bytes"):
            client.plan("c", "d", "t", into=received.append)
        assert received == PIECES[:1] and (cut.requests, whole.requests) == (1, 0)
    finally:
        client.close()
