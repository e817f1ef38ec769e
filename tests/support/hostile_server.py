"""A hostile inference server for the served-model transport's tests and benchmark: HostileProxy stands in front of
the tests' inference server (support/inference_server.py), relays every request to it and its answer back, but
answers the scoring requests itself, with one of the answers below, so that a client gets through its probes (the
kind, the model, the tokenizer) and meets the hostile answer where it scores.

    flood  a 200 whose body is FLOOD_BYTES of `[[],[],...]` (issue 43's probe: valid JSON, about 20 times its size
           once parsed), sent until the client hangs up
    fill   the costliest answer the client's bound lets through (servers.AnswerBound): a string of ASCII letters and one
           character beyond U+FFFF, as many bytes as the bound allows (decoded, each letter takes 4 bytes)
    drip   a 200 whose body comes a byte every 0.1 s for DRIP_SECONDS"""

import http.server
import json
import threading
import time
import urllib.error
import urllib.request

from support.inference_server import SHUTDOWN_POLL

FLOOD_BYTES = 250 << 20
DRIP_SECONDS = 45
_FLOOD_PIECE = b"[]," * (1 << 18)


class HostileProxy:
    """The server (see the module's text) at `url`, in front of the inference server at `upstream` (its base URL,
    without /v1), answering requests whose path ends in `scoring` with `hostile(handler, request_body)`; it counts
    them in scoring_requests."""

    def __init__(self, upstream, scoring, hostile):
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._relay("GET")

            def do_POST(self):
                self._relay("POST")

            def _relay(self, method):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if len(body) < length:  # the client hung up before its body: stopped after another request failed
                    self.close_connection = True
                    return
                try:
                    if self.path.endswith(scoring):
                        with proxy._lock:
                            proxy.scoring_requests += 1
                        return hostile(self, body)
                    request = urllib.request.Request(upstream + self.path, data=body or None, method=method)
                    request.add_header("Content-Type", "application/json")
                    try:
                        with urllib.request.urlopen(request, timeout=60) as answered:
                            status, data = answered.status, answered.read()
                    except urllib.error.HTTPError as refused:
                        status, data = refused.code, refused.read()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client hung up, as it should
                    self.close_connection = True

        self.scoring_requests = 0
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, args=(SHUTDOWN_POLL,), daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


def _start(handler, length=None):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    if length is None:
        handler.send_header("Connection", "close")
        handler.close_connection = True
    else:
        handler.send_header("Content-Length", str(length))
    handler.end_headers()


def flood(handler, body):
    _start(handler)
    handler.wfile.write(b"[")
    for _ in range(FLOOD_BYTES // len(_FLOOD_PIECE)):
        handler.wfile.write(_FLOOD_PIECE)
    handler.wfile.write(b"[]]")


def fill(handler, body):
    from bart_score.models.served._transport import AnswerBound

    size = AnswerBound.of(json.loads(body)).bytes
    data = b'"' + b"a" * (size - 6) + "\U0001d54f".encode() + b'"'
    _start(handler, len(data))
    handler.wfile.write(data)


def drip(handler, body):
    _start(handler, 100_000)
    ends = time.monotonic() + DRIP_SECONDS
    while time.monotonic() < ends:
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.1)
