"""A causal LM on an inference server: the server, asked what it serves, and the requests that score pairs on it.

connect_server asks the server, before any pair is sent, what the checkpoint's name leaves open: that it answers at
all (else one error naming its URL), its kind (named, or detected: bart_score.models.served.kinds), the model it
serves (the one named by served_model, else its only one), what it says of the weights, and the context a pair may
take. The token policy is the causal LM's own (CausalFamily, GPTScoreFamily or ChatFamily, built by
bart_score.models.loading on the served model's tokenizer, read here), so that a served model scores the same tokens
under the same template and chat rules as the same model loaded locally.

ServedModel is what the served model's scorer (bart_score.models.served.scorer) asks of the server: score(), given
the plan's work (each distinct condition with its distinct targets), sends the requests `concurrency` at a time, a
condition's pairs together (in one request where the server takes a list), each after the hooks its scorer was given
(the Space's cancel).

The tokenizer is the one served_tokenizer names, else the Hub id the server reports its weights by, read from the
Hugging Face cache (tokenizer_origin): a path the server reports is of its machine, and never selects a file here.
What the server reports is shown through answers.printable: its version, a model's name.

The identity covers what the server says of its weights, which a server may keep while it swaps them. A score cache
also keeps, beside its scores, the log-probabilities of a fixed probe pair (PROBE_PAIR_TEXT) as the server gave them
when the cache was started; a run that finds them changed beyond PROBE_TOLERANCE refuses the cache
(probe_problem), rather than answer with another model's scores."""

from __future__ import annotations

import concurrent.futures
import contextvars
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import torch
from huggingface_hub import constants as hub_constants
from huggingface_hub import snapshot_download

from ...errors import CheckpointLoadError, CheckpointNotFoundError, Error, ScoringError, UnsupportedModelError
from ...messages import Mention, Part, shown
from ...options import DEFAULT_CONCURRENCY, DEFAULT_REQUEST_TIMEOUT, DEFAULT_RETRIES, EngineOptions
from ..base import IGNORED, Target
from ._answers import PROBE_TEXT, Pair, TokenFacts, printable, quoted
from ._transport import Connection, ServerAddress, api_key
from .kinds import ServerKind, server_of_kind

# A Hub id: an owner's name and a model's (or a model's alone), each at most 96 characters of letters, digits, ".",
# "_" and "-", starting with a letter or digit. The only origin of a tokenizer that a server's report may give.
HUB_ID = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9._-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
# The probe pair a score cache keeps the served model's log-probabilities of: its first word the condition, the rest
# the target, plain English that every tokenizer splits as the server does.
PROBE_PAIR_TEXT = "The quick brown fox jumps over the lazy dog, and the old cat watches it from the garden wall."
# How far the probe's log-probabilities may move (their mean absolute difference, per token) and still be the same
# model's: llama.cpp's scores move by up to 0.02 between runs (the batches' rounding), and the tests' server serving the
# tiny OPT with other weights under the same name moved them by 1.65 to 1.81 per token (docs/models.md).
PROBE_TOLERANCE = 0.1
# A probe field of a score cache's header: "probe:" and the log-probabilities, to PROBE_DIGITS decimals.
PROBE_FIELD = "probe:"
PROBE_DIGITS = 4

# The remedy for a served model's tokenizer that cannot be had or is not the server's: to name one.
GIVE_TOKENIZER: tuple[Part, ...] = (
    "give the served model's tokenizer (a Hub id in the Hugging Face cache, a checkpoint folder or a GGUF file) as ",
    Mention("served_tokenizer"),
)

# What the engine hands score(): each condition's prefix, with its targets (each named by its index among the call's
# pairs, for messages).
Work = Sequence[tuple[Sequence[int], Sequence[tuple[int, Target]]]]


def tokenizer_error(error: type[Error], *parts: Part, remedy: Sequence[Part] = GIVE_TOKENIZER) -> Error:
    """An error about the served model's tokenizer, which is served_tokenizer's whether or not that was given."""
    return error(*parts, option="served_tokenizer", remedy=remedy)


