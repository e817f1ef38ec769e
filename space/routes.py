"""Every route that Gradio serves, each bounded or turned off: an ASGI middleware in front of them all.

Gradio adds routes that the Space never uses (screen recordings, its components' server functions, run history, ...),
and the routes it uses read a request's whole body before anything of the Space sees it: the Space's limits on texts
apply after parsing, not to the body. RouteGuard, in front of every route:

- serves the routes of ROUTES only, each of a kind (RouteKind, KINDS); every other path, a route that a later Gradio
  adds among them, is answered 404 before anything reads it;
- refuses a body longer than its kind allows (413): at once when its Content-Length says so, else as its bytes
  arrive (the rest is never read, and what was read is never held whole here);
- gives each client (clients.py) a budget of requests of each kind, per_minute of them refilled over a minute (429,
  with Retry-After, past it), and at most REQUESTS_IN_FLIGHT requests under way at once;
- refuses a request whose forwarded address is not an IP address (400, clients.client_of);
- refuses an event that names an input file by a URL (400): Gradio would download it into its temporary folder, of any
  size and past the uploads' limits (uploads.py);
- passes the event id of every cancel and reset on to `on_cancel` (jobs.cancel): gradio_client sends its cancel
  before it knows the job's event id and then resets the event by its id, which Gradio takes as nothing.

Nothing here imports Gradio."""

from __future__ import annotations

import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from bart_score.corpora._reading import parse_json
from bart_score.errors import InputError

from .clients import (
    FORWARDED_NOT_AN_ADDRESS,
    ASGIApp,
    Message,
    Network,
    Receive,
    Refusal,
    Scope,
    Send,
    client_of,
    content_length,
    refuse,
)
from .form import MAX_CANDIDATES, MAX_PROMPT_CHARS, MAX_REFERENCES
from .uploads import UPLOAD_BYTES_PER_CLIENT


@dataclass(frozen=True)
class RouteKind:
    body_bytes: int  # the most bytes of a request's body
    per_minute: int  # requests a client may send in a minute (and at once, after a quiet minute)


# The routes served, by method and path as Gradio declares them ({name} is one path segment, {name:path} any rest),
# and their kind. HEAD is taken as GET. What sized each kind's figures is in event_body_bytes and docs/space.md.
ROUTES: tuple[tuple[str, str, str], ...] = (
    # the page: its HTML, its configuration (gradio_client reads /config and /gradio_api/info), its static files
    ("GET", "/", "page"),
    ("GET", "/config", "page"),
    ("GET", "/config/", "page"),
    ("GET", "/gradio_api/info", "page"),
    ("GET", "/gradio_api/info/", "page"),
    ("GET", "/gradio_api/startup-events", "page"),
    ("GET", "/assets/{path:path}", "files"),
    ("GET", "/static/{path:path}", "files"),
    ("GET", "/favicon.ico", "files"),
    ("GET", "/theme.css", "files"),
    ("GET", "/gradio_api/theme.css", "files"),
    ("GET", "/robots.txt", "files"),
    # the events: the queue's (the page, gradio_client), the page's unqueued ones, the REST API's (curl)
    ("POST", "/gradio_api/queue/join", "event"),
    ("POST", "/gradio_api/run/{api_name}", "event"),
    ("POST", "/gradio_api/run/{api_name}/", "event"),
    ("POST", "/gradio_api/api/{api_name}", "event"),
    ("POST", "/gradio_api/api/{api_name}/", "event"),
    ("POST", "/gradio_api/call/{api_name}", "event"),
    ("POST", "/gradio_api/call/{api_name}/", "event"),
    ("POST", "/gradio_api/call/v2/{api_name}", "event"),
    ("POST", "/gradio_api/call/v2/{api_name}/", "event"),
    # the streams a client holds open for its results and its session
    ("GET", "/gradio_api/queue/data", "stream"),
    ("GET", "/gradio_api/heartbeat/{session_hash}", "stream"),
    ("GET", "/gradio_api/call/{api_name}/{event_id}", "stream"),
    ("GET", "/gradio_api/call/v2/{api_name}/{event_id}", "stream"),
    ("GET", "/gradio_api/upload_progress", "stream"),
    # cancelling a job (gradio_client sends both)
    ("POST", "/gradio_api/cancel", "control"),
    ("POST", "/gradio_api/reset", "control"),
    ("POST", "/gradio_api/reset/", "control"),
    # the Batch tab's upload (uploads.py keeps what is stored within limits) and the results' download
    ("POST", "/gradio_api/upload", "upload"),
    ("GET", "/gradio_api/file={path_or_url:path}", "download"),
)
CONTROL_BODY_BYTES = 4096  # {"event_id": ..., "session_hash": ..., "fn_index": ...}
JSON_BYTES_PER_CHARACTER = 12  # a character outside the BMP, written \uXXXX\uXXXX by an ASCII-only JSON encoder
JSON_OVERHEAD_BYTES = 64 * 1024  # the event's other fields: settings, session hash, event data
REQUESTS_IN_FLIGHT = 64  # a page holds two streams; a page load fetches about 6 files at a time
TRACKED_BUDGETS = 65_536  # (client, kind) budgets kept; the least recently used is forgotten past it


