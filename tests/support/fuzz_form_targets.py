"""The fuzz targets of what a caller or a visitor sets (see fuzzing.py): every option's check, through the table of
options (CorpusPoints, ScoringOptions and EngineOptions), and the Space's form handling (each tab's `check`: all that
runs on a visitor's inputs before any model). Each is registered at import.

An option's input is a class and a few of its options, each given a value of any type: None, booleans, integers of
any size, floats (NaN and the infinities), strings of odd characters, bytes, lists, tuples, sets, mappings, numpy and
torch values, paths and plain objects; or a value the option takes (one of its choices, its default), so that the
checks of options that go together are reached too."""

from __future__ import annotations

import decimal
import fractions
import functools
import json
import pathlib
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from hypothesis import strategies as st

from support.fuzz_targets import csv_texts, file_bytes, jsonl_texts, scratch, write_file
from support.fuzzing import Target, register

# Strings a check may meet: odd characters, digits of other scripts, the templates' braces, words the options take.
_ODD_TEXTS = ("", " ", "\x00", "\n", "\ud800", "٣", "３", "1_000", "-1", "+3", "nan", "inf", "1e999", "{condition}",
              "{", "}", "{{condition}}", "{condition}{condition}", "{0}", "{condition.x}", "cuda:٣", "cuda:01",
              "cuda:" + "9" * 30, "windows", "corpus", "baseline", "mean", "max", "gptscore", "bm25",
              "longdocfactscore", "summary", "faithfulness", "f_score", "float16", "en_XX", "<s>")  # fmt: skip
# Values a check may meet besides the generated ones: integers past 64 bits, floats, numbers of other kinds,
# containers, paths, plain objects.
_ODD_OBJECTS = (2**63, -(2**63) - 1, 2**64, float("nan"), float("inf"), -0.0, 1e308, complex(1, 2),
                decimal.Decimal("NaN"), decimal.Decimal(3), fractions.Fraction(7, 2), b"mean", bytearray(b"windows"),
                frozenset({"recall"}), {"faithfulness"}, range(3), [], (), {}, [[]], {"recall": "{condition}"},
                {"pairs": 3}, pathlib.Path("baseline.json"), object(), int, len, Ellipsis, NotImplemented)  # fmt: skip


@dataclass(frozen=True)
class Made:
    """A value too large to show, as the recipe that makes it, so that an input's repr stays short (and Python's
    repr of an integer of over 4,300 digits fails): ("int", n) is 10**n, ("-int", n) its negative, ("text", n) n
    characters."""

    kind: str
    size: int

    def value(self) -> Any:
        if self.kind == "text":
            return "x" * self.size
        return 10**self.size if self.kind == "int" else -(10**self.size)


def realised(value: Any) -> Any:
    """An input with each Made in it made."""
    if isinstance(value, Made):
        return value.value()
    if isinstance(value, (list, tuple)):
        return type(value)(realised(item) for item in value)
    if isinstance(value, dict):
        return {key: realised(item) for key, item in value.items()}
    return value


_MADE = st.one_of(
    st.builds(Made, st.sampled_from(["int", "-int"]), st.integers(19, 6000)),
    st.builds(Made, st.just("text"), st.integers(1000, 200_000)),
)


@functools.lru_cache(maxsize=1)
def _array_values() -> tuple[Any, ...]:
    import numpy as np
    import torch

    return (np.int64(3), np.int8(-1), np.float64("nan"), np.bool_(True), np.str_("mean"), np.array(3),
            np.array(["recall", "precision"]), np.array([[1, 2]]), np.array([]), torch.tensor([1.0]),
            torch.tensor(2), torch.device("cpu"), torch.float16)  # fmt: skip


def any_value() -> st.SearchStrategy[Any]:
    """A value of any type (see the module's text); the odd ones (arrays, huge integers, numbers of other kinds,
    odd strings) as often as the generated ones, and alone as often as within containers."""
    arrays = st.sampled_from(range(len(_array_values()))).map(lambda index: _array_values()[index])
    odd = st.one_of(st.sampled_from(_ODD_TEXTS), st.sampled_from(_ODD_OBJECTS), _MADE, arrays)
    generated = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12), st.binary(max_size=8)
    )

    def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(inner, max_size=4),
            st.tuples(inner, inner),
            st.frozensets(st.text(max_size=4), max_size=3),
            st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), inner, max_size=3),
        )

    return st.one_of(odd, st.recursive(st.one_of(generated, odd), containers, max_leaves=6))


