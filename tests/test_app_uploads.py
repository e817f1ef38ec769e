"""Uploads kept within limits (space/uploads.py): each client's newest uploads, the server's and the temporary
folder's totals, expiry; and clients named by made-up addresses (space/clients.py), which get no more uploads."""

import asyncio
import json
import os
import re

import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from gradio_client import handle_file
from gradio_client.exceptions import AppError
from support.app_server import MAX_CHARS
from support.space_requests import FAITHFULNESS, PROXIES, Clock, forwarded, request_scope

import space.batch
import space.clients
import space.form
import space.settings
import space.uploads

# ---------------------------------------------------------------------------------------------------------------------
# Uploads kept within limits


def stored_file(folder, name, size):
    """A file as Gradio stores an upload: in a folder of its own."""
    path = folder / f"sha-{name}" / name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"x" * size)
    return str(path)


def upload(ledger, client, path, size):
    assert ledger.admit(client, size) is None
    ledger.settle(client, size, [path])


def test_a_client_keeps_only_its_newest_uploads_and_older_ones_are_deleted(tmp_path):
    ledger = space.uploads.UploadLedger(per_client=2, bytes_per_client=100, overall=10, bytes_overall=1000)
    paths = [stored_file(tmp_path, f"f{i}.csv", 10) for i in range(3)]
    for path in paths:
        upload(ledger, "1.2.3.4", path, 10)
    assert list(ledger.stored()) == paths[1:]
    assert not os.path.exists(paths[0]) and not os.path.exists(os.path.dirname(paths[0]))
    other = stored_file(tmp_path, "other.csv", 10)
    upload(ledger, "5.6.7.8", other, 10)  # another client's uploads are its own
    assert list(ledger.stored()) == [*paths[1:], other]


def test_an_upload_past_a_clients_bytes_is_refused_before_it_is_read_or_makes_room(tmp_path):
    ledger = space.uploads.UploadLedger(per_client=5, bytes_per_client=100, overall=10, bytes_overall=1000)
    assert ledger.admit("a", 101).status == 413
    assert ledger.admit("a", None).status == 411
    old = stored_file(tmp_path, "old.csv", 60)
    upload(ledger, "a", old, 60)
    assert ledger.admit("a", 60) is None  # its oldest upload is deleted to make room
    assert not os.path.exists(old)
    refusal = ledger.admit("a", 60)  # the first request is still under way: its bytes are reserved
    assert refusal.status == 429 and "under way" in refusal.message
    ledger.settle("a", 60, [])
    assert ledger.admit("a", 60) is None


def test_uploads_past_the_servers_limits_are_refused_and_old_ones_expire(tmp_path):
    clock = Clock()
    ledger = space.uploads.UploadLedger(
        per_client=2, bytes_per_client=100, overall=3, bytes_overall=1000, seconds=60, clock=clock
    )
    paths = [stored_file(tmp_path, f"f{i}.csv", 10) for i in range(3)]
    for number, path in enumerate(paths):
        upload(ledger, f"client {number}", path, 10)
    refusal = ledger.admit("client 4", 10)
    assert refusal.status == 503 and "try again in a few minutes" in refusal.message
    clock.now += 61
    assert ledger.admit("client 4", 10) is None  # the expired uploads were deleted first
    assert ledger.stored() == {} and not any(os.path.exists(path) for path in paths)
    ledger.settle("client 4", 10, [])
    big = space.uploads.UploadLedger(per_client=5, bytes_per_client=100, overall=50, bytes_overall=150)
    upload(big, "a", stored_file(tmp_path, "a.csv", 90), 90)
    assert big.admit("b", 90).status == 503


def test_an_upload_two_clients_sent_is_kept_while_either_holds_it(tmp_path):
    ledger = space.uploads.UploadLedger(per_client=1, bytes_per_client=100, overall=10, bytes_overall=1000)
    shared = stored_file(tmp_path, "same.csv", 10)
    upload(ledger, "a", shared, 10)
    upload(ledger, "b", shared, 10)
    upload(ledger, "a", stored_file(tmp_path, "newer.csv", 10), 10)  # a's only slot: its older upload goes
    assert os.path.exists(shared)  # b holds it still
    upload(ledger, "b", stored_file(tmp_path, "newer-b.csv", 10), 10)
    assert not os.path.exists(shared)


def test_the_temporary_folder_has_a_total_cap_over_everything_in_it(tmp_path):
    folder = tmp_path / "gradio"
    results = stored_file(folder, "bartscore-results.csv", 900)  # not an upload: a result's download
    ledger = space.uploads.UploadLedger(per_client=5, bytes_per_client=500, overall=10, bytes_overall=1000)
    assert ledger.admit("a", 200) is None  # the ledger alone counts its uploads only
    ledger.settle("a", 200, [])
    capped = space.uploads.UploadLedger(
        per_client=5, bytes_per_client=500, overall=10, bytes_overall=1000, folder=str(folder)
    )
    assert capped.admit("a", 200).status == 503
    assert capped.admit("a", 100) is None
    os.remove(results)
    assert capped.admit("b", 400) is None


