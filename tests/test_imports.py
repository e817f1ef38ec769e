"""The package's modules import each other without a circle, lazy imports (inside functions) and imports for
annotations only (under ``if TYPE_CHECKING:``) included: the import graph of bart_score, read from the sources, has no
cycle. The modules the engine is built on do not refer back to it, not even for annotations; importing the package
loads no Ray. And the modules of bart_score and space/ are each named in their package's docstring (space's with the
ones that import Gradio), no two of them sharing a name. No test module imports another: what they share is in
tests/support/."""

import ast
import collections
import functools
import os
import pathlib
import re
import subprocess
import sys

import pytest
from support.lazy import LazyModule

networkx = LazyModule("networkx")  # imported by the tests of the import graph, not while pytest collects
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "bart_score"


def module_name(path):
    relative = os.path.relpath(path, ROOT)[: -len(".py")].split(os.sep)
    return ".".join(relative[:-1] if relative[-1] == "__init__" else relative)


def imported_modules(path, modules, name, annotations=False):
    """The package's modules that `path` (the module `name`) imports, anywhere in the file but under
    `if TYPE_CHECKING:` (annotations only), unless `annotations`. `from package import name` counts as importing the
    submodule `name` when there is one, else the package."""
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    tree = parsed(path)
    skipped = {
        id(child)
        for node in ast.walk(tree)
        if not annotations and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for child in ast.walk(node)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in modules else source)
    if path.endswith("__init__.py"):  # the package's lazy exports: {name: module} imported on first use
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_EXPORTS" for t in node.targets):
                found.update(f"{package}.{value.value}" for value in node.value.values)
    return {module for module in found if module in modules and module != name}


@functools.cache
def parsed(path):
    """The file's syntax tree, read once per run (the tests walk the package's files several times)."""
    with open(path, encoding="utf-8") as handle:
        return ast.parse(handle.read(), path)


def package_modules():
    """{module name: its file} of every module of the package."""
    paths = []
    for folder, _, names in os.walk(os.path.join(ROOT, PACKAGE)):
        paths += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    return {module_name(path): path for path in paths}


def import_graph(annotations=False):
    """The package's modules and what each imports (with `annotations`, its imports under TYPE_CHECKING too)."""
    modules = package_modules()
    graph = networkx.DiGraph()
    for module, path in modules.items():
        graph.add_node(module)
        for imported in imported_modules(path, modules, module, annotations=annotations):
            # importing a package's submodule runs the package's __init__ first: that is Python's, not a circle
            graph.add_edge(module, imported)
    return graph


@pytest.mark.slow
def test_the_package_has_no_import_circle():
    """Not even through an import for annotations: a module that names another's types only under TYPE_CHECKING still
    depends on it, and a circle of such imports is one that a refactoring can close at run time."""
    graph = import_graph(annotations=True)
    assert graph.number_of_edges() > 40  # the walk sees the package's imports
    cycles = list(networkx.simple_cycles(graph))
    assert not cycles, f"import circles: {sorted(cycles, key=len)[:5]}"


@pytest.mark.slow
def test_the_modules_below_the_engine_do_not_refer_to_it():
    """The engine is built on them (bart_score.scaling._distributed's Workload is what it needs of the engine's Plan):
    none of them imports bart_score.scoring.engine, annotations included. The modules that do import it are the
    package's entry points (its lazy exports, the command line, dataset scoring), all above it."""
    modules = package_modules()
    below = networkx.descendants(import_graph(), "bart_score.scoring.engine")
    seen = {"bart_score.scaling._distributed", "bart_score.scoring._directions", "bart_score.models.loading"}
    assert seen <= below  # the walk sees them
    upward = sorted(
        module
        for module in below
        if "bart_score.scoring.engine" in imported_modules(modules[module], modules, module, annotations=True)
    )
    assert not upward, f"modules below the engine that import it: {upward}"


@pytest.mark.parametrize(
    ("source", "seen"),
    [
        ("from ..scoring import engine", True),
        ("import bart_score.scoring.engine", True),
        ("from ..scoring.engine import BARTScorer", True),
        ("from bart_score.scoring import engine", True),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..scoring.engine import BARTScorer", False),
    ],
)
def test_the_walk_sees_every_form_of_import(tmp_path, source, seen):
    """Lazy imports inside functions count; imports for annotations only count only when annotations are asked for."""
    probe = tmp_path / "probe.py"
    body = "\n".join("    " + line for line in source.splitlines())
    probe.write_text(f"def lazy():\n{body}\n")
    modules = {
        "bart_score": "",
        "bart_score.scoring": "",
        "bart_score.scoring.engine": "",
        "bart_score.cli": "",
        "bart_score.cli.probe": str(probe),
    }
    assert ("bart_score.scoring.engine" in imported_modules(str(probe), modules, "bart_score.cli.probe")) is seen
    assert "bart_score.scoring.engine" in imported_modules(
        str(probe), modules, "bart_score.cli.probe", annotations=True
    )


