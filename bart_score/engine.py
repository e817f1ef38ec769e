"""The scoring engine: ``BARTScorer``, call-compatible with the original class.

Each call is planned before the model is touched (as bert_score does): every distinct text is tokenized once,
identical (condition, target) pairs are scored once, pairs are grouped by condition so that each distinct condition
goes through the encoder once, and batches are length-sorted and filled up to a token budget."""

import logging
import os
import warnings
from dataclasses import dataclass

import numpy as np
import torch
import transformers
from tqdm.auto import tqdm
from transformers.cache_utils import DynamicCache, EncoderDecoderCache

from . import __version__, directions
from .distributed import default_device, process_group
from .inputs import optional_positive_int, reference_lists, text_list
from .models import CheckpointNotFoundError, load_checkpoint, resolve_checkpoint
from .variants import DEFAULT_CHECKPOINT, DEFAULT_MAX_TOKENS, DTYPE_NAMES, ORIGINAL_PARA_WEIGHTS, PARA_WEIGHTS_ENV

logger = logging.getLogger("bart_score")

DTYPES = {name: getattr(torch, name) for name in DTYPE_NAMES}
# Logits materialised at once when reading target log-probabilities: at most this many elements (128 MB in
# float32) and positions.
_LOGIT_ELEMENTS = 1 << 25
_LOGIT_POSITIONS = 512


class Plan:
    """One pass over a call's pairs before any model work: each distinct text is tokenized once, identical
    (condition, target) pairs are scored once, and pairs are grouped by conditioning text so that each distinct
    condition goes through the encoder once."""

    def __init__(self, tokenize, conditions, targets):
        text_index = {}
        condition_ids = [text_index.setdefault(text, len(text_index)) for text in conditions]
        target_ids = [text_index.setdefault(text, len(text_index)) for text in targets]
        self.texts = list(text_index)
        self.tokens, too_long = tokenize(self.texts)
        pair_index = {}
        self.pair_of_input = [pair_index.setdefault(pair, len(pair_index)) for pair in zip(condition_ids, target_ids)]
        self.pairs = list(pair_index)
        self.pairs_by_condition = {}
        for pair, (condition, _) in enumerate(self.pairs):
            self.pairs_by_condition.setdefault(condition, []).append(pair)
        self.truncated_conditions = len(too_long.intersection(condition_ids))
        self.truncated_targets = len(too_long.intersection(target_ids))

    def length(self, text_id):
        return len(self.tokens[text_id])


def token_batches(items, lengths, max_tokens, max_items):
    """Greedy split of length-sorted items into batches whose padded size, rows x sum of the longest length of each
    part (target and condition for the decoder), stays within max_tokens. An item over budget gets a batch alone."""
    batch, longest = [], ()
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


class _UnkeptCache(DynamicCache):
    """A self-attention cache that keeps nothing: each target is decoded in one pass, so storing (concatenating) its
    keys and values would be wasted copies."""

    def update(self, key_states, value_states, layer_idx, *args, **kwargs):
        return key_states, value_states


@dataclass
class _EncodedConditions:
    hidden: torch.Tensor  # (conditions, length, d_model)
    mask: torch.Tensor  # (conditions, length)
    cross_keys_values: list  # per decoder layer: (keys, values), each (conditions, heads, length, head_dim)


class _DoesNotFit(RuntimeError):
    pass


