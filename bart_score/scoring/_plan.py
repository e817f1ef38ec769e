"""The plan of a scoring call, and the scorer built on it: ``PlannedScorer``, which the local engine
(bart_score.scoring.engine.BARTScorer) and a served model's scorer (bart_score.models.served.scorer.ServedScorer)
both are.

Each call is planned before any model is touched (as bert_score does): every distinct text is tokenized once under the
family's token policy, identical (condition, target) pairs are scored once, and pairs are grouped by condition, so
that each distinct condition is computed once for all its targets. A PlannedScorer checks a call's inputs, plans it,
splits it across a distributed run's ranks, and turns the log-probabilities of its distinct pairs into each input
pair's score; what computes those log-probabilities (_score_share: the model's own modules in batches, or requests to
a server) is each scorer's own."""

from __future__ import annotations

import copy
import logging
import os
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

import numpy as np
import torch
import transformers

from ..errors import InputError, TokenizationWarning
from ..inputs import optional_positive_int, reference_lists, text_list
from ..messages import Mention
from ..models.base import Family, Tokenized
from ..models.loading import resolve_checkpoint
from ..options import AGGREGATIONS, EngineOptions, ScoringOptions, instruction_list
from ..scaling._distributed import ProcessGroup, default_device, process_group
from ..variants import DEFAULT_CPU_MAX_TOKENS, DEFAULT_MAX_LENGTH, DEFAULT_MAX_TOKENS
from ..version import __version__
from . import _directions

logger = logging.getLogger("bart_score")

Scorer = TypeVar("Scorer", bound="PlannedScorer")

Item = TypeVar("Item")
# Per distinct pair: (sum of its target-token log-probabilities, those log-probabilities when kept, else None).
PairResults = dict[int, tuple[float, "torch.Tensor | None"]]
# Per input pair: the sums of target-token log-probabilities, the scored token counts, and (when kept) each pair's
# scored token ids with their log-probabilities.
LogLikelihoods = tuple[np.ndarray, np.ndarray, "list[tuple[list[int], torch.Tensor]] | None"]


# What a truncation warning says to do about a source cut at max_length: score faithfulness over its windows.
LONG_SOURCE_REMEDY = (
    "for faithfulness to a long source, score each prediction sentence against the best windows of the whole source: ",
    Mention("long_source", "windows"),
    " (docs/long-documents.md)",
)


class Plan:
    """A call's work after tokenization: the distinct conditions and targets (as the family tokenized them), the
    distinct pairs, each input pair's distinct pair, and the pairs of each condition."""

    def __init__(self, tokenized: Tokenized) -> None:
        self.tokenized = tokenized
        self.conditions = tokenized.conditions
        self.targets = tokenized.targets
        pair_index: dict[tuple[int, int], int] = {}
        self.pair_of_input = [pair_index.setdefault(pair, len(pair_index)) for pair in tokenized.pairs]
        self.pairs = list(pair_index)
        self.pairs_by_condition: dict[int, list[int]] = {}
        for pair, (condition, _) in enumerate(self.pairs):
            self.pairs_by_condition.setdefault(condition, []).append(pair)

    def condition_length(self, condition: int) -> int:
        return len(self.conditions[condition])

    def target_length(self, target: int) -> int:
        return len(self.targets[target].labels)


