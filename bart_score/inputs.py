"""Checks of what callers pass in: every problem is reported with the argument's name and the item's index."""

from __future__ import annotations

import numbers
import re
from collections.abc import Mapping
from typing import Any

from .errors import InputError, InputTypeError


def describe(value: Any) -> str:
    """'None', 'a str', 'an int', ...: how an error message names the type of what was given."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def check_text(text: str, where: str) -> str:
    """Refuses text that cannot be written as UTF-8: a lone surrogate ("\\ud800"), which Python strings can hold (from
    JSON escapes or undecodable command-line bytes) but no tokenizer, file or web page can take."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            f"{where} holds {text[error.start]!r} at character {error.start}, a lone surrogate: it is not valid "
            f"Unicode text and cannot be scored"
        ) from None
    return text


def ordered_items(value: Any, name: str, expected: str) -> list[Any]:
    """The items of a list, tuple or other ordered sequence (numpy array, pandas Series, datasets column). Sets, dict
    views, generators and iterators are refused: their order is arbitrary or they can be read only once, and scores
    come back in input order."""
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not (
        hasattr(type(value), "__len__") and hasattr(type(value), "__getitem__") and hasattr(type(value), "__iter__")
    ):
        unordered = " (its order is arbitrary)" if isinstance(value, (set, frozenset)) else ""
        raise InputTypeError(f"{name} must be {expected}, got {describe(value)}{unordered}; pass a list")
    return list(value)


def text_list(value: Any, name: str, count: int | None = None, counted_by: str = "predictions") -> list[str]:
    """A list of strings; with `count`, one per entry of the argument named `counted_by`."""
    items = ordered_items(value, name, "a list of strings")
    if count is not None and len(items) != count:
        raise InputError(f"{name} has {len(items)} entries but {counted_by} has {count}")
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise InputTypeError(f"{name}[{index}] is {describe(item)}; expected a string")
        check_text(item, f"{name}[{index}]")
    return items


def reference_lists(value: Any, name: str, count: int, counted_by: str = "predictions") -> list[list[str]]:
    """References as one list per example: a string is one reference, a list of strings several."""
    items = ordered_items(value, name, f"a list (one entry per entry of {counted_by})")
    if len(items) != count:
        raise InputError(f"{name} has {len(items)} entries but {counted_by} has {count}")
    lists = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            lists.append([check_text(item, f"{name}[{index}]")])
            continue
        if isinstance(item, (bytes, dict)) or not hasattr(item, "__iter__"):
            raise InputTypeError(f"{name}[{index}] is {describe(item)}; expected a string or a list of strings")
        refs = text_list(item, f"{name}[{index}]")
        if not refs:
            raise InputError(f"{name}[{index}] is an empty list; every example needs at least one reference")
        lists.append(refs)
    return lists


def whole_number(value: Any) -> int | None:
    """`value` as an int when it is an integer (numpy's included; True and False are not), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def optional_positive_int(value: Any, name: str) -> int | None:
    if value is None:
        return None
    number = whole_number(value)
    if number is None or number < 1:
        raise InputError(f"{name} must be a positive integer or None, got {value!r}")
    return number


SUPPORTED_DEVICES = ("cpu", "cuda", "mps")
# The other kinds of device torch knows, which the engine does not run on.
OTHER_TORCH_DEVICES = (
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "meta",
    "hpu",
    "mtia",
    "ipu",
    "privateuseone",
)


def device_name(device: Any) -> str:
    """A device as torch names it ("cpu", "cuda", "cuda:1", "mps"), checked without torch: a number is a CUDA device's
    index (torch's convention); a torch.device is taken as its name. Whether the device is there is the engine's
    check."""
    index = whole_number(device)
    if index is not None:
        if index < 0:
            raise InputError(f"device {index} is not a device; a number names a CUDA device, from 0")
        return f"cuda:{index}"
    if type(device).__name__ == "device" and hasattr(device, "type"):  # a torch.device
        device = str(device)
    if not isinstance(device, str):
        raise InputTypeError(f"device must be a string such as 'cpu', 'cuda' or 'cuda:1', got {device!r}")
    parsed = re.fullmatch(r"([a-z_]+)(:\d+)?", device)
    if not parsed or parsed[1] not in (*SUPPORTED_DEVICES, *OTHER_TORCH_DEVICES):
        raise InputError(f"device {device!r} is not a device; use 'cpu', 'cuda', 'cuda:<n>' or 'mps'")
    if parsed[1] not in SUPPORTED_DEVICES:
        raise InputError(f"device {device!r} is not supported here; use 'cpu', 'cuda', 'cuda:<n>' or 'mps'")
    return device
