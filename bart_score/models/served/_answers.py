"""What the servers answer, as every kind reads it (bart_score.models.served.kinds): what a server reports of its
model (ServerReport), what the requests need of the tokenizer (TokenFacts), and the reading and checking of answers.

What a server reports is never output as it is: a string of its (a version, a model's name, a path) is shown by
printable (the API key blanked out, cut to MOST_REPORTED_CHARS, what is not printable and "|" escaped), any other
value by brief (a number to 6 significant digits, a list or an object by its size); its answers to the probes are
parsed with the project's bound on nesting, and a shape other than the kind's is one error naming the URL.

A pair's tokens in an answer are checked against those sent (same_tokens), and each scored token's log-probability
must be a number, not above 0 (checked). A pair whose tokens or numbers are not so is refused with a ScoringError
naming it, never scored with shifted or made-up numbers."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...corpora._reading import parse_json
from ...errors import CheckpointLoadError, CheckpointNotFoundError, InputError, ScoringError
from ...messages import Mention
from ._transport import Connection, one_line_character

# A log-probability above 0 is refused beyond this rounding (a probability a hair over 1 in float32).
ROUNDING = 1e-5
# A log-probability below this is a probability that underflowed in the server's arithmetic (llama.cpp writes the
# lowest float for a probability of 0, since JSON has no -inf).
UNDERFLOW = -1e30
# The text whose tokens the server and the tokenizer here must agree on (words, digits, punctuation, accents, a
# line break, double spaces).
PROBE_TEXT = "The café's 3 dogs ran 12.5 km,\n  then rested — twice! (Naïve?) Über-quick."
# The most characters of a string a server reports (a version, a model's name or path) that a message, a signature or
# an identity keeps: a Hub id has at most 96, the servers' versions a few dozen (vLLM's "0.11.0", llama-server's
# "b6700-3df2244d"), and a 100 MiB version made a 104,858,086-byte signature.
MOST_REPORTED_CHARS = 256
# The most names of served models a message lists.
MOST_NAMES_SHOWN = 8


@dataclass
class ServerReport:
    """What a server reports of its model. models: the names it serves; model: the one scored; weights: what it says
    of the weights (the served model's identity is made of it); tokenizer_source: where the weights came from (a Hub
    id or a path, where the tokenizer may be found); positions: the most tokens a pair may take on it, None when
    it does not say; vocabulary: its vocabulary's size, None when it does not say."""

    kind: str
    version: str | None
    models: tuple[str, ...]
    model: str
    weights: dict[str, Any] = field(default_factory=dict)
    tokenizer_source: str | None = None
    positions: int | None = None
    vocabulary: int | None = None


@dataclass(frozen=True)
class TokenFacts:
    """What the requests need of the tokenizer: decode (ids to text, special tokens written out), the ids no text can
    force (special tokens), the tokens it puts before a text on its own (a BOS); and of the model: a token that is
    one plain character ("a"), and the vocabulary's size."""

    decode: Callable[[Sequence[int]], str]
    special_ids: frozenset[int]
    added: tuple[int, ...]
    plain: int = 0
    vocabulary: int = 0


# A pair as a request takes it: its name in messages (its index among the call's pairs) and the ids it scores.
Pair = tuple[int, tuple[int, ...]]

# -- what the servers report ------------------------------------------------------------------------------------------


def printable(text: str, connection: Connection) -> str:
    """A string a server reported, as an output of ours shows it: the API key blanked out, cut to MOST_REPORTED_CHARS
    (then "..."), and each character that is not printable (control characters such as ESC, BEL, CR and LF, line
    separators, lone surrogates, format characters) and "|" (which parts a signature's fields) escaped as \\xNN or
    \\uNNNN, so that it is one line that cannot forge another field or line."""
    whole_text = connection.redacted(text)
    cut = whole_text[:MOST_REPORTED_CHARS]
    shown = "".join(map(one_line_character, cut))
    return shown + "..." if len(whole_text) > MOST_REPORTED_CHARS else shown


def quoted(text: str, connection: Connection) -> str:
    """A string a server reported, printable, in quotes."""
    return f"'{printable(text, connection)}'"


def brief(value: Any, connection: Connection, *, inner: bool = False) -> str:
    """A value a server gave, as a message shows it: a number to 6 significant digits (an integer whole up to 15
    digits, and one too large for a float by its count of digits), a string quoted, a list of up to 3 items with
    them, and another list or an object by its size."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int):
        if abs(value) < 10**15:
            return str(value)
        return (
            f"{value:.6g}"
            if value.bit_length() <= 1000
            else f"an integer of about {value.bit_length() * 0.30103:,.0f} digits"
        )
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, str):
        return quoted(value, connection)
    if isinstance(value, list):
        if inner or len(value) > 3:
            return f"a list of {len(value):,} items"
        return "[" + ", ".join(brief(item, connection, inner=True) for item in value) + "]"
    if isinstance(value, dict):
        return f"an object of {len(value):,} keys"
    return f"a {type(value).__name__}"


def names_shown(names: Sequence[str], connection: Connection) -> str:
    """The names of served models as a message lists them: quoted, the first MOST_NAMES_SHOWN."""
    listed = ", ".join(quoted(name, connection) for name in names[:MOST_NAMES_SHOWN])
    more = len(names) - MOST_NAMES_SHOWN
    return f"{listed} and {more:,} more" if more > 0 else listed


def read(connection: Connection, path: str) -> Any:
    """GET `path`'s JSON value; None when the server has no such endpoint (404, 405) or answers it with something
    other than JSON. Other refusals (an API key wanted) are CheckpointLoadErrors."""
    answer = connection.exchange("GET", path, error=CheckpointLoadError)
    if answer.status in (404, 405):
        return None
    if answer.status >= 400:
        raise connection.refusal("GET", path, answer, CheckpointLoadError)
    try:  # JSON nested past the project's bound is not an answer of any kind's either
        return parse_json(answer.data, "", error=CheckpointLoadError)
    except CheckpointLoadError:
        return None


def tokens_or_none(connection: Connection, path: str, body: dict[str, Any]) -> Any:
    """POST `path` (a tokenizer endpoint)'s JSON value, or None where the server has no such endpoint."""
    answer = connection.exchange("POST", path, body, error=CheckpointLoadError)
    if answer.status in (404, 405):
        return None
    if answer.status >= 400:
        raise connection.refusal("POST", path, answer, CheckpointLoadError)
    return parse_json(answer.data, f"the answer to POST {connection.url(path)}", error=CheckpointLoadError)