def tokenizer_origin(server: ServerKind, options: EngineOptions) -> tuple[str, str]:
    """Where the served model's tokenizer is read from, and who named it (for messages): served_tokenizer when it is
    given; else the Hub id the server reports its weights by (vLLM's root, SGLang's tokenizer_path, TGI's model_id),
    as the folder of its snapshot in the Hugging Face cache, never a folder here of the same name. Anything else the
    server reports (a path of its machine, such as llama-server's model_path) is refused before any file is looked at,
    so that neither the tokenizer read nor the message depends on what is at that path here."""
    if options.served_tokenizer:
        return options.served_tokenizer, "served_tokenizer"
    url, reported = server.connection.address.url, server.report.tokenizer_source
    if not reported:
        raise tokenizer_error(CheckpointLoadError, f"the server at {url} does not say where its weights are")
    if not HUB_ID.fullmatch(reported):
        raise tokenizer_error(
            CheckpointLoadError,
            f"the server at {url} says its weights are at {quoted(reported, server.connection)}, which is not a Hub "
            "id: a path a server reports is of its own machine, and is never read here",
        )
    try:
        folder = snapshot_download(reported, local_files_only=True, cache_dir=hub_constants.HF_HUB_CACHE)
    except (OSError, ValueError):  # not in the cache (LocalEntryNotFoundError), or not a valid id
        raise tokenizer_error(
            CheckpointNotFoundError,
            f"the server at {url} says its weights are the Hub id {reported!r}, not in {hub_constants.HF_HUB_CACHE}",
            remedy=[f"run `hf download {reported}` (its config and tokenizer files are enough), or ", *GIVE_TOKENIZER],
        ) from None
    return folder, f"the Hub id {reported!r} the server at {url} says its weights are"


def connect_server(address: ServerAddress, options: EngineOptions) -> ServerKind:
    """The server at `address`, asked what it serves (see the module's text). A server that does not answer is a
    CheckpointNotFoundError naming its URL, after one attempt; one that answers in no known kind's way, or as
    Ollama, an UnsupportedModelError saying which servers give a prompt's log-probabilities."""
    connection = Connection(
        address,
        key=api_key(),
        timeout=options.request_timeout or DEFAULT_REQUEST_TIMEOUT,
        retries=DEFAULT_RETRIES if options.request_retries is None else options.request_retries,
    )
    problem = connection.reached()
    if problem is not None:
        raise CheckpointNotFoundError(
            f"no server answers at {address.url} ({problem})",
            option="checkpoint",
            remedy="start the server, or give the URL it listens on",
        )
    server = server_of_kind(connection, address.kind)
    server.report = server.probe(options.served_model)
    return server