# -- every option's check, through the table ---------------------------------------------------------------------


def _option_classes() -> dict[str, type]:
    from bart_score.options import OPTION_CLASSES

    return {options_class.__name__: options_class for options_class in OPTION_CLASSES}


def _taken_values(options_class: type, name: str) -> list[Any]:
    """Values an option takes: its default and its flags' choices and constant."""
    spec = options_class.TABLE[name]
    values = [options_class.default_of(name)]
    for flag in spec.flags:
        values.extend(flag.choices or ())
        values.extend(value for value in (flag.const, flag.default) if value is not None)
    return values


def _option_settings() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(class name, {option: value}): one to three options of one class, each a value of any type or one it takes.
    Every strategy is built once, here: a strategy built for each example costs more than the example."""
    anything = st.deferred(any_value)  # its repr, which Hypothesis may build, stays short
    by_class = []
    for class_name, options_class in sorted(_option_classes().items()):
        value_of = {
            name: st.one_of(anything, st.sampled_from(_taken_values(options_class, name)))
            for name in options_class.TABLE
        }
        pairs = st.lists(
            st.sampled_from(list(options_class.TABLE)).flatmap(
                lambda name, value_of=value_of: st.tuples(st.just(name), value_of[name])
            ),
            min_size=1,
            max_size=3,
            unique_by=lambda pair: pair[0],
        )
        by_class.append(st.tuples(st.just(class_name), pairs.map(dict)))
    return st.one_of(by_class)


def _check_options(setting: tuple[str, dict[str, Any]]) -> Any:
    class_name, values = setting
    return _option_classes()[class_name](**realised(values))


def _checked_again(setting: tuple[str, dict[str, Any]], options: Any) -> None:
    """A checked object is of its class, and checking its values again gives the same object."""
    assert type(options).__name__ == setting[0], options
    assert options.replace() == options, options


# Found before the checks took any value: a numpy array answered a choice's comparison with an array (its truth a
# ValueError); an integer of over 4,300 digits could not be shown in the message (int()'s ValueError); a mapping of
# other keys went to CorpusPoints(**value) (a TypeError).
_OPTIONS_FOUND = (
    ("ScoringOptions", {"aggregation": np.array(["mean", "max"])}),
    ("ScoringOptions", {"long_source": np.array(["windows"])}),
    ("ScoringOptions", {"window": np.array([1, 2])}),
    ("EngineOptions", {"dtype": np.array([1, 2])}),
    ("CorpusPoints", {"pairs": (None, Made("int", 4300))}),
    ("ScoringOptions", {"batch_size": Made("-int", 5000)}),
    ("ScoringOptions", {"window": Made("-int", 5000)}),
    ("EngineOptions", {"max_length": Made("-int", 5000)}),
    ("EngineOptions", {"device": Made("-int", 5000)}),
    ("EngineOptions", {"device": Made("int", 5000)}),
    ("ScoringOptions", {"rescale": "corpus", "corpus_points": {"nope": 1}}),
)

register(
    Target(
        name="options",
        inputs=lambda thorough: _option_settings(),
        run=_check_options,
        check=_checked_again,
        fixed=_OPTIONS_FOUND,
    )
)


def _resolve_options(argument: tuple[str, Any]) -> Any:
    """A call's `options` argument, of any type, given to ScoringOptions.resolve or EngineOptions.resolve."""
    class_name, value = argument
    return _option_classes()[class_name].resolve(realised(value))


register(
    Target(
        name="options-argument",
        inputs=lambda thorough: st.tuples(st.sampled_from(["ScoringOptions", "EngineOptions"]), any_value()),
        run=_resolve_options,
    )
)


# -- the Space's form handling -----------------------------------------------------------------------------------

# Pieces of what a visitor types: the menus' values, odd characters, special tokens, braces, sentence ends.
_FORM_PIECES = ("none", "custom", "summary", "paraphrase", "mt", "encoder", "decoder", "mean", "max", "corpus",
                "baseline", "faithfulness", "precision", "recall", "f_score", "tiny", "chat", "\n", "\r\n",
                "\x00", "\ud800", "<s>", "</s>", "<pad>", "{condition}", "Ph.D. ", "U.S. ", ". ", "!", ")", "=1+1",
                " ")  # fmt: skip
