"""Checks of what callers pass in: every problem is reported with the argument's name and the item's index."""

import numbers
from collections.abc import Mapping


def describe(value):
    """'None', 'a str', 'an int', ...: how an error message names the type of what was given."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def check_text(text, where):
    """Refuses text that cannot be written as UTF-8: a lone surrogate ("\\ud800"), which Python strings can hold (from
    JSON escapes or undecodable command-line bytes) but no tokenizer, file or web page can take."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{where} holds {text[error.start]!r} at character {error.start}, a lone surrogate: it is not valid "
            f"Unicode text and cannot be scored"
        ) from None
    return text


def ordered_items(value, name, expected):
    """The items of a list, tuple or other ordered sequence (numpy array, pandas Series, datasets column). Sets, dict
    views, generators and iterators are refused: their order is arbitrary or they can be read only once, and scores
    come back in input order."""
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not (
        hasattr(type(value), "__len__") and hasattr(type(value), "__getitem__") and hasattr(type(value), "__iter__")
    ):
        unordered = " (its order is arbitrary)" if isinstance(value, (set, frozenset)) else ""
        raise TypeError(f"{name} must be {expected}, got {describe(value)}{unordered}; pass a list")
    return list(value)


def text_list(value, name, count=None, counted_by="predictions"):
    """A list of strings; with `count`, one per entry of the argument named `counted_by`."""
    items = ordered_items(value, name, "a list of strings")
    if count is not None and len(items) != count:
        raise ValueError(f"{name} has {len(items)} entries but {counted_by} has {count}")
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{index}] is {describe(item)}; expected a string")
        check_text(item, f"{name}[{index}]")
    return items


def reference_lists(value, name, count, counted_by="predictions"):
    """References as one list per example: a string is one reference, a list of strings several."""
    items = ordered_items(value, name, f"a list (one entry per entry of {counted_by})")
    if len(items) != count:
        raise ValueError(f"{name} has {len(items)} entries but {counted_by} has {count}")
    lists = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            lists.append([check_text(item, f"{name}[{index}]")])
            continue
        if isinstance(item, (bytes, dict)) or not hasattr(item, "__iter__"):
            raise TypeError(f"{name}[{index}] is {describe(item)}; expected a string or a list of strings")
        refs = text_list(item, f"{name}[{index}]")
        if not refs:
            raise ValueError(f"{name}[{index}] is an empty list; every example needs at least one reference")
        lists.append(refs)
    return lists


def whole_number(value):
    """`value` as an int when it is an integer (numpy's included; True and False are not), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def optional_positive_int(value, name):
    if value is None:
        return None
    number = whole_number(value)
    if number is None or number < 1:
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
    return number
