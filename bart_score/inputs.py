"""Checks of what callers pass in: every problem is reported with the argument's name and the item's index, in words
that every message shares (describe: a value's type; counted: a count with its noun)."""

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


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """`count` followed by the noun in the number that the count takes ("1 row", "0 rows", "2 rows"); `plural` for
    nouns that do not just add an s ("1 reply", "2 replies")."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def option_of(name: str) -> str:
    """The argument a name such as "references[3]" is part of."""
    return name.partition("[")[0]


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


def ordered_items(value: Any, name: str, expected: str, dimensions: int = 1) -> list[Any]:
    """The items of a list, tuple or other ordered sequence: a numpy array, a pandas Series, a datasets column, a
    pyarrow array (each taken as its values, as plain Python objects). Tables (a DataFrame, a datasets.Dataset, a
    pyarrow Table) are refused with the column to pass, since iterating over one gives its column names; so are arrays
    of other than `dimensions` dimensions (references take 2: a row of references per example), sets, dict views,
    generators and iterators (their order is arbitrary or they can be read only once, and scores come back in input
    order)."""
    columns = _table_columns(value)
    if columns is not None:
        shown = ", ".join(map(repr, columns[:5])) + (", ..." if len(columns) > 5 else "")
        column = repr(columns[0]) if columns else "'text'"
        raise InputTypeError(
            f"{name} is {describe(value)}, a table (columns {shown or 'none'}); pass the column that holds the texts "
            f"as a list: {name}=table[{column}].tolist()",
            option=option_of(name),
        )
    ndim = getattr(value, "ndim", None)
    if isinstance(ndim, int) and not 1 <= ndim <= dimensions and not isinstance(value, (str, bytes, bytearray)):
        raise InputTypeError(
            f"{name} is a {ndim}-dimensional {type(value).__name__}; pass an array of "
            f"{'1 or 2 dimensions' if dimensions > 1 else '1 dimension'}, or {expected}",
            option=option_of(name),
        )
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not (
        hasattr(type(value), "__len__") and hasattr(type(value), "__getitem__") and hasattr(type(value), "__iter__")
    ):
        unordered = " (its order is arbitrary)" if isinstance(value, (set, frozenset)) else ""
        raise InputTypeError(
            f"{name} must be {expected}, got {describe(value)}{unordered}; pass a list", option=option_of(name)
        )
    for plain in ("to_pylist", "tolist"):  # pyarrow's; numpy's, pandas', torch's: items as Python objects
        if callable(getattr(value, plain, None)):
            items = getattr(value, plain)()
            if isinstance(items, list):
                return items
    return list(value)


def _table_columns(value: Any) -> list[Any] | None:
    """The column names of a table (pandas or polars DataFrame, datasets.Dataset, pyarrow Table), else None."""
    if isinstance(value, (str, bytes, bytearray, Mapping, list, tuple)):
        return None
    names = getattr(value, "column_names", None)
    if names is None and getattr(value, "ndim", 2) == 2:
        names = getattr(value, "columns", None)
    if names is None or isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):
        return None
    return [column if isinstance(column, (str, int)) else str(column) for column in names]


def _missing(item: Any) -> bool:
    """NaN, pandas' NA or NaT: how data frames hold a missing text."""
    return (isinstance(item, float) and item != item) or type(item).__name__ in ("NAType", "NaTType")


def text_list(value: Any, name: str, count: int | None = None, counted_by: str = "predictions") -> list[str]:
    """A list of strings; with `count`, one per entry of the argument named `counted_by`."""
    items = ordered_items(value, name, "a list of strings")
    if count is not None and len(items) != count:
        raise InputError(f"{name} has {len(items)} entries but {counted_by} has {count}", option=option_of(name))
    for index, item in enumerate(items):
        if not isinstance(item, str):
            if _missing(item):
                raise InputTypeError(
                    f"{name}[{index}] is missing ({item}); every entry must be a string", option=option_of(name)
                )
            raise InputTypeError(f"{name}[{index}] is {describe(item)}; expected a string", option=option_of(name))
        if type(item) is not str:  # a subclass (numpy's str_) carries methods of its own: the text as a plain str
            items[index] = item = str.__str__(item)
        check_text(item, f"{name}[{index}]")
    return items


def reference_lists(value: Any, name: str, count: int, counted_by: str = "predictions") -> list[list[str]]:
    """References as one list per example: a string is one reference, a list of strings several."""
    items = ordered_items(value, name, f"a list (one entry per entry of {counted_by})", dimensions=2)
    if len(items) != count:
        raise InputError(f"{name} has {len(items)} entries but {counted_by} has {count}", option=option_of(name))
    lists = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            lists.append([check_text(str.__str__(item), f"{name}[{index}]")])
            continue
        if _missing(item):
            raise InputTypeError(
                f"{name}[{index}] is missing ({item}); every example needs at least one reference",
                option=option_of(name),
            )
        if isinstance(item, (bytes, dict)) or not hasattr(item, "__iter__"):
            raise InputTypeError(
                f"{name}[{index}] is {describe(item)}; expected a string or a list of strings", option=option_of(name)
            )
        refs = text_list(item, f"{name}[{index}]")
        if not refs:
            raise InputError(
                f"{name}[{index}] is an empty list; every example needs at least one reference", option=option_of(name)
            )
        lists.append(refs)
    return lists


