"""Checks of what callers pass in: every problem is reported with the argument (and the item's index) as a Mention,
in words that every message shares (describe: a value's type; counted: a count with its noun)."""

from __future__ import annotations

import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import InputError, InputTypeError
from .messages import NOT_GIVEN, Mention, Part, parts_of, shown

# An option or input as a check's messages name it: its name ("predictions"), or a Mention (one entry of it:
# Mention("references", index=3)).
Named = str | Mention


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


def _mention_of(named: Named) -> Mention:
    """An option or input given by its name, as a Mention; a Mention as it is."""
    return named if isinstance(named, Mention) else Mention(named)


def _entry_of(named: Named, index: int) -> tuple[Part, ...]:
    """One entry of a list input as a message names it: Mention("references", index=3); an entry of an entry (one
    reference of an example's list), the entry and then its own index (references[3][1])."""
    mention = _mention_of(named)
    if mention.index is None:
        return (Mention(mention.option, index=index),)
    return (mention, f"[{index}]")


def _fields(named: Named, value: Any) -> dict[str, Any]:
    """An error's option and value fields for an input named so: its option, and the value it was given (the value
    given to the whole option, which a check of one entry does not have)."""
    mention = _mention_of(named)
    return {"option": mention.option, "value": value if mention.index is None else NOT_GIVEN}


