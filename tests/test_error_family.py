"""Every error bart_score raises on purpose is a BARTScoreError, and every warning it gives a BARTScoreWarning: read
from the sources (any raise of a built-in exception class, any warnings.warn without a category of the family, fails
naming file:line), and checked on a few of the calls that raise and warn."""

import ast
import builtins
import errno
import functools
import inspect
import os
import re

import pytest

import bart_score
from bart_score import errors, messages
from bart_score.cli import build_parser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "bart_score")
SUBCOMMANDS = next(action.choices for action in build_parser()._actions if action.dest == "command")
BUILT_IN_EXCEPTIONS = {
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
}
# Raises of built-in classes that are Python's protocols, not errors: a module's __getattr__ says a name is missing
# with AttributeError, and `raise SystemExit(main())` is an exit status.
PROTOCOL_RAISES = {("__getattr__", "AttributeError"), ("<module>", "SystemExit")}


def sources(package=PACKAGE):
    """(path relative to the repository, parsed module) of every module under `package`."""
    for folder, _, names in os.walk(package):
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, os.path.dirname(package)), parsed(path)


@functools.cache  # each check below reads the same modules (none changes a tree)
def parsed(path):
    with open(path, encoding="utf-8") as handle:
        return ast.parse(handle.read(), path)


def enclosing_functions(tree):
    """{id(node): the name of the function it is in, or "<module>"} for every node of `tree`."""
    where = {}

    def visit(node, name):
        where[id(node)] = name
        for child in ast.iter_child_nodes(node):
            visit(child, node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else name)

    visit(tree, "<module>")
    return where


def raised_class(node):
    """The name a `raise` gives to its exception's class (`raise ValueError(...)`, `raise ValueError`), or None for a
    re-raise (`raise`, `raise error`) and for classes reached through an attribute."""
    if node.exc is None:
        return None
    called = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return called.id if isinstance(called, ast.Name) else None


