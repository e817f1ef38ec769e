"""The documents as a reader takes them in, and true to the code they describe.

- README.md is a metric card of at most CARD_LINES lines, in evaluate's template sections.
- No paragraph or list item of README.md or docs/*.md runs over PARAGRAPH_WORDS words; CHANGELOG.md over
  CHANGELOG_WORDS in all.
- The card's Inputs list and bartscore.py's _KWARGS_DESCRIPTION name every compute option of the options table, each
  with the table's default.
- The subcommands the documents name are the command line's, and the model forms they name exist: the named
  configurations (bart_score.variants) and the kinds of server (the served kinds' registry).
- docs/README.md's map of the code names every module file under bart_score/, and nothing else.

Run as a script (`python tests/test_docs_layout.py`), it prints the counts these tests bound."""

from __future__ import annotations

import argparse
import ast
import glob
import os
import re
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CARD_LINES = 200
PARAGRAPH_WORDS = 150
CHANGELOG_WORDS = 1000
# evaluate's metric card template (metrics/bertscore/README.md): its sections, in order.
CARD_SECTIONS = (
    "## Metric description",
    "## How to use",
    "### Inputs",
    "### Output values",
    "#### Values from popular papers",
    "## Limitations and bias",
    "## Citation",
    "## Further references",
)
WORDED = ["README.md", *sorted(os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, "docs", "*.md")))]
# Every document that may name a subcommand or a model.
DOCUMENTS = [*WORDED, "CHANGELOG.md", os.path.join("bench", "README.md"), os.path.join("tests", "README.md")]

LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s")
FENCE = re.compile(r"\s*```")


def read(document: str) -> str:
    with open(os.path.join(ROOT, document), encoding="utf-8") as handle:
        return handle.read()


def without_front_matter(text: str) -> list[str]:
    """The document's lines, its YAML front matter (the Space's, in README.md) blanked so that line numbers hold."""
    lines = text.splitlines()
    if lines and lines[0] == "---":
        closing = lines.index("---", 1)
        lines[: closing + 1] = [""] * (closing + 1)
    return lines


@dataclass(frozen=True)
class Paragraph:
    line: int  # its first line, 1-based
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


def paragraphs(text: str) -> list[Paragraph]:
    """The paragraphs and list items of a Markdown text: a list item runs with its continuation lines to the next item
    or blank line; headings, tables, HTML comments and code blocks are none of them."""
    found: list[Paragraph] = []
    current: list[str] = []
    start = 0
    in_code = False

    def close() -> None:
        if current:
            found.append(Paragraph(start, " ".join(current)))
            current.clear()

    for number, line in enumerate(without_front_matter(text), 1):
        stripped = line.strip()
        if FENCE.match(line):
            in_code = not in_code
            close()
            continue
        if in_code or not stripped or stripped.startswith(("#", "|", "<!--")):
            close()
            continue
        if LIST_ITEM.match(line):
            close()
        if not current:
            start = number
        current.append(LIST_ITEM.sub("", line, count=1).strip())
    close()
    return found


def long_paragraphs(document: str) -> list[Paragraph]:
    return [paragraph for paragraph in paragraphs(read(document)) if paragraph.words > PARAGRAPH_WORDS]


def card_lines() -> int:
    return len(read("README.md").splitlines())


def changelog_words() -> int:
    return len(read("CHANGELOG.md").split())


def test_the_card_is_short_and_in_the_templates_sections():
    assert card_lines() <= CARD_LINES
    headings = [line for line in read("README.md").splitlines() if re.match(r"#{2,4} ", line)]
    assert [heading for heading in headings if heading in CARD_SECTIONS] == list(CARD_SECTIONS)


def test_no_paragraph_or_list_item_runs_over_its_words():
    long = [f"{document}:{p.line}: {p.words} words" for document in WORDED for p in long_paragraphs(document)]
    assert not long, f"over {PARAGRAPH_WORDS} words (split it, or make it a list or a table): {long}"


def test_the_paragraph_count_sees_items_continuations_and_skips_code_and_tables():
    text = "---\ntitle: x\n---\nOne two\nthree.\n\n- four\n  five\n- six\n  1. seven\n\n```bash\neight\n```\n| nine |\n"
    assert [(p.line, p.words) for p in paragraphs(text)] == [(4, 3), (7, 2), (9, 1), (10, 1)]


def test_the_changelog_is_a_high_level_account():
    assert changelog_words() <= CHANGELOG_WORDS


# -- the compute options and their defaults ---------------------------------------------------------------------

