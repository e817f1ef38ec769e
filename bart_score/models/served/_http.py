"""The HTTP under a served model's Connection (bart_score.models.served._transport): an httpx client on httpcore's
connection pool, whose sockets are this module's own, so that each request keeps a deadline for the whole of it.

httpx bounds each wait on a socket, not a request's whole: a server that sends a byte within each wait (a drip) would
hold a request for as long as it liked. Here connecting, the TLS handshake, each send and each receive get the time
left before the deadline of the request the thread is making (Sockets.deadline), and when none is left the request
ends as a timeout. Sockets.stop() shuts every socket at once, from any thread, and refuses new ones until resume().

The client follows no redirect, keeps no cookie and reads no proxy or certificate setting from the environment: a
request goes to the server's address alone, with the headers it was given (the API key among them) and nothing else."""

from __future__ import annotations

import contextlib
import http.cookiejar
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

# How long a connection kept open between requests may wait for the next one (httpx's own default).
KEEPALIVE_SECONDS = 5.0


def client(scheme: str, sockets: Sockets, connections: int, *, waiting: float) -> httpx.Client:
    """An httpx client for a server reached with `scheme`, on `sockets`, with at most `connections` open at once (a
    request waits for one at most `waiting` seconds, its deadline's)."""
    pool = httpcore.ConnectionPool(
        ssl_context=ssl.create_default_context() if scheme == "https" else None,  # the system's certificates
        max_connections=connections,
        max_keepalive_connections=connections,
        keepalive_expiry=KEEPALIVE_SECONDS,
        network_backend=sockets,
    )
    refused = http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    return httpx.Client(
        transport=_Transport(pool),
        follow_redirects=False,
        trust_env=False,
        cookies=refused,
        timeout=httpx.Timeout(None, pool=waiting),  # the sockets keep the rest of the deadline
    )


class Sockets(httpcore.NetworkBackend):
    """The sockets of one server's requests (httpcore's network backend): the deadline of the request each thread is
    making, and the sockets open, which stop() shuts."""

    def __init__(self) -> None:
        self.stopped = threading.Event()
        # held while a socket is opened, closed, shut or given up to TLS
        self.lock = threading.Lock()
        self._local = threading.local()
        self._open: set[_Stream] = set()

    @contextlib.contextmanager
    def deadline(self, seconds: float) -> Iterator[None]:
        """Gives the request this thread makes within the block `seconds` in all."""
        self._local.deadline = time.monotonic() + seconds
        try:
            yield
        finally:
            self._local.deadline = None

    def time_left(self, timeout: type[httpcore.TimeoutException]) -> float:
        """The seconds left before this thread's request's deadline; a `timeout` when none are."""
        deadline = getattr(self._local, "deadline", None)
        left = 0.0 if deadline is None else deadline - time.monotonic()
        if left <= 0:
            raise timeout("the request's deadline passed")
        return left

    def stop(self) -> None:
        """Shuts every socket open, so that whatever waits on one ends at once; refuses new ones until resume()."""
        with self.lock:
            self.stopped.set()
            for stream in self._open:
                stream.shut()

    def resume(self) -> None:
        self.stopped.clear()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """A connection to `host`: each of its addresses tried for the time that is left. (Looking the host's name up
        is not bounded: the system's resolver takes no deadline.)"""
        with _failures(httpcore.ConnectTimeout, httpcore.ConnectError):
            addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        failure = httpcore.ConnectError(f"{host} has no address")
        for family, kind, protocol, _, where in addresses:
            stream = _Stream(socket.socket(family, kind, protocol), self)
            try:
                with _failures(httpcore.ConnectTimeout, httpcore.ConnectError):
                    connecting = stream.wait(httpcore.ConnectTimeout)
                    connecting.connect(where)
                    connecting.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except httpcore.ConnectError as problem:  # refused: the next address may take it
                stream.close()
                failure = problem
                continue
            except BaseException:
                stream.close()
                raise
            return stream
        raise failure

    def opened(self, stream: _Stream) -> None:
        with self.lock:
            if self.stopped.is_set():
                raise httpcore.ConnectError("the requests were stopped")
            self._open.add(stream)

    def closed(self, stream: _Stream) -> None:
        with self.lock:
            self._open.discard(stream)


