"""A causal LM that runs on an inference server, as the engine and the token policies see a model.

connect_server asks the server, before any pair is sent, what the checkpoint's name leaves open: that it answers at
all (else one error naming its URL), its kind (named, or detected: bart_score.models.server_kinds), the model it
serves (the one named by served_model, else its only one), what it says of the weights, and the context a pair may
take. The token policy is the causal LM's own (CausalFamily, GPTScoreFamily or ChatFamily, built by
bart_score.models.loading on the served model's tokenizer, read here), so that a served model scores the same tokens
under the same template and chat rules as the same model loaded locally.

ServedModel is the model those families are built on: its config (the server's context as positions, the vocabulary),
an output layer of the vocabulary's size whose weights are not here, and score(), which the engine calls with its plan
(bart_score.engine: each distinct condition with its distinct targets) in place of running a model. Requests go to
the server `concurrency` at a time, a condition's pairs together (in one request where the server takes a list),
each through forward(), a call of the module: whatever hooks a model's calls (the Space's cancel) hooks them too."""

from __future__ import annotations

import concurrent.futures
import contextvars
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers import PretrainedConfig

from ..errors import CheckpointLoadError, CheckpointNotFoundError, ScoringError, UnsupportedModelError
from ..messages import Mention
from .base import IGNORED, Target
from .server_kinds import KINDS, PROBE_TEXT, Pair, ServerKind, ServerReport, TokenFacts, detected_kind
from .servers import (
    DEFAULT_CONCURRENCY,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RETRIES,
    SERVER_NAMES,
    Connection,
    ServedSettings,
    ServerAddress,
    api_key,
)

# What the engine hands score(): each condition's prefix, with its targets (each named by its index among the call's
# pairs, for messages).
Work = Sequence[tuple[Sequence[int], Sequence[tuple[int, Target]]]]


@dataclass
class Server:
    """A server that answered: how to reach it, its kind, and what it reported."""

    connection: Connection
    kind: ServerKind
    report: ServerReport

    @property
    def label(self) -> str:
        """The served model as the signature names it: the server's kind and URL, then the model's name."""
        return f"{self.kind.name}+{self.connection.address.url}#{self.report.model}"


def connect_server(address: ServerAddress, settings: ServedSettings) -> Server:
    """The server at `address`, asked what it serves (see the module's text). A server that does not answer is a
    CheckpointNotFoundError naming its URL, after one attempt; one that answers in no known kind's way, or as
    Ollama, an UnsupportedModelError saying which servers give a prompt's log-probabilities."""
    connection = Connection(
        address,
        key=api_key(),
        timeout=settings.timeout or DEFAULT_REQUEST_TIMEOUT,
        retries=DEFAULT_RETRIES if settings.retries is None else settings.retries,
    )
    problem = connection.reached()
    if problem is not None:
        raise CheckpointNotFoundError(
            f"no server answers at {address.url} ({problem})",
            option="checkpoint",
            remedy="start the server, or give the URL it listens on",
        )
    if address.kind is None:
        kind = detected_kind(connection)
    else:
        kind = KINDS[address.kind]
        if not kind.answers(connection):
            raise CheckpointLoadError(
                f"the server at {address.url} does not answer as {SERVER_NAMES[kind.name]} does",
                option="checkpoint",
                remedy="check the kind named before the URL, or leave it out to have it detected",
            )
    return Server(connection, kind, kind.probe(connection, settings.model))


class _OutputRows(torch.nn.Module):
    """The shape of an output layer whose weights are on the server: a row per vocabulary entry (which the token
    policies read, to refuse an id beyond the vocabulary), and no columns here."""

    def __init__(self, vocabulary: int) -> None:
        super().__init__()
        self.register_buffer("weight", torch.empty(vocabulary, 0), persistent=False)
        self.bias = None


class ServedModel(torch.nn.Module):
    """A model on a server (see the module's text). identity: what tells it apart from every other model (the key of
    score caches and baseline files): the server's kind, the model's name, and a digest of what the server reports
    of its weights and of the tokenizer read here (tokenizer_identity)."""

    def __init__(self, server: Server, tokenizer: Any, settings: ServedSettings, tokenizer_identity: str) -> None:
        super().__init__()
        self.server = server
        self.concurrency = settings.concurrency or DEFAULT_CONCURRENCY
        report = server.report
        vocabulary = report.vocabulary or len(tokenizer)
        self.config = PretrainedConfig()
        self.config.max_position_embeddings = report.positions
        self.config.vocab_size = vocabulary
        self.config.pad_token_id = tokenizer.pad_token_id
        self.output = _OutputRows(vocabulary)
        self.facts = token_facts(tokenizer, vocabulary)
        described = json.dumps([report.weights, tokenizer_identity], sort_keys=True, default=str)
        digest = hashlib.sha256(described.encode("utf-8")).hexdigest()[:16]
        self.identity = f"served:{report.kind}:{report.model}#{digest}"
        self._check_tokenizer(tokenizer, settings)

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    @property
    def signature_field(self) -> str:
        """The signature's field that says where the numbers come from: the server's kind and version."""
        version = (self.server.report.version or "").replace("|", "/")
        return f"served:{self.server.kind.name}{'@' + version if version else ''}"

    def get_output_embeddings(self) -> torch.nn.Module:
        return self.output

    def _check_tokenizer(self, tokenizer: Any, settings: ServedSettings) -> None:
        """Refuses a tokenizer that does not tokenize PROBE_TEXT as the server does (where it says how it does)."""
        server = self.server
        theirs = server.kind.tokenize(server.connection, server.report, self.facts, PROBE_TEXT)
        if theirs is None:
            return
        ours = tokenizer(PROBE_TEXT, add_special_tokens=False)["input_ids"]
        if list(theirs) != list(ours):
            source = settings.tokenizer or server.report.tokenizer_source
            raise UnsupportedModelError(
                f"the tokenizer of {source!r} does not tokenize text as the server at {server.connection.address.url} "
                f"does ({len(ours)} tokens here, {len(theirs)} there, for the same text), so the tokens scored would "
                f"not be those the server reads",
                option="served_tokenizer",
                remedy=["give the served model's own tokenizer as ", Mention("served_tokenizer")],
            )

    def forward(self, prefix: tuple[int, ...], pairs: list[Pair]) -> list[list[float]]:
        """One request: the log-probabilities of each pair's scored tokens after `prefix`, from the server."""
        server = self.server
        return server.kind.log_probs(server.connection, server.report, self.facts, prefix, pairs)

    def score(self, work: Work, advance: Callable[[int], object]) -> list[list[torch.Tensor]]:
        """The log-probabilities of each target's scored tokens (float64), per condition as `work` gives them. The
        requests go `concurrency` at a time, in `work`'s order; `advance` is given each request's pairs as its answer
        comes. The first failure (or Ctrl-C) stops the rest, those under way at once, and is raised."""
        per_request = self.server.kind.pairs_per_request
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
                pool.submit(contextvars.copy_context().run, self, prefix, pairs): (condition, start)
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
    """What the requests need of the tokenizer and the vocabulary (server_kinds.TokenFacts)."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a")["input_ids"]
    added = tuple(full[: len(full) - len(plain)]) if full[len(full) - len(plain) :] == plain else ()
    special = {*tokenizer.all_special_ids}
    special.update(i for i, token in getattr(tokenizer, "added_tokens_decoder", {}).items() if token.special)

    def decode(ids: Sequence[int]) -> str:
        return tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)

    return TokenFacts(decode, frozenset(special), added, plain[0] if len(plain) == 1 else 0, vocabulary)