def whole_number(value: Any) -> int | None:
    """`value` as an int when it is an integer (numpy's included; True and False are not), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


# The most digits of a whole number written as text: every such number fits in 64 bits, as torch, numpy and the
# tokenizers take their sizes, and int() never meets its own limit (4,300 digits, past which it raises ValueError).
MAX_INTEGER_DIGITS = 18
# A whole number as an option's text writes it: ASCII digits, with a minus sign for a negative one. int() reads more
# (other scripts' digits: "٣" is 3; "1_000"; surrounding white space; "+5"), and raises a bare ValueError on "²".
_ASCII_INTEGER = re.compile(rf"-?[0-9]{{1,{MAX_INTEGER_DIGITS}}}")


def ascii_integer(text: str) -> int | None:
    """The whole number that `text` writes in ASCII digits (optionally after a minus sign, at most
    MAX_INTEGER_DIGITS of them), else None."""
    return int(text) if _ASCII_INTEGER.fullmatch(text) else None


# The longest decimal number written as text (float() keeps 17 significant digits).
MAX_DECIMAL_CHARS = 64
# A decimal number as an option's text or a table's cell writes it: ASCII digits, a minus sign, a decimal point, an
# exponent. float() reads more: other scripts' digits ("٠.٥" is 0.5), "1_0", "nan", "infinity", white space.
_ASCII_DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def ascii_decimal(text: str) -> float | None:
    """The number that `text` writes in ASCII (see _ASCII_DECIMAL; at most MAX_DECIMAL_CHARS characters), else None.
    An exponent past float's range gives an infinity, or 0."""
    if len(text) > MAX_DECIMAL_CHARS or not _ASCII_DECIMAL.fullmatch(text):
        return None
    return float(text)


def positive_option(value: Any, name: str) -> int:
    """An option that must be a positive integer (numpy's included), or an InputError naming it."""
    number = whole_number(value)
    if number is None or number < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}", option=option_of(name))
    return number


def optional_positive_int(value: Any, name: str) -> int | None:
    if value is None:
        return None
    number = whole_number(value)
    if number is None or number < 1:
        raise InputError(f"{name} must be a positive integer or None, got {value!r}", option=option_of(name))
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


# torch keeps a device's index in 8 bits: torch.device("cuda:300") is cuda:44, and "cuda:128" is cuda:-128.
MAX_DEVICE_INDEX = 127
# A device as torch writes its name: a kind, then an index in ASCII digits without leading zeros (torch refuses
# "cuda:01"; `\d` would take "cuda:٣", which torch refuses with a RuntimeError).
_DEVICE = re.compile(r"([a-z_]+)(?::(0|[1-9][0-9]*))?")


def device_name(device: Any) -> str:
    """A device as torch names it ("cpu", "cuda", "cuda:1", "mps"), checked without torch: a number is a CUDA device's
    index (torch's convention); a torch.device is taken as its name. An index is at most MAX_DEVICE_INDEX. Whether
    the device is there is the engine's check."""
    index = whole_number(device)
    if index is not None:
        if index < 0:
            raise InputError(f"device {index} is not a device; a number names a CUDA device, from 0", option="device")
        _check_device_index(index, device)
        return f"cuda:{index}"
    if type(device).__name__ == "device" and hasattr(device, "type"):  # a torch.device
        device = str(device)
    if not isinstance(device, str):
        raise InputTypeError(
            f"device must be a string such as 'cpu', 'cuda' or 'cuda:1', got {device!r}", option="device"
        )
    parsed = _DEVICE.fullmatch(device)
    if not parsed or parsed[1] not in (*SUPPORTED_DEVICES, *OTHER_TORCH_DEVICES):
        raise InputError(f"device {device!r} is not a device; use 'cpu', 'cuda', 'cuda:<n>' or 'mps'", option="device")
    if parsed[1] not in SUPPORTED_DEVICES:
        raise InputError(
            f"device {device!r} is not supported here; use 'cpu', 'cuda', 'cuda:<n>' or 'mps'", option="device"
        )
    if parsed[2] is not None:  # its length first: int() of thousands of digits takes time, or fails
        _check_device_index(int(parsed[2]) if len(parsed[2]) <= 3 else MAX_DEVICE_INDEX + 1, device)
    return device


def _check_device_index(index: int, device: Any) -> None:
    if index > MAX_DEVICE_INDEX:
        shown = repr(device) if len(repr(device)) <= 40 else f"{repr(device)[:40]}... ({len(str(device)):,} characters)"
        raise InputError(
            f"device {shown} is not a device: its index is over torch's largest, {MAX_DEVICE_INDEX}", option="device"
        )
