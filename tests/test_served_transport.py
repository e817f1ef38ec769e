"""Served models' transport (bart_score.models.served._transport): what a server, or what the environment gives, can
cost and show here. Every bound is tested at its edge against a plain formula, and every hostile case (a key with
characters a header cannot carry, an answer that drips a byte at a time, a flood of small JSON items, nesting, a key
echoed at the cut of a message) ends in one line of the project's error family, within the request's deadline and
bounded memory, and never shows the API key.

The misbehaving servers are raw sockets of the test's own (RawServer: what no HTTP server library would send), and a
proxy in front of the tests' inference server that answers its probes as it does and the scoring requests with a
flood, the costliest answer within the bound, or a drip (support/hostile_server.py): the command line is run against
it under a memory and time limit (support/cli.py's run_cli_capped)."""

import _thread
import concurrent.futures
import contextlib
import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from support.cli import run_cli_capped
from support.hostile_server import HostileProxy, drip, fill, flood

import bart_score
from bart_score.errors import CheckpointLoadError, CheckpointNotFoundError, InputError, ScoringError
from bart_score.messages import Mention
from bart_score.models.checkpoints import locate_checkpoint
from bart_score.models.served import _transport as servers
from bart_score.models.served._transport import (
    API_KEY_ENV,
    API_KEY_FILE_ENV,
    MESSAGE_CHARACTERS,
    Connection,
    api_key,
    server_address,
    server_words,
)
from bart_score.options import MAX_CONCURRENCY

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = "sk-Qz7Wv9Lp2Rt5Ny8Kd4Hm"
# How long a hostile server keeps dripping: longer than any test waits for a request given 1 s.
DRIP_SECONDS = 45
# The most seconds a request given 1 s may take here, whatever its server does: a margin that holds on a machine
# loaded 20 times over (the watchdog wakes at the deadline; a retry-free request ends then).
ENDS_WITHIN = 30


@pytest.fixture(autouse=True)
def no_key(monkeypatch):
    monkeypatch.setattr(servers, "RETRY_DELAY", 0.01)
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.delenv(API_KEY_FILE_ENV, raising=False)


def key_pieces(key, size=4):
    """Every run of `size` characters of `key`: none may appear in what is shown."""
    return {key[start : start + size] for start in range(len(key) - size + 1)}


def shows_no_key(text, key=KEY):
    return not any(piece in text for piece in key_pieces(key))


# ---------------------------------------------------------------------------------------------------------------------
# The API key: white space around it dropped, any other character a header cannot carry refused without showing it

# Every kind of character that is not a visible ASCII one: each C0 control, DEL, C1 controls, and the spaces, line
# and paragraph separators, format characters and letters beyond ASCII.
UNSENDABLE = [chr(code) for code in (*range(0x20), 0x7F, 0x80, 0x85, 0x9F)] + [
    " ",
    "\u00a0",  # no-break space
    "\u1680",
    "\u2000",
    "\u200b",  # zero-width space
    "\u2028",  # line separator
    "\u2029",  # paragraph separator
    "\u202e",  # right-to-left override
    "\u3000",  # ideographic space
    "\ufeff",  # byte-order mark
    "é",
    "\U0001f511",
]
AROUND = " \t\r\n"  # what a key file's line end, `$(cat key.txt)` or a paste leave around a key
# The controls that no split or strip of Python's reads as white space or a line end: one case, which U+0001 and DEL
# stand for in the fast subset, the others marked slow.
PLAIN_CONTROLS = {chr(code) for code in (*range(0x01, 0x09), *range(0x0E, 0x1C), 0x7F, 0x80, 0x9F)} - {"\x01", "\x7f"}


def sendable(key):
    """The reference: the key without the white space around it, when every character left is visible ASCII."""
    stripped = key.strip(AROUND)
    return stripped if stripped and all(0x21 <= ord(character) <= 0x7E for character in stripped) else None


def key_cases():
    for character in UNSENDABLE:
        name, marks = f"U+{ord(character):04X}", pytest.mark.slow if character in PLAIN_CONTROLS else ()
        yield pytest.param(f"sk-Qz7Wv9{character}Lp2Rt5Ny8Kd4Hm", id=f"inside-{name}", marks=marks)
        yield pytest.param(f"{KEY}{character}", id=f"after-{name}", marks=marks)
        yield pytest.param(f"{character}{KEY}", id=f"before-{name}", marks=marks)
    yield pytest.param(f"{KEY}\r\n\r\n", id="after-CRLF-twice")
    yield pytest.param(f"Bearer {KEY}", id="bearer")