class ServedModel:
    """A model on a server (see the module's text). identity: what tells it apart from every other model (the key of
    score caches and baseline files): the server's kind, the model's name, and a digest of what the server reports
    of its weights and of the tokenizer read here (tokenizer_identity). vocabulary: its size, as the server reports
    it (else the tokenizer's); hooks: what is called before each request (ServedScorer.on_each_call)."""

    def __init__(self, server: ServerKind, tokenizer: Any, options: EngineOptions, tokenizer_identity: str) -> None:
        self.server = server
        self.concurrency = options.concurrency or DEFAULT_CONCURRENCY
        self.hooks: list[Callable[[], object]] = []
        report = server.report
        self.vocabulary = report.vocabulary or len(tokenizer)
        server.facts = self.facts = token_facts(tokenizer, self.vocabulary)
        described = json.dumps([report.model, report.weights, tokenizer_identity], sort_keys=True, default=str)
        digest = hashlib.sha256(described.encode("utf-8")).hexdigest()[:16]
        self.identity = f"served:{report.kind}:{server.shown_model}#{digest}"
        self._check_tokenizer(tokenizer, options)
        self._probe_ids = tuple(self.facts.added) + tuple(
            tokenizer(PROBE_PAIR_TEXT, add_special_tokens=False)["input_ids"]
        )

    @property
    def signature_field(self) -> str:
        """The signature's field that says where the numbers come from: the server's kind and version (printable)."""
        version = self.server.report.version
        shown_version = "@" + printable(version, self.server.connection) if version else ""
        return f"served:{self.server.name}{shown_version}"

    def ask_probe(self) -> tuple[float, ...]:
        """The log-probabilities of the probe pair's scored tokens (PROBE_PAIR_TEXT's after its first word), asked of
        the server now (a score cache asks once a run, as it starts: the model held may outlive a swap)."""
        split = len(self.facts.added) + 1
        prefix, labels = self._probe_ids[:split], self._probe_ids[split:]
        try:
            (values,) = self.request(prefix, [(0, labels)])
        except ScoringError as error:
            raise ScoringError(
                f"the server at {self.server.connection.address.url} does not score the probe pair (a fixed text "
                f"whose log-probabilities a score cache keeps) as asked: {error.problem()}",
                remedy=error.remedy,
            ) from None
        return tuple(round(value, PROBE_DIGITS) for value in values)

    @staticmethod
    def probe_field(probe: Sequence[float]) -> str:
        """The probe's log-probabilities (ask_probe's) as a score cache's header keeps them."""
        return PROBE_FIELD + ",".join(f"{value:.{PROBE_DIGITS}f}" for value in probe)

    @staticmethod
    def probe_problem(field: str, now: Sequence[float]) -> str | None:
        """What says that a score cache's probe field (probe_field, when its scores were made) is not the model's
        `now` (ask_probe's): its log-probabilities differ by more than PROBE_TOLERANCE per token (or are not as
        many). None when they agree."""
        try:
            then = [float(value) for value in field.removeprefix(PROBE_FIELD).split(",")]
        except ValueError:
            return f"its probe field {shown(field)} is not a list of numbers"
        if len(then) != len(now):
            return f"its probe pair has {len(then)} tokens, and the served model's tokenizer gives {len(now)} now"
        change = sum(abs(a - b) for a, b in zip(then, now)) / max(len(now), 1)
        if change <= PROBE_TOLERANCE:
            return None
        return (
            f"the served model answers the probe pair otherwise than when the cache was made, by {change:.3g} per "
            f"token (more than {PROBE_TOLERANCE:g}): the server's weights changed under the same name"
        )

    def _check_tokenizer(self, tokenizer: Any, options: EngineOptions) -> None:
        """Refuses a tokenizer that does not tokenize PROBE_TEXT as the server does (where it says how it does)."""
        server = self.server
        theirs = server.tokenize(PROBE_TEXT)
        if theirs is None:
            return
        ours = tokenizer(PROBE_TEXT, add_special_tokens=False)["input_ids"]
        if list(theirs) != list(ours):
            source = options.served_tokenizer or server.report.tokenizer_source or ""
            url = server.connection.address.url
            raise tokenizer_error(
                UnsupportedModelError,
                f"the tokenizer of {shown(source)} does not tokenize text as the server at {url} does ({len(ours)} "
                f"tokens here, {len(theirs)} there, for one text), so the tokens scored would not be those it reads",
            )

    def request(self, prefix: tuple[int, ...], pairs: list[Pair]) -> list[list[float]]:
        """One request, after the hooks: the log-probabilities of each pair's scored tokens after `prefix`."""
        for hook in self.hooks:
            hook()
        return self.server.log_probs(prefix, pairs)

    def score(self, work: Work, advance: Callable[[int], object]) -> list[list[torch.Tensor]]:
        """The log-probabilities of each target's scored tokens (float64), per condition as `work` gives them. The
        requests go `concurrency` at a time, in `work`'s order; `advance` is given each request's pairs as its answer
        comes. The first failure (or Ctrl-C) stops the rest, those under way at once, and is raised."""
        per_request = self.server.pairs_per_request
        requests = []  # (condition, first target, prefix, pairs)
        for condition, (prefix, targets) in enumerate(work):
            pairs = [(name, scored_tokens(name, target)) for name, target in targets]
            for start in range(0, len(pairs), per_request):
                requests.append((condition, start, tuple(prefix), pairs[start : start + per_request]))
        results: list[list[torch.Tensor]] = [[torch.zeros(0)] * len(targets) for _, targets in work]
        if not requests:
            return results
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            # Each request runs in a copy of this thread's context, so that what a caller keeps there (the Space's
            # job, which its cancel hook reads) holds in the pool's threads too.
            futures = {
                pool.submit(contextvars.copy_context().run, self.request, prefix, pairs): (condition, start)
                for condition, start, prefix, pairs in requests
            }
            try:
                for future in concurrent.futures.as_completed(futures):
                    condition, start = futures[future]
                    answered = future.result()
                    for offset, values in enumerate(answered):
                        results[condition][start + offset] = torch.tensor(values, dtype=torch.float64)
                    advance(len(answered))
            except BaseException:
                for future in futures:
                    future.cancel()
                self.server.connection.stop()  # the requests under way are not waited for
                raise
            finally:
                pool.shutdown(wait=True)
                self.server.connection.resume()
        return results


def scored_tokens(name: int, target: Target) -> tuple[int, ...]:
    """The tokens a server is sent after the prefix for `target`, which are those it scores: the model reads each
    scored token before the next (a causal LM's and a chat reply's targets). GPTScore's alignment may score tokens
    other than those the model reads, which a server, giving the log-probabilities of what it reads, cannot."""
    if IGNORED in target.labels or target.inputs != target.labels[:-1]:
        raise ScoringError(
            f"pair {name}: its scored tokens are not the tokens the model reads after the condition (GPTScore's "
            f"alignment of a text tokenized otherwise), and a server gives the log-probabilities of what it reads",
            remedy=["score it with the model loaded locally, or without ", Mention("compatibility", "gptscore")],
        )
    return target.labels


def token_facts(tokenizer: Any, vocabulary: int) -> TokenFacts:
    """What the requests need of the tokenizer and the vocabulary (kinds.TokenFacts)."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a")["input_ids"]
    added = tuple(full[: len(full) - len(plain)]) if full[len(full) - len(plain) :] == plain else ()
    special = {*tokenizer.all_special_ids}
    special.update(i for i, token in getattr(tokenizer, "added_tokens_decoder", {}).items() if token.special)

    def decode(ids: Sequence[int]) -> str:
        return tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)

    return TokenFacts(decode, frozenset(special), added, plain[0] if len(plain) == 1 else 0, vocabulary)
