"""What every model family shares: scored targets, the tokenization bookkeeping, and the interface the engine drives.

A family turns (condition, target) texts into token sequences under its *token policy* (which tokens are scored, what
the decoder starts from), runs the conditions once (`encode`) and their targets against them (`decode`) through the
model's own modules, and names the output layer that turns decoder states into logits."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

from ..errors import UnsupportedModelError

if TYPE_CHECKING:
    from ..options import EngineOptions

# A label position that is run through the model but neither scored nor counted (as -100 in Hugging Face labels).
IGNORED = -100

# What a family's `encode` makes of a batch of conditions and its `decode` reads back.
Encoded = TypeVar("Encoded")
Item = TypeVar("Item")

# The family that drives each config model_type, filled as the classes are defined (Family.__init_subclass__): the
# loader looks a checkpoint's model_type up here (bart_score.models.loading) before it tries the causal LMs' families,
# which take any decoder-only model and name no model_type.
FAMILIES: dict[str, type[Family]] = {}


@dataclass(frozen=True)
class Target:
    """One target under a token policy.

    labels: one entry per position whose next token the model predicts (IGNORED where a position is not scored,
        such as a forced language code).
    inputs: what the model reads to make those predictions. Seq2seq: the decoder inputs, one per label. Causal LMs:
        one fewer, since the first label is predicted from the condition's last position."""

    inputs: tuple[int, ...]
    labels: tuple[int, ...]

    @property
    def scored_ids(self) -> list[int]:
        return [label for label in self.labels if label != IGNORED]


@dataclass
class Tokenized:
    """A call's texts as token sequences: the distinct conditions and targets, and each input pair's indices."""

    conditions: list[tuple[int, ...]]  # token ids per distinct condition
    targets: list[Target]  # per distinct target
    pairs: list[tuple[int, int]]  # (condition index, target index) per input pair
    truncated_conditions: int = 0
    truncated_targets: int = 0
    special_token_texts: list[str] = field(default_factory=list)  # distinct texts holding special-token strings


@dataclass(frozen=True)
class ModelLimits:
    """What a token policy reads of a model that is not here (one on an inference server, as its server reports it):
    the most positions a pair may take (None: unsaid) and the vocabulary's size."""

    positions: int | None
    vocabulary: int


