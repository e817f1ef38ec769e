"""The scoring engine: ``BARTScorer``, call-compatible with the original class, for every supported model family.

Each call is planned before the model is touched (as bert_score does): every distinct text is tokenized once,
identical (condition, target) pairs are scored once, pairs are grouped by condition so that each distinct condition
goes through the model once (a seq2seq encoder with its cross-attention keys and values, or a causal LM's prefix
cache), and batches are length-sorted and filled up to a token budget. The model families (bart_score.models) say
what is tokenized how and run the model's own modules; this module does the planning, batching, out-of-memory
retries and the log-probabilities. A model on an inference server (bart_score.models.served.model) is planned the same
way, under the same token policy, and its planned pairs go to the server in place of the batches."""

from __future__ import annotations

import copy
import logging
import os
import pickle
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NoReturn, TypeVar, cast

import numpy as np
import torch
import transformers

from ..errors import (
    CheckpointLoadError,
    CheckpointNotFoundError,
    InputError,
    ScoringError,
    TokenizationWarning,
    UnsupportedModelError,
)
from ..inputs import describe, optional_positive_int, reference_lists, text_list
from ..messages import Mention
from ..models.base import IGNORED, Target, Tokenized
from ..models.checkpoints import Checkpoint, locate_checkpoint, stored_weights_are_finite, weights_identity
from ..models.loading import load_family, resolve_checkpoint
from ..models.served.model import ServedModel
from ..options import AGGREGATIONS, EngineOptions, ScoringOptions, instruction_list
from ..scaling.distributed import ProcessGroup, default_device, process_group
from ..variants import (
    DEFAULT_CPU_MAX_TOKENS,
    DEFAULT_MAX_LENGTH,
    DEFAULT_MAX_TOKENS,
    ORIGINAL_PARA_WEIGHTS,
    PARA_WEIGHTS_ENV,
)
from ..version import __version__
from . import directions
from .progress import progress_bar

logger = logging.getLogger("bart_score")

# What a model whose values overflow a 16-bit dtype can do instead.
FLOAT32_REMEDY = ("use ", Mention("dtype", "float32"))
# Logits materialised at once when reading target log-probabilities: at most this many elements (128 MB in
# float32) and positions.
_LOGIT_ELEMENTS = 1 << 25
_LOGIT_POSITIONS = 512
# Conditions are run max_tokens / CONDITION_BUDGET_SHARE padded tokens at a time (see _score_share).
CONDITION_BUDGET_SHARE = 8

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


def token_batches(
    items: Iterable[Item], lengths: Callable[[Item], tuple[int, ...]], max_tokens: int, max_items: int | None
) -> Iterator[list[Item]]:
    """Greedy split of length-sorted items into batches whose padded size, rows x sum of the longest length of each
    part (target and condition for the decoder), stays within max_tokens. An item over budget gets a batch alone."""
    batch: list[Item] = []
    longest: tuple[int, ...] = ()
    for item in items:
        item_lengths = lengths(item)
        grown = tuple(map(max, longest, item_lengths)) if batch else item_lengths
        if batch and ((len(batch) + 1) * sum(grown) > max_tokens or len(batch) == max_items):
            yield batch
            batch, grown = [], item_lengths
        batch.append(item)
        longest = grown
    if batch:
        yield batch


class _DoesNotFit(RuntimeError):
    pass


