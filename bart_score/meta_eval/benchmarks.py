"""The human judgments of the BARTScore release and of the LongDocFACTScore release, one loader per benchmark, as
``datasets.Dataset``s.

The release (github.com/neulab/BARTScore) ships each benchmark as a pickled dict, ``data.pkl``, in one of three
layouts (SUM/README.md, D2T/README.md, WMT/README.md of the release). ``load_benchmark(name)`` finds the file, checks
it against the release's checksum, and returns one row per scored text with these columns:

    doc_id      the release's document key, as text
    system      the system's name ("correct"/"incorrect" for Rank19, "0" for QAGS, "" for data-to-text, whose records
                name no system; for WMT19 the system of that translation)
    source      the source text (the article, the meaning representation, or the foreign sentence)
    references  the reference texts, as the release gives them (for Rank19 and QAGS the release's reference is the
                source; data-to-text lists repeat references)
    hypothesis  the text that was judged
    human_<aspect>  one column per human judgment (for WMT19 ``human_darr`` is 1 for the translation the DA judges
                preferred and 0 for the other of its pair)

Where a file comes from, in order: ``data_file=`` (your own file in the release's layout, read as it is); a checkout
of the release (``release_dir=`` or ``$BARTSCORE_RELEASE_DIR``); this machine's cache (``cache_dir=`` or
``$BARTSCORE_DATA_CACHE``, default ``~/.cache/bartscore/release-248f511``); a download from the release at the
pinned commit into that cache, unless ``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE`` is set. Release files are checked
before they are unpickled: by SHA-256 where it could be computed from a snapshot of the release, and always by the
git blob id that the release's tree records. Unpickling allows plain containers, text and numbers only.

The LongDocFACTScore release (github.com/jbshp/LongDocFACTScore, its data/ folder) gives long-document benchmarks:
LongSciVerify (PubMed and arXiv articles, three systems' summaries, three expert annotators' per-sentence factuality
in one CSV each) and LongEval PubMed (Krishna et al., EACL 2023: two systems, fine-grained factuality, preprocessed
by LongDocFACTScore's authors). They come from a checkout of that release (``release_dir=`` or
``$LONGDOCFACTSCORE_RELEASE_DIR``), the cache, or a download at its pinned commit, checked by SHA-256 and git blob
id; or from ``data_file=``, a folder laid out as the release (its data/ files at their paths), not checked. Texts and
human scores are read as the release's evaluation_scripts/run_evaluation.py reads them: sources and references
cleaned of their sentence tags (its clean_abstract), summaries as the files have them, LongSciVerify's annotators
each averaged over a summary's three sentences and then averaged together, LongEval's scores averaged. Where the
annotators left a sentence unrated (two arXiv summaries have no third rating), the mean is over the rated sentences:
the release's script would make that summary's score NaN, and with it the whole correlation."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import BenchmarkDataError, InputError
from ..reading import read_bounded
from .layouts import LONG_ROWS, ROWS, given_file

if TYPE_CHECKING:  # the [meta-eval] extra; load_benchmark imports it when it runs
    from datasets import Dataset

RELEASE_REPOSITORY = "neulab/BARTScore"
RELEASE_COMMIT = "248f511cb34ae3753fc81f7d7a945de5bfe33458"
RELEASE_URL = f"https://raw.githubusercontent.com/{RELEASE_REPOSITORY}/{RELEASE_COMMIT}/"
RELEASE_DIR_ENV = "BARTSCORE_RELEASE_DIR"
DATA_CACHE_ENV = "BARTSCORE_DATA_CACHE"
LONGDOC_REPOSITORY = "jbshp/LongDocFACTScore"
LONGDOC_COMMIT = "62e441d9558eb94a8b32b5dd5f9b18b33ef3e082"
LONGDOC_DIR_ENV = "LONGDOCFACTSCORE_RELEASE_DIR"
_OFFLINE_ENVS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


@dataclass(frozen=True)
class Release:
    """A public repository, at a pinned commit, whose files benchmarks are read from."""

    title: str
    repository: str
    commit: str
    url: str  # where its raw files are, at the commit
    dir_env: str  # the environment variable naming a checkout of it
    dir_option: str  # the command line's option naming one
    cache_prefix: str  # its cache folder: <prefix>-<commit[:7]>


RELEASES = {
    "bartscore": Release(
        "BARTScore", RELEASE_REPOSITORY, RELEASE_COMMIT, RELEASE_URL, RELEASE_DIR_ENV, "--release-dir", "release"
    ),
    "longdocfactscore": Release(
        "LongDocFACTScore",
        LONGDOC_REPOSITORY,
        LONGDOC_COMMIT,
        f"https://raw.githubusercontent.com/{LONGDOC_REPOSITORY}/{LONGDOC_COMMIT}/",
        LONGDOC_DIR_ENV,
        "--longdoc-release-dir",
        "longdocfactscore",
    ),
}


@dataclass(frozen=True)
class ReleaseFile:
    """A file of the release at RELEASE_COMMIT. sha256 and size are None for the files that the snapshot this list
    was made from lacked (it omits files of 4 MiB and more); the git blob id, from the release's tree, covers all."""

    path: str
    git_blob_sha1: str
    sha256: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: where its judgments are, and how the paper scores and correlates it.

    protocol: how metric scores meet human scores (see meta_eval.protocol). directions, aggregation, detokenize:
    how the release's scripts compute BARTScore for it (SUM/score.py, D2T/score.py, WMT/score.py). release: the key
    of its release in RELEASES; other_files: the files besides `file` that it is read from."""

    name: str
    title: str
    layout: str  # "summaries", "data-to-text" or "darr": the release's three pickle layouts
    protocol: str
    aspects: tuple
    file: ReleaseFile
    directions: tuple
    aggregation: str  # over several references
    detokenize: bool  # the release detokenizes texts with Moses before BARTScore (SUM and D2T, not WMT)
    paper_table: str
    release: str = "bartscore"
    other_files: tuple = ()

    @property
    def long_documents(self) -> bool:
        """Whether its sources are long documents (LongDocFACTScore's benchmarks)."""
        return self.release == "longdocfactscore"


def _summarization(
    name: str,
    title: str,
    folder: str,
    protocol: str,
    aspects: tuple[str, ...],
    blob: str,
    sha256: str,
    size: int,
    directions: tuple[str, ...],
    table: str,
    aggregation: str = "mean",
) -> Benchmark:
    file = ReleaseFile(f"SUM/{folder}/data.pkl", blob, sha256, size)
    return Benchmark(name, title, "summaries", protocol, aspects, file, directions, aggregation, True, table)


def _data_to_text(name: str, title: str, blob: str, sha256: str, size: int) -> Benchmark:
    file = ReleaseFile(f"D2T/{title}/data.pkl", blob, sha256, size)
    aspects = ("informativeness", "naturalness", "quality")
    # D2T/score.py takes the best reference ("We take the max when combining the multi-reference results").
    return Benchmark(name, title, "data-to-text", "spearman", aspects, file, ("f_score",), "max", True, "6")


def _translation(pair: str, blob: str, sha256: str | None = None, size: int | None = None) -> Benchmark:
    file = ReleaseFile(f"WMT/{pair}/data.pkl", blob, sha256, size)
    return Benchmark(f"wmt19-{pair}", pair, "darr", "kendall_like", ("darr",), file, ("f_score",), "mean", False, "3")


_FACT = ("fact",)
_ALL: tuple[Benchmark, ...] = (
    _summarization(
        "realsumm",
        "REALSumm",
        "REALSumm",
        "summary_level",
        ("litepyramid_recall",),
        "0e476e1afb671fbe00b639b19cf42dab70e28f94",
        "1f9c97d27e8fe3ade81f76ea33dc6d3b5b333a602b1c568130306039bd701942",
        1510489,
        ("recall",),
        "4",
    ),
    _summarization(
        "summeval",
        "SummEval",
        "SummEval",
        "summary_level",
        ("coherence", "consistency", "fluency", "relevance"),
        "db2fb5c267c023391b802258c94d73b6897b4ae6",
        "008f1639a3352f0248cac88b74ff431c27287a027a888902ef425a26005f0acf",
        1176833,
        ("faithfulness",),
        "4",
    ),
    _summarization(
        "newsroom",
        "NeR18",
        "Newsroom",
        "summary_level",
        ("coherence", "fluency", "informativeness", "relevance"),
        "e2ac937d66786296335928538fc5974c0cddae3f",
        "277795f19d17fef0077061708d468e020c90071854508e774f4addae8a4a0ed5",
        419155,
        ("faithfulness",),
        "4",
    ),
    _summarization(
        "rank19",
        "Rank19",
        "Rank19",
        "pairwise_accuracy",
        _FACT,
        "ae6251e55137c98ed1c8751278502d5a3f283fdd",
        "19f2a41a6ebc33e69f04b53829dd47844df4b7a3f8fc8225776b66f34e88ff0d",
        149521,
        ("faithfulness",),
        "5",
    ),
    _summarization(
        "qags-cnn",
        "QAGS-CNN",
        "QAGS_CNN",
        "pearson",
        _FACT,
        "67d518ab176bc489b26cf30f3ff60f9decdf4341",
        "51deeef7dd0b181ac4072db234e41cb128b44ee42854a71d01d37371f5b53289",
        515731,
        ("faithfulness",),
        "5",
    ),
    _summarization(
        "qags-xsum",
        "QAGS-XSUM",
        "QAGS_XSUM",
        "pearson",
        _FACT,
        "d3f983004c060cfbb3fecf4d319e35dac41f5603",
        "9a49d4b689b093380dfb8627327ce94c8ef1af91cde9cc4ddd0f293b1ac17733",
        557039,
        ("faithfulness",),
        "5",
    ),
    _data_to_text(
        "bagel",
        "BAGEL",
        "04644cf35dcee13ae5264c32bdf3574474694fef",
        "67f2bc57e47501ba3afb00fabb9a4790db2b0828b982799d76c0efe3c6e89ee1",
        289110,
    ),
    _data_to_text(
        "sfres",
        "SFRES",
        "4e614c3512914328d37254dcd5203639413bab14",
        "7712d435ff79bb0b42191b8b868c1fe7ae26ae6399829a9b74fd6cb6d76690da",
        1189812,
    ),
    _data_to_text(
        "sfhot",
        "SFHOT",
        "3e51ea981f2fc0645f72f535e633b4e3bea46fd1",
        "00492d3f73341198663eca78cf07cef83a0b4834a6ba15a33a1ea79257f62e61",
        1900431,
    ),
    # de-en, fi-en, ru-en and zh-en are 4 MiB or more: only their git blob ids are known here.
    _translation("de-en", "4f2b44dd24cb1ad519fbf0eb33a24553fc6c587c"),
    _translation("fi-en", "fa62c0e76aa97d28c623eeb301652daede2888e3"),
    _translation(
        "gu-en",
        "dee1b62ac92dbed5bb88929cb4ac72d1c2980672",
        "9a3995e133a2bfc280cfbe57d1b7027d812ab075b54c3b1841471b3b9d6a0e44",
        3083502,
    ),
    _translation(
        "kk-en",
        "06f52b75d1ce0dc2d039caeff2e8c5fa1c42acd8",
        "cac631542aa21a1a712d724e5b0cd95198544d03abb22cf007b5a5acc53181e7",
        1934187,
    ),
    _translation(
        "lt-en",
        "e6eb35ba3efc9a2aefe08c5ef9092e01d088ef8b",
        "ea0b47ae5618fc64f1a37ee6699b6078ae59ba243771b6402194393b90ff144f",
        3844714,
    ),
    _translation("ru-en", "f89f0238e4a2d500e66058913869a181e2437636"),
    _translation("zh-en", "9da3ae841dbcab64090f8f255418d25d0be1168c"),
)


def _longdoc_file(path: str, blob: str, sha256: str, size: int) -> ReleaseFile:
    return ReleaseFile(f"data/{path}", blob, sha256, size)


_REVIEWERS = {
    "pubmed": (
        (
            "ffcb1b7fe46eb4e1a8a5c97efa32bded95e755ea",
            "f9fad0ecc6a520d7ee3980411754d203ff4ec6881d33774ec69ac7448473448f",
        ),
        (
            "8183a13e1c2a5e793d6be9ed5896538798b5f3cb",
            "328fe00bdd56ed46763e3a9295da33fdde5c95e2fb96e63a5cb375a9a4b63559",
        ),
        (
            "fac7832beca3022ce92ddc598f64144780091d6d",
            "98f76bb192c7bb5b395ad7e4aaa22e2984040494857e7b86e559a0a20dfdd9ec",
        ),
    ),
    "arxiv": (
        (
            "efdd06176e3a15e93b470d56ec098f5e12bef195",
            "b0759b9bafc401a229e07b7882a064b8d3c7d0f5f0756026090375c11c6b06f2",
        ),
        (
            "76ec034aab63a0da873909d1dcac1063d191290e",
            "97c249a295c62eadd7ea3b5c7a10046a819f7dc20c1e4246c9038136aaca68cc",
        ),
        (
            "5eb45791a9c42b3925a177a2dd2bf17cb7b6f2cb",
            "6e17e020741f8e4fc8159be34b8df76668f83a229bd69ef8c425488fa166ed6c",
        ),
    ),
}
_ARTICLES = {
    "pubmed": (
        "47d105b3e662572fe166f96239b991e6656fffc6",
        "63a29856fb23982ccbcef90f724eb6f102377ee21927779b486aece630d7a936",
    ),
    "arxiv": (
        "2c662f9611c48839b44c3d6e65731c0c514b5fd7",
        "d2b515fc1fa6e2de56d7eea231132b128e2e6b90c8cd72d32c632261d1f1aa87",
    ),
}
_SIZES = {"pubmed": (60253, 689775), "arxiv": (55250, 1072690)}


def _longsciverify(corpus: str) -> Benchmark:
    reviewers = [
        _longdoc_file(f"human_eval_results/LongSciVerify/{corpus}_reviewer_{n}.csv", blob, sha256, _SIZES[corpus][0])
        for n, (blob, sha256) in enumerate(_REVIEWERS[corpus], start=1)
    ]
    articles = _longdoc_file(f"raw_data/LongSciVerify/{corpus}_test.json", *_ARTICLES[corpus], _SIZES[corpus][1])
    return Benchmark(
        f"longsciverify-{corpus}",
        f"LongSciVerify-{'PubMed' if corpus == 'pubmed' else 'arXiv'}",
        "longsciverify",
        "kendall",
        ("factuality",),
        reviewers[0],
        ("faithfulness",),
        "mean",
        False,
        "long",
        "longdocfactscore",
        (*reviewers[1:], articles),
    )


_LONG = (
    _longsciverify("pubmed"),
    _longsciverify("arxiv"),
    Benchmark(
        "longeval-pubmed",
        "LongEval-PubMed",
        "longeval",
        "kendall",
        ("factuality",),
        _longdoc_file(
            "human_eval_results/LongEval/pubmed_fine_scores.json",
            "4c461a73745ce880ae38268f248faa97ed1a084d",
            "bf10a2f43213ac5dd5109fd31c848df79f47e526edcda6c9c7c75675ae800093",
            6267,
        ),
        ("faithfulness",),
        "mean",
        False,
        "long",
        "longdocfactscore",
        (
            _longdoc_file(
                "raw_data/LongEval/pubmed_summary_src_doc_data.json",
                "43422a2687a5a3f07ab76c21e2c4515ed5e51be2",
                "d9fcdc1aec99f24c654d4c8e6904ed88a42973a58ae466697c14508ffabffaa5",
                1252915,
            ),
        ),
    ),
)
_ALL = (*_ALL, *_LONG)
BENCHMARKS = {benchmark.name: benchmark for benchmark in _ALL}
# Names that stand for several benchmarks.
GROUPS = {"wmt19": tuple(name for name in BENCHMARKS if name.startswith("wmt19-"))}


def resolve_benchmarks(names: Iterable[str]) -> list[str]:
    """Benchmark names (groups expanded, duplicates dropped, order kept); unknown names are an InputError."""
    resolved = []
    for name in names:
        key = name.lower()
        if key not in BENCHMARKS and key not in GROUPS:
            raise InputError(f"unknown benchmark {name!r}; choose from {', '.join([*BENCHMARKS, *GROUPS])}")
        for member in GROUPS.get(key, (key,)):
            if member not in resolved:
                resolved.append(member)
    return resolved


def default_cache_dir(release: str = "bartscore") -> str:
    return os.environ.get(DATA_CACHE_ENV) or os.path.join(
        os.path.expanduser("~"),
        ".cache",
        "bartscore",
        f"{RELEASES[release].cache_prefix}-{RELEASES[release].commit[:7]}",
    )


def release_file_path(
    name: str, *, release_dir: str | None = None, cache_dir: str | None = None, file: ReleaseFile | None = None
) -> str:
    """The path on this machine of a benchmark's release file (`file`, default its main one), checked against its
    checksums; downloaded into the cache first if it is nowhere else (and downloads are allowed). BenchmarkDataError
    says why it cannot be had."""
    benchmark = BENCHMARKS[name]
    release = RELEASES[benchmark.release]
    file = file or benchmark.file
    release_dir = release_dir or os.environ.get(release.dir_env)
    if release_dir:
        path = os.path.join(release_dir, *file.path.split("/"))
        if not os.path.isfile(path):
            raise BenchmarkDataError(
                f"{path} does not exist: the release checkout {release_dir!r} lacks {file.path}. "
                f"{_how_to_get(release, file)}"
            )
        _verify(release, file, _read_bytes(path), path)
        return path
    path = os.path.join(cache_dir or default_cache_dir(benchmark.release), *file.path.split("/"))
    if os.path.isfile(path):
        _verify(release, file, _read_bytes(path), path)
        return path
    offline = [env for env in _OFFLINE_ENVS if os.environ.get(env, "").lower() in ("1", "true", "yes", "on")]
    if offline:
        raise BenchmarkDataError(
            f"{benchmark.title}'s human judgments ({file.path} of the {release.title} release) are not at {path}, "
            f"and {offline[0]} is set, so they were not downloaded. {_how_to_get(release, file, path)}"
        )
    data = _download(release, file, path)
    _verify(release, file, data, release.url + file.path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".download-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(temporary, path)
    return path


def _how_to_get(release: Release, file: ReleaseFile, cache_path: str | None = None) -> str:
    where = f"save it as {cache_path}" if cache_path else "put it there"
    return (
        f"Download {release.url}{file.path} (the release at commit {release.commit[:7]}) and {where}, or point "
        f"{release.dir_option} / ${release.dir_env} at a checkout of https://github.com/{release.repository}."
    )


def _read_bytes(path: str) -> bytes:
    return read_bounded(path, error=BenchmarkDataError)


def _download(release: Release, file: ReleaseFile, cache_path: str) -> bytes:
    try:
        with urllib.request.urlopen(release.url + file.path, timeout=60) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", None) or error
        raise BenchmarkDataError(
            f"{file.path} of the {release.title} release is not on this machine and could not be downloaded "
            f"({reason}). {_how_to_get(release, file, cache_path)}"
        ) from None


def git_blob_sha1(data: bytes) -> str:
    """The id git gives a file's content: SHA-1 over "blob <size>\\0" and the bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _verify(release: Release, file: ReleaseFile, data: bytes, where: str) -> None:
    checks = [("git blob id", file.git_blob_sha1, git_blob_sha1(data))]
    if file.sha256:
        checks.append(("SHA-256", file.sha256, hashlib.sha256(data).hexdigest()))
    for kind, expected, actual in checks:
        if actual != expected:
            raise BenchmarkDataError(
                f"{where} is not {file.path} of the {release.title} release at commit {release.commit[:7]}: its "
                f"{kind} is {actual}, the release's is {expected}. Replace it with the release's file "
                f"({release.url}{file.path})."
            )


class _PlainUnpickler(pickle.Unpickler):
    """The release's data.pkl files hold dicts, lists, text and numbers; nothing that names a class is unpickled."""

    def find_class(self, module: str, name: str) -> NoReturn:
        raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name}: a data.pkl holds plain data only")


# A data.pkl's texts, counted once for every place they appear in its data, may add up to this many characters per
# byte of the file (and MIN_TEXT_BUDGET more): the release's files hold each text about once (a character takes a byte
# or more of the file), while a pickle that reuses one record many times through its memo (two bytes a reference)
# would unfold into far more text when its rows are built than its size says.
TEXT_PER_BYTE = 16
MIN_TEXT_BUDGET = 1 << 20


def read_release_pickle(path: str) -> Any:
    """A data.pkl's content: plain containers, text and numbers only (nothing that names a class or function), from
    a file of at most MAX_FILE_BYTES whose data, unfolded, holds at most TEXT_PER_BYTE characters of text (and as many
    containers and values) per byte of the file. BenchmarkDataError names the file and what is wrong."""
    data = _read_bytes(path)
    try:
        content = _PlainUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, MemoryError, RecursionError) as error:
        raise BenchmarkDataError(f"{path} is not a readable data.pkl: {error}") from None
    _check_unfolded_size(content, len(data), path)
    return content


