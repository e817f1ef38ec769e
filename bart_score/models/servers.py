"""Inference servers that a causal LM is scored through: where one is (its address), how it is reached (the API key,
and requests with a timeout and retries), and what the served model is (probed before any pair is sent).

A checkpoint names a server as "<kind>+<URL>": "vllm+http://127.0.0.1:8000/v1", "sglang+http://127.0.0.1:30000",
"tgi+http://127.0.0.1:8080", "llama.cpp+http://127.0.0.1:8080"; or as the URL alone, the kind being then detected from
the endpoints the server answers. The request shapes of each kind are bart_score.models.server_kinds'; the model the
engine drives on a server is bart_score.models.served's.

The API key, when the server wants one, comes from the environment (API_KEY_ENV, or the file API_KEY_FILE_ENV
names), never from an option: it is sent in each request's Authorization header and appears in no message, signature
or file (a server's own words that hold it are shown with it blanked out).

This module imports nothing heavy (no torch), so that the options and the checkpoints can recognise a server."""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import os
import socket
import threading
import time
import urllib.parse
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import (
    BARTScoreError,
    InputError,
    ScoringError,
    ServerWarning,
    first_line,
)
from ..messages import Mention
from ..reading import parse_json, read_bounded

# The kinds of server that give a prompt's token log-probabilities, as a checkpoint names them before "+".
SERVER_KINDS = ("vllm", "sglang", "tgi", "llama.cpp")
SERVER_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI", "llama.cpp": "llama.cpp's llama-server"}
API_KEY_ENV = "BARTSCORE_SERVER_API_KEY"
API_KEY_FILE_ENV = "BARTSCORE_SERVER_API_KEY_FILE"
DEFAULT_CONCURRENCY = 4
DEFAULT_REQUEST_TIMEOUT = 120.0
DEFAULT_RETRIES = 3
# Seconds before the first retry, doubled before each further one, and the most a retry waits (a server's
# Retry-After included).
RETRY_DELAY = 0.5
MOST_RETRY_DELAY = 30.0
# A response's body is read up to this many bytes: a prompt's log-probabilities take about 100 bytes a token.
MAX_RESPONSE_BYTES = 256 << 20
# What the servers' own messages are cut to in ours.
MESSAGE_CHARACTERS = 300


@dataclass(frozen=True)
class ServedSettings:
    """The options of a served model (EngineOptions' served_model, served_tokenizer, concurrency, request_timeout and
    retries; None: not given)."""

    model: str | None = None
    tokenizer: str | None = None
    concurrency: int | None = None
    timeout: float | None = None
    retries: int | None = None

    @property
    def given(self) -> list[str]:
        """The options given, by the names the options table gives them."""
        names = ("served_model", "served_tokenizer", "concurrency", "request_timeout", "request_retries")
        values = (self.model, self.tokenizer, self.concurrency, self.timeout, self.retries)
        return [name for name, value in zip(names, values) if value is not None]


@dataclass(frozen=True)
class ServerAddress:
    """Where a served model is. kind: one of SERVER_KINDS, or None to detect it; url: the URL as given (without the
    kind), which names the server in messages and signatures; scheme, host, port and base (the path the server's
    endpoints are under: the URL's path without a trailing /v1, which the OpenAI-compatible ones add themselves)."""

    kind: str | None
    url: str
    scheme: str
    host: str
    port: int
    base: str

    @property
    def loopback(self) -> bool:
        """Whether the host is this machine (a loopback address, or localhost)."""
        if self.host.lower() == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def names_a_server(name: object) -> bool:
    """Whether a checkpoint's name names a server ("<kind>+http(s)://..." or "http(s)://...")."""
    if not isinstance(name, str):
        return False
    scheme = name.split("://", 1)[0].lower() if "://" in name else ""
    return scheme in ("http", "https") or scheme.endswith(("+http", "+https"))