class BARTScorer:
    """The BARTScore engine, call-compatible with the original ``BARTScorer``.

    ``score(srcs, tgts)`` gives, for each pair, the mean log-probability BART assigns to the target's tokens given the
    source: -(sum of token NLL) / (number of target tokens, ``<s>`` and ``</s>`` included), both texts truncated to
    ``max_length`` tokens, exactly as the original. Errors raise; nothing ends the process.

    checkpoint: a variant ("vanilla", "cnn", "cnn-para"), a Hub id, or a local directory of a BART checkpoint.
    device: "cuda", "cuda:1", "cpu", ...; default CUDA when available.
    dtype: "float32" (default, the original's numbers), or "bfloat16"/"float16" for speed on GPUs.
    max_tokens: padded tokens per model batch; lower it if memory is short (scores do not change).
    distributed: when a torch.distributed process group is initialised (torchrun, accelerate launch), every rank
        passes the same inputs and each scores a share of the work, balanced by tokens; False scores alone.
    results_on: "all" (every rank gets all scores) or "rank0" (other ranks get None).
    """

    def __init__(
        self,
        device=None,
        max_length=1024,
        checkpoint=DEFAULT_CHECKPOINT,
        dtype="float32",
        max_tokens=DEFAULT_MAX_TOKENS,
        distributed=True,
        results_on="all",
    ):
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {tuple(DTYPES)}, got {dtype!r}")
        if results_on not in ("all", "rank0"):
            raise ValueError(f"results_on must be 'all' or 'rank0', got {results_on!r}")
        self.max_tokens = optional_positive_int(max_tokens, "max_tokens") or DEFAULT_MAX_TOKENS
        self.distributed = distributed
        self.results_on = results_on
        self.device = torch.device(device if device is not None else default_device())
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(
                f"device {str(self.device)!r} was asked for, but this torch build sees no CUDA device; "
                f"pass device='cpu' (or leave device out to use CUDA only when it is there)"
            )
        self.dtype = dtype
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2:
            raise ValueError(f"max_length must be an integer of at least 2, got {max_length!r}")
        self.checkpoint, para_weights = resolve_checkpoint(checkpoint)
        self.tokenizer, self.model = load_checkpoint(self.checkpoint)
        positions = self.model.config.max_position_embeddings
        if max_length > positions:
            raise ValueError(
                f"max_length must be an integer from 2 to {positions} (the model's positions), got {max_length}"
            )
        self.max_length = max_length
        self.model.to(device=self.device, dtype=DTYPES[dtype])
        self.weights = None
        if para_weights:
            self.load(para_weights)

    # -- loading --------------------------------------------------------------------------------------------------

    def load(self, path=None):
        """Loads a state dict (such as the paraphrase-tuned ``bart.pth``) over the checkpoint's weights.

        Without a path: ``$BARTSCORE_PARA_WEIGHTS``, else ``models/bart.pth`` as in the original code."""
        path = path or os.environ.get(PARA_WEIGHTS_ENV) or ORIGINAL_PARA_WEIGHTS
        if not os.path.isfile(path):
            raise CheckpointNotFoundError(
                f"No state dict at {path!r}. The paraphrase-tuned weights (bart.pth) come from the BARTScore "
                f"release (https://github.com/neulab/BARTScore); pass their path or set {PARA_WEIGHTS_ENV}."
            )
        state = torch.load(path, map_location=self.device, weights_only=True)
        try:
            self.model.load_state_dict(state)
        except RuntimeError as error:
            raise ValueError(f"{path!r} does not fit the {self.checkpoint!r} model: {error}") from None
        self.weights = path
        return self

    @property
    def model_label(self):
        """The checkpoint as the signature names it."""
        if self.weights is None:
            return self.checkpoint
        return f"{self.checkpoint}+{os.path.basename(self.weights)}"

    @property
    def token_policy(self):
        """Which tokens are scored and what the decoder starts from, in a few characters (see README's families)."""
        return "bart"

    def signature_fields(self):
        """The signature's fields that describe this engine rather than one call's options."""
        return [
            f"maxlen:{self.max_length}",
            f"dtype:{self.dtype}",
            f"transformers:{transformers.__version__}",
            f"version:{__version__}",
        ]

    # -- public scoring -------------------------------------------------------------------------------------------

    def score(self, srcs, tgts, batch_size=None, *, max_tokens=None, show_progress=False):
        """Mean target-token log-probability of each tgt given its src (higher is better; scores are negative).

        batch_size caps the pairs per model batch (the original's fixed batch of 4 is not needed: batches are
        filled up to max_tokens padded tokens); neither changes the scores."""
        result = self._log_likelihoods(
            srcs, tgts, batch_size=batch_size, max_tokens=max_tokens, show_progress=show_progress, keep_tokens=False
        )
        if result is None:
            return None
        sums, counts, _ = result
        return (sums / counts).tolist()

    def multi_ref_score(self, srcs, tgts, agg="mean", batch_size=None, *, max_tokens=None, show_progress=False):
        """Scores each src against each of its tgts (a list per example; counts may differ) and aggregates."""
        if agg not in directions.AGGREGATIONS:
            raise ValueError(f"agg must be one of {directions.AGGREGATIONS}, got {agg!r}")
        srcs = text_list(srcs, "srcs")
        tgts = reference_lists(tgts, "tgts", len(srcs))
        counts = [len(refs) for refs in tgts]
        flat = self.score(
            [src for src, n in zip(srcs, counts) for _ in range(n)],
            [t for refs in tgts for t in refs],
            batch_size,
            max_tokens=max_tokens,
            show_progress=show_progress,
        )
        return None if flat is None else directions.aggregate(np.asarray(flat), counts, agg).tolist()

    def score_tokens(self, srcs, tgts, batch_size=None, *, max_tokens=None):
        """Each target token with its log-probability: one list of (token text, log-prob) per pair.

        The mean of a pair's log-probabilities is its score, and the texts joined are the target. A character that
        BART's byte-level tokens split (accents, emoji, CJK) is the text of the token that completes it; the tokens
        before it in that character have empty text."""
        result = self._log_likelihoods(
            srcs, tgts, batch_size=batch_size, max_tokens=max_tokens, show_progress=False, keep_tokens=True
        )
        if result is None:
            return None
        return [list(zip(self._token_texts(ids), log_probs.tolist())) for ids, log_probs in result[2]]

    def _token_texts(self, ids):
        texts, pending = [], []
        for position, token in enumerate(ids):
            pending.append(token)
            text = self.tokenizer.decode(pending, clean_up_tokenization_spaces=False)
            if text.endswith("\ufffd") and position + 1 < len(ids):  # an incomplete UTF-8 character so far
                texts.append("")
                continue
            texts.append(text)
            pending = []
        return texts

    def score_directions(self, predictions, references=None, sources=None, **options):
        """The paper's directions for each prediction, in input order, with their means and a signature.

        Options: directions, aggregation ("mean" or "max" over references), prompt, prompt_side, batch_size,
        max_tokens, show_progress (see ``bart_score.directions.score_directions``)."""
        return directions.score_directions(self, predictions, references, sources, **options)

    # -- the planned computation ----------------------------------------------------------------------------------

    def _tokenize(self, texts):
        """Token ids of each text, truncated to max_length as the original does, and the indices that were cut."""
        if not texts:
            return [], set()
        encoded = self.tokenizer(texts, max_length=self.max_length, truncation=True)["input_ids"]
        at_limit = [i for i, ids in enumerate(encoded) if len(ids) == self.max_length]
        too_long = set()
        if at_limit:
            full = self.tokenizer([texts[i] for i in at_limit], max_length=self.max_length + 1, truncation=True)[
                "input_ids"
            ]
            too_long = {i for i, ids in zip(at_limit, full) if len(ids) > self.max_length}
        vocab = self.model.config.vocab_size
        for i, ids in enumerate(encoded):
            if ids and max(ids) >= vocab:
                bad = max(ids)
                raise ValueError(
                    f"the text {texts[i][:60]!r} contains token {self.tokenizer.convert_ids_to_tokens(bad)!r} "
                    f"(id {bad}), which the model's {vocab}-token vocabulary lacks"
                )
        return encoded, too_long

    def _log_likelihoods(self, conditions, targets, *, batch_size, max_tokens, show_progress, keep_tokens):
        """Per input pair: the sum of target-token log-probabilities, the target token count, and (if asked) the
        target's token ids with their log-probabilities. None on ranks other than 0 when results go to rank 0."""
        conditions = text_list(conditions, "srcs")
        targets = text_list(targets, "tgts")
        if len(conditions) != len(targets):
            raise ValueError(f"srcs has {len(conditions)} entries but tgts has {len(targets)}")
        batch_size = optional_positive_int(batch_size, "batch_size")
        max_tokens = optional_positive_int(max_tokens, "max_tokens") or self.max_tokens
        group = self._process_group()
        if group:
            group.check_same_inputs(conditions, targets, self.device)
        lead = not group or group.rank == 0

        plan = Plan(self._tokenize, conditions, targets)
        if lead and (plan.truncated_conditions or plan.truncated_targets):
            warnings.warn(
                f"BARTScore truncated {plan.truncated_conditions} distinct source text(s) and {plan.truncated_targets} "
                f"distinct target text(s) to max_length={self.max_length} tokens, as the original BARTScore does; "
                f"their tails are not scored",
                stacklevel=3,
            )
        logger.info(
            "scoring %d pairs as %d distinct pairs with %d distinct sources",
            len(conditions),
            len(plan.pairs),
            len(plan.pairs_by_condition),
        )

        share = group.share(plan) if group else plan.pairs_by_condition
        results, error = None, None
        try:
            results = self._score_share(
                plan,
                share,
                conditions,
                targets,
                batch_size=batch_size,
                max_tokens=max_tokens,
                show_progress=show_progress and lead,
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

        index = plan.pair_of_input
        sums = np.array([results[p][0] for p in index], dtype=np.float64)
        counts = np.array([plan.length(plan.pairs[p][1]) for p in index], dtype=np.float64)
        tokens = [(plan.tokens[plan.pairs[p][1]], results[p][1]) for p in index] if keep_tokens else None
        return sums, counts, tokens

    def _score_share(self, plan, share, conditions, targets, *, batch_size, max_tokens, show_progress, keep_tokens):
        """Scores the pairs of `share` (condition -> its pairs): conditions encoded in length-sorted batches, then
        their targets decoded in length-sorted batches. Returns pair -> (log-prob sum, token log-probs or None)."""
        results = {}
        with (
            torch.inference_mode(),
            tqdm(
                total=sum(map(len, share.values())), unit="pair", desc="BARTScore", disable=not show_progress
            ) as progress,
        ):

            def score_conditions(group):
                encoded = self._encode([plan.tokens[c] for c in group])
                row_of = {condition: row for row, condition in enumerate(group)}
                pairs = sorted(
                    (p for c in group for p in share[c] if p not in results),  # a retry skips done ones
                    key=lambda p: (plan.length(plan.pairs[p][1]), plan.length(plan.pairs[p][0])),
                    reverse=True,
                )

                def score_batch(batch):
                    rows = [row_of[plan.pairs[p][0]] for p in batch]
                    per_pair = self._decode(encoded, rows, [plan.tokens[plan.pairs[p][1]] for p in batch])
                    for pair, log_probs in zip(batch, per_pair):
                        results[pair] = (float(log_probs.sum()), log_probs if keep_tokens else None)
                    progress.update(len(batch))

                def decoder_too_big(pair):
                    if len(group) > 1:
                        raise _DoesNotFit  # retry with fewer conditions held in memory
                    condition, target = plan.pairs[pair]
                    self._fail_alone(plan, condition, target, conditions, targets)

                for batch in token_batches(
                    pairs,
                    lambda p: (plan.length(plan.pairs[p][1]), plan.length(plan.pairs[p][0])),
                    max_tokens,
                    batch_size,
                ):
                    self._halving_on_oom(batch, score_batch, decoder_too_big)

            def encoder_too_big(condition):
                self._fail_alone(plan, condition, plan.pairs[share[condition][0]][1], conditions, targets)

            by_length = sorted(share, key=plan.length, reverse=True)
            for group in token_batches(by_length, lambda c: (plan.length(c),), max_tokens, batch_size):
                self._halving_on_oom(group, score_conditions, encoder_too_big)
        return results

    def _process_group(self):
        """The torch.distributed process group this call's work is split across, or None."""
        return process_group(self.distributed)

    def _halving_on_oom(self, items, run, on_single_item):
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

    def _fail_alone(self, plan, condition, target, conditions, targets):
        pair = (plan.texts[condition], plan.texts[target])
        index = next(i for i, p in enumerate(zip(conditions, targets)) if p == pair)
        raise RuntimeError(
            f"pair {index} (a source of {plan.length(condition)} tokens and a target of {plan.length(target)} tokens) "
            f"does not fit in {self.device} memory even alone; lower max_length or use a larger device"
        )

    def _pad(self, sequences):
        width = max(map(len, sequences))
        ids = torch.full((len(sequences), width), self.model.config.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = torch.tensor(sequence)
            mask[row, : len(sequence)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _encode(self, sequences):
        """Runs the encoder once per condition, and projects each decoder layer's cross-attention keys and values
        once, so that every target of a condition reuses them."""
        ids, mask = self._pad(sequences)
        hidden = self.model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
        keys_values = []
        for layer in self.model.get_decoder().layers:
            attention = layer.encoder_attn
            split_heads = (hidden.shape[0], hidden.shape[1], -1, attention.head_dim)
            keys_values.append(
                (
                    attention.k_proj(hidden).view(split_heads).transpose(1, 2),
                    attention.v_proj(hidden).view(split_heads).transpose(1, 2),
                )
            )
        return _EncodedConditions(hidden, mask, keys_values)

    def _decode(self, encoded, rows, targets):
        """Token log-probabilities of each target given its encoded condition (row), one tensor per target."""
        rows_tensor = torch.tensor(rows, device=self.device)
        width = int(encoded.mask[rows_tensor].sum(dim=1).max())
        cross = DynamicCache(
            ddp_cache_data=[
                (keys[rows_tensor, :, :width], values[rows_tensor, :, :width])
                for keys, values in encoded.cross_keys_values
            ]
        )
        labels, label_mask = self._pad(targets)
        # Teacher forcing as the original (labels shifted right); no decoder mask, padding only follows real tokens.
        decoder_input = torch.full_like(labels, self.model.config.pad_token_id)
        decoder_input[:, 0] = self.model.config.decoder_start_token_id
        decoder_input[:, 1:] = labels[:, :-1]
        states = self.model.get_decoder()(
            input_ids=decoder_input,
            encoder_hidden_states=encoded.hidden[rows_tensor, :width],
            encoder_attention_mask=encoded.mask[rows_tensor, :width],
            cache=EncoderDecoderCache(_UnkeptCache(), cross),
            use_cache=True,
        ).last_hidden_state
        valid = label_mask.bool()
        labels = labels[valid]
        log_probs = self._target_log_probs(states[valid], labels)
        # The original's NLL loss ignores the pad id, so a <pad> written in the target adds 0 but is still counted.
        log_probs[labels == self.model.config.pad_token_id] = 0.0
        return torch.split(log_probs.cpu(), [len(t) for t in targets])

    def _target_log_probs(self, states, labels):
        """log p(label) at each position, from the logits of a slice of positions at a time, written into reused
        buffers and normalised in place: never a whole batch's vocabulary distribution, no allocation per slice, and
        the log-softmax in float32 whatever the model's dtype (bfloat16/float16 logits land in a buffer of their own
        and are widened into the float32 one). The logits are laid out vocabulary x positions, with at most 512
        positions a slice: that matrix product runs about 40% faster on CPUs than positions x vocabulary
        (bench/bench_engine.py --breakdown)."""
        weight, bias = self.model.lm_head.weight, self.model.final_logits_bias.t()
        vocabulary = weight.shape[0]
        step = max(1, min(_LOGIT_POSITIONS, _LOGIT_ELEMENTS // vocabulary))
        size = vocabulary * min(step, len(labels))
        buffer = torch.empty(size, dtype=torch.float32, device=states.device)
        narrow = (
            buffer if states.dtype == torch.float32 else torch.empty(size, dtype=states.dtype, device=states.device)
        )
        pieces = []
        for start in range(0, len(labels), step):
            rows = states[start : start + step]
            logits = buffer[: vocabulary * len(rows)].view(vocabulary, len(rows))
            product = narrow[: vocabulary * len(rows)].view(vocabulary, len(rows))
            torch.addmm(bias, weight, rows.t(), out=product)
            if narrow is not buffer:
                logits.copy_(product)
            chosen = logits.gather(0, labels[None, start : start + step]).squeeze(0)
            top = logits.amax(dim=0, keepdim=True)
            normaliser = logits.sub_(top).exp_().sum(dim=0).log_() + top.squeeze(0)
            pieces.append(chosen - normaliser)
        return torch.cat(pieces)