@pytest.mark.parametrize("key", list(key_cases()))
@pytest.mark.parametrize("source", ["variable", "file"])
def test_a_key_is_sent_without_the_space_around_it_or_refused_without_being_shown(key, source, monkeypatch, tmp_path):
    if source == "variable":
        if "\x00" in key:
            pytest.skip("an environment variable cannot hold NUL")
        monkeypatch.setenv(API_KEY_ENV, key)
    else:
        path = tmp_path / "key.txt"
        path.write_bytes(key.encode("utf-8", "surrogatepass") + b"\n")
        monkeypatch.setenv(API_KEY_FILE_ENV, str(path))
    # A key file's key is its first line that is not blank (lines part at LF), after a byte-order mark if any.
    expected = sendable(key if source == "variable" else key.removeprefix("\ufeff").strip(AROUND).split("\n")[0])
    if expected is not None:
        assert api_key() == expected
        return
    with pytest.raises(InputError) as raised:
        api_key()
    message = str(raised.value)
    assert "\n" not in message and shows_no_key(message) and "the key is not shown" in message
    assert (API_KEY_ENV if source == "variable" else API_KEY_FILE_ENV) in message
    # and before any connection is tried, for a library caller as for the command line
    with pytest.raises(InputError):
        bart_score.BARTScorer(checkpoint="vllm+http://127.0.0.1:9/v1", device="cpu")


def test_a_key_file_s_first_line_is_the_key_and_a_blank_key_is_refused(monkeypatch, tmp_path):
    path = tmp_path / "key.txt"
    monkeypatch.setenv(API_KEY_FILE_ENV, str(path))
    path.write_bytes(b"\xef\xbb\xbf\r\n" + KEY.encode() + b"\r\nanother line\r\n")
    assert api_key() == KEY
    path.write_bytes(b" \r\n\t\n")
    with pytest.raises(InputError, match="is empty"):
        api_key()
    monkeypatch.delenv(API_KEY_FILE_ENV)
    monkeypatch.setenv(API_KEY_ENV, " \r\n")
    with pytest.raises(InputError, match="only white space"):
        api_key()
    monkeypatch.setenv(API_KEY_ENV, "k" * 8193)
    with pytest.raises(InputError, match="8,193 characters"):
        api_key()
    # a key given to the connection directly is checked as well (a header's ValueError showed it whole)
    with pytest.raises(InputError, match=r"a line break \(CR\) at character 4"):
        Connection(server_address("http://127.0.0.1:9"), key="sk-\rabc", timeout=1, retries=0)


def test_the_command_line_says_a_key_it_cannot_send_in_one_line_without_it(monkeypatch, tmp_path, capsys):
    sources, outputs = tmp_path / "sources.txt", tmp_path / "outputs.txt"
    sources.write_text("A text.\n")
    outputs.write_text("A summary.\n")
    command = ["score", "-m", "vllm+http://127.0.0.1:9/v1", "-s", str(sources), "-t", str(outputs)]
    monkeypatch.setenv(API_KEY_ENV, "sk-Qz7Wv9\x0bLp2Rt5Ny8Kd4Hm")
    assert bart_score.main(command) == 2
    said = capsys.readouterr()
    assert len(said.err.strip().splitlines()) == 1 and "U+000B" in said.err
    assert shows_no_key(said.err + said.out, "sk-Qz7Wv9\x0bLp2Rt5Ny8Kd4Hm")


# ---------------------------------------------------------------------------------------------------------------------
# What a server says, shown: the key blanked out before the cut, one line, escaped, bounded


def test_the_key_is_blanked_out_before_the_cut_wherever_the_cut_falls():
    """The key placed at every offset around the cut of MESSAGE_CHARACTERS, whole or echoed cut short."""
    for echoed in (KEY, KEY[:12] + "...", "..." + KEY[-10:]):
        for offset in range(MESSAGE_CHARACTERS - len(KEY) - 5, MESSAGE_CHARACTERS + 5):
            words = "x" * offset + echoed + " is not a valid key"
            for data in (words.encode(), json.dumps({"error": {"message": words}}).encode()):
                shown = server_words(data, KEY)
                assert shows_no_key(shown), (echoed, offset, shown)
                assert len(shown) <= MESSAGE_CHARACTERS


