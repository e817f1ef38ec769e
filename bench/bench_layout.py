"""The counts of the code's shape that issue 44 bounds, for this checkout or another (`--root`, a checkout of an older
commit, made with `git worktree add /tmp/old <commit>`), side by side:

    python bench/bench_layout.py                      # this checkout
    python bench/bench_layout.py --root /tmp/old      # another checkout, measured with this script's rules
    python bench/bench_layout.py --fast-subset        # also the fast subset's CPU time (minutes)

Each count and its bound:
- modules at the top of bart_score/ (at most 12; __init__ counted, as a reader of the folder sees it);
- modules over 600 lines (data modules aside: DATA_MODULES) and classes over 400 lines (none);
- imports of feature modules by the options layer (none: OPTIONS_LEAF_IMPORTS are not features);
- mirrors: classes outside the options layer that restate five or more of the options' fields (none);
- served kinds listed outside the registry: string constants of the library that name two or more kinds (none);
- uses of http.client in the library (none);
- private attributes of evaluate's Metric that the metric reads, writes or overrides (none);
- the card's lines (at most 200) and paragraphs or list items of README.md and docs/ over 150 words (none);
- raise statements of the library over 5 lines (at most 30);
- test files over 1,000 lines (none);
- the fast subset's CPU time, user plus system over every process it starts (at most 60 s).
"""

from __future__ import annotations

import argparse
import ast
import glob
import importlib.util
import os
import re
import resource
import subprocess
import sys
from types import ModuleType

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP_MODULES = 12
MODULE_LINES = 600
CLASS_LINES = 400
RAISE_LINES = 5
LONG_RAISES = 30
TEST_FILE_LINES = 1000
FAST_SUBSET_CPU_SECONDS = 60
# Modules that are data, not code (the issue's "data modules aside"): the paper's prompt sets and the benchmarks'
# definitions.
DATA_MODULES = {"bart_score/scoring/prompts.py", "bart_score/prompts.py", "bart_score/meta_eval/benchmarks.py"}
# What the options layer may import: the error family, the words of messages, the checks of inputs, the bounded
# reading of files, and data (the named configurations, the paper's prompt sets).
OPTIONS_LEAF_IMPORTS = {"errors", "messages", "inputs", "variants", "version", "prompts", "_reading"}
SERVED_KIND_NAMES = ("vllm", "sglang", "tgi", "llama.cpp")
OPTIONS_CLASSES = ("ScoringOptions", "EngineOptions", "ClusterOptions")


def python_files(root: str, folder: str) -> list[str]:
    return sorted(glob.glob(os.path.join(root, folder, "**", "*.py"), recursive=True))


def parsed(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as handle:
        return ast.parse(handle.read(), path)


def line_count(path: str) -> int:
    with open(path, encoding="utf-8") as handle:
        return sum(1 for _ in handle)


def relative(root: str, path: str) -> str:
    return os.path.relpath(path, root)


def top_modules(root: str) -> list[str]:
    return sorted(os.path.basename(path) for path in glob.glob(os.path.join(root, "bart_score", "*.py")))


def long_modules(root: str) -> list[str]:
    files = [*python_files(root, "bart_score"), *python_files(root, "space"), os.path.join(root, "app.py")]
    return [
        f"{relative(root, path)} ({line_count(path)})"
        for path in files
        if os.path.exists(path) and line_count(path) > MODULE_LINES and relative(root, path) not in DATA_MODULES
    ]


def long_classes(root: str) -> list[str]:
    found = []
    files = [*python_files(root, "bart_score"), *python_files(root, "space"), os.path.join(root, "app.py")]
    for path in filter(os.path.exists, files):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > CLASS_LINES:
                found.append(f"{relative(root, path)}:{node.name} ({node.end_lineno - node.lineno + 1})")
    return found


def options_files(root: str) -> list[str]:
    package = os.path.join(root, "bart_score", "options")
    return python_files(root, "bart_score/options") if os.path.isdir(package) else [package + ".py"]


def module_name(root: str, path: str) -> str:
    name = relative(root, path)[: -len(".py")].replace(os.sep, ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def imported_modules(root: str, path: str) -> set[str]:
    """The bart_score modules a file imports, anywhere in it, by absolute name."""
    here = module_name(root, path)
    package = here if path.endswith("__init__.py") else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("bart_score.")}


def feature_imports_of_options(root: str) -> list[str]:
    own = {module_name(root, path) for path in options_files(root)}
    modules = {module_name(root, path) for path in python_files(root, "bart_score")}
    found = set()
    for path in options_files(root):
        for name in imported_modules(root, path):
            if name in modules and name not in own and name.rpartition(".")[2] not in OPTIONS_LEAF_IMPORTS:
                found.add(name)
    return sorted(found)


def options_fields(root: str) -> set[str]:
    """The fields of the options classes, read from their source."""
    fields = set()
    for path in options_files(root):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ClassDef) and node.name in OPTIONS_CLASSES:
                fields |= {
                    item.target.id
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                }
    return fields - {"TABLE"}