def built_in_raises(package=PACKAGE):
    """'file:line: Class' for each raise of a built-in exception class under `package`, the errors module apart."""
    found = []
    for path, tree in sources(package):
        if os.path.basename(path) == "errors.py":
            continue
        functions = enclosing_functions(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or raised_class(node) not in BUILT_IN_EXCEPTIONS:
                continue
            if (functions[id(node)], raised_class(node)) not in PROTOCOL_RAISES:
                found.append(f"{path}:{node.lineno}: {raised_class(node)}")
    return found


def is_warn(call):
    """warnings.warn(...) or a bare warn(...)."""
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr == "warn" and ast.unparse(function.value) == "warnings"
    return isinstance(function, ast.Name) and function.id == "warn"


def warn_calls(package=PACKAGE):
    """('file:line', the category's name or None) for each warnings.warn (or warn) call under `package`: the class of
    the warning it gives (warn(RescaleWarning(...))), or the category it names (warn("...", RescaleWarning))."""
    for path, tree in sources(package):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and is_warn(node):
                keywords = {keyword.arg: keyword.value for keyword in node.keywords}
                given = node.args[1] if len(node.args) > 1 else keywords.get("category")
                if given is None and node.args and isinstance(node.args[0], ast.Call):
                    given = node.args[0].func
                yield f"{path}:{node.lineno}", given.id if isinstance(given, ast.Name) else None


@pytest.mark.slow
def test_the_package_raises_no_built_in_exception_class():
    """Each is one of the family (errors.py), which keeps the built-in base that `except ValueError` relies on."""
    raises = sum(isinstance(node, ast.Raise) for _, tree in sources() for node in ast.walk(tree))
    assert raises > 100  # the walk sees the package's raises
    found = built_in_raises()
    assert not found, f"{len(found)} raise(s) of a built-in exception class:\n" + "\n".join(found)


def test_the_walk_finds_a_built_in_raise_and_lets_re_raises_and_protocols_pass(tmp_path):
    package = tmp_path / "probe"
    package.mkdir()
    (package / "module.py").write_text(
        "def f(error):\n"
        "    raise ValueError('bad')\n"
        "def g(error):\n"
        "    raise OSError\n"
        "def h(error):\n"
        "    try:\n        pass\n    except ValueError:\n        raise\n"
        "    raise error\n"
        "def __getattr__(name):\n"
        "    raise AttributeError(name)\n"
        "raise SystemExit(0)\n"
    )
    assert built_in_raises(str(package)) == ["probe/module.py:2: ValueError", "probe/module.py:4: OSError"]


# Words of the command line: a flag, or the command `bartscore` with one of its subcommands.
FLAG = re.compile(r"(?<![\w-])--[a-z]")
SUBCOMMAND = re.compile(rf"\bbartscore (?:{'|'.join(map(re.escape, SUBCOMMANDS))})\b")
# Where the command line's words belong: the command line itself.
COMMAND_LINE_PACKAGES = ("bart_score/cli/",)


def docstrings(tree):
    """The id of each docstring's node in `tree` (a module's, class's or function's first statement, a string)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def command_line_words(package=PACKAGE, exempt=COMMAND_LINE_PACKAGES):
    """'file:line: text' for each string the package's code writes (an f-string's text included) that holds a
    command-line flag or a `bartscore` subcommand, outside `exempt`: the library says what its messages name as data
    (bart_score.messages), which each front end words. Docstrings are documentation, and the table of options'
    Flag(...) declarations are where the command line takes its flags from, so neither counts."""
    found = []
    for path, tree in sources(package):
        if path.replace(os.sep, "/").startswith(exempt):
            continue
        skipped = docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Flag":
                skipped.update(id(inner) for inner in ast.walk(node))
        strings = [node for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
        for node in sorted(strings, key=lambda node: (node.lineno, node.col_offset)):
            if id(node) not in skipped and (FLAG.search(node.value) or SUBCOMMAND.search(node.value)):
                found.append(f"{path}:{node.lineno}: {node.value!r}")
    return found


@pytest.mark.slow
def test_the_library_writes_no_command_line_flag_or_command():
    found = command_line_words()
    assert not found, f"{len(found)} string(s) of the command line's words in the library:\n" + "\n".join(found)


def test_the_walk_finds_flags_and_commands_and_lets_docstrings_and_flag_declarations_pass(tmp_path):
    package = tmp_path / "probe"
    (package / "cli").mkdir(parents=True)
    (package / "module.py").write_text(
        '"""Run `bartscore score --rescale`."""\n'
        "def f(name):\n"
        '    """--max-length, bartscore baseline."""\n'
        '    raise InputError(f"{name} is missing; give --max-length {name}")\n'
        "def g():\n"
        '    return "make it with bartscore baseline -m cnn"\n'
        'FLAGS = Flag("--rescale", help="as `bartscore baseline` makes")\n'
        'PAIRS = "--pairs-of-words, bartscore cache, bartscore[long], a-- b"\n'
    )
    (package / "cli" / "words.py").write_text('COMMAND = "bartscore baseline --corpus"\n')
    assert command_line_words(str(package), exempt=("probe/cli/",)) == [
        "probe/module.py:4: ' is missing; give --max-length '",
        "probe/module.py:6: 'make it with bartscore baseline -m cnn'",
        "probe/module.py:8: '--pairs-of-words, bartscore cache, bartscore[long], a-- b'",
    ]


# The front ends: the command line, the Space and its app.
FRONT_ENDS = ("bart_score/cli", "space", "app.py")
# Every use of the re module in the front ends, by file and by the function it is in (or the name it gives at module
# level), each on text that is no message: no front end reads an error's or a warning's text to reword it (each says
# the message's parts in its own words: bart_score.cli._wording, space/naming.py).
FRONT_END_REGULAR_EXPRESSIONS = {
    "bart_score/cli/_requests.py: _BREAKING": "control characters in a system name or an id that the output writes",
    "bart_score/cli/meta_eval.py: _slug": "a checkpoint's name made part of the default output's file name",
    "space/batch.py: POSSIBLE_SENTENCE_END": "where an upload's texts may end a sentence, to bound the work",
    "space/batch.py: LETTER_OR_DIGIT": "whether a piece of an upload's text holds a sentence",
    "space/routes.py: _pattern": "a route template of Gradio's made the pattern of the paths it serves",
}


def regular_expression_uses(root=ROOT, front_ends=FRONT_ENDS):
    """'file: where' for each use of the re module (re.compile, re.sub, ..., or an import from it) in the front ends'
    files: where is the function it is in, or at module level the name it is assigned to."""
    found = []
    for front_end in front_ends:
        path = os.path.join(root, front_end)
        files = [path] if path.endswith(".py") else [os.path.join(path, name) for name in sorted(os.listdir(path))]
        for name in (name for name in files if name.endswith(".py")):
            with open(name, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), name)
            functions = enclosing_functions(tree)
            assigned = {
                id(inner): node.targets[0].id
                for node in tree.body
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                for inner in ast.walk(node)
            }
            for node in ast.walk(tree):
                uses_re = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re"
                if uses_re or (isinstance(node, ast.ImportFrom) and node.module == "re"):
                    where = functions[id(node)]
                    where = assigned.get(id(node), where) if where == "<module>" else where
                    found.append(f"{os.path.relpath(name, root)}: {where}")
    return sorted(set(found))


@pytest.mark.slow
def test_no_front_end_reads_a_message_with_a_regular_expression():
    assert regular_expression_uses() == sorted(FRONT_END_REGULAR_EXPRESSIONS)


def test_the_walk_finds_every_use_of_the_re_module(tmp_path):
    (tmp_path / "space").mkdir()
    (tmp_path / "space" / "feedback.py").write_text(
        "import re\n"
        "from re import sub\n"
        "NOTICE = re.compile('NaN$')\n"
        "def said(error):\n"
        "    return re.sub('x', 'y', str(error))\n"
    )
    (tmp_path / "app.py").write_text("def f(text):\n    return text\n")
    assert regular_expression_uses(str(tmp_path), ("space", "app.py")) == [
        "space/feedback.py: <module>",
        "space/feedback.py: NOTICE",
        "space/feedback.py: said",
    ]


@pytest.mark.slow
def test_every_warning_has_a_category_of_the_family():
    calls = list(warn_calls())
    assert len(calls) >= 9  # the walk sees the package's warnings
    family = {name for name, value in vars(errors).items() if inspect.isclass(value) and issubclass(value, Warning)}
    wrong = [f"{where}: {category or 'no category'}" for where, category in calls if category not in family]
    assert not wrong, f"{len(wrong)} warning(s) without a category from bart_score.errors:\n" + "\n".join(wrong)


FAMILY = list(
    dict.fromkeys(
        value for value in vars(errors).values() if inspect.isclass(value) and value.__module__ == errors.__name__
    )
)


@pytest.mark.parametrize("family", FAMILY, ids=lambda family: family.__name__)
def test_each_class_is_in_the_family_keeps_a_built_in_base_and_is_exported_and_listed(family):
    if issubclass(family, Warning):
        assert issubclass(family, errors.BARTScoreWarning) and issubclass(family, UserWarning)
    else:
        assert issubclass(family, errors.BARTScoreError)
        kinds = (ValueError, TypeError, OSError, RuntimeError, ImportError)
        assert family is errors.BARTScoreError or issubclass(family, kinds)
    assert getattr(bart_score, family.__name__) is family and family.__name__ in bart_score.__all__
    assert f"\n    {family.__name__} " in errors.__doc__  # the module's table


def test_bad_input_to_the_statistics_is_an_input_error_and_a_value_error():
    from bart_score.stats import compare_systems

    with pytest.raises(errors.InputError, match="compare_systems needs at least one system") as raised:
        compare_systems({})
    assert isinstance(raised.value, ValueError)
    with pytest.raises(errors.InputError, match=r"resamples must be an integer from 1 to 100,000, got 0"):
        compare_systems({"a": [1.0]}, resamples=0)


def test_bad_input_to_the_meta_evaluation_is_an_input_error():
    from bart_score.meta_eval.benchmarks import resolve_benchmarks
    from bart_score.meta_eval.protocol import correlate

    with pytest.raises(errors.InputError, match=r"protocol must be one of"):
        correlate("nope", ["d"], [1.0], [1.0])
    with pytest.raises(errors.InputError, match=r"scores\[0\] is nan; every score must be a finite number"):
        correlate("pearson", ["d"], [1.0], [float("nan")])
    with pytest.raises(errors.InputError, match=r"unknown benchmark 'cnndm'"):
        resolve_benchmarks(["cnndm"])


def test_a_bad_chunk_size_for_the_score_cache_is_an_input_error(tmp_path):
    from bart_score.scoring.score_cache import ResumableScorer

    with pytest.raises(errors.InputError, match=r"chunk_pairs must be a positive integer, got 0"):
        ResumableScorer(None, str(tmp_path / "cache.jsonl"), chunk_pairs=0)  # refused before the scorer is read


def test_an_output_that_is_a_folder_is_an_output_file_error_with_its_errno(tmp_path):
    from bart_score.corpora._outputs import write_atomically

    with pytest.raises(errors.OutputFileError) as raised:
        write_atomically(str(tmp_path), lambda handle: handle.write("x"))
    assert isinstance(raised.value, OSError) and raised.value.errno == errno.EINVAL
    assert raised.value.filename == str(tmp_path)
    assert raised.value.strerror == "not a regular file (a folder, device, FIFO or socket); it is not replaced"
    assert (
        str(raised.value) == f"not a regular file (a folder, device, FIFO or socket); it is not replaced: '{tmp_path}'"
    )


def test_the_interfaces_are_abstract():
    """A model family or retriever that leaves a method out cannot be made (rather than failing at its first call)."""
    from bart_score.long_documents.retrievers import Retriever
    from bart_score.models.base import Family

    class Partial(Family):
        def tokenize(self, conditions, targets, condition_languages, max_length):
            raise AssertionError

    with pytest.raises(TypeError, match="abstract"):
        Partial(None, None)
    with pytest.raises(TypeError, match="abstract"):
        Retriever()


def test_the_rescaling_warns_in_its_category():
    from bart_score.baselines.rescale import ReferencePoints, rescaled_scores

    with pytest.warns(errors.RescaleWarning, match="faithfulness cannot be rescaled"):
        rescaled_scores({"faithfulness": [-2.5]}, {"faithfulness": ReferencePoints(unrelated=-2.0, copy=-3.0)})


class FlagNaming:
    """A front end's words, as simple as can be: options as flags, tasks as commands, files by their base names."""

    def mention(self, mention):
        flag = "--" + mention.option.replace("_", "-")
        return flag if mention.value is messages.NOT_GIVEN else f"{flag} {mention.value}"

    def recipe(self, recipe):
        return " ".join(["tool", recipe.task, *(f"--{name} {value}" for name, value in recipe.settings.items())])

    def file_name(self, name):
        return os.path.basename(name.path)


