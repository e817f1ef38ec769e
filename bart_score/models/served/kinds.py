"""What each kind of inference server reports of its model, and how the log-probabilities of a pair's tokens are asked
of it, read from each server's own schemas:

    kind       what it is asked                      the pair's tokens, and their log-probabilities
    vllm       GET /version, /v1/models;             POST /v1/completions: the pairs of a condition as a list of
               POST /tokenize                        token-id prompts, prompt_logprobs 1 (choices[].prompt_logprobs)
    sglang     GET /get_model_info, /v1/models       POST /generate: input_ids as a list, return_logprob with
                                                     logprob_start_len 0 (meta_info.input_token_logprobs)
    tgi        GET /info; POST /tokenize             POST /generate: the pair's text (TGI takes no token ids) with
                                                     decoder_input_details (details.prefill)
    llama.cpp  GET /props, /v1/models;               POST /completion: the prefix as token ids, the scored
               POST /tokenize                        tokens forced by a grammar of their ids, n_probs 1
                                                     (completion_probabilities)

A pair is sent as one sequence, its prefix (the condition as the token policy builds it) and then its scored tokens;
the answer's token ids are checked against those sent (TGI's against the policy's, since it tokenizes the text
itself), and each scored token's log-probability must be a number, not above 0. A pair whose tokens or numbers are
not so is refused with a ScoringError naming it, never scored with shifted or made-up numbers.

What a server reports is never output as it is: a string of its (a version, a model's name, a path) is shown by
printable (the API key blanked out, cut to MOST_REPORTED_CHARS, what is not printable and "|" escaped), any other
value by brief (a number to 6 significant digits, a list or an object by its size); its answers to the probes are
parsed with the project's bound on nesting, and a shape other than the kind's is one error naming the URL.

llama.cpp's server gives no log-probabilities of a prompt's tokens (it ignores echo), but those of the tokens it
generates, over the whole vocabulary, whatever the grammar allows: the pair's scored tokens are forced by a grammar of
their ids (`root ::= <[id]> <[id]> ...`) with temperature 0, and the tokens generated are checked against them. The
end-of-generation token that ends them, which a grammar cannot name, is the greedy choice once the grammar is done:
its value is taken when it is the policy's last token, and that token is forced on its own (a logit bias) otherwise.
A grammar of the text instead of the ids would leave the split of the text to the greedy sampling, which SmolLM2 took
other than its tokenizer at the first token of each of three SummEval-like summaries."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...corpora.reading import parse_json
from ...errors import CheckpointLoadError, CheckpointNotFoundError, InputError, ScoringError, UnsupportedModelError
from ...messages import Mention, shown
from .transport import SERVER_NAMES, Connection, one_line_character

# Pairs of one condition sent in one request, to the servers that take a list of prompts.
PAIRS_PER_REQUEST = 16
# A log-probability above 0 is refused beyond this rounding (a probability a hair over 1 in float32).
ROUNDING = 1e-5
# A log-probability below this is a probability that underflowed in the server's arithmetic (llama.cpp writes the
# lowest float for a probability of 0, since JSON has no -inf).
UNDERFLOW = -1e30
# llama.cpp: the logit bias that makes greedy sampling take one given token.
FORCING_BIAS = 1e4
# llama.cpp: whether a request may start from the server's cached state of an earlier prompt. It may not: a prefix
# restored from the cache has its last token computed alone, a fresh one in one batch with the rest, which rounds
# otherwise, so that a fresh server's first run scored up to 0.028 from its later runs (bench/README.md).
LLAMA_CPP_PROMPT_CACHE = False
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


class ServerKind(ABC):
    """One kind of server (see the module's text): how it is recognised, what it reports, how it tokenizes, and the
    log-probabilities of the pairs of one condition. pairs_per_request: how many pairs one request holds."""

    name = ""
    pairs_per_request = 1

    @abstractmethod
    def answers(self, connection: Connection) -> bool:
        """Whether the server answers as this kind does (its own endpoint, in its own shape)."""

    @abstractmethod
    def probe(self, connection: Connection, wanted: str | None) -> ServerReport:
        """What the server reports of its model (wanted: the served model asked for, None for its only one)."""

    def tokenize(self, connection: Connection, report: ServerReport, facts: TokenFacts, text: str) -> list[Any] | None:
        """The server's tokens of `text` without special tokens, or None where it has no tokenizer endpoint."""
        return None

    @abstractmethod
    def log_probs(
        self,
        connection: Connection,
        report: ServerReport,
        facts: TokenFacts,
        prefix: tuple[int, ...],
        pairs: list[Pair],
    ) -> list[list[float]]:
        """The log-probability of each scored token of each pair, given `prefix` and the pair's tokens before it."""


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


def not_as_reported(connection: Connection, path: str, kind: str, what: str) -> CheckpointLoadError:
    return CheckpointLoadError(
        f"the server at {connection.address.url} does not answer GET {path} as {SERVER_NAMES[kind]} does ({what})"
    )


def listed_models(connection: Connection, kind: str) -> list[dict[str, Any]]:
    """The entries of the OpenAI-style GET /v1/models ({"data": [{"id": ...}, ...]})."""
    listing = read(connection, "/v1/models")
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("id"), str) for e in entries):
        raise not_as_reported(connection, "/v1/models", kind, "a list of models under 'data'")
    return entries


