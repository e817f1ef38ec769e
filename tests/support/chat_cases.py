"""What the chat tests share (tests/test_chat*.py): the texts they score (`SOURCES`, `PREDICTIONS`, `REFERENCES`),
the plain loop's scores of a pair under a chat format (`reference`, each pair's once per run) and how far the engine's
may be from them (`largest_difference`, `TOLERANCE`), the engine with chat=True per set of options (`chat_scorer`),
and the hostile templates (`HOSTILE_TEMPLATES`, `THREE_LOOPS`), each with the reason it is refused for."""

import functools

import numpy as np

import bart_score
from support.models import CLOSING_TOKENS
from support.reference import chat_reference_score

TOLERANCE = 1e-5

SOURCES = [
    "The city council approved a new budget on Tuesday that raises spending on schools by five percent.",
    "Heavy rain flooded the main road near the river, and the police closed it for most of the day.",
    "A local bakery won a national prize for its bread; the owner said the whole team had worked for it.",
]
PREDICTIONS = [
    "The council approved a budget that raises school spending.",
    "Rain flooded a road, which the police closed.",
    "A bakery won a prize for its bread.",
]
REFERENCES = [
    ["The council passed a budget with more money for schools.", "A new budget raises school spending."],
    ["The police closed a flooded road."],
    ["A bakery's bread won a national prize.", "The bakery won a prize.", "Bread from a bakery won."],
]

_PAIR_SCORES: dict = {}


def reference(chat_model, conditions, targets, instruction, system=None, max_length=1024):
    """The plain loop's scores, each pair's once per run: tests ask for the same pairs under other engine settings."""
    checkpoint, template, (model, tokenizer) = chat_model

    def pair_score(condition, target):
        key = (checkpoint, condition, target, instruction, system, max_length)
        if key not in _PAIR_SCORES:
            _PAIR_SCORES[key] = chat_reference_score(
                model, tokenizer, condition, target, instruction, CLOSING_TOKENS[template], system, max_length
            )
        return _PAIR_SCORES[key]

    return np.array([pair_score(c, t) for c, t in zip(conditions, targets)])


@functools.cache
def chat_scorer(checkpoint, **options):
    """The engine with chat=True on `checkpoint`, loaded once per run for each set of options."""
    return bart_score.BARTScorer(checkpoint=checkpoint, device="cpu", chat=True, **options)


def largest_difference(got, expected):
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - expected)))


# Templates a model may bring that no render may let through, each with the reason it is refused for (a pattern).
THREE_LOOPS = "".join(f"{{% for {v} in range(10000) %}}" for v in "ijk") + "{% endfor %}" * 3
HOSTILE_TEMPLATES = {
    "endless": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        r"it asks range\(\) for 100,000 numbers, over the limit of 10,000",
    ),
    "three loops": (THREE_LOOPS, r"it ran past its time limit of 5 s"),
    "huge string": (
        "{{ 'x' * 4000000000 }}",
        r"it repeats a string of 1 characters 4,000,000,000 times, making 4,000,000,000 characters, over the limit "
        r"of 1,000,\d+",
    ),
    "huge list": (
        "{{ ([0] * 4000000000)|length }}",
        r"it repeats a list of 1 items 4,000,000,000 times, making 4,000,000,000 items, over the limit of 1,000,\d+",
    ),
    "float count": ("{{ 'x' * 4e9 }}", r"can't multiply sequence by non-int of type 'float'"),
    "doubling": (
        "{% set s = 'xxxxxxxxxx' %}" + "{% set s = s + s %}" * 40 + "{{ s }}",
        r"it joins a string of 655,360 characters and a string of 655,360 characters, making 1,310,720 characters, "
        r"over the limit of 1,000,\d+",
    ),
    "huge power": ("{{ 9 ** (9 ** 9) }}", r"it raises 9 to the power 387,420,489, a number of over 1,549,681,956 bits"),
    "wide center": ("{{ 'x'|center(3000000000) }}", r"it needed more memory than its limit of [\d,]+ MiB"),
    "long output": (
        "{% for i in range(10000) %}{{ 'y' * 1000 }}{% endfor %}",
        r"it writes over 65,\d+ characters, the limit for messages of \d+ characters \(twice theirs and 65,536 more\)",
    ),
    # Within every other limit: the scoring process tokenized it for each prompt, until it was killed at 4.9 GB.
    "long text": (
        "{{ 'x ' * 490000 }}",
        r"it writes over 65,\d+ characters, the limit for messages of \d+ characters \(twice theirs and 65,536 more\)",
    ),
    "recursion": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", r"it recursed too deeply"),
}
