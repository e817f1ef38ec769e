"""The command line's --help, pinned byte for byte (tests/data/cli_help/, one file per subcommand, at 120 columns):
the flags are made from the table of options (bart_score.options), and a change to the table's machinery must not
change a word, a default or a line break of what a user reads."""

import sys
from pathlib import Path

import pytest

from bart_score.cli import build_parser

GOLDEN = Path(__file__).parent / "data" / "cli_help"
SUBCOMMANDS = ("score", "compare", "baseline", "meta-eval", "convert", "cluster")

# argparse writes "-s, --sources FILE" where 3.10 to 3.12 write "-s FILE, --sources FILE" since Python 3.13; the
# files are the older form, which the lock's Python (3.11) writes.
pytestmark = pytest.mark.skipif(sys.version_info >= (3, 13), reason="argparse's --help layout changed in Python 3.13")


def help_of(parser, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    return parser.format_help()


def test_the_top_level_help_is_unchanged(monkeypatch):
    assert help_of(build_parser(), monkeypatch) == (GOLDEN / "top.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_each_subcommands_help_is_unchanged(subcommand, monkeypatch):
    subparsers = build_parser()._subparsers._group_actions[0].choices
    assert set(subparsers) == set(SUBCOMMANDS)  # a new subcommand gets its file here
    expected = (GOLDEN / f"{subcommand}.txt").read_text(encoding="utf-8")
    assert help_of(subparsers[subcommand], monkeypatch) == expected