def choose_model(connection: Connection, names: Sequence[str], wanted: str | None) -> str:
    """The served model to score: `wanted` when the server serves it, else its only one."""
    url = connection.address.url
    if wanted is not None:
        if wanted in names:
            return wanted
        raise CheckpointNotFoundError(
            f"the server at {url} serves {names_shown(names, connection) or 'no model'}, not {shown(wanted)}",
            option="served_model",
            value=wanted,
            remedy=["give one of those as ", Mention("served_model")],
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


# -- vLLM -----------------------------------------------------------------------------------------------------------


class VLLM(ServerKind):
    """vLLM's OpenAI-compatible server (vllm/entrypoints/openai: CompletionRequest, CompletionResponseChoice)."""

    name = "vllm"
    pairs_per_request = PAIRS_PER_REQUEST

    def answers(self, connection: Connection) -> bool:
        version = read(connection, "/version")
        return isinstance(version, dict) and isinstance(version.get("version"), str)

    def probe(self, connection: Connection, wanted: str | None) -> ServerReport:
        version = read(connection, "/version")
        entries = listed_models(connection, self.name)
        model = choose_model(connection, [entry["id"] for entry in entries], wanted)
        entry = next(entry for entry in entries if entry["id"] == model)
        weights = {key: entry.get(key) for key in ("id", "root", "parent", "max_model_len")}
        return ServerReport(
            self.name,
            text_or_none(version.get("version") if isinstance(version, dict) else None),
            tuple(e["id"] for e in entries),
            model,
            weights,
            text_or_none(entry.get("root")) or model,
            fewer(whole(entry.get("max_model_len")), 1),  # max_tokens=1: one token is generated
        )

    def tokenize(self, connection: Connection, report: ServerReport, facts: TokenFacts, text: str) -> list[Any] | None:
        answer = tokens_or_none(
            connection, "/tokenize", {"model": report.model, "prompt": text, "add_special_tokens": False}
        )
        return tokens_listed(answer.get("tokens")) if isinstance(answer, dict) else None

    def log_probs(
        self,
        connection: Connection,
        report: ServerReport,
        facts: TokenFacts,
        prefix: tuple[int, ...],
        pairs: list[Pair],
    ) -> list[list[float]]:
        sequences = [[*prefix, *labels] for _, labels in pairs]
        body = {
            "model": report.model,
            "prompt": sequences,
            "max_tokens": 1,
            "temperature": 0.0,
            "prompt_logprobs": 1,
            "return_token_ids": True,
        }
        answer = connection.request("POST", "/v1/completions", body)
        choices = sorted(entries_of(answer, "choices", len(pairs), pairs[0][0]), key=_index)
        results = []
        for (name, _), sequence, choice in zip(pairs, sequences, choices):
            if isinstance(choice, dict) and choice.get("prompt_token_ids") is not None:
                same_tokens(connection, name, choice["prompt_token_ids"], sequence)
            positions = entries_of(choice, "prompt_logprobs", len(sequence), name)
            values = []
            for position in range(len(prefix), len(sequence)):
                entry = positions[position]
                found = entry.get(str(sequence[position])) if isinstance(entry, dict) else None
                if not isinstance(found, dict):
                    got = sorted(entry, key=len)[:3] if isinstance(entry, dict) else entry
                    raise mismatch(connection, name, position, got, sequence[position])
                values.append(found.get("logprob"))
            results.append(checked(connection, values, name))
        return results


def _index(choice: Any) -> int:
    return choice.get("index", 0) if isinstance(choice, dict) and isinstance(choice.get("index"), int) else 0


# -- SGLang ---------------------------------------------------------------------------------------------------------


class SGLang(ServerKind):
    """SGLang's native API (sglang/srt/managers/io_struct.py GenerateReqInput; tokenizer_manager's meta_info)."""

    name = "sglang"
    pairs_per_request = PAIRS_PER_REQUEST

    def answers(self, connection: Connection) -> bool:
        info = read(connection, "/get_model_info")
        return isinstance(info, dict) and isinstance(info.get("model_path"), str)

    def probe(self, connection: Connection, wanted: str | None) -> ServerReport:
        info = read(connection, "/get_model_info")
        if not isinstance(info, dict):
            raise not_as_reported(connection, "/get_model_info", self.name, "its model_path")
        if info.get("is_generation") is False:
            raise UnsupportedModelError(
                f"the server at {connection.address.url} serves {brief(info.get('model_path'), connection)}, which is "
                f"not a generative model (an embedding or reward model): it gives no token log-probabilities"
            )
        entries = listed_models(connection, self.name)
        model = choose_model(connection, [entry["id"] for entry in entries], wanted)
        entry = next(entry for entry in entries if entry["id"] == model)
        weights = {key: info.get(key) for key in ("model_path", "tokenizer_path", "weight_version")}
        weights["max_model_len"] = entry.get("max_model_len")
        return ServerReport(
            self.name,
            None,
            tuple(e["id"] for e in entries),
            model,
            weights,
            text_or_none(info.get("tokenizer_path")) or text_or_none(info.get("model_path")),
            fewer(whole(entry.get("max_model_len")), 1),
        )

    def log_probs(
        self,
        connection: Connection,
        report: ServerReport,
        facts: TokenFacts,
        prefix: tuple[int, ...],
        pairs: list[Pair],
    ) -> list[list[float]]:
        sequences = [[*prefix, *labels] for _, labels in pairs]
        body = {
            "input_ids": sequences,
            "sampling_params": {"max_new_tokens": 1, "temperature": 0.0},
            "return_logprob": True,
            "logprob_start_len": 0,
            "top_logprobs_num": 0,
        }
        answer = connection.request("POST", "/generate", body)
        if not isinstance(answer, list) or len(answer) < len(pairs):
            raise too_few(pairs[0][0], len(answer) if isinstance(answer, list) else 0, len(pairs))
        results = []
        for (name, _), sequence, item in zip(pairs, sequences, answer):
            meta = item.get("meta_info") if isinstance(item, dict) else None
            entries = entries_of(meta, "input_token_logprobs", len(sequence), name)
            if not all(isinstance(entry, list) and len(entry) >= 2 for entry in entries):
                raise ScoringError(
                    f"pair {name}: the server's input_token_logprobs are not [logprob, id, text] entries"
                )
            same_tokens(connection, name, [entry[1] for entry in entries], sequence)
            results.append(checked(connection, [entries[p][0] for p in range(len(prefix), len(sequence))], name))
        return results


# -- TGI ------------------------------------------------------------------------------------------------------------


class TGI(ServerKind):
    """Text Generation Inference (router/src/lib.rs: GenerateRequest, Details, PrefillToken, Info)."""

    name = "tgi"

    def answers(self, connection: Connection) -> bool:
        info = read(connection, "/info")
        return isinstance(info, dict) and isinstance(info.get("model_id"), str) and "max_total_tokens" in info

    def probe(self, connection: Connection, wanted: str | None) -> ServerReport:
        info = read(connection, "/info")
        if not isinstance(info, dict) or not isinstance(info.get("model_id"), str):
            raise not_as_reported(connection, "/info", self.name, "its model_id")
        model = choose_model(connection, [info["model_id"]], wanted)
        # TGI 2 and later say max_input_tokens; earlier ones max_input_length. One token is generated.
        inputs = whole(info.get("max_input_tokens")) or whole(info.get("max_input_length"))
        total = fewer(whole(info.get("max_total_tokens")), 1)
        positions = min(inputs, total) if inputs and total else inputs or total
        weights = {key: info.get(key) for key in ("model_id", "model_sha", "model_dtype", "model_device_type")}
        return ServerReport(self.name, text_or_none(info.get("version")), (model,), model, weights, model, positions)

    def tokenize(self, connection: Connection, report: ServerReport, facts: TokenFacts, text: str) -> list[Any] | None:
        tokens = tokens_or_none(connection, "/tokenize", {"inputs": text})
        if tokens is None:
            return None
        ids = (
            [token.get("id") if isinstance(token, dict) else token for token in tokens]
            if isinstance(tokens, list)
            else []
        )
        return ids[len(facts.added) :] if tuple(ids[: len(facts.added)]) == facts.added else ids

    def log_probs(
        self,
        connection: Connection,
        report: ServerReport,
        facts: TokenFacts,
        prefix: tuple[int, ...],
        pairs: list[Pair],
    ) -> list[list[float]]:
        (name, labels) = pairs[0]
        sequence = [*prefix, *labels]
        # The text that tokenizes into the sequence, the tokens the tokenizer adds itself apart (TGI adds them).
        added = len(facts.added) if tuple(sequence[: len(facts.added)]) == facts.added else 0
        body = {
            "inputs": facts.decode(sequence[added:]),
            "parameters": {"details": True, "decoder_input_details": True, "max_new_tokens": 1, "do_sample": False},
        }
        answer = connection.request("POST", "/generate", body)
        details = answer.get("details") if isinstance(answer, dict) else None
        prefill = entries_of(details, "prefill", len(sequence), name)
        if not all(isinstance(token, dict) for token in prefill):
            raise ScoringError(f"pair {name}: the server's prefill entries are not {{id, text, logprob}} objects")
        reported = [token.get("id") for token in prefill]
        if reported[: len(sequence)] != sequence or len(reported) != len(sequence):
            position = next((p for p, (a, b) in enumerate(zip(reported, sequence)) if a != b), len(sequence))
            raise ScoringError(
                f"pair {name}: TGI takes text, and the server's tokens of the pair's text differ from the token "
                f"policy's from token {position} on ({len(reported)} tokens where the policy has {len(sequence)}); "
                f"the pair is not scored",
                remedy="score it through a server that takes token ids (vLLM, SGLang, llama.cpp), or locally",
            )
        return [checked(connection, [prefill[p].get("logprob") for p in range(len(prefix), len(sequence))], name)]


# -- llama.cpp ------------------------------------------------------------------------------------------------------


class LlamaCpp(ServerKind):
    """llama.cpp's llama-server (tools/server: /completion's schema, completion_probabilities, /props, /tokenize)."""

    name = "llama.cpp"

    def answers(self, connection: Connection) -> bool:
        props = read(connection, "/props")
        return isinstance(props, dict) and isinstance(props.get("default_generation_settings"), dict)

    def probe(self, connection: Connection, wanted: str | None) -> ServerReport:
        props = read(connection, "/props")
        if not isinstance(props, dict) or not isinstance(props.get("default_generation_settings"), dict):
            raise not_as_reported(connection, "/props", self.name, "its default_generation_settings")
        entries = listed_models(connection, self.name)
        names = list(dict.fromkeys(name for e in entries for name in [e["id"], *_aliases(e)]))
        # One model is the one scored, whatever aliases it has.
        model = entries[0]["id"] if wanted is None and len(entries) == 1 else choose_model(connection, names, wanted)
        entry = next(e for e in entries if model == e["id"] or model in _aliases(e))
        meta: dict[str, Any] = entry["meta"] if isinstance(entry.get("meta"), dict) else {}
        weights = {"model_path": props.get("model_path"), "model_ftype": props.get("model_ftype")}
        weights.update({key: meta.get(key) for key in ("n_params", "size", "n_vocab", "n_ctx_train", "ftype")})
        return ServerReport(
            self.name,
            text_or_none(props.get("build_info")),
            tuple(names),
            model,
            weights,
            text_or_none(props.get("model_path")),
            # The target and the end token it generates after it are in the context with the prefix.
            fewer(whole(props["default_generation_settings"].get("n_ctx")), 1),
            whole(meta.get("n_vocab")),
        )

    def tokenize(self, connection: Connection, report: ServerReport, facts: TokenFacts, text: str) -> list[Any] | None:
        answer = tokens_or_none(connection, "/tokenize", {"content": text, "add_special": False})
        return tokens_listed(answer.get("tokens")) if isinstance(answer, dict) else None

    def log_probs(
        self,
        connection: Connection,
        report: ServerReport,
        facts: TokenFacts,
        prefix: tuple[int, ...],
        pairs: list[Pair],
    ) -> list[list[float]]:
        (name, labels) = pairs[0]
        forced = Forcing(connection, facts, prefix, labels, name)
        return [checked(connection, forced.log_probs(), name)]


def _aliases(entry: dict[str, Any]) -> list[str]:
    """The other names llama-server lists a model under (its entry's aliases)."""
    aliases = entry.get("aliases")
    return [name for name in aliases if isinstance(name, str)] if isinstance(aliases, list) else []


class Forcing:
    """llama.cpp's log-probabilities of one pair's scored tokens, forced as the module's text says.

    The server reports a generated token's log-probability only once the text generated so far ends in a whole
    character: a token that ends inside one (a byte of a character the vocabulary spells in several tokens) has
    none. Such a token is forced on its own, and its log-probability read from the full list of the vocabulary's at
    its place (n_probs of the vocabulary's size, a one-character token forced there); so are the tokens after it up
    to the end of the character, and the grammar then forces the rest."""

    def __init__(
        self, connection: Connection, facts: TokenFacts, prefix: tuple[int, ...], labels: tuple[int, ...], name: int
    ) -> None:
        self.connection, self.facts, self.prefix, self.labels, self.name = connection, facts, prefix, labels, name

    def log_probs(self) -> list[Any]:
        labels = self.labels
        # A grammar forces no end-of-generation token: the forced run stops before the first special token (the
        # policy's end of text or of a turn, last), which the greedy sampling may take once the grammar is done.
        forced_end = next((p for p, token in enumerate(labels) if token in self.facts.special_ids), len(labels))
        values: list[Any] = []
        ended: tuple[Any, Any] | None = None  # the token generated after the forced ones, and its value
        while len(values) < forced_end:
            start = len(values)
            generated = self._forced(start, forced_end)
            agreed = 0
            while agreed < min(len(generated), forced_end - start) and generated[agreed][0] == labels[start + agreed]:
                agreed += 1
            values += [value for _, value in generated[:agreed]]
            ended = generated[agreed] if start + agreed == forced_end and agreed < len(generated) else None
            while len(values) < forced_end and (len(values) == start + agreed or self._inside_a_character(len(values))):
                values.append(self._single(len(values)))
        for position in range(forced_end, len(labels)):
            same = position == forced_end and ended is not None and ended[0] == labels[position]
            values.append(ended[1] if same and ended is not None else self._single(position))
        return values

    def _inside_a_character(self, position: int) -> bool:
        """Whether the text of the tokens before labels[position] ends inside a character."""
        return self.facts.decode(self.labels[:position]).endswith("\ufffd")

    def _forced(self, start: int, end: int) -> list[tuple[Any, Any]]:
        """(id, log-probability) of the tokens generated after the prefix and labels[:start], a grammar of their ids
        forcing labels[start:end] (and then an end-of-generation token, which the greedy sampling takes); up to the
        first token the server reports no log-probability for, or that is not the one forced."""
        body = {
            "prompt": [*self.prefix, *self.labels[:start]],
            "grammar": "root ::= " + " ".join(f"<[{token}]>" for token in self.labels[start:end]),
            "n_predict": end - start + 1,
            "temperature": 0.0,
            "n_probs": 1,
            "return_tokens": True,
            "cache_prompt": LLAMA_CPP_PROMPT_CACHE,
        }
        tokens, probabilities = self._generated(body)
        reported = []
        for token, entry in zip(tokens, probabilities):
            if entry.get("id") != token:
                break
            reported.append((token, entry.get("logprob")))
        return reported

    def _single(self, position: int) -> Any:
        """The log-probability of labels[position] alone, after the prefix and the labels before it: generated, a
        logit bias making the greedy sampling take it (the log-probabilities reported are the model's, before any
        bias); or, for a token that ends inside a character, found among the whole vocabulary's."""
        token = self.labels[position]
        tokens, probabilities = self._generated(self._one_token(position, token, 1))
        if tokens[:1] != [token]:
            raise mismatch(self.connection, self.name, len(self.prefix) + position, tokens[:1], token)
        if probabilities:
            return probabilities[0].get("logprob")
        tokens, probabilities = self._generated(self._one_token(position, self.facts.plain, self.facts.vocabulary))
        listed = probabilities[0].get("top_logprobs") if probabilities and tokens[:1] == [self.facts.plain] else None
        found = (
            [e.get("logprob") for e in listed if isinstance(e, dict) and e.get("id") == token]
            if isinstance(listed, list)
            else []
        )
        if not found:
            raise ScoringError(
                f"pair {self.name}: the server gives no log-probability for its token {token} at position "
                f"{len(self.prefix) + position}, neither generated nor among the vocabulary's"
            )
        return found[0]

    def _one_token(self, position: int, token: int, listed: int) -> dict[str, Any]:
        """A request that generates `token` alone after the prefix and labels[:position], listing the `listed` most
        likely tokens there."""
        return {
            "prompt": [*self.prefix, *self.labels[:position]],
            "n_predict": 1,
            "temperature": 0.0,
            "n_probs": listed,
            "logit_bias": [[token, FORCING_BIAS]],
            "return_tokens": True,
            "cache_prompt": LLAMA_CPP_PROMPT_CACHE,
        }

    def _generated(self, body: dict[str, Any]) -> tuple[list[Any], list[dict[str, Any]]]:
        """(the ids generated, the probabilities reported) of a /completion request (return_tokens and n_probs)."""
        # Each token generated lists n_probs alternatives, which the answer's bound allows for (servers.AnswerBound).
        answer = self.connection.request("POST", "/completion", body, listed=body["n_predict"] * body["n_probs"])
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        probabilities = answer.get("completion_probabilities", []) if isinstance(answer, dict) else None
        if not isinstance(tokens, list) or not tokens:
            raise ScoringError(
                f"pair {self.name}: the server's answer lists no tokens generated (return_tokens), which a "
                f"llama-server from 2025 on gives"
            )
        if not isinstance(probabilities, list) or not all(isinstance(entry, dict) for entry in probabilities):
            raise ScoringError(f"pair {self.name}: the server's completion_probabilities are not a list of objects")
        return tokens, probabilities


KINDS: dict[str, ServerKind] = {kind.name: kind for kind in (LlamaCpp(), SGLang(), TGI(), VLLM())}


def detected_kind(connection: Connection) -> ServerKind:
    """The kind of the server (each kind's own endpoint tried in turn), or an UnsupportedModelError saying which
    servers give a prompt's log-probabilities: Ollama's and chat-only endpoints do not."""
    for kind in KINDS.values():
        if kind.answers(connection):
            return kind
    url = connection.address.url
    which = "vLLM, SGLang, TGI and llama.cpp's llama-server give a prompt's token log-probabilities"
    ollama = read(connection, "/api/version")
    if isinstance(ollama, dict) and "version" in ollama:
        raise UnsupportedModelError(
            f"the server at {url} is Ollama, which gives no log-probabilities of a text's tokens; {which}"
        )
    raise UnsupportedModelError(
        f"the server at {url} is none of those bartscore scores through: {which} (chat-only endpoints and Ollama do "
        f"not)",
        remedy="name its kind before the URL (vllm+, sglang+, tgi+, llama.cpp+) if it is one of them",
    )
