"""Encoder-decoder families: BART (the original BARTScore), mBART / mBART-50, T5 / mT5 / Flan-T5, PEGASUS, Marian.

Token policy (as the original BARTScore and T5Score compute it, i.e. as the model's own `labels=` loss sees it):
the condition is the tokenizer's encoding of its text, the labels are the tokenizer's encoding of the target
(`text_target=`), the decoder reads the labels shifted by the model's own `prepare_decoder_input_ids_from_labels`,
and every label is scored (BART's `<s>` and `</s>`, T5's `</s>`), except mBART's language code, which generation
forces and which is neither scored nor counted. A pad token written in a target adds 0 but is counted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
from transformers import AutoModelForSeq2SeqLM
from transformers.cache_utils import DynamicCache, EncoderDecoderCache

from ..errors import InputError, UnsupportedModelError
from ..messages import Mention
from .base import IGNORED, Family, Target, Tokenized, dedupe, stored_rows_cache

if TYPE_CHECKING:
    from ..options import EngineOptions


class _UnkeptCache(DynamicCache):
    """A self-attention cache that keeps nothing: each target is decoded in one pass, so storing (concatenating) its
    keys and values would be wasted copies."""

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return key_states, value_states


class EncodedConditions:
    """A batch of conditions run through the encoder, with every decoder layer's cross-attention keys and values,
    computed once here by the decoder's own attention modules and shared by every target of each condition."""

    def __init__(self, hidden: torch.Tensor, mask: torch.Tensor, cross_cache: DynamicCache) -> None:
        self.hidden = hidden  # (conditions, length, d_model)
        self.mask = mask  # (conditions, length)
        # Each (conditions, heads, length, d). transformers types a cache's layers as a union with layers that keep
        # no keys; this cache's are DynamicLayers, which do.
        self.cross: list[tuple[torch.Tensor, torch.Tensor]] = [
            (layer.keys, layer.values)  # type: ignore[union-attr, misc]
            for layer in cross_cache.layers
        ]


class Seq2SeqFamily(Family[EncodedConditions]):
    auto_class = AutoModelForSeq2SeqLM
    written_pad_scores_zero = True
    # What the model's own shift of the labels needs from the config.
    teacher_forcing_ids: tuple[str, ...] = ("pad_token_id", "decoder_start_token_id")

    def __init__(self, tokenizer: Any, model: Any, options: EngineOptions) -> None:
        super().__init__(tokenizer, model, options)
        config = model.config
        missing = [name for name in self.teacher_forcing_ids if getattr(config, name, None) is None]
        if missing:
            raise UnsupportedModelError(
                f"the checkpoint has no {' or '.join(missing)} in its config; teacher forcing needs both "
                f"(facebook/bart-* use pad_token_id=1, decoder_start_token_id=2; T5 uses 0 and 0)"
            )

    # -- the token policy -------------------------------------------------------------------------------------------

    def condition_ids(
        self, texts: Sequence[str], language: str | None, max_length: int
    ) -> tuple[list[list[int]], set[int]]:
        """Token ids of each condition, truncated to max_length, and the indices of those that were cut."""
        return self._encode_texts(texts, max_length, "text")

    def target_ids(self, texts: Sequence[str], max_length: int) -> tuple[list[list[int]], set[int]]:
        """Label ids of each target (the tokenizer's target side), truncated, and the indices of those cut."""
        return self._encode_texts(texts, max_length, "text_target")

    def _encode_texts(self, texts: Sequence[str], max_length: int, side: str) -> tuple[list[list[int]], set[int]]:
        if not texts:
            return [], set()
        encoded = self.tokenizer(**{side: texts}, max_length=max_length, truncation=True)["input_ids"]
        at_limit = [i for i, ids in enumerate(encoded) if len(ids) == max_length]
        too_long: set[int] = set()
        if at_limit:
            longer = self.tokenizer(**{side: [texts[i] for i in at_limit]}, max_length=max_length + 1, truncation=True)
            too_long = {i for i, ids in zip(at_limit, longer["input_ids"]) if len(ids) > max_length}
        self.check_vocabulary(texts, encoded)
        return encoded, too_long

    def target(self, labels: Sequence[int]) -> Target:
        """A Target from the label ids: the decoder inputs by the model's own shift, unscored positions marked."""
        inputs = self.model.prepare_decoder_input_ids_from_labels(labels=torch.tensor([labels]))[0].tolist()
        return Target(tuple(inputs), tuple(labels))

    def tokenize(
        self,
        conditions: Sequence[str],
        targets: Sequence[str],
        condition_languages: Sequence[str | None],
        max_length: int,
    ) -> Tokenized:
        tokenized = Tokenized([], [], [])
        condition_keys, condition_of_pair = dedupe(zip(conditions, condition_languages))
        target_texts, target_of_pair = dedupe(targets)
        by_language: dict[str | None, list[int]] = {}
        for index, (_, language) in enumerate(condition_keys):
            by_language.setdefault(language, []).append(index)
        condition_tokens: list[tuple[int, ...]] = [()] * len(condition_keys)  # every entry is set below
        for language, indices in by_language.items():
            ids, cut = self.condition_ids([condition_keys[i][0] for i in indices], language, max_length)
            for position, index in enumerate(indices):
                condition_tokens[index] = tuple(ids[position])
            tokenized.truncated_conditions += len(cut)
        label_ids, cut = self.target_ids(target_texts, max_length)
        tokenized.truncated_targets = len(cut)
        tokenized.conditions = condition_tokens
        tokenized.targets = [self.target(labels) for labels in label_ids]
        tokenized.pairs = list(zip(condition_of_pair, target_of_pair))
        self.note_special_tokens(dict.fromkeys([text for text, _ in condition_keys] + target_texts), tokenized)
        return tokenized

    # -- running the model ------------------------------------------------------------------------------------------

    def encode(self, sequences: Sequence[Sequence[int]]) -> EncodedConditions:
        """Runs the encoder once per condition, then one decoder step on a placeholder token, which makes the decoder's
        own cross-attention modules project each layer's keys and values into the cache once."""
        ids, mask = self.pad(sequences)
        hidden = self.model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
        start = ids.new_full((len(sequences), 1), self.pad_id)  # any token: only the cross-attention cache is kept
        cache = EncoderDecoderCache(_UnkeptCache(), DynamicCache())
        self.model.get_decoder()(
            input_ids=start, encoder_hidden_states=hidden, encoder_attention_mask=mask, cache=cache, use_cache=True
        )
        return EncodedConditions(hidden, mask, cache.cross_attention_cache)

    def full_logits(self, condition: Sequence[int], target: Target) -> torch.Tensor:
        """The model's own forward pass on one pair, reading the decoder inputs its own shift made of the labels:
        logits at each label position."""
        ids = torch.tensor([condition], device=self.device)
        inputs = torch.tensor([target.inputs], device=self.device)
        return self.model(input_ids=ids, attention_mask=torch.ones_like(ids), decoder_input_ids=inputs).logits[0]

    def decode(self, encoded: EncodedConditions, rows: Sequence[int], targets: Sequence[Target]) -> torch.Tensor:
        """Decoder states at every label position of each target (rows: each target's condition row in `encoded`),
        concatenated in order, with the labels they predict."""
        row_index = torch.tensor(rows, device=self.device)
        width = int(encoded.mask[row_index].sum(dim=1).max())
        cross = stored_rows_cache(encoded.cross, row_index, width)
        inputs, input_mask = self.pad([target.inputs for target in targets])
        # No decoder mask, as the original: padding only follows the real tokens of a causal decoder.
        states = self.model.get_decoder()(
            input_ids=inputs,
            encoder_hidden_states=encoded.hidden[row_index, :width],
            encoder_attention_mask=encoded.mask[row_index, :width],
            cache=EncoderDecoderCache(_UnkeptCache(), cross),
            use_cache=True,
        ).last_hidden_state
        return states[input_mask.bool()]