def is_property(function: ast.FunctionDef) -> bool:
    return any(isinstance(decorator, ast.Name) and decorator.id == "property" for decorator in function.decorator_list)


def forwards(function: ast.FunctionDef) -> bool:
    """Whether a property only hands on another object's attribute of its own name (`return self.scorer.max_length`
    in a property named max_length): a restatement, where a property that computes its value is not."""
    body = [item for item in function.body if not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Attribute):
        return False
    returned = body[0].value
    chain = returned.value
    while isinstance(chain, ast.Attribute):
        chain = chain.value
    owner_is_other = isinstance(returned.value, ast.Attribute)
    return isinstance(chain, ast.Name) and chain.id == "self" and owner_is_other and returned.attr == function.name


def declared_only(function: ast.FunctionDef) -> bool:
    """Whether a function is a declaration without a body (a Protocol's `...`), its docstring aside."""
    body = [item for item in function.body if not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant))]
    return all(isinstance(item.value, ast.Constant) and item.value.value is Ellipsis for item in body)  # type: ignore[attr-defined]


def restated(node: ast.ClassDef, fields: set[str]) -> set[str]:
    """What a class restates: its annotated fields and declared properties (a Protocol's) named as an option's field,
    and its properties that only hand on another object's attribute of the same name."""
    names = set()
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id in fields:
            names.add(item.target.id)
        elif (
            isinstance(item, ast.FunctionDef)
            and is_property(item)
            and (forwards(item) or (item.name in fields and declared_only(item)))
        ):
            names.add(item.name)
    return names


# A result's signature has fields named as options, but it is what results carry (formatted, and parsed back from
# results), not a view of the options a run was given.
NOT_MIRRORS = {"Signature"}


def mirrors(root: str) -> list[str]:
    fields = options_fields(root)
    own = set(options_files(root))
    found = []
    for path in python_files(root, "bart_score"):
        if path in own:
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ClassDef) and node.name not in NOT_MIRRORS:
                shared = restated(node, fields)
                if len(shared) >= 5:
                    found.append(f"{relative(root, path)}:{node.name} ({len(shared)})")
    return found


# The registry of served kinds (and where the kinds were listed before it).
REGISTRIES = ("bart_score/models/served/kinds.py", "bart_score/models/server_kinds.py")


def kind_listings(root: str) -> list[str]:
    """String constants (messages, help texts) and literal collections of the library that name two or more served
    kinds, docstrings aside; in the registry module, those outside its classes (each kind's class says its own name)."""
    docstrings = test_module("test_error_family").docstrings  # the test that reads the library's strings as this does
    found = []
    for path in python_files(root, "bart_score"):
        tree = parsed(path)
        prose = docstrings(tree)
        if relative(root, path) in REGISTRIES:
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    prose |= {id(inner) for inner in ast.walk(node)}
        for node in ast.walk(tree):
            texts = []
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
                texts = [node.value.lower()]
            elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                strings = [item.value for item in node.elts if isinstance(item, ast.Constant)]
                texts = [" ".join(text.lower() for text in strings if isinstance(text, str))]
            for text in texts:
                named = {kind for kind in SERVED_KIND_NAMES if re.search(rf"(?<![\w.]){re.escape(kind)}(?![\w])", text)}
                if len(named) >= 2:
                    found.append(f"{relative(root, path)}:{node.lineno}")
    return sorted(set(found))


def http_client_uses(root: str) -> list[str]:
    found = []
    for path in python_files(root, "bart_score"):
        for node in ast.walk(parsed(path)):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
            if any(name == "http.client" or name.startswith("http.client.") for name in names):
                found.append(f"{relative(root, path)}:{node.lineno}")
    return found