class BARTScorer:
    """The BARTScore engine, call-compatible with the original ``BARTScorer``, for every supported model family.

    ``score(srcs, tgts)`` gives, for each pair, the mean log-probability the model assigns to the target's tokens given
    the source. With BART: -(sum of token NLL) / (number of target tokens, ``<s>`` and ``</s>`` included), both texts
    truncated to ``max_length`` tokens, exactly as the original. Other families follow their token policy
    (docs/models.md). Errors raise; nothing ends the process.

    The settings (checkpoint, device, max_length, dtype, max_tokens, the distributed run, a causal LM's template or
    chat options, ...) are EngineOptions' fields, each documented there (bart_score.options). ``scorer.options`` holds
    them, the values the engine resolved included (the device, max_tokens and max_length it chose, the checkpoint as
    resolved from a configuration name), and is the only holder of them: ``scorer.device``, ``scorer.max_length``,
    ``scorer.checkpoint``, ... read it."""

    def __init__(self, *args: Any, **keywords: Any) -> None:
        """BARTScorer(options) with an EngineOptions, or BARTScorer(*settings, **settings) with its fields, as the
        original's call BARTScorer(device, max_length, checkpoint) (checked there, before any model is touched)."""
        if args and isinstance(args[0], EngineOptions):
            options = EngineOptions.resolve(*args, **keywords)
        else:
            options = EngineOptions(*args, **keywords)
        if options.threads is not None:  # process-wide, and only when asked: else the caller's setting stands
            torch.set_num_threads(options.threads)
        device = _checked_device(options.device)
        checkpoint, para_weights = resolve_checkpoint(options.checkpoint)
        self.options = options.replace(
            device=str(device),
            checkpoint=checkpoint,
            max_tokens=options.max_tokens or (DEFAULT_CPU_MAX_TOKENS if device.type == "cpu" else DEFAULT_MAX_TOKENS),
        )
        located = locate_checkpoint(checkpoint)
        self.family = load_family(located, options)
        self.tokenizer, self.model = self.family.tokenizer, self.family.model
        # A served model is named and keyed by what its server reports, and its numbers are the server's.
        self.served = self.model if isinstance(self.model, ServedModel) else None
        self._checkpoint_label = located.label if self.served is None else self.served.server.label
        self._checkpoint_identity = located.identity() if self.served is None else self.served.identity
        self._weights_identity: str | None = None
        self.options = self.options.replace(max_length=self._fitting_max_length(options.max_length))
        self.weights: str | None = None
        if self.served is None:
            self.model.to(device=device)
            self._check_weights_are_numbers(located)
            self._check_family()
        if para_weights:
            self.load(para_weights)

    def _fitting_max_length(self, max_length: int | None) -> int:
        """max_length (checked by EngineOptions) within the model's positions; None: 1024, or the positions if fewer."""
        positions = self.family.max_positions
        if max_length is None:
            return min(DEFAULT_MAX_LENGTH, positions or DEFAULT_MAX_LENGTH)
        if positions is not None and max_length > positions:
            raise InputError(
                Mention("max_length"),
                f" must be an integer from 2 to {positions} (the model's positions), got {max_length}",
                option="max_length",
                value=max_length,
            )
        return max_length

    # The settings, read from the options (the only holder of them).

    @property
    def device(self) -> torch.device:
        return torch.device(self.options.device)  # type: ignore[arg-type]  # resolved: a device name

    @property
    def max_length(self) -> int:
        return self.options.max_length  # type: ignore[return-value]  # resolved: an int

    @property
    def max_tokens(self) -> int:
        return self.options.max_tokens  # type: ignore[return-value]  # resolved: an int

    @property
    def dtype(self) -> str:
        return self.options.dtype

    @property
    def checkpoint(self) -> str:
        """The checkpoint as resolved from a configuration name ("cnn" is facebook/bart-large-cnn)."""
        return self.options.checkpoint

    @property
    def distributed(self) -> bool:
        return self.options.distributed

    @property
    def results_on(self) -> str:
        return self.options.results_on

    def _check_family(self) -> None:
        """Scores a probe pair both the engine's way (condition run once, cached, output layer applied apart) and by
        the model's own forward pass, and refuses a model on which they differ: a family member whose architecture
        does something the engine does not (logit soft-capping or scaling, an attention that ignores the cache).
        Log-probabilities that are not finite in the model's own forward pass come from its weights, not from the
        engine: the checkpoint is damaged (or, in a 16-bit dtype, its values overflow it)."""
        probe = (["The cat sat on the mat."], ["A cat sat."], [self.source_lang])
        tokenized = self.family.tokenize(*probe, self.max_length)
        condition, target = tokenized.conditions[0], tokenized.targets[0]
        with torch.inference_mode():
            engine = self._decode(self._encode([condition]), [0], [target])[0]
            logits = self.family.full_logits(condition, target).float()
        labels = torch.tensor(target.labels, device=logits.device)
        scored = labels != IGNORED
        model = torch.log_softmax(logits[scored], dim=-1).gather(1, labels[scored][:, None]).squeeze(1).cpu()
        if self.family.written_pad_scores_zero:
            model[labels[scored].cpu() == self.family.pad_id] = 0.0
        if not bool(torch.isfinite(model).all()):
            self._refuse_non_finite()
        # Rounding grows with the log-probabilities' size: the tolerance grows with them beyond 10 nats (a typical
        # size), so that a model with extreme but finite weights is not taken for an architecture the engine lacks.
        size = float(model.abs().max()) if len(model) else 0.0
        tolerance = (1e-3 if self.dtype == "float32" else 0.25) * max(1.0, size / 10)
        difference = float((engine - model).abs().max()) if len(model) else 0.0
        if not difference <= tolerance:
            raise UnsupportedModelError(
                f"{self.checkpoint!r} ({self.model.config.model_type}) gives different log-probabilities through the "
                f"engine's cached computation than through its own forward pass (by {difference:.3g}); its "
                f"architecture does something the {self.family.name} family does not support"
            )

    def _check_weights_are_numbers(self, located: Checkpoint) -> None:
        """Refuses a model with a NaN or infinite weight, which some attention kernels turn into finite but meaningless
        scores rather than NaN. A minimum and maximum per tensor, so that no copy of a weight is made. An infinite
        weight in a 16-bit dtype is the checkpoint's damage only when its files hold a value that is not finite: a
        finite value beyond the dtype's range (65,504 in float16) becomes infinite when it is converted."""
        for name, value in self.model.named_parameters():
            if value.numel() and not all(bool(extreme.isfinite()) for extreme in torch.aminmax(value.detach())):
                if self.dtype != "float32" and not bool(value.isnan().any()) and stored_weights_are_finite(located):
                    raise InputError(
                        f"the weights of {self.model_label!r} are finite, but {name} holds values beyond the range "
                        f"of {self.dtype}, which become infinite in it",
                        option="dtype",
                        value=self.dtype,
                        remedy=FLOAT32_REMEDY,
                    )
                raise CheckpointLoadError(
                    f"the weights of {self.model_label!r} give non-finite log-probabilities (NaN/inf): {name} holds "
                    f"NaN or inf values, so the checkpoint is damaged"
                )

    def _refuse_non_finite(self) -> NoReturn:
        """The error for a model whose own forward pass gives NaN or infinite log-probabilities from finite weights:
        values that overflow the dtype (a 16-bit one), or weights so large that they are damage all the same."""
        if self.dtype != "float32":
            raise InputError(
                f"{self.model_label!r} gives non-finite log-probabilities (NaN/inf) in {self.dtype}, although its "
                f"weights are finite: its values overflow that dtype",
                option="dtype",
                value=self.dtype,
                remedy=FLOAT32_REMEDY,
            )
        raise CheckpointLoadError(
            f"the weights of {self.model_label!r} give non-finite log-probabilities (NaN/inf): the checkpoint is "
            f"damaged"
        )

    # -- loading --------------------------------------------------------------------------------------------------

    def load(self, path: str | None = None) -> BARTScorer:
        """Loads a state dict (such as the paraphrase-tuned ``bart.pth``) over the checkpoint's weights.

        Without a path: ``$BARTSCORE_PARA_WEIGHTS``, else ``models/bart.pth`` as in the original code."""
        path = path or os.environ.get(PARA_WEIGHTS_ENV) or ORIGINAL_PARA_WEIGHTS
        if not os.path.isfile(path):
            raise CheckpointNotFoundError(
                f"No state dict at {path!r}",
                remedy=f"the paraphrase-tuned weights (bart.pth) come from the BARTScore release "
                f"(https://github.com/neulab/BARTScore); pass their path or set {PARA_WEIGHTS_ENV}",
            )
        state = _read_state_dict(path, self.device)
        try:
            self.model.load_state_dict(state)
        except RuntimeError as error:
            raise InputError(f"{path!r} does not fit the {self.checkpoint!r} model: {error}") from None
        self.weights = path
        self._weights_identity = weights_identity(path)
        return self

    def with_max_length(self, max_length: int) -> BARTScorer:
        """This engine with the same model (shared, not loaded again) truncating texts at another max_length, up to
        the model's positions: e.g. a causal LM given whole long sources as its prefix."""
        options = self.options.replace(max_length=max_length)
        engine = copy.copy(self)
        engine.options = options.replace(max_length=self._fitting_max_length(options.max_length))
        return engine

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
    def instructions(self) -> dict[str, str] | None:
        """Chat scoring: the instruction of each direction (faithfulness, precision, recall); else None."""
        return self.family.instructions

    @property
    def token_policy(self) -> str:
        """Which tokens are scored and what the decoder starts from, in a few characters (docs/models.md)."""
        return self.family.policy

    def signature_fields(self) -> list[str]:
        """The signature's fields that describe this engine rather than one call's options."""
        return [
            f"policy:{self.token_policy}",
            f"maxlen:{self.max_length}",
            f"dtype:{self.dtype}" if self.served is None else self.served.signature_field,
            f"transformers:{transformers.__version__}",
            f"version:{__version__}",
        ]

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
            raise InputError(Mention("agg"), f" must be one of {AGGREGATIONS}, got {agg!r}", option="agg", value=agg)
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
        return None if flat is None else directions.aggregate(np.asarray(flat), counts, agg).tolist()

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
        ``bart_score.scoring.directions``."""
        return directions.score_directions(self, predictions, references, sources, options, **keywords)

    @property
    def source_lang(self) -> str | None:
        return self.family.source_lang

    @property
    def target_lang(self) -> str | None:
        return self.family.target_lang

    # -- the planned computation ----------------------------------------------------------------------------------

    def _condition_languages(self, condition_lang: str | Sequence[str] | None, count: int) -> list[str | None]:
        """The language code of each condition (None for families without language codes)."""
        if self.source_lang is None:
            if condition_lang is not None:
                raise InputError(
                    Mention("condition_lang"),
                    f" is for families with language codes (mBART); this is a {self.family.name} model",
                    option="condition_lang",
                    value=condition_lang,
                )
            return [None] * count
        languages: list[str | None]
        if condition_lang is None or isinstance(condition_lang, str):
            languages = [condition_lang or self.source_lang] * count
        else:
            languages = list(text_list(condition_lang, "condition_lang", count, counted_by="srcs"))
        for index, language in enumerate(languages):
            if language not in self.family.language_codes:
                where = None if isinstance(condition_lang, str) else index
                raise InputError(
                    Mention("condition_lang", language, index=where),
                    f" is not one of this tokenizer's language codes: {', '.join(self.family.language_codes)}",
                    option="condition_lang",
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
            raise InputError(
                Mention("srcs"),
                f" has {len(conditions)} entries but ",
                Mention("tgts"),
                f" has {len(targets)}",
                option="srcs",
                value=srcs,
            )
        batch_size = optional_positive_int(batch_size, "batch_size")
        token_budget = optional_positive_int(max_tokens, "max_tokens") or self.max_tokens
        languages = self._condition_languages(condition_lang, len(conditions))
        instructions = instruction_list(instruction, len(conditions), self.family.settings)
        group = process_group(self.distributed)
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
            results = group.gather(results, self.results_on, self.device)
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
        languages = languages or [self.source_lang] * len(conditions)
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
        """Scores the pairs of `share` (condition -> its pairs): conditions run in length-sorted batches, then their
        targets in length-sorted batches; after each target batch, the bar (or `progress`) advances by its pairs.
        Returns pair -> (log-prob sum, token log-probs or None)."""
        if self.served is not None:
            return self._score_through_server(
                plan, share, show_progress=show_progress, keep_tokens=keep_tokens, progress=progress
            )
        results: PairResults = {}
        with (
            torch.inference_mode(),
            progress_bar(sum(map(len, share.values())), enabled=show_progress and progress is None) as bar,
        ):
            advance = progress or bar.update

            def pair_lengths(pair: int) -> tuple[int, ...]:
                condition, target = plan.pairs[pair]
                return plan.target_length(target), plan.condition_length(condition)

            def score_conditions(group: list[int]) -> None:
                encoded = self._encode([plan.conditions[c] for c in group])
                row_of = {condition: row for row, condition in enumerate(group)}
                pairs = sorted(
                    (p for c in group for p in share[c] if p not in results),  # a retry skips done ones
                    key=pair_lengths,
                    reverse=True,
                )

                def score_batch(batch: list[int]) -> None:
                    rows = [row_of[plan.pairs[p][0]] for p in batch]
                    per_pair = self._decode(encoded, rows, [plan.targets[plan.pairs[p][1]] for p in batch])
                    for pair, log_probs in zip(batch, per_pair):
                        results[pair] = (float(log_probs.sum()), log_probs if keep_tokens else None)
                    advance(len(batch))

                def decoder_too_big(pair: int) -> None:
                    if len(group) > 1:
                        raise _DoesNotFit  # retry with fewer conditions held in memory
                    self._fail_alone(plan, pair, conditions, targets)

                for batch in token_batches(pairs, pair_lengths, max_tokens, batch_size):
                    self._halving_on_oom(batch, score_batch, decoder_too_big)

            def encoder_too_big(condition: int) -> None:
                self._fail_alone(plan, share[condition][0], conditions, targets)

            # A group's conditions keep every layer's keys and values (2 x layers x width per padded token) until
            # their targets are scored, so groups get a fraction of the budget that each decoder batch gets.
            group_tokens = max(1, max_tokens // CONDITION_BUDGET_SHARE)
            by_length = sorted(share, key=plan.condition_length, reverse=True)
            for group in token_batches(by_length, lambda c: (plan.condition_length(c),), group_tokens, batch_size):
                self._halving_on_oom(group, score_conditions, encoder_too_big)
        return results

    def _score_through_server(
        self,
        plan: Plan,
        share: Mapping[int, Sequence[int]],
        *,
        show_progress: bool,
        keep_tokens: bool,
        progress: Callable[[int], object] | None,
    ) -> PairResults:
        """_score_share for a served model: each condition of `share` with its distinct targets, sent to the server
        (bart_score.models.served.model), the bar (or `progress`) advancing as its answers come. A pair is named in
        messages by its first place among the call's pairs."""
        assert self.served is not None  # _score_share's case
        first_place: dict[int, int] = {}
        for index, pair in enumerate(plan.pair_of_input):
            first_place.setdefault(pair, index)
        conditions = list(share)
        work = [
            (plan.conditions[c], [(first_place[p], plan.targets[plan.pairs[p][1]]) for p in share[c]])
            for c in conditions
        ]
        with progress_bar(sum(map(len, share.values())), enabled=show_progress and progress is None) as bar:
            scored = self.served.score(work, progress or bar.update)
        results: PairResults = {}
        for condition, log_probs_of in zip(conditions, scored):
            for pair, log_probs in zip(share[condition], log_probs_of):
                results[pair] = (float(log_probs.sum()), log_probs if keep_tokens else None)
        return results

    def process_group(self) -> ProcessGroup | None:
        """The torch.distributed process group a call's work is split across, or None (none, or distributed=False)."""
        return process_group(self.distributed)

    def _halving_on_oom(
        self, items: list[Item], run: Callable[[list[Item]], None], on_single_item: Callable[[Item], None]
    ) -> None:
        """Runs a batch; when the accelerator runs out of memory, splits it in halves and retries each half."""
        try:
            run(items)
            return
        except (torch.OutOfMemoryError, _DoesNotFit):
            pass  # retried below: the failed attempt's tensors are only freed once its exception is gone
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        if len(items) == 1:
            on_single_item(items[0])
            return
        middle = len(items) // 2
        self._halving_on_oom(items[:middle], run, on_single_item)
        self._halving_on_oom(items[middle:], run, on_single_item)

    def _fail_alone(self, plan: Plan, pair: int, conditions: Sequence[str], targets: Sequence[str]) -> NoReturn:
        condition, target = plan.pairs[pair]
        index = plan.pair_of_input.index(pair)
        raise ScoringError(
            f"pair {index} (a source of {plan.condition_length(condition)} tokens and a target of "
            f"{plan.target_length(target)} tokens) does not fit in {self.device} memory even alone",
            remedy=["lower ", Mention("max_length"), " or use a larger ", Mention("device")],
        )

    def _encode(self, sequences: Sequence[Sequence[int]]) -> object:
        """Runs a batch of conditions once (the family's encoder, or prefix) for all their targets."""
        return self.family.encode(sequences)

    def _decode(self, encoded: object, rows: Sequence[int], targets: Sequence[Target]) -> tuple[torch.Tensor, ...]:
        """Log-probabilities of each target's scored tokens given its encoded condition (row), one tensor each."""
        states = self.family.decode(encoded, rows, targets)
        labels = torch.tensor([label for target in targets for label in target.labels], device=self.device)
        scored = labels != IGNORED
        labels = labels[scored]
        log_probs = self._target_log_probs(states[scored], labels)
        if self.family.written_pad_scores_zero:
            # The original's NLL loss ignores the pad id, so a <pad> written in the target adds 0 but is counted.
            log_probs[labels == self.family.pad_id] = 0.0
        return torch.split(log_probs.cpu(), [len(target.scored_ids) for target in targets])

    def _target_log_probs(self, states: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """log p(label) at each position, from the logits of a slice of positions at a time, written into reused
        buffers and normalised in place: never a whole batch's vocabulary distribution, no allocation per slice, and
        the log-softmax in float32 whatever the model's dtype (bfloat16/float16 logits land in a buffer of their own
        and are widened into the float32 one). The logits are laid out vocabulary x positions, with at most 512
        positions a slice: that matrix product runs about 40% faster on CPUs than positions x vocabulary
        (bench/bench_engine.py --breakdown)."""
        weight, bias, scale = self.family.output_layer()
        if scale != 1.0:
            states = states * scale
        vocabulary = weight.shape[0]
        step = max(1, min(_LOGIT_POSITIONS, _LOGIT_ELEMENTS // vocabulary))
        size = vocabulary * min(step, len(labels))
        buffer = torch.empty(size, dtype=torch.float32, device=states.device)
        narrow = (
            buffer if states.dtype == torch.float32 else torch.empty(size, dtype=states.dtype, device=states.device)
        )
        bias = None if bias is None else bias[:, None]
        pieces = []
        for start in range(0, len(labels), step):
            rows = states[start : start + step]
            logits = buffer[: vocabulary * len(rows)].view(vocabulary, len(rows))
            product = narrow[: vocabulary * len(rows)].view(vocabulary, len(rows))
            if bias is None:
                torch.mm(weight, rows.t(), out=product)
            else:
                torch.addmm(bias, weight, rows.t(), out=product)
            if narrow is not buffer:
                logits.copy_(product)
            chosen = logits.gather(0, labels[None, start : start + step]).squeeze(0)
            top = logits.amax(dim=0, keepdim=True)
            normaliser = logits.sub_(top).exp_().sum(dim=0).log_() + top.squeeze(0)
            pieces.append(chosen - normaliser)
        return torch.cat(pieces) if pieces else torch.zeros(0, device=states.device)


def _checked_device(device: str | torch.device | None) -> torch.device:
    """A torch.device for a device name EngineOptions checked (None: CUDA when available), refused when absent."""
    if device is None:
        return torch.device(default_device())
    checked = torch.device(device)
    if checked.type == "cuda":
        if not torch.cuda.is_available():
            raise InputError(
                Mention("device"),
                f" {str(checked)!r} was asked for, but this torch build sees no CUDA device",
                option="device",
                value=device,
                remedy=[
                    "ask for ",
                    Mention("device", "cpu"),
                    " instead (or leave ",
                    Mention("device"),
                    " out to use CUDA only when it is there)",
                ],
            )
        if checked.index is not None and checked.index >= torch.cuda.device_count():
            raise InputError(
                Mention("device"),
                f" {str(checked)!r} was asked for, but this machine has {torch.cuda.device_count()} CUDA device(s)",
                option="device",
                value=device,
            )
    elif checked.type == "mps" and not torch.backends.mps.is_available():
        raise InputError(
            Mention("device"), " 'mps' was asked for, but this machine has no MPS device", option="device", value=device
        )
    return checked


def _read_state_dict(path: str, device: Any) -> Mapping:
    """The state dict saved in `path` (torch.save of a mapping from parameter names to tensors), read with
    weights_only=True: nothing in the file that is not tensors and plain data is ever unpickled. CheckpointLoadError
    names the file and what it holds instead. (torch's own message is not passed on: it advises weights_only=False,
    which would run whatever code the file names.)"""
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, TypeError, AttributeError) as error:
        raise CheckpointLoadError(
            f"{path!r} is not a state dict torch.load can read as weights only ({type(error).__name__}): expected a "
            f"file torch.save wrote from a model's state_dict(), holding tensors and plain data only"
        ) from None
    if not isinstance(state, Mapping):
        raise CheckpointLoadError(
            f"{path!r} holds {describe(state)}, not a state dict: expected a mapping from parameter names to tensors "
            f"(torch.save(model.state_dict(), path))"
        )
    wrong = next(((k, v) for k, v in state.items() if not isinstance(k, str) or not isinstance(v, torch.Tensor)), None)
    if wrong is not None:
        raise CheckpointLoadError(
            f"{path!r} is not a state dict: its entry {wrong[0]!r} holds {describe(wrong[1])}, where a state dict maps "
            f"parameter names to tensors"
        )
    return state
