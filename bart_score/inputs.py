"""Checks of what callers pass in: every problem is reported with the argument's name and the item's index."""


def describe(value):
    """'None', 'a str', 'an int', ...: how an error message names the type of what was given."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def text_list(value, name, count=None):
    """A list of strings; with `count`, one per prediction."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a list of strings, got {describe(value)}")
    items = list(value)
    if count is not None and len(items) != count:
        raise ValueError(f"{name} has {len(items)} entries but predictions has {count}")
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{index}] is {describe(item)}; expected a string")
    return items


def reference_lists(value, name, count):
    """References as one list per example: a string is one reference, a list of strings several."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a list (one entry per prediction), got {describe(value)}")
    items = list(value)
    if len(items) != count:
        raise ValueError(f"{name} has {len(items)} entries but predictions has {count}")
    lists = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            lists.append([item])
            continue
        if isinstance(item, (bytes, dict)) or not hasattr(item, "__iter__"):
            raise TypeError(f"{name}[{index}] is {describe(item)}; expected a string or a list of strings")
        refs = list(item)
        if not refs:
            raise ValueError(f"{name}[{index}] is an empty list; every example needs at least one reference")
        for ref_index, ref in enumerate(refs):
            if not isinstance(ref, str):
                raise TypeError(f"{name}[{index}][{ref_index}] is {describe(ref)}; expected a string")
        lists.append(refs)
    return lists


def optional_positive_int(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
    return value