def _check_unfolded_size(content: object, size: int, path: str) -> None:
    """Walks the data as its rows will read it (a container reached twice is walked twice), without recursion, and
    stops as soon as its text or its count of values passes the budget of a file of `size` bytes."""
    budget = TEXT_PER_BYTE * size + MIN_TEXT_BUDGET
    text, values, pending = 0, 0, [content]
    while pending:
        item = pending.pop()
        values += 1
        if isinstance(item, (str, bytes)):
            text += len(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            pending.extend(item)
        if text > budget or values > budget:
            raise BenchmarkDataError(
                f"{path} unfolds into more than {budget:,} characters of text or values from a file of {size:,} "
                f"bytes: its pickle reuses the same records (or holds itself), which a data.pkl of the release never "
                f"does; refusing to read it"
            )


def load_benchmark(
    name: str, *, release_dir: str | None = None, cache_dir: str | None = None, data_file: str | None = None
) -> Dataset:
    """One benchmark's human judgments as a ``datasets.Dataset`` (the columns are in the module's text).

    data_file: a file in the release's layout to read instead of the release's own (a subset, say); for the
    LongDocFACTScore benchmarks, a folder holding the release's files at their paths (data/...). It is not checked
    against the release's checksums."""
    import datasets

    (name,) = resolve_benchmarks([name])
    benchmark = BENCHMARKS[name]
    if benchmark.long_documents:
        files = {}
        for file in (benchmark.file, *benchmark.other_files):
            if data_file:
                files[file.path] = given_file(data_file, file, name)
            else:
                files[file.path] = release_file_path(name, release_dir=release_dir, cache_dir=cache_dir, file=file)
        path = data_file or os.path.dirname(files[benchmark.file.path])
        rows = LONG_ROWS[benchmark.layout](benchmark, files)
    else:
        path = data_file or release_file_path(name, release_dir=release_dir, cache_dir=cache_dir)
        content = read_release_pickle(path)
        if not isinstance(content, dict) or not content:
            raise BenchmarkDataError(f"{path} is not in the release's layout: expected a non-empty dict of documents")
        rows = ROWS[benchmark.layout](benchmark, content, path)
    seen = {}
    for index, key in enumerate(zip(rows["doc_id"], rows["system"])):
        if key in seen:
            raise BenchmarkDataError(f"{path}: document {key[0]!r} has two records of system {key[1]!r}")
        seen[key] = index
    features = datasets.Features(
        {
            "doc_id": datasets.Value("string"),
            "system": datasets.Value("string"),
            "source": datasets.Value("string"),
            "references": datasets.List(datasets.Value("string")),
            "hypothesis": datasets.Value("string"),
            **{f"human_{aspect}": datasets.Value("float64") for aspect in benchmark.aspects},
        }
    )
    release = RELEASES[benchmark.release]
    if data_file:
        given = "a folder" if benchmark.long_documents else "a file"
        origin = f"{path} ({given} given for it, not checked against the release)"
    else:
        origin = f"{path} ({benchmark.file.path} of {release.repository}@{release.commit[:7]}, checked)"
    info = datasets.DatasetInfo(description=f"{benchmark.title} human judgments from {origin}", features=features)
    return datasets.Dataset.from_dict(rows, info=info)