def test_an_upload_is_released_by_the_ledger_and_nothing_else_is(tmp_path):
    ledger = space.uploads.UploadLedger()
    kept, other = stored_file(tmp_path, "kept.csv", 10), stored_file(tmp_path, "other.csv", 10)
    upload(ledger, "a", kept, 10)
    ledger.release(other)  # not an upload the ledger recorded: never deleted
    ledger.release(kept)
    assert os.path.exists(other) and not os.path.exists(kept) and ledger.stored() == {}


@pytest.mark.slow
def test_an_api_requests_upload_is_deleted_when_the_request_ends(client, tmp_path, monkeypatch):
    """gradio_client sends its file with every request: kept after it, each would stay until it expired."""
    stored = []
    settle = space.uploads.SERVER_LEDGER.settle

    def recording(who, length, paths):
        stored.extend(paths)
        settle(who, length, paths)

    monkeypatch.setattr(space.uploads.SERVER_LEDGER, "settle", recording)
    scored = tmp_path / "outputs.csv"
    scored.write_text("source,sys\nThe cat sat.,A cat.\n", encoding="utf-8")
    client.predict(*FAITHFULNESS, handle_file(str(scored)), api_name="/score_file")
    refused = tmp_path / "refused.csv"
    refused.write_text("reference,sys\nThe cat sat.,A cat.\n", encoding="utf-8")  # faithfulness needs a source
    with pytest.raises(AppError, match="needs the file's source column"):
        client.predict(*FAITHFULNESS, handle_file(str(refused)), api_name="/score_file")
    assert len(stored) == 2 and not any(os.path.exists(path) for path in stored)
    assert not set(stored) & set(space.uploads.SERVER_LEDGER.stored())


def test_the_guard_sees_the_upload_route_and_reads_content_length():
    assert space.uploads.is_upload_request(request_scope())
    assert space.uploads.is_upload_request(request_scope("/space/gradio_api//upload/"))
    assert not space.uploads.is_upload_request(request_scope(method="GET"))
    assert not space.uploads.is_upload_request(request_scope("/gradio_api/queue/join"))
    assert space.uploads.content_length(request_scope(headers=[(b"content-length", b"12")])) == 12
    assert space.uploads.content_length(request_scope(headers=[(b"content-length", b"-1")])) is None


@pytest.mark.parametrize(
    ("peer", "headers", "trusted", "client"),
    [
        # without trusted proxies the peer is the client, whatever it claims, from any address
        ("10.0.0.1", forwarded("203.0.113.7"), (), "10.0.0.1"),
        ("127.0.0.1", forwarded("203.0.113.7, 198.51.100.1"), (), "127.0.0.1"),
        ("93.184.216.34", forwarded("203.0.113.7"), PROXIES, "93.184.216.34"),
        # behind a trusted proxy: what it appended, not the first address (which the client wrote)
        ("10.0.0.1", forwarded("203.0.113.7"), PROXIES, "203.0.113.7"),
        ("10.0.0.1", forwarded("1.1.1.1, 2.2.2.2, 198.51.100.9"), PROXIES, "198.51.100.9"),
        # a chain of trusted proxies is walked from the right, over several header lines
        ("10.0.0.1", forwarded("1.1.1.1, 198.51.100.9", "192.168.1.1, 10.2.3.4"), PROXIES, "198.51.100.9"),
        ("10.0.0.1", forwarded("10.9.9.9, 10.2.3.4"), PROXIES, "10.9.9.9"),  # all trusted: the farthest
        ("10.0.0.1", [], PROXIES, "10.0.0.1"),  # the proxy's own request
        # an entry that is not an address was not written by a trusted proxy: no client is named (the request is
        # refused)
        ("10.0.0.1", forwarded("198.51.100.9, not-an-address, 10.2.3.4"), PROXIES, None),
        ("10.0.0.1", forwarded("not-an-address"), PROXIES, None),
        ("not-an-address", [], PROXIES, None),  # what uvicorn made of that entry, as the guard sees it
        ("10.0.0.1", forwarded("198.51.100.9:5000"), PROXIES, "198.51.100.9"),  # ports are not part of a client
        # an IPv6 client is its /64, which one host is commonly given whole
        ("2001:db8::1", forwarded("[2001:db8:1::5]:443, 2001:db9::7"), PROXIES, "2001:db9::/64"),
        ("2001:db9:0:1:ffff:ffff:ffff:ffff", [], (), "2001:db9:0:1::/64"),
        ("2001:db9:0:2::1", [], (), "2001:db9:0:2::/64"),
        ("::ffff:10.0.0.1", forwarded("::ffff:198.51.100.9"), PROXIES, "198.51.100.9"),  # IPv4 over IPv6 is IPv4
        ("192.168.1.2", forwarded("203.0.113.7"), PROXIES, "192.168.1.2"),  # a neighbour of a trusted proxy
    ],
)
def test_the_client_is_the_address_the_nearest_trusted_proxy_appended(peer, headers, trusted, client):
    assert space.clients.client_of(request_scope(peer=peer, headers=headers), trusted) == client