def test_a_message_is_data_that_each_front_end_says_in_its_own_words():
    error = errors.InputError(
        messages.Mention("max_length"),
        " must be at least 2, got 1, in ",
        messages.FileName("/srv/data/run.json"),
        option="max_length",
        value=1,
        remedy=[
            "make a baseline: ",
            messages.Recipe("baseline", {"prompt": "summary"}),
            ", or use ",
            messages.Mention("rescale", "corpus"),
        ],
    )
    assert (error.option, error.value) == ("max_length", 1)
    assert str(error) == (
        "max_length must be at least 2, got 1, in '/srv/data/run.json'; make a baseline: baseline with "
        "prompt='summary', or use rescale='corpus'"
    )
    assert error.said(FlagNaming()) == (
        "--max-length must be at least 2, got 1, in run.json; make a baseline: tool baseline --prompt summary, or use "
        "--rescale corpus"
    )
    assert error.problem(FlagNaming()) == "--max-length must be at least 2, got 1, in run.json"
    assert errors.InputError(messages.Mention("predictions", index=3), " is missing").args == (
        "predictions[3] is missing",
    )


def test_the_library_says_a_recipe_as_the_calls_that_do_it_with_their_settings():
    recipe = messages.Recipe(
        "baseline", {"checkpoint": "cnn", "max_length": 512}, {"WEIGHTS": "/w/bart.pth"}, call="make and keep"
    )
    assert messages.KEYWORDS.recipe(recipe) == (
        "make and keep with checkpoint='cnn', max_length=512 and WEIGHTS=/w/bart.pth set in the environment"
    )
    assert messages.KEYWORDS.recipe(messages.Recipe("index")) == "index"
    assert (
        messages.KEYWORDS.recipe(messages.Recipe("index", environment={"HOME": "/h"}))
        == "index with HOME=/h set in the environment"
    )
    assert messages.KEYWORDS.mention(messages.Mention("instruction", index="recall")) == "instruction['recall']"


