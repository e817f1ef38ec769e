"""Who sent a request, as the per-client limits count it (uploads.py), named by the operator's trusted proxies.

A client is the address the request came from. Only behind proxies the operator names (TRUSTED_PROXIES_SETTING, none
by default) is it read from X-Forwarded-For, and then from its right end: each trusted proxy appends the address it
received the request from, so the rightmost address that is not a trusted proxy is the one the nearest of them saw.
The addresses to its left were written by the client itself and are never taken, and a forwarded entry that is not
an IP address names no client: the request is refused. An IPv6 client is counted by its /64 network.

Nothing here imports Gradio."""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

from bart_score.errors import InputError
from bart_score.messages import shown

TRUSTED_PROXIES_SETTING = "BARTSCORE_APP_TRUSTED_PROXIES"
# uvicorn, which serves Gradio, rewrites a request's client from X-Forwarded-For before any middleware of the app
# sees it, for the peers named here (loopback unless set): it must trust exactly the proxies the app trusts.
UVICORN_TRUSTED_SETTING = "FORWARDED_ALLOW_IPS"

# An IPv6 client is counted by its /64: a host is commonly given a whole /64, so by its full address it would have
# 2**64 budgets of every limit.
IPV6_CLIENT_PREFIX = 64
# Trusted ranges wider than these take in addresses that are not the operator's proxies: warned about at start.
WIDEST_TRUSTED_PREFIX = {4: 8, 6: 32}

CONTENT_LENGTH_DIGITS = 20  # more than any body a server reads

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
logger = logging.getLogger("bartscore.app")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def trusted_proxies(value: str) -> tuple[Network, ...]:
    """The proxies named by TRUSTED_PROXIES_SETTING: addresses and networks (CIDR), separated by commas or spaces. A
    value that is not one is an InputError naming the setting, so that the app stops at start."""
    networks = []
    for entry in value.replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(entry, strict=True))
        except ValueError as error:
            raise InputError(
                f"{TRUSTED_PROXIES_SETTING}: {shown(entry)} is not an IP address or network (such as 10.0.0.1 or "
                f"10.0.0.0/8, with no host bits set after the /): {error}"
            ) from None
    return tuple(networks)


@contextlib.contextmanager
def uvicorn_trusting(trusted: tuple[Network, ...]) -> Iterator[None]:
    """While the server starts, uvicorn's proxy-header rewrite trusts exactly `trusted` (nothing when empty: an
    empty FORWARDED_ALLOW_IPS matches no peer); an operator's own FORWARDED_ALLOW_IPS is replaced, and a trusted range
    wider than WIDEST_TRUSTED_PREFIX (0.0.0.0/0 among them) is named, each with a warning in the log."""
    for network in trusted:
        if network.prefixlen < WIDEST_TRUSTED_PREFIX[network.version]:
            logger.warning(
                "BARTScore Space: %s names %s, wider than a /%d: every address in it is trusted to name any client in "
                "X-Forwarded-For, so a client there can spread its requests over made-up addresses; name only your "
                "proxies' addresses or network",
                TRUSTED_PROXIES_SETTING,
                network,
                WIDEST_TRUSTED_PREFIX[network.version],
            )
    allowed = ",".join(str(network) for network in trusted)
    previous = os.environ.get(UVICORN_TRUSTED_SETTING)
    if previous is not None and previous != allowed:
        logger.warning(
            "BARTScore Space: %s=%r is replaced by %r, from %s, so that the server and the upload limits name the "
            "same client",
            UVICORN_TRUSTED_SETTING,
            previous,
            allowed,
            TRUSTED_PROXIES_SETTING,
        )
    os.environ[UVICORN_TRUSTED_SETTING] = allowed
    try:
        yield
    finally:
        if previous is None:
            del os.environ[UVICORN_TRUSTED_SETTING]
        else:
            os.environ[UVICORN_TRUSTED_SETTING] = previous


def client_of(scope: Scope, trusted: tuple[Network, ...] = ()) -> str | None:
    """The request's client as the limits count it (an IPv4 address, or an IPv6 address's /64 network, which one host
    is commonly given whole): its peer address, unless the peer is one of the `trusted` proxies; then the rightmost
    address of X-Forwarded-For that is not a trusted proxy (the leftmost when all are). None when the client can only
    be named by a forwarded entry that is not an IP address: a trusted proxy writes none, and uvicorn, which makes the
    same walk, would have made that text the client; the caller refuses the request."""
    peer = (scope.get("client") or ("unknown", 0))[0]
    client = _address(peer)
    if client is None:
        return None if trusted else str(peer)  # without trusted proxies, uvicorn never rewrites the peer
    if not _is_trusted(client, trusted):
        return _limited_as(client)
    hops = [
        hop.strip()
        for name, value in scope.get("headers", [])
        if name.lower() == b"x-forwarded-for"
        for hop in value.decode("latin-1").split(",")
    ]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            return None
        client = address
        if not _is_trusted(address, trusted):
            break
    return _limited_as(client)


def _limited_as(address: Address) -> str:
    if address.version == 6:
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


def _address(text: str) -> Address | None:
    """An address as a proxy writes it: plain, or with a port ("192.0.2.1:5000", "[2001:db8::1]:5000")."""
    if text.startswith("[") and "]" in text:
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    # an IPv4 client reached over IPv6 is the same client
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def _is_trusted(address: Address, trusted: tuple[Network, ...]) -> bool:
    return any(address.version == network.version and address in network for network in trusted)


def forwarded_by_untrusted(scope: Scope, trusted: tuple[Network, ...]) -> bool:
    """Whether the request carries X-Forwarded-For from a peer that is not a trusted proxy (so it is ignored)."""
    peer = _address((scope.get("client") or ("unknown", 0))[0])
    carries = any(name.lower() == b"x-forwarded-for" for name, _ in scope.get("headers", []))
    return carries and (peer is None or not _is_trusted(peer, trusted))


def content_length(scope: Scope) -> int | None:
    """The request's Content-Length, or None when it gives none, or one that is not a number in ASCII digits."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            value = value.strip()
            return int(value) if value.isdigit() and len(value) <= CONTENT_LENGTH_DIGITS else None
    return None


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str
    retry_after: int = 60  # seconds, said with a refusal for now (429, 503)


FORWARDED_NOT_AN_ADDRESS = Refusal(400, "The request's forwarded address (X-Forwarded-For) is not an IP address")


async def refuse(send: Send, refusal: Refusal) -> None:
    """Answers the request with the refusal's status and message (plain text), before or instead of the app, and
    closes the connection: the server would otherwise read the rest of a body it refused, to reuse it."""
    body = refusal.message.encode("utf-8")
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if refusal.status in (429, 503):
        headers.append((b"retry-after", str(refusal.retry_after).encode()))
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