class Family(ABC, Generic[Encoded]):
    """A kind of model the engine can drive. Subclasses set `name`, `model_types` and `auto_class`, and implement
    `tokenize`, `encode`, `decode` and `full_logits`; `policy` is the signature's short name of the token policy.

    A class that names its model_types is registered by being defined (FAMILIES), so that a new family is one class:
    built from the tokenizer, the model and the engine's checked options (EngineOptions), it reads what its token
    policy needs of them (mBART its language codes, a causal LM its template) in its __init__."""

    name = ""
    model_types: tuple[str, ...] = ()
    auto_class: Any = None  # the transformers Auto class that loads the model
    # Whether texts are read in the language codes that source_lang and target_lang name (mBART's), which the other
    # families refuse; language_codes: those the tokenizer knows.
    reads_language_codes = False
    language_codes: tuple[str, ...] = ()
    # A pad token written in a target adds 0 to the sum but is counted, as the original's NLLLoss(ignore_index=pad);
    # False where no such rule applies.
    written_pad_scores_zero = False
    # A family built with no model here (a served model's token policy: bart_score.models.loading.served_family): what
    # it reads of the model instead; None when the model is here, and read.
    limits: ModelLimits | None = None

    def __init_subclass__(cls, **keywords: Any) -> None:
        super().__init_subclass__(**keywords)
        for model_type in cls.__dict__.get("model_types", ()):  # its own, not those a subclass inherits
            FAMILIES[model_type] = cls

    def __init__(self, tokenizer: Any, model: Any, options: EngineOptions) -> None:
        """model: None for a served model's token policy (bart_score.models.loading.served_family)."""
        self.tokenizer = tokenizer
        self.model = model
        specials = sorted({t for t in getattr(tokenizer, "all_special_tokens", []) if t}, key=len, reverse=True)
        self._special_pattern = re.compile("|".join(map(re.escape, specials))) if specials else None

    @property
    def policy(self) -> str:
        return self.name

    @property
    def max_positions(self) -> int | None:
        """The most positions the model takes, or None when its positions are relative (T5)."""
        if self.limits is not None:
            return self.limits.positions
        return getattr(self.model.config, "max_position_embeddings", None)

    @property
    def device(self) -> torch.device:
        return self.model.device

    @property
    def pad_id(self) -> int:
        pad = self.model.config.pad_token_id
        return pad if pad is not None else 0

    @abstractmethod
    def tokenize(
        self,
        conditions: Sequence[str],
        targets: Sequence[str],
        condition_languages: Sequence[str | None],
        max_length: int,
    ) -> Tokenized:
        """The pairs' texts as token sequences under the family's token policy, each within max_length tokens."""

    @abstractmethod
    def encode(self, sequences: Sequence[Sequence[int]]) -> Encoded:
        """Runs a batch of conditions once, for all their targets."""

    @abstractmethod
    def decode(self, encoded: Encoded, rows: Sequence[int], targets: Sequence[Target]) -> torch.Tensor:
        """Decoder states at every label position of each target (rows: each target's condition row in `encoded`),
        concatenated in order."""

    @abstractmethod
    def full_logits(self, condition: Sequence[int], target: Target) -> torch.Tensor:
        """Logits at each of `target`'s label positions from the model's own, unsplit forward pass (the engine's
        self-check at load time compares its split computation with this)."""

    def output_layer(self) -> tuple[torch.Tensor, torch.Tensor | None, float]:
        """(weight: vocabulary x hidden, bias or None, scale applied to the decoder states before the product)."""
        head = self.model.get_output_embeddings()
        return head.weight, head.bias, 1.0

    def pad(self, sequences: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids and their mask, on the model's device."""
        width = max(map(len, sequences), default=0)
        ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, sequence in enumerate(sequences):
            if sequence:
                ids[row, : len(sequence)] = torch.tensor(sequence)
                mask[row, : len(sequence)] = 1
        return ids.to(self.device), mask.to(self.device)

    # -- shared tokenization bookkeeping ----------------------------------------------------------------------------

    def note_special_tokens(self, texts: Iterable[str], tokenized: Tokenized) -> None:
        """Records the distinct texts that hold special-token strings such as "<pad>", for the engine's warning."""
        if self._special_pattern is not None:
            tokenized.special_token_texts += [text for text in texts if self._special_pattern.search(text)]

    def special_token_in(self, text: str) -> str | None:
        found = self._special_pattern.search(text) if self._special_pattern is not None else None
        return found.group(0) if found else None

    def check_vocabulary(self, texts: Sequence[str], sequences: Sequence[Sequence[int]]) -> None:
        """Ids beyond the model's output layer (a tokenizer larger than its model) are refused, naming the text."""
        vocabulary = self.limits.vocabulary if self.limits is not None else self.output_layer()[0].shape[0]
        for text, ids in zip(texts, sequences):
            known = [i for i in ids if i != IGNORED]
            if known and max(known) >= vocabulary:
                bad = max(known)
                raise UnsupportedModelError(
                    f"the text {text[:60]!r} contains token {self.tokenizer.convert_ids_to_tokens(bad)!r} "
                    f"(id {bad}), which the model's {vocabulary}-token vocabulary lacks"
                )

    def token_texts(self, ids: Sequence[int]) -> list[str]:
        """The text each token adds to the decoded sequence: sentencepiece's word-start marks become spaces, and a
        character split over byte-level tokens is shown whole on the token that completes it (the tokens before it
        in that character have empty text)."""
        texts: list[str] = []
        previous = ""
        for end in range(1, len(ids) + 1):
            decoded = self.tokenizer.decode(ids[:end], skip_special_tokens=False, clean_up_tokenization_spaces=False)
            if decoded.endswith("\ufffd") and end < len(ids):  # an incomplete UTF-8 character so far
                texts.append("")
                continue
            texts.append(decoded[len(previous) :] if decoded.startswith(previous) else decoded)
            previous = decoded
        return texts


class StoredRows(DynamicLayer):
    """One layer's cached keys and values for a batch, read as rows of a store computed once per condition: the rows
    are taken (a view when every row is the same condition, else a copy) only when the layer reads them, so a batch
    never holds every layer's copy at once. Keys and values a causal target adds are joined to them for that layer's
    attention and not kept: each target is scored in one pass."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, rows: torch.Tensor, width: int) -> None:
        self.store, self.rows, self.width = (keys, values), rows, width
        self.is_initialized = True
        self.device = keys.device

    def _rows_of(self, stored: torch.Tensor) -> torch.Tensor:
        stored = stored[:, :, : self.width]
        if bool((self.rows == self.rows[0]).all()):
            return stored[self.rows[:1]].expand(len(self.rows), -1, -1, -1)
        return stored[self.rows]

    # DynamicLayer keeps keys and values as writable attributes; these layers read them from the store instead.
    @property
    def keys(self) -> torch.Tensor:  # type: ignore[override]
        return self._rows_of(self.store[0])

    @property
    def values(self) -> torch.Tensor:  # type: ignore[override]  # as keys
        return self._rows_of(self.store[1])

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.cat([self.keys, key_states], dim=-2), torch.cat([self.values, value_states], dim=-2)

    def get_seq_length(self) -> int:
        return self.width


def stored_rows_cache(
    keys_values: Iterable[tuple[torch.Tensor, torch.Tensor]], rows: torch.Tensor, width: int
) -> DynamicCache:
    """A cache whose every layer reads the given rows of its stored (keys, values), up to `width` positions."""
    cache = DynamicCache()
    cache.layers = [StoredRows(keys, values, rows, width) for keys, values in keys_values]
    return cache


def dedupe(items: Iterable[Item]) -> tuple[list[Item], list[int]]:
    """(distinct items in order of first appearance, the index of each item among them)."""
    index: dict[Item, int] = {}
    positions = [index.setdefault(item, len(index)) for item in items]
    return list(index), positions
