"""What the local fake servers share: a threaded HTTP server on 127.0.0.1 at a free port, started and stopped
with the test (``with Server(...) as s:``)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LocalServer:
    """Lifecycle of a fake server: subclasses set ``server_class`` (whose instances get ``owner``),
    ``handler`` and ``thread_name``, and may override :meth:`_before_stop`."""

    server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer
    handler: type[BaseHTTPRequestHandler] = BaseHTTPRequestHandler
    thread_name = "local-test-server"
    _httpd: ThreadingHTTPServer | None = None

    def start(self):
        httpd = self.server_class(("127.0.0.1", 0), self.handler)
        httpd.owner = self
        self._httpd = httpd
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         name=self.thread_name, daemon=True).start()
        return self

    def _before_stop(self) -> None:
        """Called before the server shuts down (e.g. to release held requests)."""

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._before_stop()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]


class QuietServer(ThreadingHTTPServer):
    """A threaded server whose handler threads never keep the process alive; ``owner`` is its LocalServer."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # a listen backlog like a real server's (socketserver's 5 refuses bursts of new connections)
    owner: LocalServer


class JsonHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, no access log, JSON answers; subclasses implement ``_dispatch(method)``."""

    protocol_version = "HTTP/1.1"
    content_type = "application/json"
    # TCP_NODELAY, as real servers (uvicorn) set it: the headers and the body go out as two writes, and with
    # Nagle's algorithm the second waits for the client's delayed ACK (tens of ms a request).
    disable_nagle_algorithm = True

    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _write(self, code: int, data: bytes, headers: dict | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _dispatch(self, method: str) -> None:
        raise NotImplementedError

    def do_GET(self):  # noqa: N802 - http.server naming
        self._dispatch("GET")

    def do_POST(self):  # noqa: N802
        self._dispatch("POST")

    def do_DELETE(self):  # noqa: N802
        self._dispatch("DELETE")
