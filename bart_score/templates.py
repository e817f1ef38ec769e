"""Prompt templates and chat options, checked before any model is loaded (nothing here imports torch).

A causal LM's ``template`` and a chat ``instruction`` hold the field ``{condition}`` once and no other field, with
``{{`` and ``}}`` for literal braces (``str.format``'s rules). Chat scoring (bart_score.models.chat) has one
instruction per direction: DEFAULT_INSTRUCTIONS, or the caller's."""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .errors import InputError, InputTypeError
from .inputs import check_text, option_of, text_list
from .rescale import POINT_DIRECTIONS

# A causal LM's template when none is given: the condition, then a line break.
DEFAULT_TEMPLATE = "{condition}\n"
# The condition of each direction, and what the model is asked to write from it: faithfulness's is a source that the
# target summarises or renders; precision's a reference that the target restates; recall's the prediction, from which
# the reference is to be restated. Paraphrase both ways, as BARTScore's precision and recall are.
DEFAULT_INSTRUCTIONS = {
    "faithfulness": "Summarize the following text.\n\n{condition}",
    "precision": "Paraphrase the following text.\n\n{condition}",
    "recall": "Paraphrase the following text.\n\n{condition}",
}
# Stands for the condition when a chat template is rendered to find where the condition goes in the prompt
# (bart_score.models.chat): an instruction or system text holding it is refused.
CONDITION_PLACEHOLDER = "\u2063bartscore-condition\u2063"
# The direction whose instruction BARTScorer.score uses when it is given none: its arguments are sources and targets.
SCORE_DIRECTION = "faithfulness"


@dataclass(frozen=True)
class ChatSettings:
    """Checked chat options: the instruction of each direction of POINT_DIRECTIONS, and the system text or None."""

    instructions: Mapping[str, str]
    system: str | None

    @property
    def score_instruction(self) -> str:
        return self.instructions[SCORE_DIRECTION]


def chat_settings(
    chat: bool,
    instruction: str | Mapping[str, str] | None = None,
    system: str | None = None,
    *,
    template: str | None = None,
    compatibility: str | None = None,
) -> ChatSettings | None:
    """The checked chat options (None for the other policies), refused before any model is loaded when they do not
    go together. instruction: one for every direction, or {direction: instruction} for some (the others keep
    DEFAULT_INSTRUCTIONS)."""
    if not isinstance(chat, bool):
        raise InputTypeError(f"chat must be True or False, got {chat!r}", option="chat")
    if not chat:
        for option, value in (("instruction", instruction), ("system", system)):
            if value is not None:
                raise InputError(f"{option} is for chat scoring, which is not asked for", option=option)
        return None
    if template is not None:
        raise InputError(
            "template does not go with chat scoring: the model's chat template builds the prefix; put your text "
            "around {condition} in the instruction",
            option="template",
        )
    if compatibility is not None:
        raise InputError(
            f"compatibility {compatibility!r} does not go with chat scoring: GPTScore scores plain text, without a "
            f"chat template",
            option="compatibility",
        )
    if system is not None:
        if not isinstance(system, str):
            raise InputTypeError(f"system must be a string, got {type(system).__name__}", option="system")
        if not check_text(system, "system").strip():
            raise InputError("system is blank; leave it out for the chat template's own default", option="system")
        refuse_placeholder(system, "system")
    instructions = dict(DEFAULT_INSTRUCTIONS)
    if isinstance(instruction, Mapping):
        for direction, text in instruction.items():
            if direction not in POINT_DIRECTIONS:
                raise InputError(
                    f"instruction has an instruction for {direction!r}; the directions with one are "
                    f"{', '.join(POINT_DIRECTIONS)} (f_score uses precision's and recall's)",
                    option="instruction",
                )
            instructions[direction] = text
    elif instruction is not None:
        instructions = dict.fromkeys(POINT_DIRECTIONS, instruction)
    for direction, text in instructions.items():
        where = "instruction" if not isinstance(instruction, Mapping) else f"instruction[{direction!r}]"
        template_sides(check_text(text, where) if isinstance(text, str) else text, where)
        refuse_placeholder(text, where)
    return ChatSettings(instructions, system)


def instruction_list(
    instruction: str | Sequence[str] | None, count: int, settings: ChatSettings | None
) -> list[str] | None:
    """score()'s instruction= as one instruction per pair (None: the scorer's own), each checked."""
    if instruction is None:
        return None
    if settings is None:
        raise InputError("instruction is for chat scoring; load the scorer with chat=True", option="instruction")
    if isinstance(instruction, str):
        template_sides(instruction, "instruction")
        refuse_placeholder(instruction, "instruction")
        return [instruction] * count
    instructions = text_list(instruction, "instruction", count, counted_by="srcs")
    for text in dict.fromkeys(instructions):
        template_sides(text, f"instruction[{instructions.index(text)}]")
        refuse_placeholder(text, f"instruction[{instructions.index(text)}]")
    return instructions


def refuse_placeholder(text: str, name: str) -> None:
    """Refuses a chat text (`name`: its option) holding CONDITION_PLACEHOLDER, which chat scoring writes in the
    condition's place to find where the condition goes."""
    at = text.find(CONDITION_PLACEHOLDER)
    if at >= 0:
        raise InputError(
            f"{name} holds {CONDITION_PLACEHOLDER!r} at character {at}, the text chat scoring puts in the "
            f"condition's place to find where the condition goes in the prompt; take it out",
            option=option_of(name),
        )


def template_sides(template: str, name: str = "template") -> tuple[str, str]:
    """The literal text before and after the template's one {condition} field, with {{ and }} read as braces
    (`name`: the option's name in the errors)."""
    if not isinstance(template, str):
        raise InputTypeError(
            f"{name} must be a string holding '{{condition}}' once, got {type(template).__name__}",
            option=option_of(name),
        )
    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError as error:
        raise InputError(
            f"{name} {template!r} has a stray brace ({error}); write a literal brace as {{{{ or }}}}",
            option=option_of(name),
        ) from None
    fields = [(field, spec, conversion) for _, field, spec, conversion in pieces if field is not None]
    if fields != [("condition", "", None)]:
        raise InputError(
            f"{name} must hold the field {{condition}} once and no other field, got {template!r}; write a "
            f"literal brace as {{{{ or }}}}",
            option=option_of(name),
        )
    sides, side = ["", ""], 0
    for literal, field, _, _ in pieces:
        sides[side] += literal
        if field is not None:
            side = 1
    return sides[0], sides[1]
