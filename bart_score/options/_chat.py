"""A causal LM's prompt template and the chat options, checked before any model is loaded (nothing here imports
torch).

A causal LM's ``template`` and a chat ``instruction`` hold the field ``{condition}`` once and no other field, with
``{{`` and ``}}`` for literal braces (``str.format``'s rules). Chat scoring (bart_score.models.chat) has one
instruction per direction: DEFAULT_INSTRUCTIONS, or the caller's."""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, InputTypeError
from ..inputs import check_text, option_of, text_list
from ..messages import Mention, shown
from ._vocabulary import POINT_DIRECTIONS

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
# The options whose texts hold {condition}, as messages name them.
TEMPLATE = Mention("template")
INSTRUCTION = Mention("instruction")
SYSTEM = Mention("system")
# What a template or instruction with braces that are not its one field can do instead.
BRACES_REMEDY = "write a literal brace as {{ or }}"
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
        raise InputTypeError(Mention("chat"), f" must be True or False, got {shown(chat)}", value=chat)
    if not chat:
        for option, value in (("instruction", instruction), ("system", system)):
            if value is not None:
                raise chat_only(Mention(option), value)
        return None
    if template is not None:
        raise InputError(
            TEMPLATE, " does not go with chat scoring", value=template, remedy=["put your text in the ", INSTRUCTION]
        )
    if compatibility is not None:
        raise InputError(
            Mention("compatibility", compatibility),
            " does not go with chat scoring: GPTScore scores plain text, without a chat template",
        )
    if system is not None:
        if not isinstance(system, str):
            raise InputTypeError(SYSTEM, f" must be a string, got {type(system).__name__}", value=system)
        if not check_text(system, SYSTEM).strip():
            raise InputError(
                SYSTEM, " is blank", value=system, remedy="leave it out for the chat template's own default"
            )
        refuse_placeholder(system, SYSTEM)
    instructions = dict(DEFAULT_INSTRUCTIONS)
    if isinstance(instruction, Mapping):
        for direction, text in instruction.items():
            if direction not in POINT_DIRECTIONS:
                raise InputError(
                    INSTRUCTION,
                    f" has an instruction for {shown(direction)}, not one of {POINT_DIRECTIONS}",
                    value=instruction,
                )
            instructions[direction] = text
    elif instruction is not None:
        instructions = dict.fromkeys(POINT_DIRECTIONS, instruction)
    for direction, text in instructions.items():
        named = Mention("instruction", index=direction if isinstance(instruction, Mapping) else None)
        template_sides(check_text(text, named) if isinstance(text, str) else text, named)
        refuse_placeholder(text, named)
    return ChatSettings(instructions, system)


def instruction_list(
    instruction: str | Sequence[str] | None, count: int, settings: ChatSettings | None
) -> list[str] | None:
    """score()'s instruction= as one instruction per pair (None: the scorer's own), each checked."""
    if instruction is None:
        return None
    if settings is None:
        raise chat_only(INSTRUCTION, instruction, "load the scorer with ")
    if isinstance(instruction, str):
        template_sides(instruction, INSTRUCTION)
        refuse_placeholder(instruction, INSTRUCTION)
        return [instruction] * count
    instructions = text_list(instruction, "instruction", count, counted_by="srcs")
    for text in dict.fromkeys(instructions):
        template_sides(text, Mention("instruction", index=instructions.index(text)))
        refuse_placeholder(text, Mention("instruction", index=instructions.index(text)))
    return instructions


def chat_only(named: Mention, value: object, asked_by: str = "ask for it with ") -> InputError:
    """The refusal of a chat option (`named`, given `value`) where chat scoring is not asked for; `asked_by`: how to
    ask for it, the words before chat=True."""
    return InputError(
        named, " is for chat scoring, which is not asked for", value=value, remedy=[asked_by, Mention("chat", True)]
    )


def _option_named(named: Mention | str) -> str:
    """The option that a text checked here belongs to: a Mention's, or, for a caller's own words ("instructions[2]"),
    the name before any index."""
    return named.option if isinstance(named, Mention) else option_of(named)


def refuse_placeholder(text: str, named: Mention | str) -> None:
    """Refuses a chat text (`named`: its option, as a Mention or a caller's own words) holding
    CONDITION_PLACEHOLDER, which chat scoring writes in the condition's place to find where the condition goes."""
    at = text.find(CONDITION_PLACEHOLDER)
    if at >= 0:
        raise InputError(
            named,
            f" holds {CONDITION_PLACEHOLDER!r} at character {at}, the text chat scoring puts in the condition's place "
            f"to find where the condition goes in the prompt",
            option=_option_named(named),
            value=text,
            remedy="take it out",
        )


def template_sides(template: str, named: Mention | str = TEMPLATE) -> tuple[str, str]:
    """The literal text before and after the template's one {condition} field, with {{ and }} read as braces
    (`named`: the option the errors name, as a Mention or a caller's own words)."""
    about: dict[str, Any] = {"option": _option_named(named), "value": template}  # the error's fields
    if not isinstance(template, str):
        raise InputTypeError.must_be(named, "a string holding '{condition}' once", type(template).__name__, **about)
    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError as error:
        raise InputError(
            named, f" {shown(template)} has a stray brace ({error})", remedy=BRACES_REMEDY, **about
        ) from None
    fields = [(field, spec, conversion) for _, field, spec, conversion in pieces if field is not None]
    if fields != [("condition", "", None)]:
        raise InputError(
            named, " must hold the field {condition} once and no other field", remedy=BRACES_REMEDY, **about
        )
    sides, side = ["", ""], 0
    for literal, field, _, _ in pieces:
        sides[side] += literal
        if field is not None:
            side = 1
    return sides[0], sides[1]