class PlannedScorer(ABC):
    """A scorer that plans each call (see the module's text): the API of the original ``BARTScorer`` (score,
    multi_ref_score) and this package's (score_tokens, score_directions), the signature's fields, and the identity of
    the model, for every scorer whose pairs' log-probabilities _score_share computes.

    The settings are EngineOptions' fields, each documented there (bart_score.options). ``scorer.options`` holds them,
    the values resolved when the scorer was built included (the device, max_tokens and max_length it chose, the
    checkpoint as resolved from a configuration name), and is the only holder of them: read ``scorer.options.dtype``,
    ``scorer.options.source_lang``, ...; the Scorer protocols read them there too (bart_score.scoring.protocols).
    ``device`` (a torch.device) and ``max_length`` read them for the original class's callers, whose scorer had
    both as attributes; ``token_policy`` is the family's (documented in docs/models.md)."""

    def __init__(self, options: EngineOptions, family: Family, label: str, identity: str) -> None:
        """options: resolved (resolved_options); family: the token policy and, for a local model, the model; label and
        identity: the model's as the signature names it and as caches and baselines key it."""
        self.options = options
        self.family = family
        self.tokenizer = family.tokenizer
        self._checkpoint_label = label
        self._checkpoint_identity = identity
        self._weights_identity: str | None = None
        self.weights: str | None = None
        self.options = options.replace(max_length=self._fitting_max_length(options.max_length))

    def _fitting_max_length(self, max_length: int | None) -> int:
        """max_length (checked by EngineOptions) within the model's positions; None: 1024, or the positions if fewer."""
        positions = self.family.max_positions
        if max_length is None:
            return min(DEFAULT_MAX_LENGTH, positions or DEFAULT_MAX_LENGTH)
        if positions is not None and max_length > positions:
            raise InputError(
                Mention("max_length"),
                f" must be an integer from 2 to {positions} (the model's positions), got {max_length}",
                value=max_length,
            )
        return max_length

    # The original class's attributes, read from the options (the only holder of them).

    @property
    def device(self) -> torch.device:
        return torch.device(self.options.device)  # type: ignore[arg-type]  # resolved: a device name

    @property
    def max_length(self) -> int:
        return self.options.max_length  # type: ignore[return-value]  # resolved: an int

    def with_max_length(self: Scorer, max_length: int) -> Scorer:
        """This scorer with the same model (shared, not loaded again) truncating texts at another max_length, up to
        the model's positions: e.g. a causal LM given whole long sources as its prefix."""
        options = self.options.replace(max_length=max_length)
        scorer = copy.copy(self)
        scorer.options = options.replace(max_length=self._fitting_max_length(options.max_length))
        return scorer

    @property
    def model_label(self) -> str:
        """The checkpoint as the signature names it: a local folder or GGUF file by its real absolute path, a Hub id
        as it is; with the name of weights loaded over it."""
        if self.weights is None:
            return self._checkpoint_label
        return f"{self._checkpoint_label}+{os.path.basename(self.weights)}"

    @property
    def model_identity(self) -> str:
        """What tells this model apart from others, however the checkpoint was named: the key of baseline files and
        score caches (see models.loading.checkpoint_identity), with the identity of weights loaded over it."""
        if self._weights_identity is None:
            return self._checkpoint_identity
        return f"{self._checkpoint_identity}+{self._weights_identity}"

    @property
    def token_policy(self) -> str:
        """Which tokens are scored and what the decoder starts from, in a few characters (docs/models.md)."""
        return self.family.policy

    def signature_fields(self) -> list[str]:
        """The signature's fields that describe this scorer rather than one call's options."""
        return [
            f"policy:{self.token_policy}",
            f"maxlen:{self.max_length}",
            self.numbers_field,
            f"transformers:{transformers.__version__}",
            f"version:{__version__}",
        ]

    @property
    @abstractmethod
    def numbers_field(self) -> str:
        """The signature's field that says where the numbers come from: the dtype, or a server's kind and version."""

    # -- public scoring -------------------------------------------------------------------------------------------

    def score(
        self,
        srcs: Sequence[str],
        tgts: Sequence[str],
        batch_size: int | None = None,
        *,
        max_tokens: int | None = None,
        show_progress: bool = False,
        progress: Callable[[int], object] | None = None,
        condition_lang: str | Sequence[str] | None = None,
        instruction: str | Sequence[str] | None = None,
    ) -> list[float] | None:
        """Mean target-token log-probability of each tgt given its src (higher is better; scores are negative).

        batch_size caps the pairs per model batch (the original's fixed batch of 4 is not needed: batches are
        filled up to max_tokens padded tokens); neither changes the scores. show_progress: a bar of the pairs scored
        and pairs/s, advanced after each model batch; progress: instead, a callable given the number of distinct
        pairs each model batch scored (a caller's own bar spanning several calls). condition_lang (mBART): the
        language of the srcs, one code or one per pair (default: source_lang). instruction (chat): one instruction
        or one per pair (default: the faithfulness direction's)."""
        result = self._log_likelihoods(
            srcs,
            tgts,
            batch_size=batch_size,
            max_tokens=max_tokens,
            show_progress=show_progress,
            progress=progress,
            keep_tokens=False,
            condition_lang=condition_lang,
            instruction=instruction,
        )
        if result is None:
            return None
        sums, counts, _ = result
        return (sums / counts).tolist()

    def multi_ref_score(
        self,
        srcs: Sequence[str],
        tgts: Sequence[Sequence[str]],
        agg: str = "mean",
        batch_size: int | None = None,
        *,
        max_tokens: int | None = None,
        show_progress: bool = False,
    ) -> list[float] | None:
        """Scores each src against each of its tgts (a list per example; counts may differ) and aggregates."""
        if agg not in AGGREGATIONS:
            raise InputError(Mention("agg"), f" must be one of {AGGREGATIONS}, got {agg!r}", value=agg)
        sources = text_list(srcs, "srcs")
        references = reference_lists(tgts, "tgts", len(sources), counted_by="srcs")
        counts = [len(refs) for refs in references]
        flat = self.score(
            [src for src, n in zip(sources, counts) for _ in range(n)],
            [t for refs in references for t in refs],
            batch_size,
            max_tokens=max_tokens,
            show_progress=show_progress,
        )
        return None if flat is None else _directions.aggregate(np.asarray(flat), counts, agg).tolist()

    def score_tokens(
        self,
        srcs: Sequence[str],
        tgts: Sequence[str],
        batch_size: int | None = None,
        *,
        max_tokens: int | None = None,
        condition_lang: str | Sequence[str] | None = None,
        instruction: str | Sequence[str] | None = None,
    ) -> list[list[tuple[str, float]]] | None:
        """Each scored target token with its log-probability: one list of (token text, log-prob) per pair.

        The mean of a pair's log-probabilities is its score, and the texts joined are the scored part of the target
        as the tokenizer decodes it (sentencepiece word starts as spaces; a character that byte-level tokens split is
        the text of the token that completes it, the tokens before it in that character having empty text)."""
        result = self._log_likelihoods(
            srcs,
            tgts,
            batch_size=batch_size,
            max_tokens=max_tokens,
            show_progress=False,
            keep_tokens=True,
            condition_lang=condition_lang,
            instruction=instruction,
        )
        if result is None:
            return None
        tokens = result[2]
        assert tokens is not None  # kept: keep_tokens=True
        return [list(zip(self.family.token_texts(ids), log_probs.tolist())) for ids, log_probs in tokens]

    def score_directions(
        self,
        predictions: Sequence[str],
        references: Sequence[str | Sequence[str]] | None = None,
        sources: Sequence[str] | None = None,
        options: ScoringOptions | None = None,
        **keywords: Any,
    ) -> dict[str, Any] | None:
        """The paper's directions for each prediction, in input order, with their means and a signature.

        options: a ScoringOptions, or any of its fields as keywords (ScoringOptions lists and documents every one:
        the directions, aggregation, prompt, rescaling, long-source and batch options); see
        ``bart_score.scoring._directions``."""
        return _directions.score_directions(self, predictions, references, sources, options, **keywords)

    # -- the planned computation ----------------------------------------------------------------------------------

    def _condition_languages(self, condition_lang: str | Sequence[str] | None, count: int) -> list[str | None]:
        """The language code of each condition (None for families without language codes)."""
        source_lang = self.options.source_lang
        if source_lang is None:
            if condition_lang is not None:
                raise InputError(
                    Mention("condition_lang"),
                    f" is for families with language codes (mBART); this is a {self.family.name} model",
                    value=condition_lang,
                )
            return [None] * count
        languages: list[str | None]
        if condition_lang is None or isinstance(condition_lang, str):
            languages = [condition_lang or source_lang] * count
        else:
            languages = list(text_list(condition_lang, "condition_lang", count, counted_by="srcs"))
        for index, language in enumerate(languages):
            if language not in self.family.language_codes:
                where = None if isinstance(condition_lang, str) else index
                raise InputError(
                    Mention("condition_lang", language, index=where),
                    f" is not one of this tokenizer's language codes: {', '.join(self.family.language_codes)}",
                    value=condition_lang,
                )
        return languages

    def _log_likelihoods(
        self,
        srcs: Sequence[str],
        tgts: Sequence[str],
        *,
        batch_size: int | None,
        max_tokens: int | None,
        show_progress: bool,
        keep_tokens: bool,
        progress: Callable[[int], object] | None = None,
        condition_lang: str | Sequence[str] | None = None,
        instruction: str | Sequence[str] | None = None,
    ) -> LogLikelihoods | None:
        """Per input pair: the sum of target-token log-probabilities, the scored token count, and (if asked) the
        scored token ids with their log-probabilities. None on ranks other than 0 when results go to rank 0."""
        conditions = text_list(srcs, "srcs")
        targets = text_list(tgts, "tgts")
        if len(conditions) != len(targets):
            raise InputError.entries_differ(Mention("srcs"), len(conditions), Mention("tgts"), len(targets), value=srcs)
        batch_size = optional_positive_int(batch_size, "batch_size")
        token_budget = optional_positive_int(max_tokens, "max_tokens") or cast(int, self.options.max_tokens)  # resolved
        languages = self._condition_languages(condition_lang, len(conditions))
        instructions = instruction_list(instruction, len(conditions), self.options.chat_settings)
        group = process_group(self.options.distributed)
        if group:
            group.check_same_inputs(conditions, targets, self.device)
        lead = not group or group.rank == 0

        plan = self._plan(conditions, targets, languages, instructions)
        if lead:
            self._report(plan.tokenized)
        logger.info(
            "scoring %d pairs as %d distinct pairs with %d distinct conditions",
            len(conditions),
            len(plan.pairs),
            len(plan.pairs_by_condition),
        )

        share = group.share(plan) if group else plan.pairs_by_condition
        results: PairResults | None = None
        error: Exception | None = None
        try:
            results = self._score_share(
                plan,
                share,
                conditions,
                targets,
                batch_size=batch_size,
                max_tokens=token_budget,
                show_progress=show_progress and lead,
                progress=progress if lead else None,
                keep_tokens=keep_tokens,
            )
        except Exception as failure:
            if not group:
                raise
            error = failure  # every rank is told below
        if group:
            group.raise_if_any_failed(error, self.device)
            results = group.gather(results, self.options.results_on, self.device)
            if results is None:
                return None

        assert results is not None  # scored here, or gathered from every rank (a failure raised above)
        index = plan.pair_of_input
        target_of = [plan.targets[plan.pairs[p][1]] for p in index]
        sums = np.array([results[p][0] for p in index], dtype=np.float64)
        counts = np.array([len(target.scored_ids) for target in target_of], dtype=np.float64)
        # With keep_tokens every pair's result holds its token log-probabilities.
        tokens = (
            [(t.scored_ids, cast(torch.Tensor, results[p][1])) for t, p in zip(target_of, index)]
            if keep_tokens
            else None
        )
        return sums, counts, tokens

    def _plan(
        self,
        conditions: Sequence[str],
        targets: Sequence[str],
        languages: Sequence[str | None] | None = None,
        instructions: Sequence[str] | None = None,
    ) -> Plan:
        """The call's Plan: its texts tokenized under the family's token policy, pairs deduplicated and grouped
        (instructions: chat scoring's, one per pair, or None for the scorer's own)."""
        languages = languages or [self.options.source_lang] * len(conditions)
        per_pair = {} if instructions is None else {"instructions": instructions}
        return Plan(self.family.tokenize(conditions, targets, languages, self.max_length, **per_pair))

    def _report(self, tokenized: Tokenized) -> None:
        """Warns about what the tokenization did to the inputs that the user may not expect; a cut source with what
        scores faithfulness to all of it (LONG_SOURCE_REMEDY)."""
        if tokenized.truncated_conditions or tokenized.truncated_targets:
            warnings.warn(
                TokenizationWarning(
                    f"BARTScore truncated {tokenized.truncated_conditions} distinct source text(s) and "
                    f"{tokenized.truncated_targets} distinct target text(s) to ",
                    Mention("max_length", self.max_length),
                    " tokens, as the original BARTScore does; their tails are not scored",
                    remedy=LONG_SOURCE_REMEDY if tokenized.truncated_conditions else None,
                ),
                stacklevel=4,
            )
        if tokenized.special_token_texts:
            example = tokenized.special_token_texts[0]
            warnings.warn(
                TokenizationWarning(
                    f"BARTScore: {len(tokenized.special_token_texts)} distinct text(s) contain special-token strings "
                    f"(such as {self.family.special_token_in(example)!r} in {example[:60]!r}), which the tokenizer "
                    f"reads as special tokens, as the original BARTScore does; a target made of them can score "
                    f"unrealistically well"
                ),
                stacklevel=4,
            )

    @abstractmethod
    def _score_share(
        self,
        plan: Plan,
        share: Mapping[int, Sequence[int]],
        conditions: Sequence[str],
        targets: Sequence[str],
        *,
        batch_size: int | None,
        max_tokens: int,
        show_progress: bool,
        keep_tokens: bool,
        progress: Callable[[int], object] | None = None,
    ) -> PairResults:
        """The log-probabilities of the pairs of `share` (condition -> its pairs), the bar (or `progress`) advancing
        by the pairs scored. Returns pair -> (log-prob sum, token log-probs or None). conditions and targets: the
        call's texts, which messages name."""

    @abstractmethod
    def on_each_call(self, hook: Callable[[], object]) -> None:
        """Calls `hook` before each call of the model (a batch of the local model's modules, a request to a server),
        in the thread that makes it: a hook that raises stops the computation there (the Space's cancel)."""

    def process_group(self) -> ProcessGroup | None:
        """The torch.distributed process group a call's work is split across, or None (none, or distributed=False)."""
        return process_group(self.options.distributed)