class _Stream(httpcore.NetworkStream):
    """A socket whose every wait ends by the deadline of the request the thread is making (see Sockets)."""

    def __init__(self, connection: socket.socket, sockets: Sockets) -> None:
        self._socket, self._sockets = connection, sockets
        try:
            sockets.opened(self)
        except BaseException:
            connection.close()
            raise

    def wait(self, timeout: type[httpcore.TimeoutException]) -> socket.socket:
        """The socket, given the time left before the deadline (`timeout` when none is)."""
        self._socket.settimeout(self._sockets.time_left(timeout))
        return self._socket

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _failures(httpcore.ReadTimeout, httpcore.ReadError):
            return self.wait(httpcore.ReadTimeout).recv(max_bytes)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with _failures(httpcore.WriteTimeout, httpcore.WriteError):
            self.wait(httpcore.WriteTimeout).sendall(buffer)

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        """This stream over TLS: the handshake within the deadline, and shut by stop() as any wait is."""
        try:
            with _failures(httpcore.ConnectTimeout, httpcore.ConnectError):
                with self._sockets.lock:  # stop() shuts the socket that is there, never one given up to TLS
                    self._socket = ssl_context.wrap_socket(
                        self._socket, server_hostname=server_hostname, do_handshake_on_connect=False
                    )
                secure = self.wait(httpcore.ConnectTimeout)
                assert isinstance(secure, ssl.SSLSocket)  # wrapped above
                secure.do_handshake()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        self._sockets.closed(self)
        self._socket.close()

    def shut(self) -> None:
        """Ends every wait on the socket (the caller holds the sockets' lock, so it is not being closed or wrapped)."""
        with contextlib.suppress(OSError):  # already closed, or not connected yet
            socket.socket.shutdown(self._socket, socket.SHUT_RDWR)  # the plain socket's, which TLS's state is not

    def get_extra_info(self, info: str) -> Any:
        """What httpcore asks of a stream: its TLS (for the protocol agreed), and whether a connection kept open
        between requests has something to read (the server closed it, or sent what was not asked for)."""
        if info == "ssl_object":
            return self._socket if isinstance(self._socket, ssl.SSLSocket) else None
        if info == "is_readable":
            if self._socket.fileno() < 0:  # closed: its next read would end at once
                return True
            with selectors.DefaultSelector() as selector:
                selector.register(self._socket, selectors.EVENT_READ)
                return bool(selector.select(0))
        return None


@contextlib.contextmanager
def _failures(timeout: type[httpcore.TimeoutException], failure: type[Exception]) -> Iterator[None]:
    """A socket's timeout as `timeout`, and its other failures (refused, reset, TLS) as `failure`: httpcore's."""
    try:
        yield
    except TimeoutError as problem:
        raise timeout(str(problem) or "timed out") from None
    except OSError as problem:
        raise failure(str(problem)) from None


class _Transport(httpx.BaseTransport):
    """httpx's transport on an httpcore connection pool (httpx's own takes no network backend); httpcore's failures
    become httpx's: a timeout an httpx.TimeoutException, any other an httpx.TransportError."""

    def __init__(self, pool: httpcore.ConnectionPool) -> None:
        self._pool = pool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        sent = httpcore.Request(
            request.method,
            httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx():
            answer = self._pool.handle_request(sent)
        return httpx.Response(answer.status, headers=answer.headers, stream=_Body(answer), extensions=answer.extensions)

    def close(self) -> None:
        self._pool.close()


class _Body(httpx.SyncByteStream):
    """An answer's body, as httpcore reads it from the socket (at most 64 KiB at a time)."""

    def __init__(self, answer: httpcore.Response) -> None:
        self._answer = answer

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx():
            yield from self._answer.iter_stream()

    def close(self) -> None:
        self._answer.close()


@contextlib.contextmanager
def _as_httpx() -> Iterator[None]:
    try:
        yield
    except httpcore.TimeoutException as problem:
        raise httpx.TimeoutException(str(problem)) from None
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as problem:
        raise httpx.TransportError(str(problem)) from None
