"""The registry of the kinds of inference server: each kind is one class here (a ServerKind: its name and title, how
it is detected, what it reports, its payload and its parse), read from each server's own schemas:

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

A class is registered by being defined (KINDS, in the order of this module): the checkpoint's "<kind>+" forms, the
messages that list the kinds and the detection of a server's kind all read KINDS. A pair is sent as one sequence, its
prefix (the condition as the token policy builds it) and then its scored tokens; the answer's token ids are checked
against those sent (TGI's against the policy's, since it tokenizes the text itself), and its log-probabilities as
bart_score.models.served._answers says.

llama.cpp's server gives no log-probabilities of a prompt's tokens (it ignores echo), but those of the tokens it
generates, over the whole vocabulary, whatever the grammar allows: the pair's scored tokens are forced by a grammar of
their ids (`root ::= <[id]> <[id]> ...`) with temperature 0, and the tokens generated are checked against them. The
end-of-generation token that ends them, which a grammar cannot name, is the greedy choice once the grammar is done:
its value is taken when it is the policy's last token, and that token is forced on its own (a logit bias) otherwise.
A grammar of the text instead of the ids would leave the split of the text to the greedy sampling, which SmolLM2 took
other than its tokenizer at the first token of each of three SummEval-like summaries."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from ...errors import CheckpointLoadError, InputError, ScoringError, UnsupportedModelError
from ...messages import shown
from ._answers import (
    Pair,
    ServerReport,
    TokenFacts,
    brief,
    checked,
    choose_model,
    entries_of,
    fewer,
    listed_models,
    mismatch,
    not_as_reported,
    printable,
    read,
    same_tokens,
    text_or_none,
    tokens_listed,
    tokens_or_none,
    too_few,
    whole,
)
from ._transport import Connection, written_kind

# Pairs of one condition sent in one request, to the servers that take a list of prompts.
PAIRS_PER_REQUEST = 16
# llama.cpp: the logit bias that makes greedy sampling take one given token.
FORCING_BIAS = 1e4
# llama.cpp: whether a request may start from the server's cached state of an earlier prompt. It may not: a prefix
# restored from the cache has its last token computed alone, a fresh one in one batch with the rest, which rounds
# otherwise, so that a fresh server's first run scored up to 0.028 from its later runs (bench/README.md).
LLAMA_CPP_PROMPT_CACHE = False

# The kinds, by name, in the order their classes are defined (ServerKind.__init_subclass__).
KINDS: dict[str, type[ServerKind]] = {}


class ServerKind(ABC):
    """One kind of server (see the module's text); an instance is one server of the kind: its connection, what it
    reported (probe), and what the requests need of the tokenizer (facts, given once it is read).

    A kind says: its name (as a checkpoint names it before "+") and title (as messages name it); whether a server
    answers as it does (answers: its own endpoint, in its own shape), which is tried after the other kinds' when
    another kind's server may answer it too (detected_last); what the server reports (probe); its tokens of a text
    (tokenize, where it has a tokenizer endpoint); and the log-probabilities of the pairs of one condition as the
    server gives them (values: OneRequestKind's payload and parse), which log_probs checks. pairs_per_request: how many
    pairs one request holds; takes_token_ids: whether a request gives the server the pair's tokens (else its text)."""

    name: ClassVar[str]
    title: ClassVar[str]
    pairs_per_request: ClassVar[int] = 1
    takes_token_ids: ClassVar[bool] = True
    detected_last: ClassVar[bool] = False

    def __init_subclass__(cls, **keywords: Any) -> None:
        super().__init_subclass__(**keywords)
        if "name" in cls.__dict__:  # a kind, not a shape of kinds (OneRequestKind)
            KINDS[cls.name] = cls

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.report: ServerReport
        self.facts: TokenFacts

    @property
    def label(self) -> str:
        """The served model as the signature names it: the kind and the URL, then the model's name (printable)."""
        return f"{self.name}+{self.connection.address.url}#{self.shown_model}"

    @property
    def shown_model(self) -> str:
        """The served model's name as outputs show it (answers.printable)."""
        return printable(self.report.model, self.connection)

    @abstractmethod
    def answers(self) -> bool:
        """Whether the server answers as this kind does (its own endpoint, in its own shape)."""

    @abstractmethod
    def probe(self, wanted: str | None) -> ServerReport:
        """What the server reports of its model (wanted: the served model asked for, None for its only one)."""

    def tokenize(self, text: str) -> list[Any] | None:
        """The server's tokens of `text` without special tokens, or None where it has no tokenizer endpoint."""
        return None

    def log_probs(self, prefix: tuple[int, ...], pairs: list[Pair]) -> list[list[float]]:
        """The log-probability of each scored token of each pair, given `prefix` and the pair's tokens before it,
        each checked (answers.checked)."""
        values = self.values(prefix, pairs)
        return [checked(self.connection, found, name) for (name, _), found in zip(pairs, values)]

    @abstractmethod
    def values(self, prefix: tuple[int, ...], pairs: list[Pair]) -> list[Sequence[Any]]:
        """The pairs' log-probabilities as the server gives them (their tokens checked), before log_probs checks
        them."""


class OneRequestKind(ServerKind):
    """A kind whose pairs of one condition are scored in one request (POST `path`): its body (payload) and the values
    read from its answer (parse), as lm-evaluation-harness's TemplateAPI has them."""

    path: ClassVar[str]

    @abstractmethod
    def payload(self, prefix: tuple[int, ...], pairs: list[Pair]) -> dict[str, Any]:
        """The body of the request for the pairs of `prefix`."""

    @abstractmethod
    def parse(self, answer: Any, prefix: tuple[int, ...], pairs: list[Pair]) -> list[Sequence[Any]]:
        """The log-probability of each scored token of each pair as the answer gives it, its tokens checked."""

    def values(self, prefix: tuple[int, ...], pairs: list[Pair]) -> list[Sequence[Any]]:
        return self.parse(self.connection.request("POST", self.path, self.payload(prefix, pairs)), prefix, pairs)


def kind_names(*, last: str = "and") -> str:
    """The kinds' names, listed ("vllm, sglang, tgi and llama.cpp")."""
    names = list(KINDS)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


# -- vLLM -----------------------------------------------------------------------------------------------------------


class VLLM(OneRequestKind):
    """vLLM's OpenAI-compatible server (vllm/entrypoints/openai: CompletionRequest, CompletionResponseChoice). Tried
    after the other kinds: its probe, GET /version, is a common endpoint."""

    name = "vllm"
    title = "vLLM"
    path = "/v1/completions"
    pairs_per_request = PAIRS_PER_REQUEST
    detected_last = True

    def answers(self) -> bool:
        version = read(self.connection, "/version")
        return isinstance(version, dict) and isinstance(version.get("version"), str)

    def probe(self, wanted: str | None) -> ServerReport:
        version = read(self.connection, "/version")
        entries = listed_models(self.connection, self.title)
        model = choose_model(self.connection, [entry["id"] for entry in entries], wanted)
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

    def tokenize(self, text: str) -> list[Any] | None:
        body = {"model": self.report.model, "prompt": text, "add_special_tokens": False}
        answer = tokens_or_none(self.connection, "/tokenize", body)
        return tokens_listed(answer.get("tokens")) if isinstance(answer, dict) else None

    def payload(self, prefix: tuple[int, ...], pairs: list[Pair]) -> dict[str, Any]:
        return {
            "model": self.report.model,
            "prompt": [[*prefix, *labels] for _, labels in pairs],
            "max_tokens": 1,
            "temperature": 0.0,
            "prompt_logprobs": 1,
            "return_token_ids": True,
        }

    def parse(self, answer: Any, prefix: tuple[int, ...], pairs: list[Pair]) -> list[Sequence[Any]]:
        choices = sorted(entries_of(answer, "choices", len(pairs), pairs[0][0]), key=_index)
        results: list[Sequence[Any]] = []
        for (name, labels), choice in zip(pairs, choices):
            sequence = [*prefix, *labels]
            if isinstance(choice, dict) and choice.get("prompt_token_ids") is not None:
                same_tokens(self.connection, name, choice["prompt_token_ids"], sequence)
            positions = entries_of(choice, "prompt_logprobs", len(sequence), name)
            values = []
            for position in range(len(prefix), len(sequence)):
                entry = positions[position]
                found = entry.get(str(sequence[position])) if isinstance(entry, dict) else None
                if not isinstance(found, dict):
                    got = sorted(entry, key=len)[:3] if isinstance(entry, dict) else entry
                    raise mismatch(self.connection, name, position, got, sequence[position])
                values.append(found.get("logprob"))
            results.append(values)
        return results


def _index(choice: Any) -> int:
    return choice.get("index", 0) if isinstance(choice, dict) and isinstance(choice.get("index"), int) else 0


# -- SGLang ---------------------------------------------------------------------------------------------------------


class SGLang(OneRequestKind):
    """SGLang's native API (sglang/srt/managers/io_struct.py GenerateReqInput; tokenizer_manager's meta_info)."""

    name = "sglang"
    title = "SGLang"
    path = "/generate"
    pairs_per_request = PAIRS_PER_REQUEST

    def answers(self) -> bool:
        info = read(self.connection, "/get_model_info")
        return isinstance(info, dict) and isinstance(info.get("model_path"), str)

    def probe(self, wanted: str | None) -> ServerReport:
        info = read(self.connection, "/get_model_info")
        if not isinstance(info, dict):
            raise not_as_reported(self.connection, "/get_model_info", self.title, "its model_path")
        if info.get("is_generation") is False:
            raise UnsupportedModelError(
                f"the server at {self.connection.address.url} serves {brief(info.get('model_path'), self.connection)}, "
                f"which is not a generative model (an embedding or reward model): it gives no token log-probabilities"
            )
        entries = listed_models(self.connection, self.title)
        model = choose_model(self.connection, [entry["id"] for entry in entries], wanted)
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

    def payload(self, prefix: tuple[int, ...], pairs: list[Pair]) -> dict[str, Any]:
        return {
            "input_ids": [[*prefix, *labels] for _, labels in pairs],
            "sampling_params": {"max_new_tokens": 1, "temperature": 0.0},
            "return_logprob": True,
            "logprob_start_len": 0,
            "top_logprobs_num": 0,
        }

    def parse(self, answer: Any, prefix: tuple[int, ...], pairs: list[Pair]) -> list[Sequence[Any]]:
        if not isinstance(answer, list) or len(answer) < len(pairs):
            raise too_few(pairs[0][0], len(answer) if isinstance(answer, list) else 0, len(pairs))
        results: list[Sequence[Any]] = []
        for (name, labels), item in zip(pairs, answer):
            sequence = [*prefix, *labels]
            meta = item.get("meta_info") if isinstance(item, dict) else None
            entries = entries_of(meta, "input_token_logprobs", len(sequence), name)
            if not all(isinstance(entry, list) and len(entry) >= 2 for entry in entries):
                raise ScoringError(
                    f"pair {name}: the server's input_token_logprobs are not [logprob, id, text] entries"
                )
            same_tokens(self.connection, name, [entry[1] for entry in entries], sequence)
            results.append([entries[p][0] for p in range(len(prefix), len(sequence))])
        return results


# -- TGI ------------------------------------------------------------------------------------------------------------


class TGI(OneRequestKind):
    """Text Generation Inference (router/src/lib.rs: GenerateRequest, Details, PrefillToken, Info)."""

    name = "tgi"
    title = "TGI"
    path = "/generate"
    takes_token_ids = False

    def answers(self) -> bool:
        info = read(self.connection, "/info")
        return isinstance(info, dict) and isinstance(info.get("model_id"), str) and "max_total_tokens" in info

    def probe(self, wanted: str | None) -> ServerReport:
        info = read(self.connection, "/info")
        if not isinstance(info, dict) or not isinstance(info.get("model_id"), str):
            raise not_as_reported(self.connection, "/info", self.title, "its model_id")
        model = choose_model(self.connection, [info["model_id"]], wanted)
        # TGI 2 and later say max_input_tokens; earlier ones max_input_length. One token is generated.
        inputs = whole(info.get("max_input_tokens")) or whole(info.get("max_input_length"))
        total = fewer(whole(info.get("max_total_tokens")), 1)
        positions = min(inputs, total) if inputs and total else inputs or total
        weights = {key: info.get(key) for key in ("model_id", "model_sha", "model_dtype", "model_device_type")}
        return ServerReport(self.name, text_or_none(info.get("version")), (model,), model, weights, model, positions)

    def tokenize(self, text: str) -> list[Any] | None:
        tokens = tokens_or_none(self.connection, "/tokenize", {"inputs": text})
        if tokens is None:
            return None
        ids = (
            [token.get("id") if isinstance(token, dict) else token for token in tokens]
            if isinstance(tokens, list)
            else []
        )
        added = self.facts.added
        return ids[len(added) :] if tuple(ids[: len(added)]) == added else ids

    def payload(self, prefix: tuple[int, ...], pairs: list[Pair]) -> dict[str, Any]:
        (_, labels) = pairs[0]
        sequence = [*prefix, *labels]
        # The text that tokenizes into the sequence, the tokens the tokenizer adds itself apart (TGI adds them).
        added = len(self.facts.added) if tuple(sequence[: len(self.facts.added)]) == self.facts.added else 0
        return {
            "inputs": self.facts.decode(sequence[added:]),
            "parameters": {"details": True, "decoder_input_details": True, "max_new_tokens": 1, "do_sample": False},
        }

    def parse(self, answer: Any, prefix: tuple[int, ...], pairs: list[Pair]) -> list[Sequence[Any]]:
        (name, labels) = pairs[0]
        sequence = [*prefix, *labels]
        details = answer.get("details") if isinstance(answer, dict) else None
        prefill = entries_of(details, "prefill", len(sequence), name)
        if not all(isinstance(token, dict) for token in prefill):
            raise ScoringError(f"pair {name}: the server's prefill entries are not {{id, text, logprob}} objects")
        reported = [token.get("id") for token in prefill]
        if reported[: len(sequence)] != sequence or len(reported) != len(sequence):
            position = next((p for p, (a, b) in enumerate(zip(reported, sequence)) if a != b), len(sequence))
            raise ScoringError(
                f"pair {name}: TGI takes text, and its tokens of the pair differ from the token policy's from token "
                f"{position} on ({len(reported)} tokens where the policy has {len(sequence)}), so it is not scored",
                remedy=f"score it through a server that takes token ids ({_listed(_token_id_titles())}), or locally",
            )
        return [[prefill[p].get("logprob") for p in range(len(prefix), len(sequence))]]


# -- llama.cpp ------------------------------------------------------------------------------------------------------


class LlamaCpp(ServerKind):
    """llama.cpp's llama-server (tools/server: /completion's schema, completion_probabilities, /props, /tokenize):
    each pair is scored in a few requests that force its tokens (Forcing), in place of one payload and its parse."""

    name = "llama.cpp"
    title = "llama.cpp's llama-server"

    def answers(self) -> bool:
        props = read(self.connection, "/props")
        return isinstance(props, dict) and isinstance(props.get("default_generation_settings"), dict)

    def probe(self, wanted: str | None) -> ServerReport:
        props = read(self.connection, "/props")
        if not isinstance(props, dict) or not isinstance(props.get("default_generation_settings"), dict):
            raise not_as_reported(self.connection, "/props", self.title, "its default_generation_settings")
        entries = listed_models(self.connection, self.title)
        names = list(dict.fromkeys(name for e in entries for name in [e["id"], *_aliases(e)]))
        # One model is the one scored, whatever aliases it has.
        if wanted is None and len(entries) == 1:
            model = entries[0]["id"]
        else:
            model = choose_model(self.connection, names, wanted)
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

    def tokenize(self, text: str) -> list[Any] | None:
        answer = tokens_or_none(self.connection, "/tokenize", {"content": text, "add_special": False})
        return tokens_listed(answer.get("tokens")) if isinstance(answer, dict) else None

    def values(self, prefix: tuple[int, ...], pairs: list[Pair]) -> list[Sequence[Any]]:
        (name, labels) = pairs[0]
        return [Forcing(self, prefix, labels, name).log_probs()]


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

    def __init__(self, server: LlamaCpp, prefix: tuple[int, ...], labels: tuple[int, ...], name: int) -> None:
        self.connection, self.facts, self.prefix, self.labels, self.name = (
            server.connection,
            server.facts,
            prefix,
            labels,
            name,
        )

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
        # Each token generated lists n_probs alternatives, which the answer's bound allows for (transport.AnswerBound).
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


def _listed(words: Sequence[str]) -> str:
    """Words listed as a sentence does: "a, b and c"."""
    return f"{', '.join(words[:-1])} and {words[-1]}" if len(words) > 1 else "".join(words)


def written_kinds() -> str:
    """The kinds as a checkpoint writes them before a URL, listed: "vllm+, sglang+, tgi+ or llama.cpp+"."""
    written = [f"{name}+" for name in KINDS]
    return f"{', '.join(written[:-1])} or {written[-1]}"


def _token_id_titles() -> list[str]:
    """The titles of the kinds whose requests give the server a pair's tokens."""
    return [kind.title for kind in KINDS.values() if kind.takes_token_ids]


def checked_kind(name: str) -> None:
    """Refuses a server's name (a checkpoint's) whose kind, the word before "+", is none of KINDS."""
    kind, _ = written_kind(name)
    if kind and kind not in KINDS:
        raise InputError(
            f"the checkpoint names a server of kind {shown(kind)}; the kinds are {', '.join(KINDS)}",
            option="checkpoint",
            remedy="leave the kind out to have it detected",
        )


def server_of_kind(connection: Connection, kind: str | None) -> ServerKind:
    """The server at `connection` as the kind named (checked: it answers as that kind does), or the kind it is
    detected to be (each kind's own endpoint tried in turn, those that may answer another kind's probe last). A server
    of no kind is an UnsupportedModelError saying which servers give a prompt's log-probabilities: Ollama's and
    chat-only endpoints do not."""
    url = connection.address.url
    if kind is not None:
        server = KINDS[kind](connection)
        if not server.answers():
            raise CheckpointLoadError(
                f"the server at {url} does not answer as {server.title} does",
                option="checkpoint",
                remedy="check the kind named before the URL, or leave it out to have it detected",
            )
        return server
    for detected in sorted(KINDS.values(), key=lambda kind: kind.detected_last):
        server = detected(connection)
        if server.answers():
            return server
    which = f"{_listed([kind.title for kind in KINDS.values()])} give a prompt's token log-probabilities"
    ollama = read(connection, "/api/version")
    if isinstance(ollama, dict) and "version" in ollama:
        raise UnsupportedModelError(
            f"the server at {url} is Ollama, which gives no log-probabilities of a text's tokens; {which}"
        )
    raise UnsupportedModelError(
        f"the server at {url} is none of those bartscore scores through: {which} (chat-only endpoints and Ollama do "
        f"not)",
        remedy=f"name its kind before the URL ({', '.join(name + '+' for name in KINDS)}) if it is one of them",
    )