def check_text(text: str, where: Part | Sequence[Part]) -> str:
    """Refuses text that cannot be written as UTF-8: a lone surrogate ("\\ud800"), which Python strings can hold (from
    JSON escapes or undecodable command-line bytes) but no tokenizer, file or web page can take. where: the text as
    the message names it (a Mention of an option or entry, or a caller's own words)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            *parts_of(where),
            f" holds {text[error.start]!r} at character {error.start}, a lone surrogate: it is not valid Unicode text "
            f"and cannot be scored",
        ) from None
    return text


def ordered_items(value: Any, name: Named, expected: Part | Sequence[Part], dimensions: int = 1) -> list[Any]:
    """The items of a list, tuple or other ordered sequence: a numpy array, a pandas Series, a datasets column, a
    pyarrow array (each taken as its values, as plain Python objects). Tables (a DataFrame, a datasets.Dataset, a
    pyarrow Table) are refused with the column to pass, since iterating over one gives its column names; so are arrays
    of other than `dimensions` dimensions (references take 2: a row of references per example), sets, dict views,
    generators and iterators (their order is arbitrary or they can be read only once, and scores come back in input
    order). expected: what the input must be, as the messages say it."""
    named, expected = _mention_of(name), parts_of(expected)
    fields = _fields(named, value)
    columns = _table_columns(value)
    if columns is not None:
        listed = ", ".join(map(repr, columns[:5])) + (", ..." if len(columns) > 5 else "")
        column = repr(columns[0]) if columns else "'text'"
        raise InputTypeError(
            named,
            f" is {describe(value)}, a table (columns {listed or 'none'})",
            remedy=["pass the column that holds the texts as a list: ", named, f"=table[{column}].tolist()"],
            **fields,
        )
    ndim = getattr(value, "ndim", None)
    if isinstance(ndim, int) and not 1 <= ndim <= dimensions and not isinstance(value, (str, bytes, bytearray)):
        raise InputTypeError(
            named,
            f" is a {ndim}-dimensional {type(value).__name__}",
            remedy=[f"pass an array of {'1 or 2 dimensions' if dimensions > 1 else '1 dimension'}, or ", *expected],
            **fields,
        )
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not (
        hasattr(type(value), "__len__") and hasattr(type(value), "__getitem__") and hasattr(type(value), "__iter__")
    ):
        unordered = " (its order is arbitrary)" if isinstance(value, (set, frozenset)) else ""
        raise InputTypeError.must_be(named, expected, f"{describe(value)}{unordered}", remedy="pass a list", **fields)
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


def text_list(value: Any, name: Named, count: int | None = None, counted_by: str = "predictions") -> list[str]:
    """A list of strings; with `count`, one per entry of the argument named `counted_by`."""
    items = ordered_items(value, name, "a list of strings")
    fields = _fields(name, value)
    if count is not None and len(items) != count:
        raise InputError.entries_differ(_mention_of(name), len(items), Mention(counted_by), count, **fields)
    for index, item in enumerate(items):
        entry = _entry_of(name, index)
        if not isinstance(item, str):
            if _missing(item):
                raise InputTypeError(*entry, f" is missing ({item}); every entry must be a string", **fields)
            raise InputTypeError(*entry, f" is {describe(item)}; expected a string", **fields)
        if type(item) is not str:  # a subclass (numpy's str_) carries methods of its own: the text as a plain str
            items[index] = item = str.__str__(item)
        check_text(item, entry)
    return items


def reference_lists(value: Any, name: str, count: int, counted_by: str = "predictions") -> list[list[str]]:
    """References as one list per example: a string is one reference, a list of strings several."""
    expected = ("a list (one entry per entry of ", Mention(counted_by), ")")
    items = ordered_items(value, name, expected, dimensions=2)
    fields = _fields(name, value)
    if len(items) != count:
        raise InputError.entries_differ(Mention(name), len(items), Mention(counted_by), count, **fields)
    lists = []
    for index, item in enumerate(items):
        entry = Mention(name, index=index)
        if isinstance(item, str):
            lists.append([check_text(str.__str__(item), entry)])
            continue
        if _missing(item):
            raise InputTypeError(entry, f" is missing ({item}); every example needs at least one reference", **fields)
        if isinstance(item, (bytes, dict)) or not hasattr(item, "__iter__"):
            raise InputTypeError(entry, f" is {describe(item)}; expected a string or a list of strings", **fields)
        refs = text_list(item, entry)
        if not refs:
            raise InputError(entry, " is an empty list; every example needs at least one reference", **fields)
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
        raise InputError.must_be(Mention(name), "a positive integer", shown(value), value=value)
    return number


def optional_positive_int(value: Any, name: str) -> int | None:
    if value is None:
        return None
    number = whole_number(value)
    if number is None or number < 1:
        raise InputError.must_be(Mention(name), "a positive integer or None", shown(value), value=value)
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
DEVICE = Mention("device")
_DEVICES_TO_USE = "use 'cpu', 'cuda', 'cuda:<n>' or 'mps'"


def device_name(device: Any) -> str:
    """A device as torch names it ("cpu", "cuda", "cuda:1", "mps"), checked without torch: a number is a CUDA device's
    index (torch's convention); a torch.device is taken as its name. An index is at most MAX_DEVICE_INDEX. Whether
    the device is there is the engine's check."""
    index = whole_number(device)
    if index is not None:
        if index < 0:
            raise InputError(
                DEVICE, f" {shown(index)} is not a device; a number names a CUDA device, from 0", value=device
            )
        _check_device_index(index, device)
        return f"cuda:{index}"
    if type(device).__name__ == "device" and hasattr(device, "type"):  # a torch.device
        device = str(device)
    if not isinstance(device, str):
        raise InputTypeError(
            DEVICE, f" must be a string such as 'cpu', 'cuda' or 'cuda:1', got {shown(device)}", value=device
        )
    parsed = _DEVICE.fullmatch(device)
    if not parsed or parsed[1] not in (*SUPPORTED_DEVICES, *OTHER_TORCH_DEVICES):
        raise InputError(DEVICE, f" {shown(device)} is not a device", value=device, remedy=_DEVICES_TO_USE)
    if parsed[1] not in SUPPORTED_DEVICES:
        raise InputError(DEVICE, f" {shown(device)} is not supported here", value=device, remedy=_DEVICES_TO_USE)
    if parsed[2] is not None:  # its length first: int() of thousands of digits takes time, or fails
        _check_device_index(int(parsed[2]) if len(parsed[2]) <= 3 else MAX_DEVICE_INDEX + 1, device)
    return device


def _check_device_index(index: int, device: Any) -> None:
    if index > MAX_DEVICE_INDEX:
        raise InputError(
            DEVICE,
            f" {shown(device)} is not a device: its index is over torch's largest, {MAX_DEVICE_INDEX}",
            value=device,
        )