_WORDS = ("The", "cat", "sat", "on", "a", "mat", ".", "Dr.", "It", "rained", "all", "day", "!", "\n")
_DIRECTIONS = ("faithfulness", "precision", "recall", "f_score")
_COLUMNS = ("id", "source", "reference", "reference_1", "reference_2", "references", "sys1", "sys2", "sys3")


def _form_text() -> st.SearchStrategy[Any]:
    """What a text field may give a handler: None or any string (space/fields.py refuses any other type before it);
    a long one as (piece, repeats), which _text_of makes, so that a finding's input stays short."""
    pieces = st.lists(st.one_of(st.sampled_from(_FORM_PIECES), st.text(max_size=8)), max_size=12).map("".join)
    long = st.tuples(st.sampled_from(["word ", "a. ", "Ph.D. ", "x", "\n", ".\n"]), st.integers(100, 6000))
    return st.one_of(st.none(), pieces, long)


def _text_of(value: Any) -> Any:
    return value[0] * value[1] if isinstance(value, tuple) else value


def _words(min_size: int = 1) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(_WORDS), min_size=min_size, max_size=8).map(" ".join)


def _request(valid: dict[str, st.SearchStrategy[Any]], hostile: dict[str, st.SearchStrategy[Any]]) -> Any:
    """A request whose fields are valid values, but for up to three, each given a hostile one: so that most requests
    get past the first refusal and every check is reached."""
    edits = st.lists(st.sampled_from(sorted(hostile)).flatmap(lambda name: st.tuples(st.just(name), hostile[name])))

    def edited(parts: tuple[dict[str, Any], list[tuple[str, Any]]]) -> dict[str, Any]:
        fields, changes = parts
        return {**fields, **dict(changes[:3])}

    return st.tuples(st.fixed_dictionaries(valid), edits).map(edited)


def _settings_fields() -> tuple[dict[str, st.SearchStrategy[Any]], dict[str, st.SearchStrategy[Any]]]:
    """(valid, hostile) values of the settings both tabs have, by their fields' names (space.wiring.SettingsInputs)."""
    valid = {
        "model": st.sampled_from(["tiny", "chat"]),
        "directions": st.lists(st.sampled_from(_DIRECTIONS), min_size=1, max_size=4, unique=True),
        "aggregation": st.sampled_from(["mean", "max"]),
        "prompt_choice": st.sampled_from(["none", "custom", "summary", "paraphrase", "mt"]),
        "prompt_phrase": _words(),
        "prompt_side": st.sampled_from(["encoder", "decoder"]),
    }
    hostile = dict.fromkeys(valid, _form_text())
    hostile["directions"] = st.lists(st.one_of(st.sampled_from(_FORM_PIECES), st.text(max_size=8)), max_size=6)
    return valid, hostile


def _settings_of(request: dict[str, Any]) -> list[Any]:
    """The request's settings in the order the handlers take them (the Space is imported by the strategies)."""
    from space.wiring import SettingsInputs

    return list(SettingsInputs(**{item.name: _text_of(request[item.name]) for item in fields(SettingsInputs)}))


@functools.lru_cache(maxsize=2)
def _space_settings(long_source: bool) -> Any:
    """The operator's settings the fuzzing runs under: the default limits and two models, one of them chat; with
    long_source, the Batch tab scores source windows (its work counted by the sentences)."""
    from space.settings import DEFAULT_MAX_CHARS, DEFAULT_MAX_PAIRS, DEFAULT_MAX_ROWS, Settings

    return Settings(
        models={"tiny": {"checkpoint": "tiny"}, "chat": {"checkpoint": "chat", "chat": True}},
        default_model="tiny",
        device="cpu",
        max_chars=DEFAULT_MAX_CHARS,
        max_rows=DEFAULT_MAX_ROWS,
        max_pairs=DEFAULT_MAX_PAIRS,
        long_source={"long_source": "windows", "retriever": "bm25"} if long_source else {},
    )


