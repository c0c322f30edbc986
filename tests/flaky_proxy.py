"""A TCP proxy on 127.0.0.1 between a client and a real service that fails on purpose, for real: it can
drop the connection of the next moves request AFTER the service has answered it (so the service has
committed the batch and the client never hears back), or answer the next moves request with a 503
itself. Everything else passes through byte for byte.

    with FlakyProxy(upstream_port) as proxy:
        proxy.drop_after_reply = 1          # the next moves request: service commits, reply is lost
        client = Client(f"http://127.0.0.1:{proxy.port}")
"""

from __future__ import annotations

import socket
import threading

MOVES = b"/moves"
UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b'content-length: 29\r\nconnection: close\r\n\r\n{"error":"try again shortly"}'
)


class FlakyProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self.drop_after_reply = 0  # moves requests whose reply is swallowed (connection closed instead)
        self.unavailable = 0  # moves requests answered 503 by the proxy, never forwarded
        self.moves_seen = 0  # moves requests that reached the service
        self._lock = threading.Lock()
        self._srv = socket.create_server(("127.0.0.1", 0))
        self.port = self._srv.getsockname()[1]
        self._stop = False

    def __enter__(self) -> FlakyProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop = True
        self._srv.close()

    def _take(self, name: str) -> bool:
        with self._lock:
            if getattr(self, name) > 0:
                setattr(self, name, getattr(self, name) - 1)
                return True
            return False

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self._srv.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        """One client connection: requests up, replies down; a moves request may be failed."""
        up = socket.create_connection(self.upstream)
        try:
            while True:
                first = client.recv(65536)
                if not first:
                    return
                request = _message(client, first)
                moves = request.startswith(b"POST ") and MOVES in request.split(b"\r\n", 1)[0]
                if moves and self._take("unavailable"):
                    client.sendall(UNAVAILABLE)
                    return
                if moves:
                    with self._lock:
                        self.moves_seen += 1
                up.sendall(request)
                reply = _message(up, up.recv(65536))  # the service has judged and committed: it replied
                if moves and self._take("drop_after_reply"):
                    return  # ... and the client never hears of it
                client.sendall(reply)
        except OSError:
            return
        finally:
            client.close()
            up.close()


def _message(sock: socket.socket, data: bytes) -> bytes:
    """One whole HTTP/1.1 message whose first bytes are ``data`` (framed by Content-Length)."""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            return data
        data += more
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(body) < length:
        more = sock.recv(65536)
        if not more:
            break
        body += more
    return head + b"\r\n\r\n" + body