@pytest.mark.parametrize("value", ["10.0.0.0/33", "10.0.0.1/8", "proxy.internal", "10.0.0.0/8;", "::1::2"])
def test_a_trusted_proxies_setting_that_is_not_addresses_stops_the_app_naming_it(value):
    with pytest.raises(ValueError, match=r"BARTSCORE_APP_TRUSTED_PROXIES: .* is not an IP address or network"):
        space.settings.settings_from_env({"BARTSCORE_APP_TRUSTED_PROXIES": value})
    assert space.settings.settings_from_env({}).trusted_proxies == ()
    parsed = space.settings.settings_from_env({"BARTSCORE_APP_TRUSTED_PROXIES": " 10.0.0.0/8,,::1 "}).trusted_proxies
    assert [str(network) for network in parsed] == ["10.0.0.0/8", "::1/128"]


@pytest.mark.parametrize(
    ("value", "warned"),
    [
        ("0.0.0.0/0", ["0.0.0.0/0"]),
        ("10.0.0.0/7, 10.0.0.0/8", ["10.0.0.0/7"]),
        ("::/0, 2001:db8::/31, 2001:db8::/32, fd00::/8", ["::/0", "2001:db8::/31", "fd00::/8"]),
        ("127.0.0.1, 10.0.0.0/8, 2001:db8::/32", []),
    ],
)
def test_a_trusted_range_wider_than_a_slash_8_is_warned_about_at_start(monkeypatch, caplog, value, warned):
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    with space.clients.uvicorn_trusting(space.clients.trusted_proxies(value)):
        pass
    messages = [record.getMessage() for record in caplog.records if "wider than" in record.getMessage()]
    assert [re.search(r"names (\S+), wider than", message)[1] for message in messages] == warned
    assert all("BARTSCORE_APP_TRUSTED_PROXIES" in message for message in messages)


@pytest.mark.parametrize("trusted", [(), PROXIES], ids=["no proxy", "trusted proxies"])
@pytest.mark.parametrize("operator_value", [None, "*"])
def test_uvicorn_rewrites_the_client_as_the_upload_guard_reads_it(monkeypatch, trusted, operator_value):
    """uvicorn rewrites the client from X-Forwarded-For before the guard sees it; while the app starts it trusts the
    app's proxies only, and an operator's own FORWARDED_ALLOW_IPS comes back afterwards."""
    import uvicorn
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    if operator_value is None:
        monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    else:
        monkeypatch.setenv("FORWARDED_ALLOW_IPS", operator_value)
    with space.clients.uvicorn_trusting(trusted):
        allowed = uvicorn.Config(app=None).forwarded_allow_ips
    assert os.environ.get("FORWARDED_ALLOW_IPS") == operator_value
    seen = []

    async def app_behind(scope, receive, send):
        seen.append(space.clients.client_of(scope, trusted))

    middleware = ProxyHeadersMiddleware(app_behind, trusted_hosts=allowed)
    for peer, header in [
        ("127.0.0.1", "203.0.113.7"),
        ("10.0.0.1", "1.1.1.1, 198.51.100.9"),
        ("10.0.0.1", "1.1.1.1, 198.51.100.9, 10.2.3.4"),
        ("93.184.216.34", "203.0.113.7"),
    ]:
        scope = request_scope(peer=peer, headers=forwarded(header))
        asyncio.run(middleware(dict(scope), None, None))
        assert seen[-1] == space.clients.client_of(scope, trusted)