def server_address(name: str) -> ServerAddress:
    """The address a checkpoint's name gives (see names_a_server), checked: a known kind, an http or https URL with a
    host, and no user name or password (the API key goes in the environment, never in a name that signatures and
    messages show). Plain http to another machine is warned about: the texts, and the key, travel unencrypted."""
    kind, separator, url = name.partition("+") if "+" in name.split("://", 1)[0] else ("", "", name)
    if separator and kind.lower() not in SERVER_KINDS:
        raise InputError(
            f"the checkpoint names a server of kind {kind!r}; the kinds are {', '.join(SERVER_KINDS)}",
            option="checkpoint",
            remedy="leave the kind out to have it detected",
        )
    parts = urllib.parse.urlsplit(url)
    if parts.username is not None or parts.password is not None:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        raise InputError(
            f"the server's URL {shown!r} holds a user name or password, which a checkpoint's name (shown in "
            f"signatures and messages) must not",
            option="checkpoint",
            remedy=f"give the URL without it, and the API key in {API_KEY_ENV} or a file named by {API_KEY_FILE_ENV}",
        )
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or port == -1:
        raise InputError(
            f"{url!r} is not a server's URL (http:// or https://, a host, and a port if any)", option="checkpoint"
        )
    https = parts.scheme.lower() == "https"
    base = parts.path.rstrip("/")
    base = base[: -len("/v1")] if base.endswith("/v1") else base
    address = ServerAddress(
        kind.lower() or None, url, "https" if https else "http", parts.hostname, port or (443 if https else 80), base
    )
    if not https and not address.loopback:
        warnings.warn(
            ServerWarning(
                f"the server {url} is reached over plain http:// from another machine: the texts scored, and the API "
                f"key if one is set, travel unencrypted",
                remedy="use https:// (or a tunnel) to reach it",
            ),
            stacklevel=3,
        )
    return address


def api_key() -> str | None:
    """The API key the environment gives (API_KEY_ENV, or the file API_KEY_FILE_ENV names: its first line), or None."""
    key = os.environ.get(API_KEY_ENV) or None
    path = os.environ.get(API_KEY_FILE_ENV) or None
    if key is not None and path is not None:
        raise InputError(f"both {API_KEY_ENV} and {API_KEY_FILE_ENV} are set", remedy="set one of them")
    if path is not None:
        text = read_bounded(path, f"the API key file {path} ({API_KEY_FILE_ENV})", limit=1 << 16)
        lines = text.decode("utf-8", "replace").strip().splitlines()
        key = lines[0].strip() if lines else None
        if not key:
            raise InputError(f"the API key file {path} ({API_KEY_FILE_ENV}) is empty")
    return key


@dataclass(frozen=True)
class Answer:
    """A server's answer: its HTTP status and body."""

    status: int
    data: bytes


