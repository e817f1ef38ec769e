"""The local engine: ``BARTScorer``, call-compatible with the original class, for every supported model family loaded
here (a model on an inference server has a scorer of its own: bart_score.models.served.scorer).

A call is planned as every scorer's (bart_score.scoring._plan: distinct texts tokenized once, identical pairs scored
once, pairs grouped by condition); here each distinct condition goes through the model once (a seq2seq encoder with
its cross-attention keys and values, or a causal LM's prefix cache), and batches are length-sorted and filled up to a
token budget. The model families (bart_score.models) say what is tokenized how and run the model's own modules; this
module does the batching, out-of-memory retries and the log-probabilities."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

import torch

from ..errors import CheckpointLoadError, CheckpointNotFoundError, InputError, ScoringError, UnsupportedModelError
from ..inputs import describe
from ..messages import Mention
from ..models.base import IGNORED, Target
from ..models.checkpoints import Checkpoint, locate_checkpoint, stored_weights_are_finite, weights_identity
from ..models.loading import load_family
from ..models.served._transport import names_a_server
from ..models.served.scorer import ServedScorer
from ..options import EngineOptions
from ..variants import ORIGINAL_PARA_WEIGHTS, PARA_WEIGHTS_ENV
from ._plan import PairResults, Plan, PlannedScorer, resolved_options
from ._progress import progress_bar

# Target log-probabilities are read from the logits of at most _LOGIT_POSITIONS positions at a time, made a block of
# the vocabulary at a time: on a CPU a block of at most 1M logits (4 MB in float32), which is reduced while the CPU's
# cache still holds it, and on an accelerator at most 32M (128 MB), the whole vocabulary of the usual models.
_LOGIT_POSITIONS = 512
_BLOCK_LOGITS = {"cpu": 1 << 20}
_ACCELERATOR_BLOCK_LOGITS = 1 << 25
# Conditions are run max_tokens / CONDITION_BUDGET_SHARE padded tokens at a time (see _score_share). Half the budget
# lets a decoder batch hold the targets of many short conditions (a long source's windows hold a sentence or two):
# an eighth ran bench_long_documents.py's windows 6 at a time and its model side about twice as slowly.
CONDITION_BUDGET_SHARE = 2

Item = TypeVar("Item")


def _overflow_error(dtype: str, message: str) -> InputError:
    """The error of a model whose values overflow the 16-bit `dtype` it runs in: about dtype, which float32 mends."""
    return InputError(message, option="dtype", value=dtype, remedy=["use ", Mention("dtype", "float32")])


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


class BARTScorer(PlannedScorer):
    """The BARTScore engine, call-compatible with the original ``BARTScorer``, for every supported model family.

    ``score(srcs, tgts)`` gives, for each pair, the mean log-probability the model assigns to the target's tokens given
    the source. With BART: -(sum of token NLL) / (number of target tokens, ``<s>`` and ``</s>`` included), both texts
    truncated to ``max_length`` tokens, exactly as the original. Other families follow their token policy
    (docs/models.md). Errors raise; nothing ends the process.

    The settings (checkpoint, device, max_length, dtype, max_tokens, the distributed run, a causal LM's template or
    chat options, ...) are EngineOptions' fields, each documented there (bart_score.options), and ``scorer.options``
    holds them as resolved (see bart_score.scoring._plan.PlannedScorer). A checkpoint that names an inference server
    ("vllm+http://127.0.0.1:8000/v1") gives that server's scorer (ServedScorer) instead."""

    def __new__(cls, *args: Any, **keywords: Any) -> Any:
        """The scorer the settings ask for: this engine, or a served model's scorer for a checkpoint that names a
        server (typed Any: a ServedScorer is a PlannedScorer, not a BARTScorer)."""
        if args or keywords:  # else copy.copy's or pickle's call, or the default checkpoint: this engine
            options = _engine_options(args, keywords)
            if names_a_server(options.checkpoint):
                return ServedScorer(options)
        return super().__new__(cls)

    def __init__(self, *args: Any, **keywords: Any) -> None:
        """BARTScorer(options) with an EngineOptions, or BARTScorer(*settings, **settings) with its fields, as the
        original's call BARTScorer(device, max_length, checkpoint) (checked there, before any model is touched)."""
        options, para_weights = resolved_options(_engine_options(args, keywords))
        located = locate_checkpoint(options.checkpoint)
        family = load_family(located, options)
        self.model = family.model
        super().__init__(options, family, located.label, located.identity())
        self.model.to(device=self.device)
        self._check_weights_are_numbers(located)
        self._check_family()
        if para_weights:
            self.load(para_weights)

    @property
    def numbers_field(self) -> str:
        return f"dtype:{self.options.dtype}"

    def on_each_call(self, hook: Callable[[], object]) -> None:
        for module in self.model.modules():
            module.register_forward_pre_hook(lambda *_: hook())

    def _check_family(self) -> None:
        """Scores a probe pair both the engine's way (condition run once, cached, output layer applied apart) and by
        the model's own forward pass, and refuses a model on which they differ: a family member whose architecture
        does something the engine does not (logit soft-capping or scaling, an attention that ignores the cache).
        Log-probabilities that are not finite in the model's own forward pass come from its weights, not from the
        engine: the checkpoint is damaged (or, in a 16-bit dtype, its values overflow it)."""
        probe = (["The cat sat on the mat."], ["A cat sat."], [self.options.source_lang])
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
        tolerance = (1e-3 if self.options.dtype == "float32" else 0.25) * max(1.0, size / 10)
        difference = float((engine - model).abs().max()) if len(model) else 0.0
        if not difference <= tolerance:
            raise UnsupportedModelError(
                f"{self.options.checkpoint!r} ({self.model.config.model_type}) gives different log-probabilities "
                f"through the engine's cached computation than through its own forward pass (by {difference:.3g}); "
                f"its architecture does something the {self.family.name} family does not support"
            )

    def _check_weights_are_numbers(self, located: Checkpoint) -> None:
        """Refuses a model with a NaN or infinite weight, which some attention kernels turn into finite but meaningless
        scores rather than NaN. A minimum and maximum per tensor, so that no copy of a weight is made. An infinite
        weight in a 16-bit dtype is the checkpoint's damage only when its files hold a value that is not finite: a
        finite value beyond the dtype's range (65,504 in float16) becomes infinite when it is converted."""
        for name, value in self.model.named_parameters():
            if value.numel() and not all(bool(extreme.isfinite()) for extreme in torch.aminmax(value.detach())):
                if (
                    self.options.dtype != "float32"
                    and not bool(value.isnan().any())
                    and stored_weights_are_finite(located)
                ):
                    raise _overflow_error(
                        self.options.dtype,
                        f"the weights of {self.model_label!r} are finite, but {name} holds values beyond the range "
                        f"of {self.options.dtype}, which become infinite in it",
                    )
                raise CheckpointLoadError(
                    f"the weights of {self.model_label!r} give non-finite log-probabilities (NaN/inf): {name} holds "
                    f"NaN or inf values, so the checkpoint is damaged"
                )

    def _refuse_non_finite(self) -> NoReturn:
        """The error for a model whose own forward pass gives NaN or infinite log-probabilities from finite weights:
        values that overflow the dtype (a 16-bit one), or weights so large that they are damage all the same."""
        if self.options.dtype != "float32":
            raise _overflow_error(
                self.options.dtype,
                f"{self.model_label!r} gives non-finite log-probabilities (NaN/inf) in {self.options.dtype}, although "
                f"its weights are finite: its values overflow that dtype",
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
            raise InputError(f"{path!r} does not fit the {self.options.checkpoint!r} model: {error}") from None
        self.weights = path
        self._weights_identity = weights_identity(path)
        return self

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
        """log p(label) at each position: the label's logit less the log-sum-exp of the position's logits, in float32
        whatever the model's dtype. The logits are made a slice of positions and a block of the vocabulary at a time,
        laid out vocabulary x positions (that product runs about 40% faster on CPUs than positions x vocabulary:
        bench/bench_engine.py --breakdown), and each block is reduced to its log-sum-exp at once, into a reused buffer:
        a slice's whole distribution never goes through memory, whose passes added about 15% to the product's CPU
        time at bart-base dimensions (issue 45). The label's logit is its own dot product, rounded to the model's dtype
        as the product's output is."""
        weight, bias, scale = self.family.output_layer()
        if scale != 1.0:
            states = states * scale
        if not len(labels):
            return torch.zeros(0, device=states.device)
        chosen = (weight[labels].float() * states.float()).sum(dim=1)
        if bias is not None:
            chosen += bias[labels].float()
        vocabulary = weight.shape[0]
        step = min(_LOGIT_POSITIONS, len(labels))
        budget = _BLOCK_LOGITS.get(states.device.type, _ACCELERATOR_BLOCK_LOGITS)
        rows = max(1, min(vocabulary, budget // step))
        product = torch.empty(rows * step, dtype=states.dtype, device=states.device)
        logits = product if states.dtype == torch.float32 else torch.empty_like(product, dtype=torch.float32)
        blocks = range(0, vocabulary, rows)
        normalisers = []
        for start in range(0, len(labels), step):
            positions = states[start : start + step].t()
            block_sums = torch.empty((len(blocks), positions.shape[1]), device=states.device)
            for sums, first in zip(block_sums, blocks):
                block = weight[first : first + rows]
                size = (len(block), positions.shape[1])
                out = product[: size[0] * size[1]].view(size)
                if bias is None:
                    torch.mm(block, positions, out=out)
                else:
                    torch.addmm(bias[first : first + rows, None], block, positions, out=out)
                widened = logits[: out.numel()].view(size)
                if widened is not out:
                    widened.copy_(out)
                # A block whose logits are all -inf (tokens a bias forbids) sums to 0, not NaN.
                top = widened.amax(dim=0).clamp_(min=torch.finfo(torch.float32).min)
                torch.sum(widened.sub_(top).exp_(), dim=0, out=sums)
                sums.log_().add_(top)
            normalisers.append(torch.logsumexp(block_sums, dim=0))
        return chosen.to(states.dtype).float() - torch.cat(normalisers)


def _engine_options(args: tuple[Any, ...], keywords: dict[str, Any]) -> EngineOptions:
    """BARTScorer's arguments as EngineOptions (see BARTScorer.__init__)."""
    if args and isinstance(args[0], EngineOptions):
        return EngineOptions.resolve(*args, **keywords)
    return EngineOptions(*args, **keywords)


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