def event_body_bytes(max_chars: int) -> int:
    """The most bytes of an event's JSON body: the most text one event carries (Compare's source, references and
    candidates, at most max_chars each, and a custom prompt phrase), each character as long as JSON can write it."""
    characters = (1 + MAX_REFERENCES + MAX_CANDIDATES) * (max_chars + 1) + MAX_PROMPT_CHARS
    return JSON_BYTES_PER_CHARACTER * characters + JSON_OVERHEAD_BYTES


def kinds(max_chars: int) -> dict[str, RouteKind]:
    """Each kind of route's limits, for texts of at most max_chars characters (BARTSCORE_APP_MAX_CHARS). A page load
    takes 3 page requests and about 95 files; a Score click, 3 events and a stream."""
    return {
        "page": RouteKind(body_bytes=0, per_minute=300),
        "files": RouteKind(body_bytes=0, per_minute=1200),
        "event": RouteKind(body_bytes=event_body_bytes(max_chars), per_minute=300),
        "stream": RouteKind(body_bytes=0, per_minute=300),
        "control": RouteKind(body_bytes=CONTROL_BODY_BYTES, per_minute=120),
        "upload": RouteKind(body_bytes=UPLOAD_BYTES_PER_CLIENT, per_minute=60),
        "download": RouteKind(body_bytes=0, per_minute=300),
    }


def _pattern(template: str) -> re.Pattern[str]:
    """A route's path as Starlette matches it: {name} one segment, {name:path} the rest of the path."""
    parts = re.split(r"(\{[^}]+\})", template)
    return re.compile(
        "".join(
            (".*" if part.endswith(":path}") else "[^/]+") if part.startswith("{") else re.escape(part)
            for part in parts
        )
    )


_MATCHERS = [(method, _pattern(template), kind) for method, template, kind in ROUTES]


def route_kind(method: str, path: str) -> str | None:
    """The kind of the route a request is for, or None when it is for none of ROUTES."""
    method = "GET" if method == "HEAD" else method
    for served, pattern, kind in _MATCHERS:
        if served == method and pattern.fullmatch(path):
            return kind
    return None


