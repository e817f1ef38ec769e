"""Every route Gradio serves is bounded or turned off (space/routes.py): bodies read whole only within their route's
limit, each client's budget of requests, files named by URL, and the served app's answers to probes of Gradio's own
routes."""

import asyncio
import json
import os
import re
import time

import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from support.app_server import MAX_CHARS
from support.lazy import LazyModule
from support.space_requests import FAITHFULNESS, PROXIES, Clock, compare_arguments, forwarded, request_scope

import space.routes

# Gradio and what imports it, imported by the first test that uses them (support/lazy.py).
app = LazyModule("app")


# ---------------------------------------------------------------------------------------------------------------------
# Every route Gradio serves: bounded (its body, each client's requests) or turned off

# Every route of the served app, by method and path as Gradio declares them, and what the Space makes of it: the kind
# of limits it is served under (space/routes.py), or None when it is turned off. A route a later Gradio adds fails
# test_every_route_gradio_serves_is_bounded_or_off until it is listed here.
GRADIO_ROUTES = {
    ("GET", "/"): "page",
    ("HEAD", "/"): "page",
    ("GET", "/config"): "page",
    ("GET", "/config/"): "page",
    ("GET", "/gradio_api/info"): "page",
    ("GET", "/gradio_api/info/"): "page",
    ("GET", "/gradio_api/startup-events"): "page",
    ("GET", "/assets/{path:path}"): "files",
    ("GET", "/static/{path:path}"): "files",
    ("GET", "/favicon.ico"): "files",
    ("GET", "/theme.css"): "files",
    ("GET", "/gradio_api/theme.css"): "files",
    ("GET", "/robots.txt"): "files",
    ("POST", "/gradio_api/queue/join"): "event",
    ("POST", "/gradio_api/run/{api_name}"): "event",
    ("POST", "/gradio_api/run/{api_name}/"): "event",
    ("POST", "/gradio_api/api/{api_name}"): "event",
    ("POST", "/gradio_api/api/{api_name}/"): "event",
    ("POST", "/gradio_api/call/{api_name}"): "event",
    ("POST", "/gradio_api/call/{api_name}/"): "event",
    ("POST", "/gradio_api/call/v2/{api_name}"): "event",
    ("POST", "/gradio_api/call/v2/{api_name}/"): "event",
    ("GET", "/gradio_api/queue/data"): "stream",
    ("GET", "/gradio_api/heartbeat/{session_hash}"): "stream",
    ("GET", "/gradio_api/call/{api_name}/{event_id}"): "stream",
    ("GET", "/gradio_api/call/v2/{api_name}/{event_id}"): "stream",
    ("GET", "/gradio_api/upload_progress"): "stream",
    ("POST", "/gradio_api/cancel"): "control",
    ("POST", "/gradio_api/reset"): "control",
    ("POST", "/gradio_api/reset/"): "control",
    ("POST", "/gradio_api/upload"): "upload",
    ("GET", "/gradio_api/file={path_or_url:path}"): "download",
    ("HEAD", "/gradio_api/file={path_or_url:path}"): "download",
    # what the Space never uses
    ("POST", "/gradio_api/process_recording"): None,  # screen recordings
    ("POST", "/gradio_api/component_server"): None,  # components' server functions
    ("POST", "/gradio_api/component_server/"): None,
    ("GET", "/gradio_api/file/{path:path}"): None,
    ("GET", "/gradio_api/proxy={url_path:path}"): None,
    ("HEAD", "/gradio_api/proxy={url_path:path}"): None,
    ("GET", "/gradio_api/stream/{session_hash}/{run}/{component_id}/playlist-file"): None,
    ("GET", "/gradio_api/stream/{session_hash}/{run}/{component_id}/playlist.m3u8"): None,
    ("GET", "/gradio_api/stream/{session_hash}/{run}/{component_id}/{segment_id}.{ext}"): None,
    ("POST", "/gradio_api/stream/{event_id}"): None,
    ("POST", "/gradio_api/stream/{event_id}/close"): None,
    ("GET", "/gradio_api/queue/status"): None,
    ("GET", "/gradio_api/custom_component/{id}/{environment}/{type}/{file_name}"): None,
    ("GET", "/gradio_api/deep_link"): None,
    ("GET", "/gradio_api/dev/reload"): None,
    ("GET", "/gradio_api/app_id"): None,
    ("GET", "/gradio_api/app_id/"): None,
    ("GET", "/gradio_api/login_check"): None,
    ("GET", "/gradio_api/login_check/"): None,
    ("GET", "/gradio_api/openapi.json"): None,
    ("GET", "/openapi.json"): None,
    ("HEAD", "/openapi.json"): None,
    ("POST", "/login"): None,
    ("POST", "/login/"): None,
    ("GET", "/logout"): None,
    ("GET", "/gradio_api/user"): None,
    ("GET", "/gradio_api/user/"): None,
    ("GET", "/gradio_api/token"): None,
    ("GET", "/gradio_api/token/"): None,
    ("GET", "/gradio_api/runs"): None,  # the run history's page (the app serves without its routes)
    ("GET", "/gradio_api/runs/"): None,
    ("GET", "/gradio_api/vibe-code"): None,
    ("POST", "/gradio_api/vibe-code"): None,
    ("GET", "/gradio_api/vibe-code/"): None,
    ("POST", "/gradio_api/vibe-code/"): None,
    ("POST", "/gradio_api/vibe-edit"): None,
    ("POST", "/gradio_api/vibe-edit/"): None,
    ("POST", "/gradio_api/undo-vibe-edit"): None,
    ("POST", "/gradio_api/undo-vibe-edit/"): None,
    ("POST", "/gradio_api/vibe-starter-queries"): None,
    ("POST", "/gradio_api/vibe-starter-queries/"): None,
    ("GET", "/svelte/{path:path}"): None,  # server-side rendering's files (the app serves without it)
    ("GET", "/manifest.json"): None,  # an installable app's (pwa is off)
    ("GET", "/pwa_icon"): None,
    ("GET", "/pwa_icon/{size}"): None,
    ("GET", "/monitoring"): None,
    ("GET", "/monitoring/summary"): None,
    ("GET", "/monitoring/{key}"): None,
}


