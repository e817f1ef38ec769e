"""The path every bench script starts with: ``import _setup`` (first among the imports that need it) puts the
repository root (bart_score, space, app.py) and tests/ (the tests' support package) at the front of sys.path, so that
a script run as ``python bench/bench_x.py`` measures this checkout, not an installed copy. bench/ itself is on the path
already: it is the folder of the script being run."""

import os
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
TESTS = os.path.join(REPO, "tests")

sys.path[:0] = [REPO, TESTS]