def test_module(name: str) -> ModuleType:
    """One of this checkout's test modules, whose readings of the code these counts share."""
    sys.path.insert(0, os.path.join(HERE, "tests"))
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "tests", f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def evaluate_private_uses(root: str) -> list[str]:
    """The private names of evaluate's Metric, but the hooks it asks a metric to define, that the metric uses, by
    tests/test_evaluate_public_api.py's reading of evaluate's source."""
    public_api = test_module("test_evaluate_public_api")
    private, hooks = public_api.evaluates_private_names()
    metric = glob.glob(os.path.join(root, "bart_score", "**", "evaluate_metric.py"), recursive=True)
    found = set()
    for path in filter(os.path.exists, [os.path.join(root, "bartscore.py"), *metric]):
        found |= set(public_api.private_names_used(path, private - hooks))
    return sorted(found)


def docs_counts(root: str) -> tuple[int, list[str]]:
    """The card's lines, and the paragraphs and list items over 150 words, by tests/test_docs_layout.py's reading of
    Markdown (this checkout's, applied to `root`'s documents)."""
    docs_layout = test_module("test_docs_layout")
    documents = ["README.md", *sorted(relative(root, p) for p in glob.glob(os.path.join(root, "docs", "*.md")))]
    long = []
    for document in documents:
        with open(os.path.join(root, document), encoding="utf-8") as handle:
            text = handle.read()
        long += [
            f"{document}:{p.line} ({p.words})"
            for p in docs_layout.paragraphs(text)
            if p.words > docs_layout.PARAGRAPH_WORDS
        ]
    return line_count(os.path.join(root, "README.md")), long


def long_raises(root: str) -> list[str]:
    found = []
    for path in python_files(root, "bart_score"):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Raise) and node.end_lineno - node.lineno + 1 > RAISE_LINES:
                found.append(f"{relative(root, path)}:{node.lineno}")
    return found


def long_test_files(root: str) -> list[str]:
    return [
        f"{relative(root, path)} ({line_count(path)})"
        for path in python_files(root, "tests")
        if line_count(path) > TEST_FILE_LINES
    ]


def fast_subset_cpu(root: str) -> str:
    """The fast subset run in `root` with its own venv's Python (or this one), and the CPU time of it and every
    process it started and waited for."""
    python = os.path.join(root, ".venv", "bin", "python")
    python = python if os.path.exists(python) else sys.executable
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(
        [python, "-m", "pytest", "-q", "-m", "not slow", "tests", "-p", "no:randomly"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-300:]
    return f"{cpu:.0f} s ({summary})"


def report(root: str, fast_subset: bool) -> None:
    card, long_docs = docs_counts(root)
    listed = [
        ("modules at bart_score/'s top", f"<= {TOP_MODULES}", top_modules(root)),
        (f"modules over {MODULE_LINES} lines", "0", long_modules(root)),
        (f"classes over {CLASS_LINES} lines", "0", long_classes(root)),
        ("feature imports of the options layer", "0", feature_imports_of_options(root)),
        ("mirrors of the options (>= 5 fields)", "0", mirrors(root)),
        ("served kinds listed outside the registry", "0", kind_listings(root)),
        ("http.client uses", "0", http_client_uses(root)),
        ("private evaluate attributes used", "0", evaluate_private_uses(root)),
        ("paragraphs over 150 words", "0", long_docs),
        (f"raises over {RAISE_LINES} lines", f"<= {LONG_RAISES}", long_raises(root)),
        (f"test files over {TEST_FILE_LINES} lines", "0", long_test_files(root)),
    ]
    print(f"root: {root}")
    print(f"  {'card lines':42} {card:>5}   bound <= 200")
    for name, bound, items in listed:
        print(f"  {name:42} {len(items):>5}   bound {bound}")
        for item in items[:40] if name != listed[-2][0] else []:
            print(f"      {item}")
    if fast_subset:
        cpu = fast_subset_cpu(root)
        print(f"  {'fast subset CPU (user + system)':42} {cpu}   bound <= {FAST_SUBSET_CPU_SECONDS} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=HERE, help="the checkout to measure (default: this one)")
    parser.add_argument("--fast-subset", action="store_true", help="also time the fast subset (minutes)")
    arguments = parser.parse_args()
    report(os.path.abspath(arguments.root), arguments.fast_subset)


if __name__ == "__main__":
    main()