def test_a_server_s_words_are_one_printable_line_without_a_pipe():
    words = "bad\x1b[2J\rrequest\x07 | \u202eevil\u2028line\x00 \x9b31m" * 40
    for data in (words.encode(), json.dumps({"detail": words}).encode(), b"[" * 100_000):
        shown = server_words(data, KEY)
        assert shown.isprintable() and "|" not in shown and len(shown) <= MESSAGE_CHARACTERS
    assert server_words(json.dumps({"error": "a | b\x1b"}).encode()) == "a \\x7c b\\x1b"


def test_a_refusal_that_echoes_the_key_at_the_cut_shows_none_of_it(monkeypatch):
    """A 401 whose words put the key across the cut of MESSAGE_CHARACTERS (issue 43's probe: `...bad key
    sk-SECRET-abc...`), through the library."""
    monkeypatch.setenv(API_KEY_ENV, KEY)

    def answer(connection):
        read_request(connection)
        words = "x" * (MESSAGE_CHARACTERS - 20) + " bad key " + KEY  # the key from 289 on, across the cut
        send_answer(connection, 401, json.dumps({"error": {"message": words}}).encode())

    with RawServer(answer) as server, pytest.raises(CheckpointLoadError) as raised:
        bart_score.BARTScorer(checkpoint=f"vllm+{server.url}", device="cpu")
    assert "HTTP 401" in str(raised.value) and shows_no_key(str(raised.value))


def test_a_status_line_that_holds_the_key_and_control_characters_is_shown_without_them(monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, KEY)

    def answer(connection):
        read_request(connection)
        connection.sendall(f"HTTP/1.1 2x0 \x1b[31m{'y' * 280}{KEY}|\r\n\r\n".encode())

    with RawServer(answer) as server, pytest.raises(CheckpointNotFoundError) as raised:
        bart_score.BARTScorer(checkpoint=f"vllm+{server.url}", device="cpu")
    message = str(raised.value)
    assert message.startswith(f"no server answers at {server.url}") and message.isprintable()
    assert shows_no_key(message) and "\x1b" not in message and "|" not in message.split("; ")[0]


# ---------------------------------------------------------------------------------------------------------------------
# The server's address: port 0, malformed URLs and a kind before something that is not a URL are usage errors

KIND_SPELLINGS = ["vllm", "VLLM", "Vllm", "sglang", "SGLang", "tgi", "TGI", "llama.cpp", "LLAMA.CPP", "Llama.Cpp"]
BARE = ["127.0.0.1:8099", "localhost:8000/v1", "[::1]:8080", "my-server.lan:30000"]


@pytest.mark.parametrize("kind", KIND_SPELLINGS)
@pytest.mark.parametrize("bare", BARE)
def test_a_kind_before_an_address_without_its_scheme_says_how_to_write_it(kind, bare, no_model_load):
    name = f"{kind}+{bare}"
    with pytest.raises(InputError) as raised:
        locate_checkpoint(name)
    assert raised.value.option == "checkpoint"
    assert f"write it as '{kind.lower()}+http://{bare}'" in str(raised.value) and "hf download" not in str(raised.value)


@pytest.mark.parametrize("bare", BARE)
def test_an_address_without_its_scheme_or_kind_says_how_to_write_it(bare, no_model_load):
    with pytest.raises(InputError) as raised:
        locate_checkpoint(bare)
    assert f"write it as 'http://{bare}'" in str(raised.value)


def test_a_folder_named_as_a_server_would_be_is_still_a_folder(tmp_path, monkeypatch, no_model_load):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tgi+run1").mkdir()
    with pytest.raises(CheckpointNotFoundError, match=r"without a config\.json"):
        locate_checkpoint("tgi+run1")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:0/v1", "names port 0"),
        ("vllm+http://127.0.0.1:00/v1", "names port 0"),
        ("http://[::1", "Invalid IPv6 URL"),
        ("vllm+http://[::1]:8000:9", "not a server's URL"),
        ("http://127.0.0.1:65536", "Port out of range"),
        ("http://127.0.0.1:80a", "not a server's URL"),
        ("http://:8000/v1", "and a host"),
        ("ftp://127.0.0.1:8000", "http:// or https://"),
        ("http://127.0.0.1:8000/v1?key=1", "a query or a fragment"),
        ("http://127.0.0.1:8000/v1#x", "a query or a fragment"),
        ("http://127.0.0.1:8000/v1?", "a query or a fragment"),
        ("http://127.0.0.1:8000\n/v1", r"a line break \(LF\)"),
        ("http://127.0.0.1:8000/v\t1", "a tab"),
        ("http://127.0.0.1:8000/v1 ", "a space"),
        ("http://127.0.0.1:8000/\x1b[2J", r"a control character \(U\+001B\)"),
        ("http://exämple.org/v1", r"a non-ASCII character \(U\+00E4\)"),
        ("http://127.0.0.1:8000/a|b", "the character '|'"),
    ],
)
def test_a_malformed_url_is_one_usage_error(url, said, no_model_load):
    with pytest.raises(InputError, match=said) as raised:
        server_address(url)
    assert raised.value.option == "checkpoint" and "\n" not in str(raised.value)