@pytest.mark.parametrize(
    "cls", [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.BARTScoreError)]
)
def test_every_error_keeps_its_fields_through_pickle(cls):
    """Errors cross processes (torch.distributed ranks, datasets' workers) by pickle, with every field."""
    import pickle

    fields = {"lacking": ["recall"]} if cls is errors.BaselineDirectionsError else {}
    if cls is errors.OutputFileError:
        error = cls("not a regular file", path="/tmp/x")
    else:
        error = cls(
            "bad ", messages.Mention("rescale", "corpus"), option="rescale", value="corpus", remedy="fix", **fields
        )
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls and str(copy) == str(error) and copy.said(FlagNaming()) == error.said(FlagNaming())
    assert copy.__dict__ == error.__dict__


def test_a_warning_is_data_too():
    import pickle
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        recall = messages.Mention("recall")
        warnings.warn(errors.RescaleWarning(recall, " cannot be rescaled", remedy="read raw scores"), stacklevel=2)
    (warning,) = caught
    assert warning.category is errors.RescaleWarning
    assert str(warning.message) == "recall cannot be rescaled; read raw scores"
    assert warning.message.problem(FlagNaming()) == "--recall cannot be rescaled"
    assert str(pickle.loads(pickle.dumps(warning.message))) == str(warning.message)