class ClientBudgets:
    """Each client's budget of requests of each kind, refilled at per_minute a minute up to per_minute, and its
    requests under way; thread-safe, and bounded (TRACKED_BUDGETS)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, tracked: int = TRACKED_BUDGETS) -> None:
        self.clock, self.tracked = clock, tracked
        self._budgets: OrderedDict[tuple[str, str], tuple[float, float]] = OrderedDict()  # -> (left, when)
        self._in_flight: dict[str, int] = {}
        self._lock = threading.Lock()

    def admit(self, client: str, kind: str, limits: RouteKind) -> Refusal | None:
        """Whether the request may go on; when it may, it is counted under way until `release`."""
        now = self.clock()
        rate = limits.per_minute / 60
        with self._lock:
            left, when = self._budgets.pop((client, kind), (float(limits.per_minute), now))
            left = min(float(limits.per_minute), left + (now - when) * rate)
            self._budgets[client, kind] = (left - 1 if left >= 1 else left, now)
            while len(self._budgets) > self.tracked:
                self._budgets.popitem(last=False)
            if left < 1:
                wait = math.ceil((1 - left) / rate)
                return Refusal(429, f"Too many requests from this address; try again in {wait} s", retry_after=wait)
            if self._in_flight.get(client, 0) >= REQUESTS_IN_FLIGHT:
                return Refusal(429, "Too many requests under way from this address; wait for them to end")
            self._in_flight[client] = self._in_flight.get(client, 0) + 1
        return None

    def release(self, client: str) -> None:
        with self._lock:
            left = self._in_flight.pop(client, 1) - 1
            if left > 0:
                self._in_flight[client] = left


class _BoundedBody:
    """A request's receive and send, the body's bytes counted as they arrive: past the limit, or when `inspect` (given
    the whole body, when its last part arrives) refuses it, the application is told that the client went away and what
    it answers is not sent (the guard answers with the refusal)."""

    def __init__(
        self, receive: Receive, send: Send, limits: RouteKind, inspect: Callable[[bytes], Refusal | None] | None
    ) -> None:
        self._receive, self._send, self.limits, self.inspect = receive, send, limits, inspect
        self.received, self.kept = 0, bytearray()
        self.refusal: Refusal | None = None
        self.started = False

    async def receive(self) -> Message:
        if self.refusal is not None:
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] == "http.request":
            body = message.get("body", b"")
            self.received += len(body)
            if self.received > self.limits.body_bytes:
                self.refusal = _too_large(self.limits)
            elif self.inspect is not None:
                self.kept.extend(body)
                if not message.get("more_body", False):
                    self.refusal = self.inspect(bytes(self.kept))
            if self.refusal is not None:
                return {"type": "http.disconnect"}
        return message

    async def send(self, message: Message) -> None:
        if self.refusal is not None:
            return
        self.started = self.started or message["type"] == "http.response.start"
        await self._send(message)


def _too_large(limits: RouteKind) -> Refusal:
    return Refusal(413, f"This request's body may carry at most {limits.body_bytes:,} bytes")


NOT_SERVED = Refusal(404, "Not Found")


class RouteGuard:
    """ASGI middleware: every request goes through ROUTES, its kind's limits and its client's budget (see the
    module's text)."""

    def __init__(
        self,
        app: ASGIApp,
        limits: dict[str, RouteKind],
        trusted: tuple[Network, ...] = (),
        on_cancel: Callable[[str], None] | None = None,
        budgets: ClientBudgets | None = None,
    ) -> None:
        self.app, self.limits, self.trusted, self.on_cancel = app, limits, trusted, on_cancel
        self.budgets = budgets or ClientBudgets()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # Gradio serves no websocket
            await send({"type": "websocket.close", "code": 1008})
            return
        kind = route_kind(str(scope.get("method", "")), str(scope.get("path", "")))
        if kind is None:
            await refuse(send, NOT_SERVED)
            return
        client = client_of(scope, self.trusted)
        if client is None:
            await refuse(send, FORWARDED_NOT_AN_ADDRESS)
            return
        limits = self.limits[kind]
        refusal = self.budgets.admit(client, kind, limits)
        if refusal:
            await refuse(send, refusal)
            return
        try:
            await self._bounded(scope, receive, send, kind, limits)
        finally:
            self.budgets.release(client)

    async def _bounded(self, scope: Scope, receive: Receive, send: Send, kind: str, limits: RouteKind) -> None:
        length = content_length(scope)
        if length is not None and length > limits.body_bytes:
            await refuse(send, _too_large(limits))
            return
        body = _BoundedBody(receive, send, limits, self._inspection(kind))
        try:
            await self.app(scope, body.receive, body.send)
        except Exception:
            if body.refusal is None:
                raise  # what the application did with a body it was not given whole is not its failure
        if body.refusal is not None and not body.started:
            await refuse(send, body.refusal)

    def _inspection(self, kind: str) -> Callable[[bytes], Refusal | None] | None:
        """What a whole body of this kind is looked at for before the application reads its end."""
        if kind == "event":
            return _file_named_by_url
        if kind == "control" and self.on_cancel is not None:
            return self._pass_cancel_on
        return None

    def _pass_cancel_on(self, body: bytes) -> None:
        event_id = _event_id(body)
        if event_id is not None and self.on_cancel is not None:
            self.on_cancel(event_id)


FILE_BY_URL = Refusal(
    400,
    "A file must be uploaded (gradio_client's handle_file of a local file), not named by a URL for the server to "
    "download",
)


def _file_named_by_url(body: bytes) -> Refusal | None:
    """An event whose input names a file by a URL: Gradio would download it into its temporary folder, of any size
    and past the uploads' limits."""
    try:
        event = parse_json(body, "an event")
    except InputError:
        return None  # Gradio answers a body that is not JSON
    pending = [event]
    while pending:
        value = pending.pop()
        if isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, dict):
            meta, path = value.get("meta"), value.get("path")
            if isinstance(meta, dict) and meta.get("_type") == "gradio.FileData" and "://" in str(path):
                return FILE_BY_URL
            pending.extend(value.values())
    return None


def _event_id(body: bytes) -> str | None:
    """The event id of a cancel or reset request's JSON body, if it names one."""
    try:
        request = parse_json(body, "a cancel request")
    except InputError:
        return None
    event_id = request.get("event_id") if isinstance(request, dict) else None
    return event_id if isinstance(event_id, str) and 0 < len(event_id) <= 128 else None