def resolved_options(options: EngineOptions) -> tuple[EngineOptions, str | None]:
    """The options with the device (checked), the checkpoint (from a configuration name) and max_tokens resolved,
    and the state dict a configuration loads over its checkpoint (None: none). Sets torch's threads when asked
    (process-wide, and only when asked: else the caller's setting stands)."""
    if options.threads is not None:
        torch.set_num_threads(options.threads)
    device = checked_device(options.device)
    checkpoint, para_weights = resolve_checkpoint(options.checkpoint)
    resolved = options.replace(
        device=str(device),
        checkpoint=checkpoint,
        max_tokens=options.max_tokens or (DEFAULT_CPU_MAX_TOKENS if device.type == "cpu" else DEFAULT_MAX_TOKENS),
    )
    return resolved, para_weights


def checked_device(device: str | torch.device | None) -> torch.device:
    """A torch.device for a device name EngineOptions checked (None: CUDA when available), refused when absent."""
    if device is None:
        return torch.device(default_device())
    checked = torch.device(device)
    if checked.type == "cuda":
        if not torch.cuda.is_available():
            raise _absent_device(
                device,
                "this torch build sees no CUDA device",
                remedy=["ask for ", Mention("device", "cpu"), ", or leave it out to use CUDA only where there is one"],
            )
        if checked.index is not None and checked.index >= torch.cuda.device_count():
            raise _absent_device(device, f"this machine has {torch.cuda.device_count()} CUDA device(s)")
    elif checked.type == "mps" and not torch.backends.mps.is_available():
        raise _absent_device(device, "this machine has no MPS device")
    return checked


def _absent_device(device: str | torch.device, lacking: str, **fields: Any) -> InputError:
    """A device asked for that is not here: "device '<device>' was asked for, but <lacking>"."""
    return InputError(
        Mention("device"), f" {str(torch.device(device))!r} was asked for, but {lacking}", value=device, **fields
    )
