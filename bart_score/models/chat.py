"""Chat-format scoring of instruction-tuned causal LMs: the condition goes into a user turn of the model's own chat
template, and the target is the assistant's reply.

Token policy ("chat"):
- prefix: ``tokenizer.apply_chat_template([{"role": "user", "content": instruction.format(condition=c)}],
  add_generation_prompt=True)``, with ``{"role": "system", "content": system}`` first when a system text is given;
- scored tokens: the reply tokenized on its own (no special tokens), then the token that closes an assistant turn in
  this template. That token is read from the template itself: a conversation with a known assistant reply is rendered,
  and the first token after the reply (past any whitespace) must be a special or added token (ChatML's <|im_end|>,
  Llama 3's <|eot_id|>, ...); a template whose replies end otherwise is refused;
- within max_length: the prefix's own tokens (system turn, turn markup, the instruction's text on both sides of the
  condition, the generation prompt) are never cut; the reply keeps its first tokens (as many as fit beside them, and
  its closing token); then the condition loses its last tokens inside the user turn. Tokens are counted on the
  rendered conversation: a token that starts before the condition is the prefix's, one that starts inside it the
  condition's (as the plain causal policy counts its template's tail).

Instructions hold ``{condition}`` once (``{{`` and ``}}`` for literal braces, no other field), as ``template`` does.
Each direction has its own (DEFAULT_INSTRUCTIONS, or the caller's); ``BARTScorer.score``, which knows no direction,
uses faithfulness's unless given ``instruction=``. The signature names the policy ``chat:<digest>``, the digest
covering the chat template, the instructions and the system text."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ..errors import InputError, UnsupportedModelError
from ..templates import ChatSettings, template_sides
from .base import Target, Tokenized, dedupe
from .causal import CausalFamily

# The reply rendered to find what closes an assistant turn; plain words that no template changes.
_KNOWN_REPLY = "The known reply."
# Stands for the condition when a template is rendered to find where the condition goes.
_PLACEHOLDER = "\u2063bartscore-condition\u2063"


class ChatFamily(CausalFamily):
    """A causal LM scored in its chat format (see the module's text)."""

    name = "chat"

    def __init__(self, tokenizer: PreTrainedTokenizerBase, model: PreTrainedModel, settings: ChatSettings) -> None:
        # Not CausalFamily's __init__: that one checks a template and an EOS this policy does not use.
        super(CausalFamily, self).__init__(tokenizer, model)
        if not getattr(tokenizer, "chat_template", None):
            raise UnsupportedModelError(
                "chat scoring needs a chat template, and this model's tokenizer has none (a base model rather than "
                "an instruction-tuned one?); score it without chat, with a template= of your own"
            )
        if not tokenizer.is_fast:
            raise UnsupportedModelError(
                "chat scoring counts tokens by their place in the rendered conversation, which needs a fast "
                "(tokenizers) tokenizer; this one is not"
            )
        self.settings = settings
        self.instructions = dict(settings.instructions)
        self.closing_id = self._closing_token()
        # instruction -> (its text before {condition}, after it, the prompt before, after)
        self._sides: dict[str, tuple[str, str, str, str]] = {}

    @property
    def policy(self) -> str:
        described = json.dumps(
            [self.tokenizer.chat_template, self.settings.system, sorted(self.instructions.items())], ensure_ascii=False
        )
        return f"{self.name}:{hashlib.sha1(described.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"

    # -- the chat template --------------------------------------------------------------------------------------

    def _render(self, messages: list[dict[str, str]], *, add_generation_prompt: bool) -> str:
        try:
            return self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=add_generation_prompt, tokenize=False
            )
        except Exception as error:  # the template's own checks (roles, alternation) raise jinja's errors
            raise UnsupportedModelError(
                f"this model's chat template cannot render a "
                f"{' and '.join(message['role'] for message in messages)} conversation: {error}"
            ) from None

    def _conversation(self, content: str) -> list[dict[str, str]]:
        system = [] if self.settings.system is None else [{"role": "system", "content": self.settings.system}]
        return [*system, {"role": "user", "content": content}]

    def _closing_token(self) -> int:
        """The token that closes an assistant turn: the first token after a known reply, past any whitespace."""
        rendered = self._render(
            [*self._conversation("Hello."), {"role": "assistant", "content": _KNOWN_REPLY}], add_generation_prompt=False
        )
        at = rendered.rfind(_KNOWN_REPLY)
        if at < 0:
            raise UnsupportedModelError(
                "this model's chat template does not write an assistant's reply as given, so chat scoring cannot "
                "tell where a reply ends"
            )
        after = rendered[at + len(_KNOWN_REPLY) :]
        encoded = self.tokenizer(after, add_special_tokens=False, return_offsets_mapping=True)
        marked = {*self.tokenizer.all_special_ids, *getattr(self.tokenizer, "added_tokens_decoder", {})}
        for token, (start, end) in zip(encoded["input_ids"], encoded["offset_mapping"]):
            if token in marked:
                return token
            if after[start:end].strip():
                break
        raise UnsupportedModelError(
            f"this model's chat template ends an assistant's reply with {after[:40]!r}, which does not begin with a "
            f"special token, so chat scoring has no token that closes a reply to score"
        )

    def _instruction_sides(self, instruction: str) -> tuple[str, str, str, str]:
        """The instruction's text on each side of {condition}, and the prompt rendered around a placeholder
        condition, split at it: the prompt's own text before and after the condition."""
        if instruction not in self._sides:
            head, tail = template_sides(instruction, "instruction")
            rendered = self._render(self._conversation(head + _PLACEHOLDER + tail), add_generation_prompt=True)
            if rendered.count(_PLACEHOLDER) != 1:
                raise UnsupportedModelError(
                    "this model's chat template does not write the user's message once, as given, so chat scoring "
                    "cannot find the condition in the prompt"
                )
            before, after = rendered.split(_PLACEHOLDER)
            self._sides[instruction] = (head, tail, before, after)
        return self._sides[instruction]

    def _prompt(self, instruction: str, condition: str) -> tuple[str, int, int]:
        """(the prompt as text, where the condition starts and ends in it) for one condition. The condition is
        what the prompt does not share with the prompt's own text on either side: a template that trims its
        message's ends (Llama 3's) trims the condition's, or the instruction's, whitespace."""
        head, tail, before, after = self._instruction_sides(instruction)
        text = self._render(self._conversation(head + condition + tail), add_generation_prompt=True)
        start = _shared_length(text, before)
        end = len(text) - _shared_length(text[::-1], after[::-1])
        return text, start, max(start, end)

    # -- the token policy ---------------------------------------------------------------------------------------

    def tokenize(
        self,
        conditions: Sequence[str],
        targets: Sequence[str],
        condition_languages: Sequence[str | None],
        max_length: int,
        instructions: Sequence[str] | None = None,
    ) -> Tokenized:
        """As CausalFamily.tokenize, under the chat policy; instructions: one per pair (default: score()'s)."""
        tokenized = Tokenized([], [], [])
        if instructions is None:
            instructions = [self.settings.score_instruction] * len(conditions)
        prompts, prompt_of_pair = dedupe(list(zip(instructions, conditions)))
        target_texts, target_of_pair = dedupe(targets)
        located = [self._prompt(instruction, condition) for instruction, condition in prompts]
        texts = [text for text, _, _ in located]
        encoded: Any = (  # a tokenizer's BatchEncoding, or its empty stand-in
            self.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
            if texts
            else {"input_ids": [], "offset_mapping": []}
        )
        prefixes: list[tuple[list[int], int, int]] = []  # (ids, tokens before the condition, after it) per prompt
        for (_, start, end), ids, offsets in zip(located, encoded["input_ids"], encoded["offset_mapping"]):
            before = sum(1 for first, _ in offsets if first < start)
            after = sum(1 for first, _ in offsets if first >= end)
            prefixes.append((ids, before, min(after, len(ids) - before)))
        replies = self._ids(target_texts)
        self.check_vocabulary([c for _, c in prompts], [ids for ids, _, _ in prefixes])
        self.check_vocabulary(target_texts, replies)

        pair_prefixes: list[tuple[int, ...]] = []
        pair_targets: list[Target] = []
        cut_prompts: set[int] = set()
        cut_targets: set[int] = set()
        for pair, (p, t) in enumerate(zip(prompt_of_pair, target_of_pair)):
            ids, before, after = prefixes[p]
            own = before + after  # the prompt's tokens that are not the condition's, never cut
            if own + 2 > max_length:
                raise InputError(
                    f"pair {pair}: the chat prompt without its condition (the template's turns and the instruction "
                    f"{prompts[p][0][:60]!r}) takes {own} tokens, leaving no room for a reply within "
                    f"max_length={max_length}; raise max_length or shorten the instruction or system text"
                )
            reply = replies[t][: max_length - own - 1]
            if len(reply) < len(replies[t]):
                cut_targets.add(t)
            condition_room = max_length - own - len(reply) - 1
            condition_length = len(ids) - own
            if condition_length > condition_room:
                cut_prompts.add(p)
                ids = ids[: before + condition_room] + ids[len(ids) - after :]
            pair_prefixes.append(tuple(ids))
            pair_targets.append(Target(tuple(reply), (*reply, self.closing_id)))
        tokenized.truncated_conditions = len({prompts[p][1] for p in cut_prompts})
        tokenized.truncated_targets = len(cut_targets)
        tokenized.conditions, prefix_of_pair = dedupe(pair_prefixes)
        tokenized.targets, scored_of_pair = dedupe(pair_targets)
        tokenized.pairs = list(zip(prefix_of_pair, scored_of_pair))
        self.note_special_tokens(dict.fromkeys([c for _, c in prompts] + target_texts), tokenized)
        return tokenized


def _shared_length(text: str, other: str) -> int:
    """How many first characters `text` and `other` have in common."""
    for index, (mine, theirs) in enumerate(zip(text, other)):
        if mine != theirs:
            return index
    return min(len(text), len(other))
