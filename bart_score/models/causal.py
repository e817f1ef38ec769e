"""Decoder-only language models (GPT-2, OPT, Llama, Qwen, ...): the score is the mean log-probability of the target's
tokens after a prefix built from the condition and a template.

Default token policy ("causal"): prefix = the tokenizer's start tokens (its BOS, or the BOS token it defines but does
not add, as GPT-2's) + the tokens of `template` with the condition filled in (default "{condition}\\n"); the target is
tokenized on its own, without special tokens, and the EOS token is appended, so that every target (even an empty one)
has a token to score and an unfinished text is not as likely as a finished one. Every target token and the EOS are
scored; the first from the prefix's last position. Within max_length: the target keeps its first max_length - 1
tokens (its EOS last), then the prefix is cut to the remaining max_length - len(target) tokens by dropping the
condition's last tokens, so that the template's text after the condition (an instruction such as "Summary:") stays.

"gptscore" policy (compatibility="gptscore"), GPTScore's own convention (jinlanfu/GPTScore, opt_score.py): the text
template-head + condition, cut as GPTScore cuts it when too long, + template-tail + target is tokenized as one
sequence; the labels are the target's own encoding without its first token, aligned with the end of that sequence,
and the score is the mean over them. Its template is GPTScore's `src + prompt_text`: "{condition}" + prompt_text."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
from transformers import AutoModelForCausalLM
from transformers.cache_utils import DynamicCache

from ..errors import InputError, UnsupportedModelError
from ..messages import Mention
from ..options import DEFAULT_TEMPLATE, TEMPLATE, template_sides
from .base import Family, Target, Tokenized, dedupe, stored_rows_cache

if TYPE_CHECKING:
    from ..options import EngineOptions


class EncodedPrefixes:
    """A batch of prefixes run once: every layer's keys and values, and the last position's state of each prefix."""

    def __init__(self, cache: DynamicCache, mask: torch.Tensor, last_states: torch.Tensor) -> None:
        # transformers types a cache's layers as a union with layers that keep no keys; a DynamicCache's keep them.
        self.keys_values: list[tuple[torch.Tensor, torch.Tensor]] = [
            (layer.keys, layer.values)  # type: ignore[union-attr, misc]
            for layer in cache.layers
        ]
        self.mask = mask  # (prefixes, length)
        self.lengths = mask.sum(dim=1)
        self.last_states = last_states  # (prefixes, hidden)


class CausalFamily(Family[EncodedPrefixes]):
    name = "causal"
    auto_class = AutoModelForCausalLM

    def __init__(self, tokenizer: Any, model: Any, options: EngineOptions) -> None:
        super().__init__(tokenizer, model, options)
        self.template = DEFAULT_TEMPLATE if options.template is None else options.template
        self.head, self.tail = template_sides(self.template)
        self.start_ids = self._start_ids()
        if tokenizer.eos_token_id is None:
            raise UnsupportedModelError(
                "this causal LM's tokenizer has no eos_token, which the causal token policy scores at "
                "the end of every target"
            )
        if not self.start_ids and not self.head + self.tail:
            raise InputError(
                "this tokenizer has no BOS token, so a template that adds no text of its own leaves an "
                "empty condition with nothing to predict the target's first token from",
                remedy=["give a ", TEMPLATE, " with text around {condition} (the default is '{condition}\\n')"],
            )

    def _start_ids(self) -> list[int]:
        """The tokens the tokenizer puts before a text (its BOS), else the BOS it defines but does not add."""
        plain = self.tokenizer("a", add_special_tokens=False)["input_ids"]
        full = self.tokenizer("a")["input_ids"]
        start = full[: len(full) - len(plain)] if full[len(full) - len(plain) :] == plain else []
        if not start and self.tokenizer.bos_token_id is not None:
            start = [self.tokenizer.bos_token_id]
        return start

    @property
    def policy(self) -> str:
        if self.template == DEFAULT_TEMPLATE:
            return self.name
        return f"{self.name}:{hashlib.sha1(self.template.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"

    @property
    def max_positions(self) -> int | None:
        if self.limits is not None:
            return self.limits.positions
        config = self.model.config
        return getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)

    # -- the token policy -------------------------------------------------------------------------------------------

    def tokenize(
        self,
        conditions: Sequence[str],
        targets: Sequence[str],
        condition_languages: Sequence[str | None],
        max_length: int,
    ) -> Tokenized:
        tokenized = Tokenized([], [], [])
        condition_texts, condition_of_pair = dedupe(conditions)
        target_texts, target_of_pair = dedupe(targets)
        filled = [self.head + c + self.tail for c in condition_texts]
        prefixes = [self.start_ids + ids for ids in self._ids(filled)]
        target_ids: list[list[int]] = []
        for ids in self._ids(target_texts):
            tokenized.truncated_targets += len(ids) > max_length - 2
            target_ids.append([*ids[: max_length - 2], self.tokenizer.eos_token_id])
        self.check_vocabulary(condition_texts, prefixes)
        self.check_vocabulary(target_texts, target_ids)
        # A prefix is cut to leave room for its target, so the same condition may give different prefixes.
        tails: dict[int, int] = {}  # condition -> how many of its prefix's last tokens are the template's tail, if cut
        pair_prefixes = []
        for c, t in zip(condition_of_pair, target_of_pair):
            room = max_length - len(target_ids[t])
            if len(prefixes[c]) > room and c not in tails:
                tails[c] = self._tail_length(filled[c], len(prefixes[c]) - len(self.start_ids))
            pair_prefixes.append(tuple(_cut_keeping_tail(prefixes[c], room, tails.get(c, 0), len(self.start_ids))))
        tokenized.truncated_conditions = len(
            {c for c, prefix in zip(condition_of_pair, pair_prefixes) if len(prefix) < len(prefixes[c])}
        )
        tokenized.conditions, prefix_of_pair = dedupe(pair_prefixes)
        tokenized.targets = [Target(tuple(ids[:-1]), tuple(ids)) for ids in target_ids]
        tokenized.pairs = list(zip(prefix_of_pair, target_of_pair))
        self.note_special_tokens(dict.fromkeys(condition_texts + target_texts), tokenized)
        return tokenized

    def _ids(self, texts: Sequence[str]) -> list[list[int]]:
        return self.tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []

    def _tail_length(self, filled: str, length: int) -> int:
        """How many of the filled template's `length` tokens are the template's text after the condition: the
        tokens that start at or after it (a token across the boundary counts as the condition's). Tokenizers
        without offsets (slow ones) count the tail's own tokens."""
        if not self.tail:
            return 0
        if not self.tokenizer.is_fast:
            return min(len(self._ids([self.tail])[0]), length)
        offsets = self.tokenizer(filled, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        boundary = len(filled) - len(self.tail)
        return sum(start >= boundary for start, _ in offsets)

    # -- running the model ------------------------------------------------------------------------------------------

    def encode(self, sequences: Sequence[Sequence[int]]) -> EncodedPrefixes:
        """Runs each prefix once and keeps its keys and values for all its targets."""
        ids, mask = self.pad(sequences)
        cache = DynamicCache()
        states = self.model.get_decoder()(
            input_ids=ids, attention_mask=mask, position_ids=_positions(mask), cache=cache, use_cache=True
        ).last_hidden_state
        last = states[torch.arange(len(sequences), device=self.device), mask.sum(dim=1) - 1]
        return EncodedPrefixes(cache, mask, last)

    def full_logits(self, condition: Sequence[int], target: Target) -> torch.Tensor:
        """The model's own forward pass on one pair, prefix and target as one sequence: logits at each label
        position."""
        ids = torch.tensor([[*condition, *target.inputs]], device=self.device)
        return self.model(input_ids=ids).logits[0, len(condition) - 1 :]

    def decode(self, prefixes: EncodedPrefixes, rows: Sequence[int], targets: Sequence[Target]) -> torch.Tensor:
        """States at every label position of each target, in order: the prefix's last state predicts the first
        label, the target's own inputs the rest. The targets continue their prefixes' positions; padding between a
        short prefix and its target is masked out."""
        row_index = torch.tensor(rows, device=self.device)
        inputs, input_mask = self.pad([target.inputs for target in targets])
        steps = None
        if inputs.shape[1]:
            width = int(prefixes.lengths[row_index].max())
            cache = stored_rows_cache(prefixes.keys_values, row_index, width)
            offsets = prefixes.lengths[row_index, None]
            steps = self.model.get_decoder()(
                input_ids=inputs,
                attention_mask=torch.cat([prefixes.mask[row_index, :width], input_mask], dim=1),
                position_ids=offsets + torch.arange(inputs.shape[1], device=self.device),
                cache=cache,
                use_cache=True,
            ).last_hidden_state
        pieces = []
        for index, target in enumerate(targets):
            pieces.append(prefixes.last_states[row_index[index]][None])
            if target.inputs:
                assert steps is not None  # a target with inputs made the batch's inputs non-empty
                pieces.append(steps[index, : len(target.inputs)])
        return torch.cat(pieces)


class GPTScoreFamily(CausalFamily):
    name = "gptscore"

    def tokenize(
        self,
        conditions: Sequence[str],
        targets: Sequence[str],
        condition_languages: Sequence[str | None],
        max_length: int,
    ) -> Tokenized:
        tokenized = Tokenized([], [], [])
        encode = self.tokenizer.encode
        pair_conditions: list[tuple[int, ...]] = []
        pair_targets: list[Target] = []
        truncated: set[str] = set()
        for index, (condition, target) in enumerate(zip(conditions, targets)):
            source = self._cut(self.head + condition, target, max_length)
            if source != self.head + condition:
                truncated.add(condition)
            joint = encode(source + self.tail + target)
            if self.max_positions is not None and len(joint) > self.max_positions:
                raise InputError(
                    Mention("max_length", max_length),
                    f" leaves pair {index}'s text {len(joint)} tokens, over the model's {self.max_positions} positions",
                    remedy="lower it to leave room for GPTScore's template (GPTScore: 1000 for GPT-2, 2000 for OPT)",
                )
            labels = encode(target)[1:]
            start = max(len(joint) - len(labels), 1)  # the model's loss never scores position 0
            if not labels or len(labels) > len(joint):
                raise InputError(
                    f"the target {target[:60]!r} leaves GPTScore's alignment no token to score (its "
                    f"encoding without the first token has {len(labels)} tokens, the whole text "
                    f"{len(joint)})"
                )
            pair_conditions.append(tuple(joint[:start]))
            pair_targets.append(Target(tuple(joint[start:-1]), tuple(labels[len(labels) - (len(joint) - start) :])))
        self.check_vocabulary(conditions, pair_conditions)
        self.check_vocabulary(targets, [target.inputs for target in pair_targets])
        tokenized.conditions, condition_of_pair = dedupe(pair_conditions)
        tokenized.targets, target_of_pair = dedupe(pair_targets)
        tokenized.pairs = list(zip(condition_of_pair, target_of_pair))
        tokenized.truncated_conditions = len(truncated)
        self.note_special_tokens(dict.fromkeys([*conditions, *targets]), tokenized)
        return tokenized

    def _cut(self, source: str, target: str, max_length: int) -> str:
        """GPTScore's truncation of a long source, step for step (its encodings drop a first and a last token, as
        for OPT's BOS, whatever the tokenizer)."""
        encode = self.tokenizer.encode
        source_ids = encode(source)[1:-1]
        total = len(source_ids) + len(encode(target)[1:-1])
        if total <= max_length:
            return source
        kept = source_ids[: len(source_ids) - (total - max_length)]
        return self.tokenizer.decode(kept[1:-1])


def _cut_keeping_tail(prefix: list[int], room: int, tail_length: int, start_length: int) -> list[int]:
    """`prefix` within `room` tokens: the condition's last tokens go first, then (when even that is not enough) the
    tail's last ones; the start tokens stay."""
    if len(prefix) <= room:
        return prefix
    keep = max(room - tail_length, min(start_length, room))
    return (prefix[:keep] + prefix[len(prefix) - tail_length :])[:room]


def _positions(mask: torch.Tensor) -> torch.Tensor:
    """Positions of right-padded rows: 0, 1, ... along the real tokens."""
    return (mask.cumsum(dim=1) - 1).clamp(min=0)