class StoringApp:
    """Gradio's upload route as the guard sees it: stores the request's body in a folder of its own and answers
    with the stored path (a JSON list)."""

    def __init__(self, folder):
        self.folder, self.count = folder, 0

    async def __call__(self, scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.count += 1
        path = self.folder / f"upload-{self.count}" / "file.csv"
        path.parent.mkdir()
        path.write_bytes(body)
        answer = f'["{path}"]'.encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": answer})


def guarded_upload(guard, peer, claimed=None, body=b"source,sys\n1,x\n"):
    """Sends one upload through the guard from `peer`, with an X-Forwarded-For of `claimed`; (status, paths)."""
    headers = [(b"content-length", str(len(body)).encode())]
    headers += forwarded(claimed) if claimed else []
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(guard(request_scope(peer=peer, headers=headers), receive, send))
    status = sent[0]["status"]
    return status, (json.loads(sent[-1]["body"]) if status == 200 else [])


@pytest.mark.parametrize(
    ("peer", "trusted", "appended"),
    [("127.0.0.1", (), ""), ("10.0.0.1", PROXIES, ", 198.51.100.1")],
    ids=["no proxy", "behind a trusted proxy"],
)
def test_made_up_forwarded_addresses_do_not_give_a_client_more_uploads(tmp_path, caplog, peer, trusted, appended):
    ledger = space.uploads.UploadLedger(per_client=2)
    guard = space.uploads.UploadGuard(StoringApp(tmp_path), ledger, trusted)
    paths = []
    for number in range(8):  # the probe: 8 uploads, each claiming another address
        status, stored = guarded_upload(guard, peer, f"203.0.113.{number}{appended}")
        assert status == 200
        paths += stored
    kept = [path for path in paths if os.path.exists(path)]
    assert kept == paths[-2:] and list(ledger.stored()) == kept
    # an ignored header is logged once, for the operator (who may have a proxy to trust)
    ignored = [record for record in caplog.records if "X-Forwarded-For, which is ignored" in record.getMessage()]
    assert len(ignored) == (0 if trusted else 1)


@pytest.mark.parametrize(
    ("trusted", "user", "other"),
    [
        ((), ("198.51.100.1", None), ("203.0.113.9", "198.51.100.1")),
        # the other client's proxy appends its real address after the one it claims
        (PROXIES, ("10.0.0.1", "198.51.100.1"), ("10.0.0.1", "198.51.100.1, 203.0.113.9")),
    ],
    ids=["direct", "behind a trusted proxy"],
)
def test_a_client_claiming_another_users_address_cannot_evict_their_upload(tmp_path, trusted, user, other):
    ledger = space.uploads.UploadLedger(per_client=2)
    guard = space.uploads.UploadGuard(StoringApp(tmp_path), ledger, trusted)
    _, [kept] = guarded_upload(guard, *user)
    for _ in range(4):
        assert guarded_upload(guard, *other)[0] == 200
    assert os.path.exists(kept)
    corpus = space.batch.parse_upload(kept, max_rows=10, max_chars=MAX_CHARS)  # the user's file is still scored
    assert corpus.systems == {"sys": ["x"]}


def post_upload(url, name, body, headers=None):
    import httpx

    return httpx.post(
        f"{url}gradio_api/upload", files=[("files", (name, body, "text/csv"))], headers=headers, timeout=60
    )


@pytest.mark.slow
def test_the_served_app_takes_no_forwarded_address_from_a_client_it_does_not_trust(app_url):
    """The probe on the server itself (uvicorn's own proxy-header rewrite included): 8 uploads from one client, each
    claiming another address, keep only its newest 2."""
    paths = []
    for number in range(8):
        response = post_upload(
            app_url,
            f"claimed-{number}.csv",
            f"source,sys\n{number},x\n".encode(),
            {"X-Forwarded-For": f"203.0.113.{number}"},
        )
        assert response.status_code == 200
        paths += response.json()
    assert [path for path in paths if os.path.exists(path)] == paths[-space.uploads.UPLOADS_PER_CLIENT :]


@pytest.mark.slow
def test_the_served_app_keeps_a_clients_newest_uploads_and_refuses_a_request_too_large(app_url, tmp_path):
    import http.client
    import urllib.parse

    kept = []
    for number in range(space.uploads.UPLOADS_PER_CLIENT + 1):
        response = post_upload(app_url, f"upload-{number}.csv", f"source,sys\n{number},x\n".encode())
        assert response.status_code == 200
        kept.extend(response.json())
    assert not os.path.exists(kept[0]) and all(os.path.exists(path) for path in kept[1:])
    address = urllib.parse.urlsplit(app_url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    connection.putrequest("POST", "/gradio_api/upload")
    connection.putheader("Content-Type", "multipart/form-data; boundary=x")
    connection.putheader("Content-Length", str(space.uploads.UPLOAD_BYTES_PER_CLIENT + 1))
    connection.endheaders()
    response = connection.getresponse()  # answered before the body is sent
    assert response.status == 413 and b"at most" in response.read()
    connection.close()


def test_an_upload_the_server_no_longer_holds_is_asked_for_again(tmp_path):
    with pytest.raises(space.form.FieldError, match=r"gone\.csv is no longer on the server; upload it again"):
        space.batch.parse_upload(str(tmp_path / "gone.csv"), max_rows=10, max_chars=MAX_CHARS)
