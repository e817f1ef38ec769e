"""Collecting the suite stays cheap: no test module brings in Gradio or evaluate while pytest collects (each takes
seconds, paid again by every pytest-xdist worker); the tests that use them import them on first use
(support/lazy.py)."""

import os
import subprocess
import sys

import pytest
from support.lazy import LazyModule

TESTS = os.path.dirname(os.path.abspath(__file__))
HEAVY = ("gradio", "evaluate", "app")


@pytest.mark.slow
def test_collecting_every_test_imports_neither_gradio_nor_evaluate():
    probe = (
        "import sys, pytest\n"
        f"code = pytest.main(['-q', '--collect-only', '-p', 'no:cacheprovider', {TESTS!r}])\n"
        f"print('imported:', sorted(name for name in {HEAVY!r} if name in sys.modules))\n"
        "sys.exit(code)\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    imported = completed.stdout.rstrip().splitlines()[-1]
    assert imported == "imported: []", imported


def test_probing_a_lazy_module_the_way_collectors_do_imports_nothing():
    lazy = LazyModule("a_module_that_does_not_exist")
    assert not isinstance(lazy, type)
    with pytest.raises(TypeError):
        issubclass(lazy, object)  # reads __bases__, as pytest's unittest plugin does for every module attribute
    assert getattr(lazy, "__test__", None) is None
    for private in ("_mock_name", "_pytestfixturefunction", "_any_private_name"):  # pytest 9.2 reads _mock_name
        assert getattr(lazy, private, None) is None
    with pytest.raises(ModuleNotFoundError):
        lazy.anything  # noqa: B018  (an ordinary attribute imports the module)
