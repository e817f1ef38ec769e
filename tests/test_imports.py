"""The package's modules import each other without a circle, lazy imports (inside functions) included: the import
graph of bart_score, read from the sources, has no cycle."""

import ast
import os

import networkx
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "bart_score"


def module_name(path):
    relative = os.path.relpath(path, ROOT)[: -len(".py")].split(os.sep)
    return ".".join(relative[:-1] if relative[-1] == "__init__" else relative)


def imported_modules(path, modules, name):
    """The package's modules that `path` (the module `name`) imports, anywhere in the file but under
    `if TYPE_CHECKING:` (annotations only). `from package import name` counts as importing the submodule `name` when
    there is one, else the package."""
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    skipped = {
        id(child)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
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


def import_graph():
    paths = []
    for folder, _, names in os.walk(os.path.join(ROOT, PACKAGE)):
        paths += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    modules = {module_name(path): path for path in paths}
    graph = networkx.DiGraph()
    for module, path in modules.items():
        graph.add_node(module)
        for imported in imported_modules(path, modules, module):
            # importing a package's submodule runs the package's __init__ first: that is Python's, not a circle
            graph.add_edge(module, imported)
    return graph


def test_the_package_has_no_import_circle():
    graph = import_graph()
    assert graph.number_of_edges() > 40  # the walk sees the package's imports
    cycles = list(networkx.simple_cycles(graph))
    assert not cycles, f"import circles: {sorted(cycles, key=len)[:5]}"


@pytest.mark.parametrize(
    ("source", "seen"),
    [
        ("from .. import engine", True),
        ("import bart_score.engine", True),
        ("from ..engine import BARTScorer", True),
        ("from bart_score import engine", True),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..engine import BARTScorer", False),
    ],
)
def test_the_walk_sees_every_form_of_import(tmp_path, source, seen):
    """Lazy imports inside functions count; imports for annotations only do not."""
    probe = tmp_path / "probe.py"
    body = "\n".join("    " + line for line in source.splitlines())
    probe.write_text(f"def lazy():\n{body}\n")
    modules = {"bart_score": "", "bart_score.engine": "", "bart_score.cli": "", "bart_score.cli.probe": str(probe)}
    assert ("bart_score.engine" in imported_modules(str(probe), modules, "bart_score.cli.probe")) is seen