class Connection:
    """JSON requests to one server: a persistent connection for each thread, each request given `timeout` seconds,
    and `retries` more attempts after a 429, a 5xx, a timeout or a dropped connection, waiting RETRY_DELAY seconds
    doubled each time (or the server's Retry-After). A 4xx that says the request is wrong is not retried. stop() ends
    the requests under way in every thread at once (after a failure, or Ctrl-C, the others' answers are not waited
    for), until resume()."""

    def __init__(self, address: ServerAddress, *, key: str | None, timeout: float, retries: int) -> None:
        self.address, self.timeout, self.retries = address, timeout, retries
        self._key = key
        self._local = threading.local()
        self._open: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()
        self._stopped = False

    def __repr__(self) -> str:  # never the key
        return f"Connection({self.address.url!r})"

    def redacted(self, text: str) -> str:
        """`text` with the API key blanked out, should a server's words hold it."""
        return text.replace(self._key, "***") if self._key else text

    def reached(self) -> str | None:
        """None when the server answers a request at all (whatever its status), else what happened: the first
        contact, made once."""
        try:
            self._exchange("GET", "/v1/models", None)
        except TimeoutError:
            return f"no answer within {self.timeout:g} s"
        except (OSError, http.client.HTTPException) as failure:
            return self.redacted(first_line(failure))
        return None

    def stop(self) -> None:
        """Ends every request under way (their connections shut), and refuses new ones until resume()."""
        with self._lock:
            self._stopped = True
            for connection in self._open:
                if connection.sock is not None:
                    with contextlib.suppress(OSError):  # already closed
                        connection.sock.shutdown(socket.SHUT_RDWR)

    def resume(self) -> None:
        with self._lock:
            self._stopped = False

    def url(self, path: str) -> str:
        """The URL of an endpoint, under the address's base."""
        address = self.address
        host = f"[{address.host}]" if ":" in address.host else address.host
        return f"{address.scheme}://{host}:{address.port}{address.base}{path}"

    def request(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        *,
        error: type[BARTScoreError] = ScoringError,
    ) -> Any:
        """The JSON value the server answers to `method` `path` with `body` as JSON; an `error` naming the request
        when it fails (exchange), when the server refuses it (a 4xx: the server's words, and for 401 or 403 where
        the API key goes) or when its answer is not JSON."""
        answer = self.exchange(method, path, body, error=error)
        if answer.status >= 400:
            raise self.refusal(method, path, answer, error)
        return parse_json(answer.data, f"the answer to {method} {self.url(path)}", error=error)

    def exchange(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        *,
        error: type[BARTScoreError] = ScoringError,
    ) -> Answer:
        """The server's answer to `method` `path` with `body` as JSON, once it is not a 429 or a 5xx: after each of
        those, a timeout or a failed connection, the request is made again, and after the last attempt an `error`
        says what happened."""
        payload = None if body is None else json.dumps(body).encode("utf-8")
        attempts = self.retries + 1
        problem, delay = "", RETRY_DELAY
        for attempt in range(attempts):
            if attempt:
                time.sleep(delay)
                delay = min(2 * delay, MOST_RETRY_DELAY)
            if self._stopped:
                raise error(f"{method} {self.url(path)} was stopped")
            try:
                status, headers, data = self._exchange(method, path, payload)
            except TimeoutError:
                problem = f"no answer within {self.timeout:g} s"
                continue
            except (OSError, http.client.HTTPException) as failure:  # refused, reset, dropped, TLS
                problem = f"the connection failed ({self.redacted(first_line(failure))})"
                continue
            if status == 429 or status >= 500:
                problem = f"HTTP {status}{self._said(data)}"
                delay = max(delay, _retry_after(headers))
                continue
            return Answer(status, data)
        raise error(
            f"{method} {self.url(path)} failed {'once' if attempts == 1 else f'{attempts} times'}; the last time: "
            f"{problem}",
            remedy=["wait for the server, or raise ", Mention("request_retries"), " or ", Mention("request_timeout")],
        )

    def refusal(self, method: str, path: str, answer: Answer, error: type[BARTScoreError]) -> BARTScoreError:
        """The error of a request the server refused (a 4xx), with the server's words."""
        remedy = None
        if answer.status in (401, 403):
            remedy = f"set {API_KEY_ENV} (or {API_KEY_FILE_ENV}, a file holding it) to a key the server takes"
        return error(
            f"{method} {self.url(path)} was refused (HTTP {answer.status}{self._said(answer.data)})", remedy=remedy
        )

    def _exchange(self, method: str, path: str, payload: bytes | None) -> tuple[int, http.client.HTTPMessage, bytes]:
        """One request on this thread's connection (opened when there is none; closed after a failure, or when the
        server closes it)."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            kind = http.client.HTTPSConnection if self.address.scheme == "https" else http.client.HTTPConnection
            connection = kind(self.address.host, self.address.port, timeout=self.timeout)
            self._local.connection = connection
            with self._lock:
                self._open.add(connection)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        try:
            connection.request(method, self.address.base + path, body=payload, headers=headers)
            response = connection.getresponse()
            data = response.read(MAX_RESPONSE_BYTES + 1)
            if len(data) > MAX_RESPONSE_BYTES:
                raise http.client.HTTPException(f"an answer of more than {MAX_RESPONSE_BYTES >> 20} MiB")
        except BaseException:
            self._close(connection)
            raise
        if response.will_close:
            self._close(connection)
        return response.status, response.headers, data

    def _close(self, connection: http.client.HTTPConnection) -> None:
        connection.close()
        self._local.connection = None
        with self._lock:
            self._open.discard(connection)

    def _said(self, data: bytes) -> str:
        """What a server's error answer says, as ": <its words>" (nothing when it says nothing)."""
        text = self.redacted(server_words(data))
        return f": {text}" if text else ""


def server_words(data: bytes) -> str:
    """The message of a server's error answer: an OpenAI-style {"error": {"message"}}, TGI's {"error"}, FastAPI's
    {"detail"} or {"message"}, else its text; on one line, cut to MESSAGE_CHARACTERS."""
    text = data.decode("utf-8", "replace")
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if isinstance(value, dict):
        error = value.get("error")
        for found in (
            error.get("message") if isinstance(error, dict) else error,
            value.get("detail"),
            value.get("message"),
        ):
            if isinstance(found, str) and found:
                value = found
                break
    words = " ".join(str(value).split())
    return words if len(words) <= MESSAGE_CHARACTERS else words[: MESSAGE_CHARACTERS - 3] + "..."


def _retry_after(headers: http.client.HTTPMessage) -> float:
    """The seconds a Retry-After header of whole seconds asks for (0 without one), at most MOST_RETRY_DELAY."""
    value = (headers.get("Retry-After") or "").strip()
    return min(float(value), MOST_RETRY_DELAY) if value.isdigit() else 0.0