class RowNaming(FlagNaming):
    """Another front end's words for one entry of an input: its row, counted from 1."""

    def mention(self, mention):
        if isinstance(mention.index, int):
            return f"row {mention.index + 1} of {mention.option}"
        return super().mention(mention)


def test_the_input_checks_name_the_input_and_its_entry_as_data():
    from bart_score.inputs import check_text, device_name, positive_option, reference_lists, text_list

    with pytest.raises(errors.InputTypeError) as raised:
        text_list(["a", 3], "predictions")
    assert (raised.value.option, raised.value.value) == ("predictions", ["a", 3])
    assert messages.Mention("predictions", index=1) in raised.value.parts
    assert str(raised.value) == "predictions[1] is an int; expected a string"
    assert raised.value.said(RowNaming()) == "row 2 of predictions is an int; expected a string"

    with pytest.raises(errors.InputError) as raised:
        text_list(["a"], "sources", 2)
    assert raised.value.option == "sources"
    assert raised.value.said(RowNaming()) == "--sources has 1 entries but --predictions has 2"

    # One reference of an example's list: the example's entry, then the reference's place in it.
    with pytest.raises(errors.InputTypeError) as raised:
        reference_lists([["r"], ["s", None]], "references", 2)
    assert (raised.value.option, raised.value.value) == ("references", messages.NOT_GIVEN)
    assert str(raised.value) == "references[1][1] is None; expected a string"
    assert raised.value.said(RowNaming()) == "row 2 of references[1] is None; expected a string"

    with pytest.raises(errors.InputError) as raised:
        reference_lists(["r", []], "tgts", 2, counted_by="srcs")
    assert raised.value.said(RowNaming()) == (
        "row 2 of tgts is an empty list; every example needs at least one reference"
    )

    with pytest.raises(errors.InputError) as raised:
        check_text("a\ud800", messages.Mention("prompt", index=2))
    assert raised.value.option == "prompt"
    assert raised.value.said(RowNaming()).startswith("row 3 of prompt holds '\\ud800' at character 1")
    with pytest.raises(errors.InputError) as raised:  # a caller's own words name no option
        check_text("\ud800", "the source of segment 3")
    assert raised.value.option is None and str(raised.value).startswith("the source of segment 3 holds")

    with pytest.raises(errors.InputError) as raised:
        positive_option(0, "max_sentences")
    assert (raised.value.option, raised.value.value) == ("max_sentences", 0)
    assert raised.value.said(FlagNaming()) == "--max-sentences must be a positive integer, got 0"

    with pytest.raises(errors.InputError) as raised:
        device_name("tpu")
    assert (raised.value.option, raised.value.value) == ("device", "tpu")
    assert raised.value.said(FlagNaming()) == "--device 'tpu' is not a device; use 'cpu', 'cuda', 'cuda:<n>' or 'mps'"
    assert raised.value.remedy == ("use 'cpu', 'cuda', 'cuda:<n>' or 'mps'",)


def test_a_table_passed_as_texts_is_refused_with_the_column_to_pass_as_its_remedy():
    from bart_score.inputs import text_list

    class Table:  # as a pandas DataFrame looks to the check: columns, two dimensions
        columns = ("summary", "article")
        ndim = 2

    with pytest.raises(errors.InputTypeError) as raised:
        text_list(Table(), "predictions")
    assert raised.value.option == "predictions"
    assert raised.value.problem() == "predictions is a Table, a table (columns 'summary', 'article')"
    assert raised.value.remedy == (
        "pass the column that holds the texts as a list: ",
        messages.Mention("predictions"),
        "=table['summary'].tolist()",
    )