class BartFamily(Seq2SeqFamily):
    name = "bart"
    model_types = ("bart",)

    def output_layer(self) -> tuple[torch.Tensor, torch.Tensor | None, float]:
        return self.model.get_output_embeddings().weight, self.model.final_logits_bias[0], 1.0


class PegasusFamily(BartFamily):
    name = "pegasus"
    model_types = ("pegasus",)


class MarianFamily(BartFamily):
    name = "marian"
    model_types = ("marian",)


class T5Family(Seq2SeqFamily):
    name = "t5"
    model_types = ("t5", "mt5", "umt5")

    @property
    def max_positions(self) -> int | None:
        return None

    def output_layer(self) -> tuple[torch.Tensor, torch.Tensor | None, float]:
        """T5 with tied embeddings scales the decoder output by d_model ** -0.5 before the product."""
        scale = self.model.config.d_model**-0.5 if getattr(self.model.config, "scale_decoder_outputs", False) else 1.0
        return self.model.get_output_embeddings().weight, None, scale


class MBartFamily(BartFamily):
    """mBART and mBART-50: each text is tokenized in its language (the source's for faithfulness conditions, the
    target language for everything else), and the language code in the labels is forced, not scored."""

    name = "mbart"
    model_types = ("mbart",)
    teacher_forcing_ids = ("pad_token_id",)  # the shift starts the decoder from the labels' own last token
    reads_language_codes = True

    def __init__(self, tokenizer: Any, model: Any, options: EngineOptions) -> None:
        super().__init__(tokenizer, model, options)
        source_lang, target_lang = options.source_lang, options.target_lang
        codes = getattr(tokenizer, "lang_code_to_id", None)
        if not codes:
            raise UnsupportedModelError(
                "this mBART checkpoint's tokenizer has no language codes (lang_code_to_id); mBART "
                "scoring needs an MBartTokenizer or MBart50Tokenizer"
            )
        for argument, code in (("source_lang", source_lang), ("target_lang", target_lang)):
            if code is None:
                raise InputError(
                    Mention(argument),
                    f" was not given, and mBART needs the source's and the target's language codes; this checkpoint "
                    f"knows: {', '.join(codes)}",
                )
            if code not in codes:
                raise InputError(
                    Mention(argument, code), f" is not one of this tokenizer's language codes: {', '.join(codes)}"
                )
        self.source_lang, self.target_lang = source_lang, target_lang
        self.language_codes = tuple(codes)
        self._code_ids = set(codes.values())

    @property
    def policy(self) -> str:
        return f"mbart:{self.source_lang}>{self.target_lang}"

    def condition_ids(
        self, texts: Sequence[str], language: str | None, max_length: int
    ) -> tuple[list[list[int]], set[int]]:
        self.tokenizer.src_lang = language
        return self._encode_texts(texts, max_length, "text")

    def target_ids(self, texts: Sequence[str], max_length: int) -> tuple[list[list[int]], set[int]]:
        self.tokenizer.tgt_lang = self.target_lang
        return self._encode_texts(texts, max_length, "text_target")

    def target(self, labels: Sequence[int]) -> Target:
        shifted = super().target(labels)
        return Target(shifted.inputs, tuple(IGNORED if label in self._code_ids else label for label in labels))
