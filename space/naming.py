"""The page's words for what bart_score's messages name as data (bart_score.messages): each tab's PageNaming says an
option or input by the label of the field that gives it on that tab (the table of options' `field`,
bart_score.options; the Compare tab's Source and References boxes; the Batch tab's file columns), a file by its name
without the server's folders, and a baseline recipe as the task of the Space's operator. Nothing here imports
Gradio."""

from __future__ import annotations

import os
from collections.abc import Mapping

from bart_score.messages import KEYWORDS, NOT_GIVEN, FileName, Mention, Recipe
from bart_score.options import OPTION_CLASSES

# The labels of the page's fields that messages name, by element id (app.py gives each field its label from here).
FIELD_LABELS = {
    "directions": "Directions",
    "prompt-phrase": "Custom prompt phrase",
    "source": "Source",
    "references": "References",
    "rescale": "Rescaled scores too",
}

# The library's options that a field of the page sets (the table's field entries, bart_score.options) and the inputs
# the Compare tab's boxes give, by element id: the library's error about one (its `option`) marks that field.
OPTION_FIELDS = {
    **{
        options_class.PREFIX + name: spec.field
        for options_class in OPTION_CLASSES
        for name, spec in options_class.TABLE.items()
        if spec.field is not None
    },
    "sources": "source",
    "references": "references",
}


def field_labels(fields: tuple[str, ...]) -> dict[str, str]:
    """{option or input: the label of its field} for the options and inputs that the fields `fields` (element ids)
    give."""
    return {option: FIELD_LABELS[field] for option, field in OPTION_FIELDS.items() if field in fields}


class PageNaming:
    """How one tab of the page says what messages name (a bart_score.messages.Naming).

    labels: {option or input: what the tab calls the field, or the words, that gives it}; an option no field of the
    tab gives is said as the library says it. An entry of a list input is said as the whole field (the page gives
    every candidate the same boxes, so the library's index is not one the user sees). choices: {option: {value: the
    label of the field's choice}}, for a value said as the choice the user picks."""

    def __init__(self, labels: Mapping[str, str], choices: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.labels, self.choices = dict(labels), dict(choices or {})

    def mention(self, mention: Mention) -> str:
        label = self.labels.get(mention.option)
        if label is None:
            return KEYWORDS.mention(mention)
        value = mention.value
        if value is NOT_GIVEN or mention.index is not None:
            return label
        choice = self.choices.get(mention.option, {}).get(value) if isinstance(value, str) else None
        return f'{label}: "{choice}"' if choice is not None else f"{label} {value!r}"

    def recipe(self, recipe: Recipe) -> str:
        return f"a {recipe.task} for these settings, which the operator of this server makes"

    def file_name(self, name: FileName) -> str:
        return os.path.basename(os.path.normpath(name.path))


# The Compare tab: the settings and its Source and References boxes.
COMPARE_PAGE = PageNaming(field_labels(("directions", "prompt-phrase", "source", "references")))