# A default as the documents state it: after "default", up to the end of its clause.
DEFAULT_CLAUSE = re.compile(r"\bdefault\b[:\s]*([^);.]*)", re.IGNORECASE)
LITERAL = re.compile(r"`([^`]+)`|\"([^\"]*)\"|\b(\d[\d,]*\d|\d)\b|\b(True|False|None)\b")


def literals(clause: str) -> set[str]:
    """The values a clause states: code, quoted strings, numbers (their thousands' commas dropped), True/False/None."""
    found = set()
    for code, quoted, number, constant in LITERAL.findall(clause):
        found.add(quoted or (code or number or constant).strip("\"'").replace(",", ""))
    return found


def stated_defaults(text: str) -> set[str]:
    return {value for clause in DEFAULT_CLAUSE.findall(text) for value in literals(clause)}


def table_defaults(spec, default) -> set[str]:
    """The defaults the options table states for an option: its field's default, or where that is None (left to the
    engine or the inputs), the values its text gives as the default."""
    if default is not None:
        return {str(default)}
    return stated_defaults(spec.doc)


def compute_options():
    """(name, spec, default) of every compute option of the metric, the parts of an option made of parts included."""
    from bart_score.options import ScoringOptions

    for name, spec in ScoringOptions.TABLE.items():
        yield name, spec, ScoringOptions.default_of(name)
        if spec.parts is not None:
            for part, part_spec in spec.parts.TABLE.items():
                yield part, part_spec, spec.parts.default_of(part)


def entries(text: str, marker: str) -> dict[str, str]:
    """Each name's entry in a list of options: from the name, where `marker` (a pattern whose named groups are each
    the name) finds it, to the next."""
    found = re.finditer(marker, text, flags=re.MULTILINE)
    starts = [(match.start(), next(name for name in match.groups() if name)) for match in found]
    ends = [start for start, _ in starts[1:]] + [len(text)]
    return {name: text[start:end] for (start, name), end in zip(starts, ends)}


def card_inputs() -> str:
    card = read("README.md")
    return card[card.index("### Inputs") : card.index("### Output values")]


def kwargs_description() -> str:
    """bartscore.py's _KWARGS_DESCRIPTION, built from its source as the module builds it, from its texts and the
    options' description (importing it would import evaluate)."""
    from bart_score.options import ScoringOptions, described_options

    module = ast.parse(read("bartscore.py"))
    texts = {
        statement.targets[0].id: statement.value.value
        for statement in module.body
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
        if isinstance(statement.targets[0], ast.Name)
    }
    for statement in module.body:
        if isinstance(statement, ast.Assign) and getattr(statement.targets[0], "id", None) == "_KWARGS_DESCRIPTION":
            namespace = {**texts, "ScoringOptions": ScoringOptions, "described_options": described_options}
            return eval(compile(ast.Expression(statement.value), "bartscore.py", "eval"), namespace)
    raise AssertionError("bartscore.py has no _KWARGS_DESCRIPTION")


def disagreements(listed: dict[str, str]) -> list[str]:
    """What a list of options lacks or states otherwise than the table."""
    found = []
    for name, spec, default in compute_options():
        if name not in listed:
            found.append(f"{name} is not listed")
            continue
        stated, tabled = stated_defaults(listed[name]), table_defaults(spec, default)
        if stated - tabled - {"None"} or (default is not None and not stated & tabled):
            found.append(f"{name}: the table's default is {sorted(tabled)}, the list says {sorted(stated)}")
    return found


def test_the_cards_inputs_name_every_compute_option_with_the_tables_default():
    assert disagreements(entries(card_inputs(), r"\*\*(\w+)\*\*")) == []


def test_the_metrics_keyword_description_names_every_compute_option_with_the_tables_default():
    description = kwargs_description()
    arguments = description[description.index("Args:") : description.index("Returns:")]
    # an argument's line, or a compute option's name within one (corpus_points' parts)
    names = "|".join(name for name, _, _ in compute_options())
    assert disagreements(entries(arguments, rf"^ {{4}}(\w+)|\b({names}) \(")) == []


def test_a_list_that_lacks_an_option_or_says_another_default_disagrees():
    listed = entries(card_inputs(), r"\*\*(\w+)\*\*")
    assert "windows_k" in listed and "(int, default `3`)" in listed["windows_k"]
    assert disagreements({**listed, "windows_k": "**windows_k** (int, default `4`)"}) == [
        "windows_k: the table's default is ['3'], the list says ['4']"
    ]
    assert disagreements({**listed, "max_tokens": "**max_tokens** (default 4096)"}) == [
        "max_tokens: the table's default is ['2048', '8192'], the list says ['4096']"
    ]
    del listed["retriever"]
    assert disagreements(listed) == ["retriever is not listed"]


# -- subcommands and model forms ----------------------------------------------------------------------------------