def test_the_command_line_refuses_port_0_and_a_malformed_url_as_usage_errors(tmp_path, capsys):
    sources, outputs = tmp_path / "sources.txt", tmp_path / "outputs.txt"
    sources.write_text("A text.\n")
    outputs.write_text("A summary.\n")
    for name in ("vllm+http://127.0.0.1:0/v1", "vllm+http://[::1", "llama.cpp+127.0.0.1:8099"):
        assert bart_score.main(["score", "-m", name, "-s", str(sources), "-t", str(outputs)]) == 2
        said = capsys.readouterr().err
        assert len(said.strip().splitlines()) == 1 and "-m/--model" in said and "hf download" not in said


# ---------------------------------------------------------------------------------------------------------------------
# The options' bounds: concurrency and request_timeout


@pytest.mark.parametrize(
    ("options", "accepted"),
    [
        ({"concurrency": 1}, True),
        ({"concurrency": 32}, True),
        ({"concurrency": 33}, False),
        ({"concurrency": 0}, False),
        ({"concurrency": 10**30}, False),
        ({"request_timeout": 0.25}, True),
        ({"request_timeout": 86_400}, True),
        ({"request_timeout": 86_400.001}, False),
        ({"request_timeout": 9_999_999_999}, False),
        ({"request_timeout": 0}, False),
        ({"request_timeout": float("nan")}, False),
        ({"request_timeout": float("inf")}, False),
        ({"request_timeout": True}, False),
    ],
)
def test_concurrency_and_request_timeout_are_bounded(options, accepted):
    if accepted:
        checked = bart_score.EngineOptions(**options)
        assert getattr(checked, next(iter(options))) == next(iter(options.values()))
        return
    with pytest.raises(InputError, match=r"at most 86,400|from 1 to 32") as raised:
        bart_score.EngineOptions(**options)
    assert raised.value.option == next(iter(options))


def test_the_command_line_takes_a_decimal_timeout_and_refuses_one_past_a_day(tmp_path, capsys):
    sources, outputs = tmp_path / "sources.txt", tmp_path / "outputs.txt"
    sources.write_text("A text.\n")
    outputs.write_text("A summary.\n")
    command = ["score", "-m", "vllm+http://127.0.0.1:9/v1", "-s", str(sources), "-t", str(outputs)]
    assert bart_score.main([*command, "--request-timeout", "9999999999"]) == 2
    said = capsys.readouterr().err
    assert len(said.strip().splitlines()) == 1 and "--request-timeout" in said and "at most 86,400" in said
    with pytest.raises(SystemExit) as exited:  # argparse's usage error, as for every number flag
        bart_score.main([*command, "--request-timeout", "abc"])
    assert exited.value.code == 2 and "argument --request-timeout: expected a number" in capsys.readouterr().err
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        command[2] = f"vllm+http://127.0.0.1:{port}/v1"
        assert bart_score.main([*command, "--request-timeout", "2.5", "--concurrency", "32"]) == 1
    assert "no server answers" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------------------------
# Raw servers: answers no HTTP library would give