def not_as_reported(connection: Connection, path: str, title: str, what: str) -> CheckpointLoadError:
    """The error for a server that answers GET `path` otherwise than the kind named `title` does."""
    return CheckpointLoadError(
        f"the server at {connection.address.url} does not answer GET {path} as {title} does ({what})"
    )


def listed_models(connection: Connection, title: str) -> list[dict[str, Any]]:
    """The entries of the OpenAI-style GET /v1/models ({"data": [{"id": ...}, ...]})."""
    listing = read(connection, "/v1/models")
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("id"), str) for e in entries):
        raise not_as_reported(connection, "/v1/models", title, "a list of models under 'data'")
    return entries


def choose_model(connection: Connection, names: Sequence[str], wanted: str | None) -> str:
    """The served model to score: `wanted` when the server serves it, else its only one."""
    url = connection.address.url
    if wanted is not None:
        if wanted in names:
            return wanted
        raise CheckpointNotFoundError(
            f"the server at {url} serves {names_shown(names, connection) or 'no model'}, not ",
            Mention("served_model", wanted),
            remedy="give one of those",
        )
    if len(names) == 1:
        return names[0]
    if not names:
        raise CheckpointLoadError(f"the server at {url} lists no model")
    raise InputError(
        f"the server at {url} serves {len(names):,} models ({names_shown(names, connection)})",
        option="served_model",
        remedy=["name the one to score as ", Mention("served_model")],
    )


def text_or_none(value: Any) -> str | None:
    """A string a server reports, or None when it reports none (or something else)."""
    return value if isinstance(value, str) and value else None


def tokens_listed(value: Any) -> list[Any] | None:
    """A tokenizer endpoint's tokens: a list, else None."""
    return value if isinstance(value, list) else None


def whole(value: Any) -> int | None:
    """A count a server reports, or None when it reports none (or something else)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def fewer(positions: int | None, reserved: int) -> int | None:
    """The positions a pair may take when `reserved` of the server's context go to what it generates."""
    return positions - reserved if positions is not None and positions > reserved else None


# -- checking the answers -------------------------------------------------------------------------------------------


def checked(connection: Connection, values: Sequence[Any], name: int) -> list[float]:
    """A pair's log-probabilities as the server gave them, refused (naming the pair and the token, the value shown
    by brief) unless each is a number, not above 0 (beyond ROUNDING), and not an underflow."""
    for position, value in enumerate(values):
        said = (
            f"pair {name}: the server gives its scored token {position} the log-probability {brief(value, connection)}"
        )
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (isinstance(value, float) and math.isnan(value))
        ):
            raise ScoringError(f"{said}, which is not a number")
        if value > ROUNDING:
            raise ScoringError(f"{said}, above 0 (a probability over 1)")
        if value < UNDERFLOW:
            raise ScoringError(f"{said}: the probability underflowed in the server's arithmetic")
    return [min(float(value), 0.0) for value in values]


def mismatch(connection: Connection, name: int, position: int, got: Any, sent: int) -> ScoringError:
    return ScoringError(
        f"pair {name}: the server's token {position} of the pair is {brief(got, connection)} where {sent} was sent, so "
        f"its log-probabilities are not those of the pair's tokens; the pair is not scored"
    )


def too_few(name: int, got: int, sent: int) -> ScoringError:
    return ScoringError(f"pair {name}: the server gives {got} of the pair's {sent} tokens")


def same_tokens(connection: Connection, name: int, reported: Any, sent: Sequence[int]) -> None:
    """Refuses a pair whose tokens as the server reports them are not those sent (each an integer, not 1.0 or true)."""
    if not isinstance(reported, list) or len(reported) < len(sent):
        raise too_few(name, len(reported) if isinstance(reported, list) else 0, len(sent))
    for position, (got, token) in enumerate(zip(reported, sent)):
        if type(got) is not int or got != token:
            raise mismatch(connection, name, position, got, token)


def entries_of(answer: Any, key: str, count: int, name: int) -> list[Any]:
    """The list `answer[key]` of `count` entries (one per prompt or per token), else an error naming the pair."""
    found = answer.get(key) if isinstance(answer, dict) else None
    if not isinstance(found, list) or len(found) < count:
        raise too_few(name, len(found) if isinstance(found, list) else 0, count)
    return found