def _compare_inputs() -> st.SearchStrategy[dict[str, Any]]:
    """A Compare request as its check gets it (the Space is imported here, so that no example's time counts
    Gradio's import)."""
    import space.handlers  # noqa: F401

    valid, hostile = _settings_fields()
    valid |= {
        "source": st.one_of(st.just(""), _words()),
        "references": st.lists(_words(), max_size=3).map("\n".join),
        "candidates": st.tuples(_words(), _words(), *[st.one_of(st.none(), _words())] * 4).map(list),
    }
    hostile |= {
        "source": _form_text(),
        "references": _form_text(),
        "candidates": st.lists(_form_text(), min_size=6, max_size=6),
    }
    return _request(valid, hostile)


def _check_compare(request: dict[str, Any]) -> Any:
    from space.handlers import CompareHandlers

    settings = _settings_of(request)
    candidates = [_text_of(text) for text in request["candidates"]]
    source, references = _text_of(request["source"]), _text_of(request["references"])
    return CompareHandlers(_space_settings(False)).check(*settings, source, references, candidates)


def _table_files(cell: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, bytes]]:
    """(extension, bytes) of an upload of the Batch tab's columns (an id, a source, references, systems), as CSV or
    JSON lines."""
    columns = st.lists(st.sampled_from(_COLUMNS), min_size=1, max_size=5, unique=True)

    def table(names: list[str]) -> st.SearchStrategy[tuple[list[str], list[list[str]]]]:
        rows = st.lists(st.lists(cell, min_size=len(names), max_size=len(names)), min_size=1, max_size=4)
        return st.tuples(st.just(names), rows)

    def written(parts: tuple[bool, tuple[list[str], list[list[str]]]]) -> tuple[str, bytes]:
        import csv
        import io

        as_csv, (names, rows) = parts
        if not as_csv:
            lines = [json.dumps(dict(zip(names, row))) for row in rows]
            return ".jsonl", "".join(line + "\n" for line in lines).encode("utf-8")
        out = io.StringIO()
        csv.writer(out).writerows([names, *rows])
        return ".csv", out.getvalue().encode("utf-8", "surrogatepass")

    return st.tuples(st.booleans(), columns.flatmap(table)).map(written)


def _batch_inputs() -> st.SearchStrategy[dict[str, Any]]:
    """A Batch request as its check gets it: the upload as (extension, bytes), or None; long_source: whether the
    operator's settings score source windows."""
    import space.handlers  # noqa: F401  (imported here, as for Compare)

    valid, hostile = _settings_fields()
    hostile_cell = _form_text().map(lambda text: "" if text is None else _text_of(text))
    valid |= {
        "long_source": st.booleans(),
        "upload": _table_files(_words()),
        "rescale_choice": st.sampled_from(["none", "corpus", "baseline"]),
    }
    hostile |= {
        "upload": st.one_of(
            st.none(),
            _table_files(st.one_of(_words(0), hostile_cell)),
            st.tuples(st.just(".csv"), file_bytes(csv_texts())),
            st.tuples(st.just(".jsonl"), file_bytes(jsonl_texts())),
            st.tuples(st.sampled_from([".txt", ".CSV", "", ".csv.gz", "missing.csv"]), st.binary(max_size=64)),
        ),
        "rescale_choice": _form_text(),
    }
    return _request(valid, hostile)


def _check_batch(request: dict[str, Any]) -> Any:
    from space.handlers import BatchHandlers

    settings = _settings_of(request)
    path = None
    if request["upload"] is not None:
        extension, data = request["upload"]
        path = scratch(f"upload{extension}")
        if extension != "missing.csv":
            write_file(path, data, len(data))
    handlers = BatchHandlers(_space_settings(request["long_source"]))
    return handlers.check(*settings, path, _text_of(request["rescale_choice"]))


def _checked_request(request: dict[str, Any], checked: Any) -> None:
    """A request the check passes is one the scoring can take: its options checked, its directions resolved."""
    from bart_score.options import ScoringOptions

    assert isinstance(checked.options, ScoringOptions) and checked.options.directions, checked


register(
    Target(name="space-compare", inputs=lambda thorough: _compare_inputs(), run=_check_compare, check=_checked_request)
)
register(Target(name="space-batch", inputs=lambda thorough: _batch_inputs(), run=_check_batch, check=_checked_request))


