"""Uploads kept on the server's disk within limits, per client and overall.

Gradio stores every file sent to its upload route until its cache is emptied, whether or not it is ever scored, so
one client could fill the disk with uploads alone. UploadGuard, an ASGI middleware in front of that route, keeps a
ledger of the stored uploads:

- a request is refused before its body is read when it gives no Content-Length, or would take its client past
  UPLOAD_BYTES_PER_CLIENT, or the server past UPLOADS_OVERALL uploads or UPLOAD_BYTES_OVERALL bytes in its
  temporary folder (the uploads and everything else stored there: the results' downloads);
- a client keeps its UPLOADS_PER_CLIENT newest uploads: a newer one deletes its oldest at once;
- an upload is deleted UPLOAD_SECONDS after it arrived (checked on every upload, and by the caller's `prune`), or
  when an API request that scored it ends (`discard`: the page keeps its upload, to score it again).

A client is named as clients.py says. Nothing here imports Gradio."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bart_score.corpora._reading import parse_json
from bart_score.errors import InputError

from .batch import MAX_UPLOAD_BYTES
from .clients import (
    FORWARDED_NOT_AN_ADDRESS,
    TRUSTED_PROXIES_SETTING,
    ASGIApp,
    Message,
    Network,
    Receive,
    Refusal,
    Scope,
    Send,
    client_of,
    content_length,
    forwarded_by_untrusted,
    logger,
    refuse,
)

UPLOADS_PER_CLIENT = 2
UPLOAD_BYTES_PER_CLIENT = 2 * MAX_UPLOAD_BYTES + 1024 * 1024  # two of the largest files, with their form's overhead
UPLOADS_OVERALL = 64
UPLOAD_BYTES_OVERALL = 16 * MAX_UPLOAD_BYTES
UPLOAD_SECONDS = 15 * 60


@dataclass
class StoredUpload:
    path: str
    size: int
    arrived: float
    owners: set = field(default_factory=set)  # clients that sent this file (the same bytes and name share a path)


class UploadLedger:
    """The uploads on disk and the requests under way, by client; thread-safe."""

    def __init__(
        self,
        *,
        per_client: int = UPLOADS_PER_CLIENT,
        bytes_per_client: int = UPLOAD_BYTES_PER_CLIENT,
        overall: int = UPLOADS_OVERALL,
        bytes_overall: int = UPLOAD_BYTES_OVERALL,
        seconds: float = UPLOAD_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        folder: str | None = None,
    ) -> None:
        self.per_client, self.bytes_per_client = per_client, bytes_per_client
        self.overall, self.bytes_overall = overall, bytes_overall
        self.seconds, self.clock = seconds, clock
        self.folder = folder  # the temporary folder the uploads are stored in, whose whole size bytes_overall caps
        self._stored: dict[str, StoredUpload] = {}  # path -> upload, oldest first
        self._pending: dict[str, int] = {}  # client -> bytes of its requests under way
        self._lock = threading.Lock()

    def admit(self, client: str, length: int | None) -> Refusal | None:
        """Whether a request of `length` bytes from `client` may be read; when it may, its bytes are reserved until
        `settle` (call it whatever the request's outcome). Old uploads are deleted first, then this client's oldest
        when its share would be exceeded."""
        if length is None:
            return Refusal(411, "An upload needs a Content-Length header")
        if length > self.bytes_per_client:
            return Refusal(413, f"An upload request may carry at most {self.bytes_per_client // 2**20} MB")
        with self._lock:
            self._prune_locked()
            pending = self._pending.get(client, 0)
            if pending + length > self.bytes_per_client:
                return Refusal(429, "Too many uploads under way from this address; wait for them to finish")
            while self._client_bytes(client) + pending + length > self.bytes_per_client:
                self._forget_locked(self._oldest_of(client), client)
            stored_bytes = sum(upload.size for upload in self._stored.values())
            if self.folder is not None:  # the folder holds the results' downloads too
                stored_bytes = max(stored_bytes, folder_bytes(self.folder))
            if (
                len(self._stored) >= self.overall
                or stored_bytes + sum(self._pending.values()) + length > self.bytes_overall
            ):
                return Refusal(503, "The server holds as many uploads as it can right now; try again in a few minutes")
            self._pending[client] = pending + length
            return None

    def settle(self, client: str, length: int, paths: list[str]) -> None:
        """Ends an admitted request: its reservation is released and the files it stored (`paths`) are recorded,
        keeping the client's UPLOADS_PER_CLIENT newest."""
        with self._lock:
            left = self._pending.get(client, 0) - length
            if left > 0:
                self._pending[client] = left
            else:
                self._pending.pop(client, None)
            now = self.clock()
            share = length // max(1, len(paths))  # a file's size while Gradio still copies it into place
            for path in paths:
                upload = self._stored.pop(path, None) or StoredUpload(path, _size(path, share), now)
                upload.arrived = now
                upload.owners.add(client)
                self._stored[path] = upload  # now the newest
            while self._client_count(client) > self.per_client:
                self._forget_locked(self._oldest_of(client), client)

    def release(self, path: str) -> None:
        """Deletes an upload that the request which scored it is done with (an API request's), if it is one of the
        ledger's: a file it did not record is never deleted."""
        with self._lock:
            if self._stored.pop(path, None) is not None:
                discard(path)

    def prune(self) -> None:
        """Deletes the uploads older than the time limit."""
        with self._lock:
            self._prune_locked()

    def stored(self) -> dict[str, int]:
        """{path: size} of the uploads kept."""
        with self._lock:
            return {path: upload.size for path, upload in self._stored.items()}

    def _prune_locked(self) -> None:
        deadline = self.clock() - self.seconds
        for path, upload in list(self._stored.items()):
            if upload.arrived < deadline or not os.path.exists(path):
                for owner in list(upload.owners):
                    self._forget_locked(path, owner)

    def _client_bytes(self, client: str) -> int:
        return sum(upload.size for upload in self._stored.values() if client in upload.owners)

    def _client_count(self, client: str) -> int:
        return sum(client in upload.owners for upload in self._stored.values())

    def _oldest_of(self, client: str) -> str:
        return next(path for path, upload in self._stored.items() if client in upload.owners)

    def _forget_locked(self, path: str, client: str) -> None:
        """The client no longer holds the upload; the file is deleted when no client does."""
        upload = self._stored[path]
        upload.owners.discard(client)
        if upload.owners:
            return
        del self._stored[path]
        discard(path)


def discard(path: str) -> None:
    """Deletes an upload, and the folder of its own that Gradio keeps it in when nothing else is left there."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(path))


# The served app's uploads (one server runs in a process): app.launch guards the upload route with it, and the Batch
# tab's API entry releases the upload it scored.
SERVER_LEDGER = UploadLedger()


def folder_bytes(folder: str) -> int:
    """The bytes of the files under `folder` (a file deleted while they are counted counts nothing)."""
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(parent, name))
    return total


def _size(path: str, fallback: int) -> int:
    try:
        return os.path.getsize(path)
    except OSError:  # still being copied into place by Gradio
        return fallback


def is_upload_request(scope: Scope) -> bool:
    if scope.get("type") != "http" or scope.get("method") != "POST":
        return False
    path = "/".join(part for part in str(scope.get("path", "")).split("/") if part)
    return path == "gradio_api/upload" or path.endswith("/gradio_api/upload")


class UploadGuard:
    """ASGI middleware: the upload route's requests go through the ledger (see the module's text)."""

    def __init__(self, app: ASGIApp, ledger: UploadLedger, trusted: tuple[Network, ...] = ()) -> None:
        self.app, self.ledger, self.trusted = app, ledger, trusted
        self.untrusted_header_logged = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not is_upload_request(scope):
            await self.app(scope, receive, send)
            return
        client, length = client_of(scope, self.trusted), content_length(scope)
        if client is None:
            await refuse(send, FORWARDED_NOT_AN_ADDRESS)
            return
        if not self.untrusted_header_logged and forwarded_by_untrusted(scope, self.trusted):
            # once: what the operator needs to trust a proxy (docs/space.md, "Behind a proxy")
            logger.warning(
                "BARTScore Space: an upload from %s carries X-Forwarded-For, which is ignored: the peer is not one of "
                "%s; if it is your proxy, add its address or network there",
                client,
                TRUSTED_PROXIES_SETTING,
            )
            self.untrusted_header_logged = True
        refusal = self.ledger.admit(client, length)
        if refusal:
            await refuse(send, refusal)
            return
        status, body, settled = 0, bytearray(), False

        async def recording_send(message: Message) -> None:
            # The upload is recorded (and the client's oldest deleted) before the answer's last part is sent, so that
            # what the client sees next is already within the limits.
            nonlocal status, settled
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and not settled:
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    self.ledger.settle(client, length or 0, _stored_paths(bytes(body)) if status == 200 else [])
                    settled = True
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            if not settled:
                self.ledger.settle(client, length or 0, [])


def _stored_paths(body: bytes) -> list[str]:
    """The paths Gradio's upload route answers with (a JSON list)."""
    try:
        answer = parse_json(body, "the upload route's answer")
    except InputError:
        return []
    return [path for path in answer if isinstance(path, str)] if isinstance(answer, list) else []
