"""Inference servers that a causal LM is scored through: where one is (its address), how it is reached (the API key,
and requests with a timeout and retries), and what the served model is (probed before any pair is sent).

A checkpoint names a server as "<kind>+<URL>": "vllm+http://127.0.0.1:8000/v1", "sglang+http://127.0.0.1:30000",
"tgi+http://127.0.0.1:8080", "llama.cpp+http://127.0.0.1:8080"; or as the URL alone, the kind being then detected from
the endpoints the server answers. The request shapes of each kind are bart_score.models.served.kinds'; the model the
engine drives on a server is bart_score.models.served._server's.

The API key, when the server wants one, comes from the environment (API_KEY_ENV, or the file API_KEY_FILE_ENV
names), never from an option: it is sent in each request's Authorization header and appears in no message, signature
or file (a server's own words that hold it, or any MOST_KEY_FRAGMENT characters of it, are shown with it blanked out
before they are cut). White space around it (a key file's line end, a Windows CR) is dropped; any other character a
header cannot carry is refused, by its position and kind, never by showing the key.

What a server can cost here is bounded, whatever it answers: each request has a deadline (request_timeout) for the
whole of it (connecting, the headers, the body), which its sockets keep (each wait is given the time left: _http,
under the httpx client); and each answer's body is bounded, in bytes and in JSON items, by what the request asked
(AnswerBound: a floor, and so much per token sent or listed), checked on the bytes before any JSON is built. With at
most MAX_CONCURRENCY requests at once, what the answers of a call can take in memory is bounded too
(docs/security.md).

This module imports nothing heavy (no torch), so that the options and the checkpoints can recognise a server."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import urllib.parse
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...corpora._reading import parse_json, read_bounded
from ...errors import (
    BARTScoreError,
    InputError,
    ScoringError,
    ServerWarning,
    first_line,
)
from ...messages import Mention, shown
from ...options import MAX_CONCURRENCY

if TYPE_CHECKING:
    import httpx

# The options of a served model alone (bart_score.options.EngineOptions' names), refused for any other checkpoint.
SERVED_OPTIONS = ("served_model", "served_tokenizer", "concurrency", "request_timeout", "request_retries")
API_KEY_ENV = "BARTSCORE_SERVER_API_KEY"
API_KEY_FILE_ENV = "BARTSCORE_SERVER_API_KEY_FILE"
# Seconds before the first retry, doubled before each further one, and the most a retry waits (a server's
# Retry-After included).
RETRY_DELAY = 0.5
MOST_RETRY_DELAY = 30.0
# What an answer's body may hold (AnswerBound), in bytes and in JSON items (counted as its bytes "[", "{", "," and ":",
# which bound the values json builds: each costs 30 to 200 bytes of memory). Any answer may hold the floor (a probe's
# whole answer: the tests' largest, /info, holds 355 bytes and 28 items; a llama-server's /props, with its chat
# template, a few KiB); then each token the request sends (the integers of its lists, the characters of its texts)
# the per-token figures (measured on the tests' server: vLLM's prompt_logprobs take 157 bytes and 17.8 items a token,
# SGLang's 34 and 4.1, TGI's 33 and 4.0, llama-server's 22 and 3.0), and each token an answer lists for each one
# generated (llama-server's n_probs over the whole vocabulary: about 90 bytes and 12 items an entry) the per-listed
# ones.
ANSWER_FLOOR_BYTES = 256 << 10
ANSWER_FLOOR_ITEMS = 16_384
ANSWER_BYTES_PER_TOKEN = 1 << 10
ANSWER_ITEMS_PER_TOKEN = 48
ANSWER_BYTES_PER_LISTED = 512
ANSWER_ITEMS_PER_LISTED = 32
# An answer's body is read this many bytes at a time.
READ_CHUNK = 1 << 16
# What the servers' own messages (and the text of a failure) are cut to in ours, after the key is blanked out; and the
# most characters of them looked at (a message cut to MESSAGE_CHARACTERS never needs more).
MESSAGE_CHARACTERS = 300
MOST_WORDS_READ = 4096
# A run of this many characters of the API key (or the whole key, when shorter) is blanked out wherever it appears
# in what a server says: servers echo a key cut short ("sk-abc...xyz").
MOST_KEY_FRAGMENT = 8
# The most characters an API key may have: real keys have a few dozen, and h11 (which vLLM's and SGLang's uvicorn speak
# HTTP with) takes 16 KiB of a request's headers in all.
MAX_KEY_CHARACTERS = 8192
# The white space dropped around an API key: what a key file's line end (LF, or a Windows CR LF), `$(cat key.txt)` or
# a copy and paste leave there.
KEY_SPACE = " \t\r\n"
# The characters a URL holds (RFC 3986's unreserved and reserved characters, and "%" of an escape): a space, a control
# character or a line break in a checkpoint's name is refused rather than sent (urllib drops tabs and line breaks
# silently) or shown in a signature.
URL_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%")
_KIND_WORD = re.compile(r"[A-Za-z][A-Za-z0-9._-]*")  # a kind's name before "+" (kinds.checked_kind checks which)
# A server's address written without its scheme: a host name or an IP address, a port, and a path if any.
_BARE_ADDRESS = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*):[0-9]{1,5}(?:/\S*)?")


@dataclass(frozen=True)
class ServerAddress:
    """Where a served model is. kind: the kind written before "+", or None to detect it; url: the URL as given (which
    names the server in messages and signatures); scheme, host, port and base (the path the server's endpoints are
    under: the URL's path without a trailing /v1, which the OpenAI-compatible ones add themselves)."""

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
    """Whether a checkpoint's name names a server: "<kind>+http(s)://..." or "http(s)://..."; or means to, so that
    server_address says how to write it: a kind's word and "+" before something else ("llama.cpp+127.0.0.1:8080"), or
    a host and a port alone ("127.0.0.1:8080/v1"), where no file or folder has that name (a Hub id has no "+" or
    ":")."""
    if not isinstance(name, str):
        return False
    scheme = name.split("://", 1)[0].lower() if "://" in name else ""
    if scheme in ("http", "https") or scheme.endswith(("+http", "+https")):
        return True
    kind, plus, _ = name.partition("+")
    meant = (bool(plus) and _KIND_WORD.fullmatch(kind) is not None) or _BARE_ADDRESS.fullmatch(name) is not None
    return meant and not os.path.lexists(name)


def written_kind(name: str) -> tuple[str, str]:
    """The kind a server's name writes before "+" (lowercase; "" when none), and the rest."""
    kind, _, url = name.partition("+") if "+" in name.split("://", 1)[0] else ("", "", name)
    return kind.lower(), url


def server_address(name: str) -> ServerAddress:
    """The address a checkpoint's name gives (see names_a_server), checked (its kind is kinds.checked_kind's): an http
    or https URL with a host, a port from 1 to 65535 if any, neither a query nor a fragment, no character a URL does
    not hold, and no user name or password (the API key goes in the environment, never in a name that signatures and
    messages show); each refused with one InputError saying how to write it. Plain http to another machine is warned
    about: the texts, and the key, travel unencrypted."""
    kind, url = written_kind(name)
    if "://" not in url:
        written = f"{kind}+http://{url}" if kind else f"http://{url}"
        raise InputError(
            f"the checkpoint {shown(name)} names a server without its URL's scheme ({shown(url)} is not a URL)",
            option="checkpoint",
            remedy=f"write it as {shown(written)} (or https://)",
        )
    odd = next((character for character in url if character not in URL_CHARACTERS), None)
    if odd is not None:
        raise _refused_url(
            url,
            f"holds {_character_kind(odd)}, which a URL does not",
            "percent-encode it (a host's name in its ASCII form), or give the URL without it",
        )
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as problem:  # "Invalid IPv6 URL", a port out of range or not a number
        raise InputError(f"{shown(url)} is not a server's URL ({problem})", option="checkpoint") from None
    if parts.username is not None or parts.password is not None:
        shown_url = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        raise _refused_url(
            shown_url,
            "holds a user name or password, which a checkpoint's name (shown in signatures and messages) must not",
            f"give the URL without it, and the API key in {API_KEY_ENV} or a file named by {API_KEY_FILE_ENV}",
        )
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InputError(f"{shown(url)} is not a server's URL (http:// or https://, and a host)", option="checkpoint")
    if port == 0:
        raise _refused_url(url, "names port 0, on which no server listens")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise _refused_url(
            url,
            "holds a query or a fragment (after ? or #), which the base URL of a server's endpoints does not",
            "give the URL up to its path",
        )
    https = parts.scheme.lower() == "https"
    base = parts.path.rstrip("/")
    base = base[: -len("/v1")] if base.endswith("/v1") else base
    address = ServerAddress(
        kind or None, url, "https" if https else "http", parts.hostname, port or (443 if https else 80), base
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


def _refused_url(url: str, problem: str, remedy: str | None = None) -> InputError:
    """A server's URL refused: "the server's URL <url> <problem>", about the option checkpoint, which names it."""
    return InputError(f"the server's URL {shown(url)} {problem}", option="checkpoint", remedy=remedy)


def _character_kind(character: str) -> str:
    """What a character is, for a message that must not show the text it is in (an API key) or cannot show it (a
    control character): "a space", "a tab", "a line break (CR)", "a control character (U+0007)", "a non-ASCII
    character (U+00A0)", "the character '|'"."""
    named = {" ": "a space", "\t": "a tab", "\r": "a line break (CR)", "\n": "a line break (LF)"}
    if character in named:
        return named[character]
    code = f"U+{ord(character):04X}"
    if ord(character) < 0x20 or ord(character) == 0x7F:
        return f"a control character ({code})"
    if ord(character) > 0x7E:
        return f"a non-ASCII character ({code})"
    return f"the character {character!r}"


def api_key() -> str | None:
    """The API key the environment gives (API_KEY_ENV, or the file API_KEY_FILE_ENV names: its first line that is not
    blank), checked by checked_key; None when neither is set (or API_KEY_ENV is empty)."""
    key = os.environ.get(API_KEY_ENV) or None
    path = os.environ.get(API_KEY_FILE_ENV) or None
    if key is not None and path is not None:
        raise InputError(f"both {API_KEY_ENV} and {API_KEY_FILE_ENV} are set", remedy="set one of them")
    if path is None:
        return None if key is None else checked_key(key, API_KEY_ENV)
    where = f"the API key file {path} ({API_KEY_FILE_ENV})"
    text = read_bounded(path, where, limit=1 << 16).decode("utf-8", "replace").removeprefix("\ufeff")
    # Lines part at LF alone (CR is white space around the key), so that no other line separator cuts a key short.
    first = text.strip(KEY_SPACE).split("\n", 1)[0]
    if not first:
        raise InputError(f"{where} is empty")
    return checked_key(first, where)


def checked_key(key: str, source: str) -> str:
    """An API key from `source` (named in messages) without the white space around it (KEY_SPACE), refused (an
    InputError that names the character's position and kind, and never shows the key) unless it is made of the
    visible ASCII characters an HTTP header carries, at most MAX_KEY_CHARACTERS of them."""
    stripped = key.strip(KEY_SPACE)
    if not stripped:
        raise InputError(f"{source} holds only white space, not an API key", remedy="set it to the key, or unset it")
    if len(stripped) > MAX_KEY_CHARACTERS:
        raise InputError(
            f"{source} holds {len(stripped):,} characters, more than an API key has (at most {MAX_KEY_CHARACTERS:,})"
        )
    position, odd = next(((p, c) for p, c in enumerate(stripped) if not "!" <= c <= "~"), (-1, ""))
    if odd:
        bearer = stripped[:7].lower() == "bearer "
        raise InputError(
            f"{source} holds {_character_kind(odd)} at character {position + 1} of the API key, which an HTTP header "
            f"cannot carry (the key is not shown)",
            remedy='give the key alone, without "Bearer "' if bearer else "set it to the key alone, on one line",
        )
    return stripped


@dataclass(frozen=True)
class Answer:
    """A server's answer: its HTTP status and body."""

    status: int
    data: bytes


@dataclass(frozen=True)
class AnswerBound:
    """What the body of the answer to a request may hold, in bytes and in JSON items (its bytes "[", "{", "," and
    ":"): the floor, and so much for each token the request sends and each token it asks to be listed (see
    ANSWER_FLOOR_BYTES). tokens and listed: those counts, for messages."""

    bytes: int
    items: int
    tokens: int = 0
    listed: int = 0

    @classmethod
    def of(cls, body: Any, listed: int = 0) -> AnswerBound:
        """The bound of the answer to a request of `body` (a JSON value; None: no body) that asks for `listed`
        tokens to be listed (the alternatives an answer gives for each token generated)."""
        tokens = tokens_sent(body)
        return cls(
            ANSWER_FLOOR_BYTES + ANSWER_BYTES_PER_TOKEN * tokens + ANSWER_BYTES_PER_LISTED * listed,
            ANSWER_FLOOR_ITEMS + ANSWER_ITEMS_PER_TOKEN * tokens + ANSWER_ITEMS_PER_LISTED * listed,
            tokens,
            listed,
        )

    def refusal(self, what: str) -> str:
        """Why an answer over the bound is refused: it holds more `what` (bytes or JSON items) than the request
        asked for."""
        most = self.bytes if what == "bytes" else self.items
        asked = f"{self.tokens:,} tokens sent" + (f" and {self.listed:,} listed" if self.listed else "")
        return f"holds more than {most:,} {what}, the most a request of {asked} is answered with"


def tokens_sent(body: Any) -> int:
    """The tokens a request's body sends: the integers of its lists (token ids) and the characters of its texts (a
    token has one or more), walked without recursion."""
    count, pending = 0, [body]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            count += len(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, (list, tuple)):
            count += sum(isinstance(item, int) and not isinstance(item, bool) for item in value)
            pending.extend(item for item in value if isinstance(item, (str, dict, list, tuple)))
    return count


class _OverBound(Exception):
    """An answer whose body holds more than its AnswerBound (the message says what): not retried."""


class _NoAnswer(Exception):
    """A request that reached its deadline."""


class _ConnectionFailed(Exception):
    """A request whose connection failed (refused, reset, dropped, TLS, not HTTP): the message says how."""


class Connection:
    """JSON requests to one server over httpx (its pool keeps connections open between requests, at most
    MAX_CONCURRENCY at once), each request given `timeout` seconds in all (connecting, sending, the headers and the
    body: see _http), its answer's body bounded (AnswerBound), and `retries` more attempts after a 429, a 5xx, a
    timeout or a dropped connection, waiting RETRY_DELAY seconds doubled each time (or the server's Retry-After). A
    4xx that says the request is wrong, and an answer over its bound, are not retried; a redirect is not followed.
    stop() ends the requests under way in every thread at once (after a failure, or Ctrl-C, the others' answers and
    their retries' waits are not waited for), until resume()."""

    def __init__(self, address: ServerAddress, *, key: str | None, timeout: float, retries: int) -> None:
        self.address, self.timeout, self.retries = address, timeout, retries
        self._key = None if key is None else checked_key(key, "the API key")
        from . import _http  # httpx loads with the first connection, not with whatever only reads an address

        self._sockets = _http.Sockets()
        self._client = _http.client(address.scheme, self._sockets, MAX_CONCURRENCY, waiting=timeout)

    def __repr__(self) -> str:  # never the key
        return f"Connection({self.address.url!r})"

    def redacted(self, text: str) -> str:
        """`text` with the API key blanked out (see redacted), should a server's words hold it."""
        return redacted(text, self._key)

    def said(self, text: str) -> str:
        """What a server said, or a failure's text, as our messages show it (shown_words: the key blanked out)."""
        return shown_words(text, self._key)

    def reached(self) -> str | None:
        """None when the server answers a request at all (whatever its status), else what happened: the first
        contact, made once."""
        try:
            self._exchange("GET", "/v1/models", None, AnswerBound.of(None))
        except _NoAnswer:
            return f"no answer within {self.timeout:g} s"
        except _ConnectionFailed as failure:
            return self.said(str(failure))
        except _OverBound:  # an answer, if not one to use
            return None
        return None

    def stop(self) -> None:
        """Ends every request under way (their sockets shut), and refuses new ones until resume()."""
        self._sockets.stop()

    def resume(self) -> None:
        self._sockets.resume()

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
        listed: int = 0,
    ) -> Any:
        """The JSON value the server answers to `method` `path` with `body` as JSON; an `error` naming the request
        when it fails (exchange), when the server refuses it (a 4xx: the server's words, and for 401 or 403 where
        the API key goes) or when its answer is not JSON (or nests too deeply). listed: as exchange's."""
        answer = self.exchange(method, path, body, error=error, listed=listed)
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
        listed: int = 0,
    ) -> Answer:
        """The server's answer to `method` `path` with `body` as JSON, once it is not a 429 or a 5xx: after each of
        those, a timeout or a failed connection, the request is made again, and after the last attempt an `error`
        says what happened. An answer whose body is over its bound (AnswerBound.of(body, listed); listed: the tokens
        the request asks the answer to list, such as the alternatives of each token generated) is an `error` at
        once."""
        payload = None if body is None else json.dumps(body).encode("utf-8")
        bound = AnswerBound.of(body, listed)
        attempts = self.retries + 1
        problem, delay = "", RETRY_DELAY
        for attempt in range(attempts):
            if attempt:
                self._sockets.stopped.wait(delay)  # a stop ends the wait at once
                delay = min(2 * delay, MOST_RETRY_DELAY)
            if self._sockets.stopped.is_set():
                raise error(f"{method} {self.url(path)} was stopped")
            try:
                status, headers, data = self._exchange(method, path, payload, bound)
            except _NoAnswer:
                problem = f"no answer within {self.timeout:g} s"
                continue
            except _ConnectionFailed as failure:
                problem = f"the connection failed ({self.said(str(failure))})"
                continue
            except _OverBound as over:
                raise error(f"the answer to {method} {self.url(path)} {over}; it is not read further") from None
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

    def _exchange(
        self, method: str, path: str, payload: bytes | None, bound: AnswerBound
    ) -> tuple[int, httpx.Headers, bytes]:
        """One request, within its deadline (waiting for a connection included); its body not decoded (identity:
        what is bounded is what comes). httpx's failures are _NoAnswer and _ConnectionFailed."""
        import httpx  # loaded by __init__ already

        headers = {"Content-Type": "application/json", "Accept": "application/json", "Accept-Encoding": "identity"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        try:
            with (
                self._sockets.deadline(self.timeout),
                self._client.stream(method, self.url(path), content=payload, headers=headers) as answer,
            ):
                return answer.status_code, answer.headers, _body(answer, bound)
        except httpx.TimeoutException:
            raise _NoAnswer from None
        except httpx.TransportError as failure:
            raise _ConnectionFailed(first_line(failure)) from None

    def _said(self, data: bytes) -> str:
        """What a server's error answer says, as ": <its words>" (nothing when it says nothing)."""
        text = server_words(data, self._key)
        return f": {text}" if text else ""


def _body(answer: httpx.Response, bound: AnswerBound) -> bytes:
    """The body of `answer`, read READ_CHUNK bytes at a time; an _OverBound as soon as it is over `bound`'s bytes
    (a Content-Length over it, before any is read), or when it holds more JSON items."""
    length = answer.headers.get("Content-Length")  # digits alone: h11 refuses any other
    if length is not None and int(length) > bound.bytes:
        raise _OverBound(bound.refusal("bytes"))
    chunks, size = [], 0
    for chunk in answer.iter_raw(READ_CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > bound.bytes:
            raise _OverBound(bound.refusal("bytes"))
    data = b"".join(chunks)
    if sum(data.count(mark) for mark in (b"[", b"{", b",", b":")) > bound.items:
        raise _OverBound(bound.refusal("JSON items"))
    return data


def server_words(data: bytes, key: str | None = None) -> str:
    """The message of a server's error answer: an OpenAI-style {"error": {"message"}}, TGI's {"error"}, FastAPI's
    {"detail"} or {"message"}, else its text; as shown_words shows it (`key` blanked out, on one line, escaped, cut to
    MESSAGE_CHARACTERS)."""
    text = data.decode("utf-8", "replace")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to be a message's
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
    return shown_words(value if isinstance(value, str) else text, key)


def shown_words(text: str, key: str | None) -> str:
    """`text` (what a server says, or a failure's text) as our messages show it: the API key `key` blanked out first
    (redacted, within the first MOST_WORDS_READ characters, the last MOST_KEY_FRAGMENT of which are dropped when there
    are more: a run of the key cut there is too short to be recognised), then on one line (each run of white space one
    space), each character that is not printable (control characters, line and paragraph separators, format
    characters such as a right-to-left override) and "|" (which parts a signature's fields and a table's cells)
    escaped as \\xNN, \\uNNNN or \\UNNNNNNNN, and cut to MESSAGE_CHARACTERS (then "...")."""
    head = _redacted_head(text, key)
    if len(text) > MOST_WORDS_READ:
        head = head[:-MOST_KEY_FRAGMENT]
    pieces = [one_line_character(c) for c in " ".join(head.split())]
    if len(text) <= MOST_WORDS_READ and sum(map(len, pieces)) <= MESSAGE_CHARACTERS:
        return "".join(pieces)
    kept, size = [], 0
    for piece in pieces:
        if size + len(piece) > MESSAGE_CHARACTERS - 3:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept) + "..."


def redacted(text: str, key: str | None) -> str:
    """`text` with the API key `key` blanked out ("***"): wherever it is whole, and each run of characters in which
    every MOST_KEY_FRAGMENT in a row are a piece of the key (a key a server echoes cut short) within the first
    MOST_WORDS_READ characters, more than a message that shows up to 1,500 characters of it can reach (each blank
    shortens the text by at most MOST_KEY_FRAGMENT - 3 characters of every MOST_KEY_FRAGMENT)."""
    if not key:
        return text
    whole = text.replace(key, "***")
    return _redacted_pieces(whole[:MOST_WORDS_READ], key) + whole[MOST_WORDS_READ:]


def _redacted_head(text: str, key: str | None) -> str:
    """The first MOST_WORDS_READ characters of `text` with `key` blanked out whole, and then its pieces (redacted)."""
    if not key:
        return text[:MOST_WORDS_READ]
    return _redacted_pieces(text.replace(key, "***")[:MOST_WORDS_READ], key)


def _redacted_pieces(head: str, key: str) -> str:
    """`head` with each run of characters in which every MOST_KEY_FRAGMENT in a row are a piece of `key` blanked."""
    size = min(MOST_KEY_FRAGMENT, len(key))
    pieces = {key[start : start + size] for start in range(len(key) - size + 1)}
    hidden = [False] * len(head)
    for start in range(len(head) - size + 1):
        if head[start : start + size] in pieces:
            hidden[start : start + size] = [True] * size
    kept, blanked = [], False
    for character, hide in zip(head, hidden):
        if not hide:
            kept.append(character)
        elif not blanked:
            kept.append("***")
        blanked = hide
    return "".join(kept)


def one_line_character(character: str) -> str:
    """A character of a server's text as one line of ours shows it: itself, or, when it is not printable or is "|"
    (which parts a signature's fields and a table's cells), escaped as Python writes it: \\xNN, \\uNNNN or
    \\UNNNNNNNN."""
    if character.isprintable() and character != "|":
        return character
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _retry_after(headers: httpx.Headers) -> float:
    """The seconds a Retry-After header of whole seconds asks for (0 without one), at most MOST_RETRY_DELAY."""
    value = (headers.get("Retry-After") or "").strip()
    return min(float(value), MOST_RETRY_DELAY) if value.isdigit() else 0.0
