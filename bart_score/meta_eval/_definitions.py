"""What the meta-evaluation knows of a benchmark, as plain data: the public repository its files come from (Release),
each file with its checksums (ReleaseFile), and the benchmark itself (Benchmark): its files by role, the reader that
turns them into rows, and how the paper scores and correlates it.

meta_eval.benchmarks holds the releases and their benchmarks, and meta_eval._layouts the readers; this module imports
nothing of bart_score, so that both can import it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# A benchmark's rows: column name -> one value per scored text (the columns are in meta_eval.benchmarks' text).
Rows = dict[str, list[Any]]
# Where a benchmark's files are on this machine: role -> the paths of that role's files, in the benchmark's order.
Paths = Mapping[str, tuple[str, ...]]
# What reads a benchmark's files, given where they are, into its rows (BenchmarkDataError naming what is wrong).
Reader = Callable[["Benchmark", Paths], Rows]


@dataclass(frozen=True, kw_only=True)
class Release:
    """A public repository, at a pinned commit, whose files benchmarks are read from."""

    title: str
    repository: str
    commit: str
    url: str  # where its raw files are, at the commit
    dir_env: str  # the environment variable naming a checkout of it
    cache_prefix: str  # its cache folder: <prefix>-<commit[:7]>


@dataclass(frozen=True, kw_only=True)
class ReleaseFile:
    """A file of a release at its pinned commit. sha256 and size are None for the files that the snapshot the list was
    made from lacked (it omits files of 4 MiB and more); the git blob id, from the release's tree, covers all."""

    path: str
    git_blob_sha1: str
    sha256: str | None = None
    size: int | None = None


@dataclass(frozen=True, kw_only=True)
class Benchmark:
    """One benchmark: where its judgments are, how they are read, and how the paper scores and correlates them.

    files: its release files by role ("judgments" for a release's data.pkl; "reviewers" and "articles", or "scores"
    and "texts", for LongDocFACTScore's), the human judgments first; read: its reader, given the same roles' paths.
    protocol: how metric scores meet human scores (see meta_eval.protocol). directions, aggregation, detokenize: how
    the release's scripts compute BARTScore for it (SUM/score.py, D2T/score.py, WMT/score.py). release: the key of its
    release in meta_eval.benchmarks.RELEASES."""

    name: str
    title: str
    layout: str  # the release's name for how its files are laid out ("summaries", "data-to-text", "darr", ...)
    protocol: str
    aspects: tuple[str, ...]
    files: Mapping[str, tuple[ReleaseFile, ...]]
    read: Reader
    directions: tuple[str, ...]
    aggregation: str  # over several references
    detokenize: bool  # the release detokenizes texts with Moses before BARTScore (SUM and D2T, not WMT)
    paper_table: str
    release: str = "bartscore"
    long_documents: bool = False  # its sources are long documents (LongDocFACTScore's benchmarks)

    @property
    def file(self) -> ReleaseFile:
        """Its first file (of its human judgments), which its dataset's description names."""
        return next(iter(self.files.values()))[0]

    @property
    def all_files(self) -> tuple[ReleaseFile, ...]:
        """Its files, role by role."""
        return tuple(file for files in self.files.values() for file in files)

    @property
    def single_file(self) -> bool:
        """Whether it is read from one file, which a file of one's own can stand for; one read from several takes a
        folder that holds them at their paths in the release."""
        return len(self.all_files) == 1
