"""The checks of single options: each takes (value, name) and gives the value, normalised, or raises an InputError
naming the option (name: as messages say it, "corpus_points.seed" for a part)."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..corpora._reading import read_bounded
from ..errors import InputError, InputTypeError
from ..inputs import check_text, describe, device_name, text_list, whole_number
from ..messages import Mention, Part, parts_of, shown
from ..scoring.prompts import PROMPT_SETS
from ._vocabulary import DIRECTIONS

# The most bytes a chat template file may hold: real templates hold a few KiB (SmolLM2's 0.7, Llama 3.1's 4.9).
MAX_CHAT_TEMPLATE_BYTES = 1 << 20


def one_of(choices: Sequence[Any], says: str | None = None) -> Callable[[Any, str], Any]:
    """The check of an option that takes one of `choices` (`says`: the choices as its message writes them)."""

    def check(value: Any, name: str) -> Any:
        # Compared as text only: `value in choices` asks the value whether it equals each, and a numpy array answers
        # with an array, whose truth is an error.
        for choice in choices:
            if value is choice or (isinstance(value, str) and value == choice):
                return choice
        raise InputError(
            Mention(name), f" must be {says or f'one of {tuple(choices)}'}, got {shown(value)}", value=value
        )

    return check


def true_or_false(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InputTypeError(Mention(name), f" must be True or False, got {describe(value)}", value=value)
    return value


def whole_number_from(least: int) -> Callable[[Any, str], int]:
    """The check of an option that takes a whole number of at least `least`."""

    def check(value: Any, name: str) -> int:
        number = whole_number(value)
        if number is None or number < least:
            raise InputError(Mention(name), f" must be an integer of at least {least}, got {shown(value)}", value=value)
        return number

    return check


def device_setting(value: Any, name: str) -> str:
    return device_name(value)


def name_text(value: Any, name: str) -> str:
    """The check of an option that names something (a model, a checkpoint): a text that is not blank."""
    if not isinstance(value, str):
        raise InputTypeError(Mention(name), f" must be a text, got {describe(value)}", value=value)
    if not value.strip():
        raise InputError(Mention(name), " is blank", value=value)
    return check_text(value, name)


def chat_template_file(value: Any, name: str) -> str:
    """A chat template file that can be read: a regular file of UTF-8 text within MAX_CHAT_TEMPLATE_BYTES."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        raise InputTypeError(
            Mention(name), f" must be the path of a chat template file, got {describe(value)}", value=value
        )
    try:
        read_bounded(value, limit=MAX_CHAT_TEMPLATE_BYTES).decode("utf-8")
    except InputError as error:
        raise InputError(Mention(name), ": ", *error.parts, value=value, remedy=error.remedy) from None
    except UnicodeDecodeError as error:
        raise InputError(Mention(name), f" {value!r} is not UTF-8 text (byte {error.start})", value=value) from None
    return value


def unrelated_texts(value: Any, name: str) -> tuple[str, ...]:
    texts = tuple(dict.fromkeys(text_list(value, name)))
    if not texts:
        raise InputError(
            Mention(name), " is empty", value=value, remedy="leave it out to pair texts from different rows"
        )
    return texts


def shown_key(key: object) -> str:
    """A mapping's key as a message shows it, cut to 40 characters."""
    shown = repr(key)
    return shown if len(shown) <= 40 else f"{shown[:40]}..."


def prompt_setting(value: Any, name: str) -> str | tuple[str, ...]:
    """A prompt set's name or one phrase as it is, a sequence of phrases as a tuple; checked by resolve_prompts."""
    prompt = value if isinstance(value, str) else tuple(text_list(value, name))
    resolve_prompts(prompt)
    return prompt


def given_twice(options: object, keywords: Mapping[str, Any], kind: str) -> InputTypeError:
    """The refusal of a call given its settings both as `options` (a `kind`: "a ScoringOptions") and as keywords."""
    return InputTypeError(
        "pass the settings as ",
        Mention("options"),
        f" ({kind}) or as keywords, not both (got {sorted(keywords)} too)",
        value=options,
    )


def checked_directions(directions: str | Sequence[str], name: str = "directions") -> tuple[str, ...]:
    """The directions asked for, in DIRECTIONS order, each once."""
    requested = [directions] if isinstance(directions, str) else text_list(directions, name)
    if not requested:
        raise InputError(
            Mention(name), " is empty", value=directions, remedy="leave it out for every direction the inputs allow"
        )
    for index, direction in enumerate(requested):
        entry = Mention(name, index=index)
        if direction not in DIRECTIONS:
            raise InputError(entry, f" is {shown(direction)}", value=directions, remedy=f"choose from {DIRECTIONS}")
        if direction in requested[:index]:
            raise InputError(
                entry, f" is {shown(direction)} again", value=directions, remedy="give each direction once"
            )
    return tuple(d for d in DIRECTIONS if d in requested)


def resolve_prompts(prompt: str | Sequence[str] | None) -> tuple[tuple[str | None, ...], str]:
    """(phrases, label): a lowercase identifier names a paper set; any other string is one phrase; a sequence is a
    set of phrases."""
    if prompt is None:
        return (None,), "none"
    if isinstance(prompt, str):
        if re.fullmatch(r"[a-z][a-z0-9_-]*", prompt):
            if prompt not in PROMPT_SETS:
                raise InputError(
                    Mention("prompt", prompt),
                    f" is not a prompt set; the sets are {tuple(PROMPT_SETS)}",
                    remedy=["to use it as a phrase, give it as a list of phrases: ", Mention("prompt", [prompt])],
                )
            return PROMPT_SETS[prompt], f"{prompt}({len(PROMPT_SETS[prompt])})"
        phrases = [check_text(prompt, "prompt")]
    else:
        phrases = text_list(prompt, "prompt")
        if not phrases:
            raise InputError(Mention("prompt"), " is an empty list", value=prompt, remedy="pass None for no prompt")
    for index, phrase in enumerate(phrases):
        if not phrase.strip():
            raise InputError(Mention("prompt", index=index), " is blank", value=prompt)
    digest = hashlib.sha1("\n".join(phrases).encode("utf-8")).hexdigest()[:8]
    return tuple(phrases), f"custom-{digest}({len(phrases)})"


def comma_separated(text: str) -> list[str]:
    """-d's directions as a list for ScoringOptions, which checks them (an empty -d is an empty list, which it
    refuses rather than taking it to mean every direction)."""
    return text.split(",") if text else []


def too_long_error(text: Part | Sequence[Part], length: int, limit: int, option: str | None = None) -> InputError:
    """The refusal of a text (`text`: the message's name for it) of `length` characters, over max_chars (`limit`)."""
    return InputError(
        *parts_of(text),
        f" has {length:,} characters, more than ",
        Mention("max_chars", limit),
        option=option,
        remedy=["raise ", Mention("max_chars"), ", or shorten or divide the text"],
    )