def test_an_error_is_about_the_first_option_its_message_mentions_unless_it_names_another():
    """option defaults to the message's first Mention, with that Mention's value unless value= is given; option= and
    value= given win; a remedy's mentions do not count, and a message that mentions none is about no option."""
    Mention = messages.Mention
    first = errors.InputError("with ", Mention("num_proc", 2), " pass the ", Mention("scorer"), " as a dict")
    assert (first.option, first.value) == ("num_proc", 2)
    named = errors.InputError("with ", Mention("num_proc", 2), " pass ", Mention("scorer"), option="scorer", value=1)
    assert (named.option, named.value) == ("scorer", 1)
    valued = errors.InputError(Mention("device"), " 'tpu' is not a device", value="tpu")
    assert (valued.option, valued.value) == ("device", "tpu")
    unmentioned = errors.InputError("a baseline holds raw reference points", remedy=["drop ", Mention("rescale")])
    assert (unmentioned.option, unmentioned.value) == (None, messages.NOT_GIVEN)
    assert errors.InputError(Mention("device"), " is missing", option=None).option is None


def test_the_constructors_say_the_common_shapes_as_the_raise_would():
    """must_be, one_of and entries_differ give the message a raise would write out, as parts each front end says in
    its own words, with the fields passed through."""
    Mention = messages.Mention
    sized = errors.InputError.must_be(Mention("batch_size"), "a positive integer", "0", value=0, remedy="give 1")
    assert type(sized) is errors.InputError and (sized.option, sized.value) == ("batch_size", 0)
    assert sized.said(FlagNaming()) == "--batch-size must be a positive integer, got 0; give 1"
    listed = ("a list (one entry per entry of ", Mention("predictions"), ")")
    typed = errors.InputTypeError.must_be(Mention("references"), listed, "a str")
    assert type(typed) is errors.InputTypeError and typed.option == "references"
    assert typed.said(FlagNaming()) == "--references must be a list (one entry per entry of --predictions), got a str"
    chosen = errors.InputError.one_of(Mention("aggregation"), ("mean", "max"), "'sum'", value="sum")
    assert str(chosen) == "aggregation must be one of 'mean', 'max', got 'sum'" and chosen.value == "sum"
    counted = errors.InputError.entries_differ(Mention("sources"), 1, Mention("predictions"), 2, value=["a"])
    assert counted.said(FlagNaming()) == "--sources has 1 entries but --predictions has 2"
    assert (counted.option, counted.value) == ("sources", ["a"])
    shown_value = errors.InputError.must_be(Mention("window"), "0 or more", value="x" * 300)
    assert str(shown_value) == f"window must be 0 or more, got {messages.shown('x' * 300)}"
    assert shown_value.value == "x" * 300


def test_a_missing_extra_is_said_in_one_shape_with_the_pip_command_and_any_other_way_out():
    """MissingExtraError.needs: "<what> needs <package>, which is not installed", the pip command as the remedy, then
    what else mends it where something does; the option is the first the message mentions."""
    Mention = messages.Mention
    missing = errors.MissingExtraError.needs("the BM25 retriever", "bm25s", "long")
    assert str(missing) == 'the BM25 retriever needs bm25s, which is not installed; pip install "bartscore[long]"'
    assert isinstance(missing, ImportError) and missing.option is None
    other = errors.MissingExtraError.needs(
        Mention("detokenize", True), "sacremoses", "meta-eval", ", or ", Mention("detokenize", False)
    )
    assert other.remedy == ('pip install "bartscore[meta-eval]"', ", or ", Mention("detokenize", False))
    assert (other.option, other.value) == ("detokenize", True)
    assert str(other).endswith('; pip install "bartscore[meta-eval]", or detokenize=False')


def test_an_option_given_a_path_says_the_path_as_a_file_name_and_keeps_it_as_the_value():
    """at_path: "<option> <path><parts>", the path a FileName (which a front end may show otherwise, or not at all),
    the option and its value the error's fields, whatever else the message mentions."""
    Mention = messages.Mention
    refused = errors.InputError.at_path(
        Mention("folder", "/runs/out"), " holds ", Mention("checkpoint"), "'s files", remedy="give another"
    )
    assert refused.parts[:4] == (Mention("folder"), " ", messages.FileName("/runs/out"), " holds ")
    assert (refused.option, refused.value) == ("folder", "/runs/out")
    assert str(refused) == "folder '/runs/out' holds checkpoint's files; give another"
    assert refused.said(FlagNaming()) == "--folder out holds --checkpoint's files; give another"