def served_routes(routes):
    """(method, path) of every route of a FastAPI app, those of its included routers too."""
    for route in routes:
        if hasattr(route, "effective_route_contexts"):  # an included router (FastAPI)
            yield from served_routes(route.effective_route_contexts())
        else:
            for method in getattr(route, "methods", None) or ["WEBSOCKET"]:
                yield method, route.path


def example_path(template):
    """A path the template matches: each parameter one segment, "a/b" for the rest of a path."""
    return re.sub(r"\{[^}:]+:path\}", "a/b", re.sub(r"\{[^}:]+\}", "x", template))


@pytest.mark.slow
def test_every_route_gradio_serves_is_bounded_or_off(app_settings):
    """The probes found Gradio's own routes unbounded: process_recording kept every recording, component_server and
    call/compare read any body whole. Each route the served app has is listed here with its kind, or as off."""
    import socket

    demo = app.build_demo(app_settings)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app.launch(demo, app_settings, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        served = set(served_routes(demo.app.routes))
    finally:
        demo.close()
    unlisted = sorted(served - set(GRADIO_ROUTES))
    assert not unlisted, f"Gradio serves routes the Space has not bounded or turned off: {unlisted}"
    gone = sorted(set(GRADIO_ROUTES) - served)
    assert not gone, f"routes listed that Gradio no longer serves: {gone}"
    limits = space.routes.kinds(MAX_CHARS)
    for (method, template), kind in GRADIO_ROUTES.items():
        assert space.routes.route_kind(method, example_path(template)) == kind, (method, template)
        if kind is not None:
            assert limits[kind].per_minute > 0 and limits[kind].body_bytes >= 0
    assert {kind for kind in GRADIO_ROUTES.values() if kind} == set(limits)


def test_a_path_no_route_serves_is_refused_before_anything_reads_it():
    for method, path in [
        ("GET", "/gradio_api/process_recording"),
        ("POST", "/gradio_api/upload/"),
        ("POST", "/gradio_api/queue/join/x"),
        ("GET", "/assets"),
        ("PUT", "/gradio_api/upload"),
        ("GET", "/gradio_api/mcp/schema"),  # a route Gradio adds when its MCP server is on
    ]:
        assert space.routes.route_kind(method, path) is None, (method, path)


class ReadingApp:
    """An application that reads a request's whole body into memory, as Gradio's routes do, and counts what it got."""

    def __init__(self):
        self.bodies = []

    async def __call__(self, scope, receive, send):
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise RuntimeError("the client went away")  # as Starlette's ClientDisconnect
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.bodies.append(len(body))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def guard_request(guard, path, *, method="POST", peer="127.0.0.1", headers=(), body=b"", chunk=65536, limit=None):
    """Sends one request through the guard, its body in chunks; (status, body, bytes the guard pulled)."""
    pulled, sent = 0, []
    chunks = [body[start : start + chunk] for start in range(0, len(body), chunk)] or [b""]

    async def receive():
        nonlocal pulled
        if pulled >= len(chunks):
            return {"type": "http.disconnect"}
        pulled += 1
        return {"type": "http.request", "body": chunks[pulled - 1], "more_body": pulled < len(chunks)}

    async def send(message):
        sent.append(message)

    scope = request_scope(path, method, peer, headers)
    asyncio.run(guard(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:]), sum(map(len, chunks[:pulled]))


def test_a_body_past_its_routes_limit_is_refused_at_once_or_as_it_arrives():
    """The probe sent call/compare 200 MB of JSON and component_server 950 MB: the guard reads at most the limit."""
    application = ReadingApp()
    limits = space.routes.kinds(MAX_CHARS)
    guard = space.routes.RouteGuard(application, limits)
    event_limit = limits["event"].body_bytes
    assert event_limit == space.routes.event_body_bytes(MAX_CHARS) < 200 * 2**20
    # a body within the limit reaches the application whole
    assert guard_request(guard, "/gradio_api/call/compare", body=b"x" * event_limit)[0] == 200
    assert application.bodies == [event_limit]
    # its Content-Length says it is too long: refused before a byte is read
    headers = [(b"content-length", str(200 * 2**20).encode())]
    status, message, pulled = guard_request(guard, "/gradio_api/call/compare", headers=headers, body=b"x" * 1000)
    assert (status, pulled) == (413, 0) and f"at most {event_limit:,} bytes".encode() in message
    # without one (chunked): refused once the limit is passed, what was read never held whole
    status, message, pulled = guard_request(guard, "/gradio_api/call/compare", body=b"x" * (8 * 2**20))
    assert status == 413 and event_limit < pulled <= event_limit + 65536
    assert application.bodies == [event_limit]  # the application never got the rest
    # a route with no body takes none; a route that is off is never run
    assert guard_request(guard, "/config", method="GET", body=b"x")[0] == 413
    status, _, pulled = guard_request(guard, "/gradio_api/component_server", body=b"x" * (8 * 2**20))
    assert (status, pulled) == (404, 0)


def test_each_client_has_a_budget_of_requests_of_each_kind_refilled_over_a_minute():
    clock = Clock()
    budgets = space.routes.ClientBudgets(clock=clock)
    limits = space.routes.RouteKind(body_bytes=0, per_minute=60)

    def request(client="1.2.3.4", kind="event"):
        refusal = budgets.admit(client, kind, limits)
        if refusal is None:
            budgets.release(client)
        return refusal

    assert [request() for _ in range(60)] == [None] * 60
    refusal = request()
    assert refusal.status == 429 and refusal.retry_after == 1 and "try again in 1 s" in refusal.message
    assert request(kind="page") is None  # each kind has its own budget
    assert request(client="5.6.7.8") is None  # and each client
    clock.now += 10  # refilled at a request a second
    assert [request() for _ in range(11)] == [None] * 10 + [request()] and request().status == 429
    clock.now += 3600  # never more than a minute's worth
    assert sum(request() is None for _ in range(100)) == 60


def test_a_client_has_a_bounded_number_of_requests_under_way():
    budgets = space.routes.ClientBudgets()
    limits = space.routes.RouteKind(body_bytes=0, per_minute=10_000)
    for _ in range(space.routes.REQUESTS_IN_FLIGHT):
        assert budgets.admit("1.2.3.4", "stream", limits) is None
    assert "under way" in budgets.admit("1.2.3.4", "stream", limits).message
    budgets.release("1.2.3.4")
    assert budgets.admit("1.2.3.4", "stream", limits) is None


def test_the_budgets_kept_are_bounded():
    budgets = space.routes.ClientBudgets(tracked=100)
    limits = space.routes.RouteKind(body_bytes=0, per_minute=1)
    for number in range(1000):
        budgets.admit(f"10.0.{number // 256}.{number % 256}", "event", limits)
        budgets.release(f"10.0.{number // 256}.{number % 256}")
    assert len(budgets._budgets) == 100 and not budgets._in_flight


@pytest.mark.slow
def test_an_ipv6_host_has_one_budget_for_its_whole_64():
    """One host with a /64 had 2**64 budgets: a request from each of its addresses started a new one."""
    application = ReadingApp()
    budgets = space.routes.ClientBudgets(clock=Clock())  # no refill while the requests are sent, however slowly
    guard = space.routes.RouteGuard(application, space.routes.kinds(MAX_CHARS), budgets=budgets)
    per_minute = space.routes.kinds(MAX_CHARS)["page"].per_minute
    statuses = [
        guard_request(guard, "/config", method="GET", peer=f"2001:db8:1:2:{number:x}::1")[0]
        for number in range(per_minute + 5)
    ]
    assert statuses.count(200) == per_minute and statuses[-5:] == [429] * 5
    assert guard_request(guard, "/config", method="GET", peer="2001:db8:1:3::1")[0] == 200  # another /64


def test_a_forwarded_address_that_is_not_an_ip_address_is_refused(monkeypatch):
    """uvicorn makes the forwarded entry the client whatever it is; the limits keyed on that text."""
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    application = ReadingApp()
    guard = space.routes.RouteGuard(application, space.routes.kinds(MAX_CHARS), PROXIES)
    served = ProxyHeadersMiddleware(guard, trusted_hosts="10.0.0.0/8")
    for claimed in ["not-an-address", "a-new-name-each-time-1", "198.51.100.1, garbage"]:
        status, message, _ = guard_request(served, "/config", method="GET", peer="10.0.0.1", headers=forwarded(claimed))
        assert status == 400 and b"X-Forwarded-For" in message and b"not an IP address" in message
    assert guard_request(served, "/config", method="GET", peer="10.0.0.1", headers=forwarded("198.51.100.1"))[0] == 200
    assert application.bodies == [0]


def test_an_event_that_names_a_file_by_url_is_refused_before_gradio_reads_it():
    """Gradio downloads an input file given by a URL into its temporary folder, of any size, past the upload limits."""
    application = ReadingApp()
    guard = space.routes.RouteGuard(application, space.routes.kinds(MAX_CHARS))
    by_url = {"path": "https://example.com/huge.csv", "meta": {"_type": "gradio.FileData"}}
    uploaded = {"path": "/tmp/gradio/abc/outputs.csv", "meta": {"_type": "gradio.FileData"}}
    for path in ("/gradio_api/queue/join", "/gradio_api/call/score_file"):
        body = json.dumps({"data": [*FAITHFULNESS, by_url, "none"], "fn_index": 3}).encode()
        status, message, _ = guard_request(guard, path, body=body, chunk=50)
        assert status == 400 and b"not named by a URL" in message
    assert application.bodies == []  # the application never got the body's end
    body = json.dumps({"data": [*FAITHFULNESS, uploaded, "none"]}).encode()
    assert guard_request(guard, "/gradio_api/call/score_file", body=body)[0] == 200
    assert guard_request(guard, "/gradio_api/call/compare", body=b'{"data": ["https://example.com"]}')[0] == 200


@pytest.mark.slow
def test_the_served_app_downloads_no_file_named_by_url(app_url, monkeypatch):
    import gradio.processing_utils
    import httpx

    downloads = []

    async def recording_download(url, cache_dir):
        downloads.append(url)
        raise AssertionError("the server downloaded a file a client named")

    monkeypatch.setattr(gradio.processing_utils, "async_ssrf_protected_download", recording_download)
    by_url = {"path": "https://example.com/huge.csv", "meta": {"_type": "gradio.FileData"}}
    data = [*FAITHFULNESS, by_url, "none"]
    response = httpx.post(f"{app_url}gradio_api/call/score_file", json={"data": data}, timeout=30)
    assert response.status_code == 400 and "not named by a URL" in response.text and not downloads


def test_a_cancel_or_reset_passes_its_event_id_on():
    cancelled = []
    guard = space.routes.RouteGuard(ReadingApp(), space.routes.kinds(MAX_CHARS), on_cancel=cancelled.append)
    guard_request(guard, "/gradio_api/reset", body=b'{"event_id": "abc123"}')
    guard_request(guard, "/gradio_api/cancel", body=b'{"event_id": "def456", "session_hash": "s", "fn_index": 3}')
    guard_request(guard, "/gradio_api/cancel", body=b'{"event_id": null, "session_hash": "s", "fn_index": 3}')
    guard_request(guard, "/gradio_api/reset", body=b"[not json")
    guard_request(guard, "/gradio_api/queue/join", body=b'{"event_id": "not-a-cancel"}')
    assert cancelled == ["abc123", "def456"]


def raw_request(url, method, path, headers, body=b""):
    """(status, body) of one request written by hand, over a fresh connection."""
    import http.client
    import urllib.parse

    address = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        connection.putrequest(method, path)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        if body:
            connection.send(body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.slow
def test_the_served_app_refuses_the_probes_of_gradios_own_routes(app_url):
    """process_recording kept each 19 MB recording; component_server read 950 MB whole; call/compare took 200 MB of
    JSON. Each is answered before its body is sent."""
    big = {"Content-Type": "multipart/form-data; boundary=x", "Content-Length": str(950 * 2**20)}
    for path in ("/gradio_api/process_recording", "/gradio_api/component_server"):
        assert raw_request(app_url, "POST", path, big) == (404, b"Not Found")
    json_body = {"Content-Type": "application/json", "Content-Length": str(200 * 2**20)}
    status, message = raw_request(app_url, "POST", "/gradio_api/call/compare", json_body)
    assert status == 413 and b"at most" in message
    # chunked, just past the limit: refused once the limit is passed
    limit = space.routes.event_body_bytes(MAX_CHARS)
    payload = b"x" * (limit + 1)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(payload), payload)
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    assert raw_request(app_url, "POST", "/gradio_api/call/compare", headers, chunked)[0] == 413


@pytest.mark.slow
def test_the_served_app_stores_nothing_of_a_recording_sent_whole(app_url, tmp_path, monkeypatch):
    """The probe itself: a 19 MB recording sent whole to process_recording, whose form reader wrote it to the
    temporary folder and never deleted it, request after request."""
    import tempfile

    import gradio.routes
    import httpx

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the form reader writes (the server is in-process)
    folders = (str(tmp_path), gradio.routes.DEFAULT_TEMP_DIR)  # and where the route writes its copy

    def stored():
        return sorted((parent, name) for folder in folders for parent, _, names in os.walk(folder) for name in names)

    before = stored()
    recording = {"video": ("recording.webm", b"\x1a\x45\xdf\xa3" + bytes(19 * 2**20), "video/webm")}
    for _ in range(3):
        response = httpx.post(f"{app_url}gradio_api/process_recording", files=recording, timeout=60)
        assert response.status_code == 404
    assert stored() == before


@pytest.fixture
def private_app_url(app_settings):
    """A Space of its own, whose clients' budgets a test may spend."""
    from support import app_server

    with app_server.serving(app_settings) as url:
        yield url


@pytest.mark.slow
def test_the_served_app_gives_a_client_its_budget_of_requests(private_app_url):
    """A client's requests of one kind are admitted until its budget is spent, then refused with Retry-After; the
    budget refills at per_minute a minute while they are sent, so the count admitted is per_minute plus what refilled
    in the time they took, however slowly a loaded machine serves them (a fixed count failed at a load of 6 to 20)."""
    import httpx

    per_minute = space.routes.kinds(MAX_CHARS)["control"].per_minute  # a kind the server's start never uses
    statuses = []
    with httpx.Client(base_url=private_app_url, timeout=60) as http:
        started = time.monotonic()
        while 429 not in statuses and len(statuses) <= 10 * per_minute:
            refusal = http.post("/gradio_api/reset", json={"event_id": "budget"})
            statuses.append(refusal.status_code)
        took = time.monotonic() - started
        cancel = http.post("/gradio_api/cancel", json={"event_id": "budget", "session_hash": "s", "fn_index": 0})
        gap = time.monotonic() - started - took
        other_kind = http.get("/config")
    admitted = len(statuses) - 1
    assert statuses[-1] == 429 and set(statuses[:-1]) == {200}, statuses
    assert per_minute <= admitted <= per_minute + 1 + took * per_minute / 60
    assert int(refusal.headers["retry-after"]) >= 1
    # the cancel route spends the same budget: refused, unless a request's worth refilled before it came
    assert cancel.status_code == 429 or gap >= 60 / per_minute
    assert other_kind.status_code == 200


@pytest.mark.slow
def test_the_rest_routes_cannot_skip_the_queue(app_url):
    """With the REST routes open (Gradio opens them off Hugging Face), POST /gradio_api/run/compare ran a scoring
    job outside the queue and its size limit."""
    import httpx

    response = httpx.post(f"{app_url}gradio_api/run/compare", json={"data": compare_arguments()}, timeout=30)
    assert response.status_code == 404 and "join the queue" in response.text