class RawServer:
    """A TCP server on 127.0.0.1 that calls `answer(connection)` for each connection, in a thread of its own, until
    the `with` block ends; `connections` counts them."""

    def __init__(self, answer, *, scheme="http"):
        self.answer = answer
        self.stopped = threading.Event()
        self.connections = 0
        self.threads = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.url = f"{scheme}://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self):
        self._start(self._accept)
        return self

    def _start(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        self.threads.append(thread)
        thread.start()

    def __exit__(self, *exc):
        self.stopped.set()
        self._listener.close()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            self._start(self._serve, connection)

    def _serve(self, connection):
        with connection, contextlib.suppress(OSError):  # the client hung up
            self.answer(connection)


def read_request(connection, heads=None):
    """Reads one HTTP request (its headers, and the body its Content-Length says); its body (None when the client hung
    up first). heads: a list that the request's head (its request line and headers) is added to."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = connection.recv(65536)
        if not piece:
            return None
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    if heads is not None:
        heads.append(head.decode("latin-1"))
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    while len(body) < length:
        body += connection.recv(65536)
    return body


def send_answer(connection, status, body, *, chunked=False, length=True):
    head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
    if chunked:
        head += "Transfer-Encoding: chunked\r\n"
        body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in _parts(body, 65536)) + b"0\r\n\r\n"
    elif length:
        head += f"Content-Length: {len(body)}\r\n"
    connection.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)


def _parts(data, size):
    return [data[start : start + size] for start in range(0, len(data), size)] or [b""]


def dripping(head, trickle, *, stopped, tls=False):
    """An answer that sends `head` and then `trickle` one byte at a time, ten a second, for DRIP_SECONDS, after the
    request (or, with tls, after the client's first TLS message)."""

    def answer(connection):
        if tls:
            connection.recv(65536)
        else:
            read_request(connection)
        connection.sendall(head)
        ends = time.monotonic() + DRIP_SECONDS
        while time.monotonic() < ends and not stopped.is_set():
            for byte in trickle:
                connection.sendall(bytes([byte]))
                time.sleep(0.1)

    return answer


def connection_to(url, *, timeout=1.0, retries=0):
    return Connection(server_address(url), key=KEY, timeout=timeout, retries=retries)


# ---------------------------------------------------------------------------------------------------------------------
# The deadline of a request: connecting, the headers and the body


DRIPS = {
    "status line": (b"", b"HTTP/1.1 200 OOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOO"),
    "a header": (b"HTTP/1.1 200 OK\r\nX-Drip: ", b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
    "the headers": (b"HTTP/1.1 200 OK\r\n", b"X-A: b\r\n"),
    "the body": (b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", b"[1, 2, 3]"),
    "a chunked body": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"1\r\n \r\n"),
}


@pytest.mark.parametrize("where", list(DRIPS))
def test_an_answer_that_drips_ends_at_the_request_s_deadline(where):
    stopped = threading.Event()
    head, drip = DRIPS[where]
    with RawServer(dripping(head, drip, stopped=stopped)) as server:
        started = time.monotonic()
        with pytest.raises(ScoringError) as raised:
            connection_to(server.url).request("POST", "/v1/completions", {"prompt": [[1, 2, 3]]})
        took = time.monotonic() - started
        stopped.set()
    assert "failed once; the last time: no answer within 1 s" in str(raised.value)
    assert Mention("request_timeout") in raised.value.remedy and took < ENDS_WITHIN


def test_a_first_contact_that_drips_is_no_answer_within_the_timeout():
    stopped = threading.Event()
    with RawServer(dripping(*DRIPS["status line"], stopped=stopped)) as server:
        started = time.monotonic()
        assert connection_to(server.url).reached() == "no answer within 1 s"
        assert time.monotonic() - started < ENDS_WITHIN
        stopped.set()


def test_a_tls_handshake_that_drips_ends_at_the_request_s_deadline():
    """The first contact of an https:// server: a TLS record header, then its 16 KiB a byte at a time."""
    stopped = threading.Event()
    handshake = dripping(b"\x16\x03\x03\x40\x00", b"\x02" * 64, stopped=stopped, tls=True)
    with RawServer(handshake, scheme="https") as server:
        connection = connection_to(server.url)
        started = time.monotonic()
        problem = connection.reached()
        took = time.monotonic() - started
        stopped.set()
    assert problem == "no answer within 1 s" and took < ENDS_WITHIN


def test_each_attempt_has_its_own_deadline_and_a_stop_ends_a_dripping_request():
    stopped = threading.Event()
    with RawServer(dripping(*DRIPS["the body"], stopped=stopped)) as server:
        with pytest.raises(ScoringError, match=r"failed 3 times; the last time: no answer within 0\.5 s"):
            connection_to(server.url, timeout=0.5, retries=2).request("GET", "/version")
        assert server.connections == 3
        connection = connection_to(server.url, timeout=60)
        threading.Timer(0.5, connection.stop).start()
        started = time.monotonic()
        with pytest.raises(ScoringError):
            connection.request("GET", "/version")
        assert time.monotonic() - started < ENDS_WITHIN
        stopped.set()


def test_a_request_within_its_deadline_is_answered_on_one_connection_and_leaves_no_thread_behind():
    """The deadlines are kept by the sockets' own timeouts: no thread keeps them, and none outlives the requests."""

    def answer(connection):  # each request's body back, after 0.05 s, on one connection
        while body := read_request(connection):
            time.sleep(0.05)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    before = set(threading.enumerate())
    with RawServer(answer) as server:
        connection = connection_to(server.url, timeout=5)
        for number in range(3):
            assert connection.request("POST", "/echo", {"n": number}) == {"n": number}
        assert server.connections == 1  # kept open between requests
        assert set(threading.enumerate()) - before - set(server.threads) == set()


def test_ctrl_c_ends_a_request_at_once_and_hangs_up():
    """Ctrl-C in the thread making a request (the command line's probes, a library caller's) ends it there: the
    connection is closed, not kept for the next request, so the server stops sending. (pytest-xdist's workers ignore
    SIGINT: the test takes it as a terminal's Ctrl-C would be taken.)"""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    stopped = threading.Event()
    try:
        with RawServer(dripping(*DRIPS["the body"], stopped=stopped)) as server:
            connection = connection_to(server.url, timeout=60)
            threading.Timer(0.5, _thread.interrupt_main).start()
            started = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                connection.request("GET", "/version")
            took = time.monotonic() - started
            serving = server.threads[1:]  # the first accepts
            for thread in serving:
                thread.join(ENDS_WITHIN)
            stopped.set()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert took < ENDS_WITHIN and serving and not any(thread.is_alive() for thread in serving)


def test_a_stop_ends_the_wait_before_a_retry_at_once():
    """A server that asks for the longest wait (Retry-After past MOST_RETRY_DELAY): a stop (after a failure elsewhere,
    or Ctrl-C) ends the wait, and no further attempt is made."""

    def busy(connection):
        read_request(connection)
        connection.sendall(b"HTTP/1.1 503 Busy\r\nRetry-After: 3600\r\nContent-Length: 0\r\n\r\n")

    with RawServer(busy) as server:
        connection = connection_to(server.url, timeout=5, retries=3)
        threading.Timer(0.5, connection.stop).start()
        started = time.monotonic()
        with pytest.raises(ScoringError, match="was stopped"):
            connection.request("GET", "/version")
        took = time.monotonic() - started
    assert server.connections == 1 and took < servers.MOST_RETRY_DELAY - 5


@pytest.mark.slow
def test_requests_from_more_threads_than_the_most_concurrency_wait_for_a_connection():
    """MAX_CONCURRENCY bounds the connections (and the answers held) of one server, whatever the callers' threads."""
    open_now, most, lock = 0, 0, threading.Lock()

    def answer(connection):
        nonlocal open_now, most
        with lock:
            open_now += 1
            most = max(most, open_now)
        try:
            while body := read_request(connection):
                time.sleep(0.2)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        finally:
            with lock:
                open_now -= 1

    threads = MAX_CONCURRENCY + 8
    with RawServer(answer) as server:
        connection = connection_to(server.url, timeout=ENDS_WITHIN)
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            answers = list(pool.map(lambda n: connection.request("POST", "/echo", {"n": n}), range(2 * threads)))
    assert answers == [{"n": n} for n in range(2 * threads)]
    assert most == MAX_CONCURRENCY


# ---------------------------------------------------------------------------------------------------------------------
# Where a request goes, with what: the server's address alone, with our headers alone


@pytest.mark.slow
def test_reading_a_server_s_address_loads_no_http_client():
    """httpx (a tenth of a second and 12 MiB to import) loads with the first connection: the options, the checkpoints
    and a local model's scoring, which read addresses, do without it."""
    probe = (
        "import sys; from bart_score.models.checkpoints import locate_checkpoint; "
        "from bart_score.models.served._transport import server_address; "
        "server_address('vllm+http://127.0.0.1:8000/v1'); print('httpx' in sys.modules)"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert shown.stdout.strip() == "False"


def recording(heads, status=200, headers=b"", body=b"{}"):
    """An answer to each request on a connection, which adds its head to `heads`: `status`, `headers` and `body`."""

    def answer(connection):
        while read_request(connection, heads) is not None:
            connection.sendall(b"HTTP/1.1 %d X\r\n%sContent-Length: %d\r\n\r\n%s" % (status, headers, len(body), body))

    return answer


def header_names(head):
    return sorted(line.split(":", 1)[0].lower() for line in head.split("\r\n")[1:])


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(status):
    elsewhere_heads, heads = [], []
    with RawServer(recording(elsewhere_heads)) as elsewhere:
        location = f"Location: {elsewhere.url}/v1/models\r\n".encode()
        with RawServer(recording(heads, status, location, b'{"moved": true}')) as server:
            connection = connection_to(server.url, retries=2)
            answer = connection.exchange("GET", "/v1/models")
            assert connection.reached() is None
    assert answer.status == status and answer.data == b'{"moved": true}'
    assert elsewhere.connections == 0 and not elsewhere_heads
    assert len(heads) == 2 and all(f"Authorization: Bearer {KEY}" in head for head in heads)


def test_the_environment_s_proxies_are_not_used_and_cookies_are_not_kept(monkeypatch):
    """A proxy would see the key (and, for http://, the texts): the request goes to the server's address itself. A
    cookie the server sets is not sent back (nor kept: a server setting new ones would grow every request)."""
    proxy_heads, heads = [], []
    with RawServer(recording(proxy_heads)) as proxy:
        for variable in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.setenv(variable, proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        cookie = b"Set-Cookie: session=abc; Path=/\r\n"
        with RawServer(recording(heads, 200, cookie)) as server:
            connection = connection_to(server.url.replace("127.0.0.1", "localhost"))
            assert connection.request("POST", "/x", {"prompt": [1]}) == {}
            assert connection.request("GET", "/y") == {}
    assert proxy.connections == 0 and not proxy_heads
    assert [head.split("\r\n")[0] for head in heads] == ["POST /x HTTP/1.1", "GET /y HTTP/1.1"]
    for head in heads:
        names = header_names(head)
        assert "cookie" not in names and "proxy-authorization" not in names
        assert f"Authorization: Bearer {KEY}" in head and "Accept-Encoding: identity" in head


@pytest.mark.slow
def test_a_compressed_answer_is_bounded_as_it_comes_and_never_decompressed():
    """An answer compressed although the request asked for none (Accept-Encoding: identity): its bytes are what is
    bounded and kept, never what they would decompress to (10 MiB of zeros here, 10 KiB compressed)."""
    bomb = gzip.compress(b"[" + b"0," * (5 << 20) + b"0]", compresslevel=9)
    heads = []
    with RawServer(recording(heads, 200, b"Content-Encoding: gzip\r\n", bomb)) as server:
        connection = connection_to(server.url)
        assert connection.exchange("POST", "/x", {"prompt": [list(range(100))]}).data == bomb
        with pytest.raises(ScoringError, match=r"is not UTF-8 text|is not valid JSON"):
            connection.request("POST", "/x", {"prompt": [list(range(100))]})
    assert "Accept-Encoding: identity" in heads[0]


# ---------------------------------------------------------------------------------------------------------------------
# The bound on an answer's body: bytes and JSON items, from what the request sent


def bound_of(tokens, listed=0):
    """The reference: the documented floor and figures per token sent and per token listed."""
    return (
        256 * 1024 + 1024 * tokens + 512 * listed,
        16_384 + 48 * tokens + 32 * listed,
    )


def answering(body, **how):
    requests = []

    def answer(connection):
        requests.append(read_request(connection))
        send_answer(connection, 200, body, **how)

    return answer, requests


@pytest.mark.parametrize("how", [{}, {"chunked": True}, {"length": False}], ids=["length", "chunked", "until-closed"])
@pytest.mark.parametrize(("tokens", "listed"), [(0, 0), (1000, 0), (10, 300)])
def test_an_answer_over_its_bound_in_bytes_is_refused_at_once_and_at_the_bound_taken(tokens, listed, how):
    most_bytes, _ = bound_of(tokens, listed)
    body = {"prompt": [list(range(tokens))]} if tokens else None
    method = "POST" if tokens else "GET"
    for size, taken in ((most_bytes, True), (most_bytes + 1, False)):
        answer, requests = answering(b'"' + b"a" * (size - 2) + b'"', **how)
        with RawServer(answer) as server:
            connection = connection_to(server.url, retries=3, timeout=20)
            if taken:
                assert len(connection.request(method, "/x", body, listed=listed)) == size - 2
                continue
            with pytest.raises(ScoringError) as raised:
                connection.request(method, "/x", body, listed=listed)
        assert f"holds more than {most_bytes:,} bytes" in str(raised.value)
        assert len(requests) == 1  # not retried


@pytest.mark.parametrize(("tokens", "listed"), [(0, 0), (500, 0), (10, 300)])
def test_an_answer_over_its_bound_in_json_items_is_refused_before_it_is_parsed(tokens, listed):
    _, most_items = bound_of(tokens, listed)
    body = {"prompt": [list(range(tokens))]} if tokens else None
    for items, taken in ((most_items, True), (most_items + 1, False)):
        # "[" and the commas between `items` zeros: `items` of "[", "{", "," and ":" in all
        answer, requests = answering(b"[" + b",".join([b"0"] * items) + b"]")
        with RawServer(answer) as server:
            connection = connection_to(server.url, retries=3, timeout=20)
            if taken:
                assert len(connection.request("POST", "/x", body, listed=listed)) == items
                continue
            with pytest.raises(ScoringError, match=f"holds more than {most_items:,} JSON items"):
                connection.request("POST", "/x", body, listed=listed)
        assert len(requests) == 1


def test_the_tokens_a_request_sends_are_its_lists_integers_and_its_texts_characters():
    body = {"prompt": [[1, 2, 3], [4, 5]], "inputs": "abcdé", "n": 7, "flag": True, "nested": {"ids": [[9, True]]}}
    assert servers.tokens_sent(body) == 5 + 5 + 1
    assert servers.tokens_sent(None) == 0


@pytest.mark.parametrize("depth", [2_000, 10_000])
def test_deeply_nested_json_is_one_error_naming_the_url(depth):
    for nested in (b"[" * depth + b"]" * depth, b'{"a":' * depth + b"0" + b"}" * depth):
        answer, _ = answering(nested)
        with RawServer(answer) as server, pytest.raises(ScoringError) as raised:
            connection_to(server.url, timeout=20).request("POST", "/generate", {"input_ids": [list(range(500))]})
        assert f"the answer to POST {server.url}/generate nests JSON too deeply" in str(raised.value)


# ---------------------------------------------------------------------------------------------------------------------
# The command line against a hostile server, under limits: at the most concurrency, answers that flood or drip


@pytest.fixture(scope="module")
def tiny_opt(tmp_path_factory):
    from support.inference_server import TinyModel
    from support.models import tiny_checkpoint_for

    checkpoint = tiny_checkpoint_for(tmp_path_factory, "opt")
    return checkpoint, TinyModel(checkpoint)


@pytest.mark.slow
@pytest.mark.parametrize("hostile", [flood, fill, drip])
def test_the_command_line_ends_in_one_line_within_its_limits_at_the_most_concurrency(hostile, tiny_opt, tmp_path):
    """64 conditions, 32 requests at once (MAX_CONCURRENCY), each answered with a 250 MiB flood of small JSON
    items (before the bound: a 73-line MemoryError after about a minute at 5 GB), the costliest answer within the
    bound (not a vLLM answer: refused as one), or a drip (before the deadline: never an end): one line, exit status
    1, within 3 GiB and 60 s, the key nowhere (support/hostile_server.py)."""
    from support.inference_server import InferenceServer

    timeout = 10 if hostile is drip else 30  # the probes' answers come in time on a machine loaded 20 times over
    sources, outputs = tmp_path / "sources.txt", tmp_path / "outputs.txt"
    sources.write_text("".join(f"Condition number {n} says the cat sat on mat {n}.\n" for n in range(64)))
    outputs.write_text("".join(f"A cat sat, {n}.\n" for n in range(64)))
    with (
        InferenceServer("vllm", tiny_opt[0], model=tiny_opt[1]) as upstream,
        HostileProxy(upstream.url.removesuffix("/v1"), "/v1/completions", hostile) as proxy,
    ):
        status, said, took, peak = run_cli_capped(
            *("score", "-m", f"vllm+{proxy.url}/v1", "--served-tokenizer", tiny_opt[0]),
            *("-s", str(sources), "-t", str(outputs), "-d", "faithfulness", "-q"),
            *("--concurrency", "32", "--request-timeout", str(timeout), "--request-retries", "0"),
            memory=3 << 30,
            seconds=60,
            env={API_KEY_ENV: KEY},
        )
    lines = said.strip().splitlines()
    assert status == 1 and len(lines) == 1, said[-3000:]
    expected = {flood: "holds more than", fill: "pair", drip: f"no answer within {timeout} s"}
    assert expected[hostile] in lines[0]
    assert shows_no_key(said) and proxy.scoring_requests >= 1
    print(f"{hostile.__name__}: {took:.1f} s, peak {peak / 2**20:.0f} MiB")