def subcommands() -> set[str]:
    from bart_score.cli import build_parser

    (commands,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set(commands.choices)


def named(text: str) -> list[str]:
    """The words of a text written as code."""
    return re.findall(r"`([^`\s]+)`", text)


def code(document: str) -> str:
    """What a document writes as code: its code blocks and its code spans."""
    text = read(document)
    return "\n".join(re.findall(r"```.*?```|`[^`]+`", text, flags=re.DOTALL))


def test_the_subcommands_the_documents_name_are_the_command_lines():
    every = subcommands()
    for document in DOCUMENTS:
        for word in re.findall(r"\bbartscore (\w[\w-]*)", code(document)):
            assert word in every, f"{document}: `bartscore {word}` is no subcommand of {sorted(every)}"
    cli = read(os.path.join("docs", "cli.md"))
    listing = cli[cli.index("Subcommands:") :].split("\n\n")[0]
    assert {word for word in named(listing) if not word.startswith("<")} - {"bartscore"} == every
    for document in ("README.md", os.path.join("docs", "README.md")):
        for line in read(document).splitlines():
            listed = set(named(line)) & every
            if "cli.md)" in line and listed:
                assert listed == every, f"{document}: {line!r} lists some subcommands only"


def server_kinds() -> set[str]:
    from bart_score.models.served.kinds import KINDS

    return set(KINDS)


def test_the_served_forms_the_documents_name_are_kinds_of_the_registry():
    kinds = server_kinds()
    for document in DOCUMENTS:
        for kind in re.findall(r"([\w.]+)\+(?:https?://|URL|<url>)", read(document)):
            assert kind in kinds or kind == "kind", f"{document}: {kind}+URL names no kind of {sorted(kinds)}"
    cli = read(os.path.join("docs", "cli.md"))
    sentence = cli[cli.index("`-m` takes") :].split("\n\n")[0]
    assert "`kind+URL`" in sentence
    assert {word for word in named(sentence) if "+" not in word and "-" not in word} - {"cnn"} == kinds


def test_the_models_the_documents_score_with_exist():
    """A `-m` of a bartscore command that is neither a path, a Hub id nor a URL is a named configuration."""
    from bart_score.variants import NAMED_CHECKPOINTS

    kinds = server_kinds()
    for document in DOCUMENTS:
        for model in re.findall(r"\bbartscore [\w-]+\b[^\n`]*?(?:-m|--model) (\S+)", code(document)):
            model = model.strip("`\"'")
            if "+" in model:
                assert model.split("+")[0] in kinds, f"{document}: -m {model}"
            elif not re.search(r"[/.]", model):
                assert model in NAMED_CHECKPOINTS, f"{document}: -m {model} is no named configuration"


# -- the map of the code ----------------------------------------------------------------------------------------


def code_map() -> str:
    guide = read(os.path.join("docs", "README.md"))
    start = guide.index("## The map of the code")
    end = guide.find("\n## ", start + 1)
    return guide[start : end if end >= 0 else len(guide)]


def mapped_names() -> list[str]:
    """The modules (`scoring/engine.py`) and packages (`scoring/`) the map's table names in its first column,
    relative to bart_score/."""
    rows = re.findall(r"^\| `([^`]+)` \|", code_map(), flags=re.MULTILINE)
    assert rows, "docs/README.md's map of the code has no table"
    return rows


def module_files() -> set[str]:
    """Every module file under bart_score/, a package's __init__.py by its folder (`scoring/`)."""
    found = set()
    package = os.path.join(ROOT, "bart_score")
    for path in glob.glob(os.path.join(package, "**", "*.py"), recursive=True):
        relative = os.path.relpath(path, package).replace(os.sep, "/")
        found.add(relative.removesuffix("__init__.py") if "/" in relative else relative)
    return found


def test_the_map_of_the_code_names_every_module_and_nothing_else():
    mapped, files = set(mapped_names()), module_files()
    assert len(mapped_names()) == len(mapped), "a module named twice in the map of the code"
    assert sorted(files - mapped) == [], "modules the map of the code (docs/README.md) does not name"
    assert sorted(mapped - files) == [], "names in the map of the code that are no module file under bart_score/"


if __name__ == "__main__":
    print(f"README.md: {card_lines()} lines (at most {CARD_LINES})")
    for document in WORDED:
        words = sorted((p.words for p in long_paragraphs(document)), reverse=True)
        listed = f": {words}" if words else ""
        print(f"{document}: {len(words)} paragraphs or list items over {PARAGRAPH_WORDS} words{listed}")
    print(f"CHANGELOG.md: {changelog_words()} words (at most {CHANGELOG_WORDS})")