# The Space's menu setting, BARTSCORE_APP_MODELS: "name=checkpoint[;option=value...]" entries separated by commas, a
# checkpoint that may name an inference server ("vllm+http://host:port/v1"). Parsed at start, without a network.
_SERVER_PARTS = ("vllm+", "sglang+", "tgi+", "llama.cpp+", "ollama+", "VLLM+", "+", "")
_URLS = ("http://127.0.0.1:8000/v1", "https://models.internal/v1", "http://[::1]:8080", "http://user:key@host:1/",
         "http://host:99999", "http://:80", "http//host", "ftp://host", "http://", "http://host/v1/",
         "127.0.0.1:8000")  # fmt: skip
_ENTRY_TEXTS = ("", " ", ",", ";", "=", "==", ";;", "=;", "tiny", "big", "/models/tiny", "org/bart-x", "cnn",
                "served_model=", "chat=maybe", "chat=TRUE", "\ud800", "\x00", "٣")  # fmt: skip


def _menu_inputs() -> st.SearchStrategy[dict[str, Any]]:
    """BARTSCORE_APP_MODELS (and BARTSCORE_APP_DEFAULT_MODEL) as an operator may write them: entries of a name, a
    checkpoint (a served model's kind and URL among them) and options of the table's names or others, with values
    that the options take or odd ones; or any text."""
    from space.settings import MODEL_OPTIONS

    text = st.one_of(st.sampled_from(_ENTRY_TEXTS + _ODD_TEXTS), st.text(max_size=12))
    served = st.builds(lambda kind, url: kind + url, st.sampled_from(_SERVER_PARTS), st.sampled_from(_URLS))
    checkpoint = st.one_of(served, text)
    option = st.builds(
        lambda key, value: f"{key}={value}",
        st.one_of(st.sampled_from(sorted(MODEL_OPTIONS)), text),
        st.one_of(st.sampled_from(["true", "false", "tiny", "de_DE", "en_XX", "causal", "./tokenizer"]), text),
    )
    entry = st.builds(
        lambda name, separator, target, options: f"{name}{separator}{target}" + "".join(";" + o for o in options),
        text,
        st.sampled_from(["=", " = ", "", "=="]),
        checkpoint,
        st.lists(st.one_of(option, text), max_size=3),
    )
    entries = st.lists(entry, max_size=4).map(",".join)
    return st.fixed_dictionaries(
        {
            "BARTSCORE_APP_MODELS": st.one_of(
                entries, text, st.builds(Made, st.just("text"), st.integers(1000, 50_000))
            ),
            "BARTSCORE_APP_DEFAULT_MODEL": st.one_of(st.just("cnn"), st.just("big"), text),
        }
    )


def _parse_menu(environ: dict[str, Any]) -> Any:
    from space.settings import settings_from_env

    return settings_from_env(realised(environ))


def _menu_entries(environ: dict[str, Any], parsed: Any) -> None:
    """A menu the setting parses to is one the app can offer: names and checkpoints without surrounding space, only
    the table's options, each entry's options the engine's (checked together), the default among them."""
    import bart_score
    from space.settings import MODEL_OPTIONS

    assert parsed.default_model in parsed.models
    for name, options in parsed.models.items():
        assert name and name == name.strip() and isinstance(options["checkpoint"], str), (name, options)
        assert options["checkpoint"] and options["checkpoint"] == options["checkpoint"].strip()
        assert set(options) - {"checkpoint"} <= set(MODEL_OPTIONS), options
        bart_score.EngineOptions(**options)


register(
    Target(
        name="space-menu",
        inputs=lambda thorough: _menu_inputs(),
        run=_parse_menu,
        check=_menu_entries,
        fixed=(
            {
                "BARTSCORE_APP_MODELS": "big=vllm+http://127.0.0.1:8000/v1;served_model=tiny",
                "BARTSCORE_APP_DEFAULT_MODEL": "big",
            },
            {"BARTSCORE_APP_MODELS": "big=http://user:key@host/v1", "BARTSCORE_APP_DEFAULT_MODEL": "big"},
            {"BARTSCORE_APP_MODELS": "x=vllm+http://h/v1;served_model", "BARTSCORE_APP_DEFAULT_MODEL": "x"},
            {"BARTSCORE_APP_MODELS": "x=y;chat=\ud800", "BARTSCORE_APP_DEFAULT_MODEL": "x"},
        ),
    )
)