@pytest.mark.slow  # a fresh interpreter's modules are what is tested
def test_importing_the_package_loads_no_ray():
    """Ray (the ray extra, seconds to import) is imported by score_on_ray's call alone: not by `import bart_score`, nor
    by its exports or the module that holds score_on_ray."""
    probe = (
        "import sys, bart_score, bart_score.scaling.cluster; bart_score.score_on_ray; bart_score.ClusterOptions\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'ray'))"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert shown.stdout.strip() == "[]"


# ---------------------------------------------------------------------------------------------------------------------
# The packages' module lists and names

SPACE = "space"
# "    name   what it holds" in a package's docstring, what it holds going on over lines indented further
LIST_ENTRY = re.compile(r"^    (\S+)\s{2,}(.+(?:\n     +\S.*)*)$", re.MULTILINE)


def docstring(package):
    with open(os.path.join(ROOT, package, "__init__.py"), encoding="utf-8") as handle:
        return ast.get_docstring(ast.parse(handle.read()), clean=False)


def listed(package):
    """{module: description} from the list in a package's docstring; a package is listed as "name/". A description
    may go on over lines indented past its entry's name."""
    return dict(LIST_ENTRY.findall(re.sub(r"\n {5,}", " ", docstring(package))))


def contents(package):
    """The modules of a package folder (but its __init__) and its packages, as "name/"."""
    folder = os.path.join(ROOT, package)
    names = set()
    for name in os.listdir(folder):
        if name.endswith(".py") and name != "__init__.py":
            names.add(name[: -len(".py")])
        elif os.path.isfile(os.path.join(folder, name, "__init__.py")):
            names.add(name + "/")
    return names


def test_the_space_lists_every_module_it_has():
    assert set(listed(SPACE)) == contents(SPACE)


def test_bart_score_lists_every_module_it_has_and_each_of_its_packages():
    entries = listed(PACKAGE)
    assert set(entries) == contents(PACKAGE)
    for package in (name for name in entries if name.endswith("/")):
        bracketed = re.search(r"\[(.+)\]", " ".join(entries[package].split()))
        assert bracketed, f"{package}: its modules are not named in [...]"
        named = set(re.split(r",\s+", bracketed.group(1)))
        assert named == contents(PACKAGE + "/" + package.rstrip("/")), package


def test_the_meta_evaluation_lists_every_module_it_has():
    assert set(listed(PACKAGE + "/meta_eval")) == contents(PACKAGE + "/meta_eval")


def imported_names(path):
    """The modules a file imports by absolute name, anywhere in it (`from x.y import z` imports "x.y")."""
    tree = parsed(path)
    names = []
    for node in ast.walk(tree):
        names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        names += [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
    return names


def imports_gradio(path):
    return any(name.split(".")[0] == "gradio" for name in imported_names(path))


@pytest.mark.slow
def test_the_space_names_the_modules_that_import_gradio():
    said = re.search(r"Gradio is imported by (.+?) only", " ".join(docstring(SPACE).split()))
    assert said, "space/__init__.py's docstring does not say which modules import Gradio"
    folder = os.path.join(ROOT, SPACE)
    importing = {
        name[: -len(".py")]
        for name in os.listdir(folder)
        if name.endswith(".py") and imports_gradio(os.path.join(folder, name))
    }
    assert set(re.split(r", | and ", said.group(1))) == importing


def test_no_two_modules_share_a_name():
    """A module's name says which it is, in an import, a traceback or a search: across the library, the metric and the
    Space, no two module files share one (a package's __init__ and __main__ aside)."""
    paths = [os.path.join(ROOT, name) for name in ("app.py", "bartscore.py")]
    for top in (PACKAGE, SPACE):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            paths += [os.path.join(folder, name) for name in names if name.endswith(".py")]
    by_name = collections.defaultdict(list)
    for path in paths:
        if os.path.basename(path) not in ("__init__.py", "__main__.py"):
            by_name[os.path.basename(path)].append(os.path.relpath(path, ROOT))
    assert not {name: where for name, where in by_name.items() if len(where) > 1}


# ---------------------------------------------------------------------------------------------------------------------
# The tests' own imports


@pytest.mark.slow
def test_no_test_module_imports_another():
    """What test modules share is in tests/support/ (and conftest.py's fixtures): a test module imported by another
    runs its module-level code, its skips and its imports in the other's collection too, and ties the two together."""
    tests = os.path.join(ROOT, "tests")
    test_modules = {name[: -len(".py")] for name in os.listdir(tests) if re.fullmatch(r"(test_\w+|conftest)\.py", name)}
    paths = []
    for folder, _, names in os.walk(tests):
        paths += [os.path.join(folder, name) for name in names if name.endswith(".py")]
    assert len(paths) > len(test_modules) > 40  # the walk sees the test modules and support/
    # A file that never spells a test module's name cannot import it: only the others are parsed (all of tests/ took
    # most of a second).
    spelled = re.compile(rf"\b(?:{'|'.join(sorted(test_modules))})\b")
    imported = {
        os.path.relpath(path, ROOT): sorted({n for n in imported_names(path) if n.split(".")[0] in test_modules})
        for path in paths
        if spelled.search(pathlib.Path(path).read_text(encoding="utf-8"))
    }
    assert not {path: names for path, names in imported.items() if names}
