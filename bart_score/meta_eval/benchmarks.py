"""The human judgments of the BARTScore release, one loader per benchmark, as ``datasets.Dataset``s.

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
git blob id that the release's tree records. Unpickling allows plain containers, text and numbers only."""

import hashlib
import io
import os
import pickle
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass

from ..errors import BenchmarkDataError

RELEASE_REPOSITORY = "neulab/BARTScore"
RELEASE_COMMIT = "248f511cb34ae3753fc81f7d7a945de5bfe33458"
RELEASE_URL = f"https://raw.githubusercontent.com/{RELEASE_REPOSITORY}/{RELEASE_COMMIT}/"
RELEASE_DIR_ENV = "BARTSCORE_RELEASE_DIR"
DATA_CACHE_ENV = "BARTSCORE_DATA_CACHE"
_OFFLINE_ENVS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


@dataclass(frozen=True)
class ReleaseFile:
    """A file of the release at RELEASE_COMMIT. sha256 and size are None for the files that the snapshot this list
    was made from lacked (it omits files of 4 MiB and more); the git blob id, from the release's tree, covers all."""

    path: str
    git_blob_sha1: str
    sha256: str = None
    size: int = None


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: where its judgments are, and how the paper scores and correlates it.

    protocol: how metric scores meet human scores (see meta_eval.protocol). directions, aggregation, detokenize:
    how the release's scripts compute BARTScore for it (SUM/score.py, D2T/score.py, WMT/score.py)."""

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


def _summarization(name, title, folder, protocol, aspects, blob, sha256, size, directions, table, aggregation="mean"):
    file = ReleaseFile(f"SUM/{folder}/data.pkl", blob, sha256, size)
    return Benchmark(name, title, "summaries", protocol, aspects, file, directions, aggregation, True, table)


def _data_to_text(name, title, blob, sha256, size):
    file = ReleaseFile(f"D2T/{title}/data.pkl", blob, sha256, size)
    aspects = ("informativeness", "naturalness", "quality")
    # D2T/score.py takes the best reference ("We take the max when combining the multi-reference results").
    return Benchmark(name, title, "data-to-text", "spearman", aspects, file, ("f_score",), "max", True, "6")


def _translation(pair, blob, sha256=None, size=None):
    file = ReleaseFile(f"WMT/{pair}/data.pkl", blob, sha256, size)
    return Benchmark(f"wmt19-{pair}", pair, "darr", "kendall_like", ("darr",), file, ("f_score",), "mean", False, "3")


_FACT = ("fact",)
_ALL = (
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
BENCHMARKS = {benchmark.name: benchmark for benchmark in _ALL}
# Names that stand for several benchmarks.
GROUPS = {"wmt19": tuple(name for name in BENCHMARKS if name.startswith("wmt19-"))}


def resolve_benchmarks(names):
    """Benchmark names (groups expanded, duplicates dropped, order kept); unknown names are a ValueError."""
    resolved = []
    for name in names:
        key = name.lower()
        if key not in BENCHMARKS and key not in GROUPS:
            raise ValueError(f"unknown benchmark {name!r}; choose from {', '.join([*BENCHMARKS, *GROUPS])}")
        for member in GROUPS.get(key, (key,)):
            if member not in resolved:
                resolved.append(member)
    return resolved


def default_cache_dir():
    return os.environ.get(DATA_CACHE_ENV) or os.path.join(
        os.path.expanduser("~"), ".cache", "bartscore", f"release-{RELEASE_COMMIT[:7]}"
    )


def release_file_path(name, *, release_dir=None, cache_dir=None):
    """The path of a benchmark's release file on this machine, checked against its checksums; downloaded into the
    cache first if it is nowhere else (and downloads are allowed). BenchmarkDataError says why it cannot be had."""
    file = BENCHMARKS[name].file
    release_dir = release_dir or os.environ.get(RELEASE_DIR_ENV)
    if release_dir:
        path = os.path.join(release_dir, *file.path.split("/"))
        if not os.path.isfile(path):
            raise BenchmarkDataError(
                f"{path} does not exist: the release checkout {release_dir!r} lacks {file.path}. {_how_to_get(file)}"
            )
        _verify(file, _read_bytes(path), path)
        return path
    path = os.path.join(cache_dir or default_cache_dir(), *file.path.split("/"))
    if os.path.isfile(path):
        _verify(file, _read_bytes(path), path)
        return path
    offline = [env for env in _OFFLINE_ENVS if os.environ.get(env, "").lower() in ("1", "true", "yes", "on")]
    if offline:
        raise BenchmarkDataError(
            f"{BENCHMARKS[name].title}'s human judgments ({file.path} of the BARTScore release) are not at {path}, and "
            f"{offline[0]} is set, so they were not downloaded. {_how_to_get(file, path)}"
        )
    data = _download(file, path)
    _verify(file, data, RELEASE_URL + file.path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".download-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(temporary, path)
    return path


def _how_to_get(file, cache_path=None):
    where = f"save it as {cache_path}" if cache_path else "put it there"
    return (
        f"Download {RELEASE_URL}{file.path} (the release at commit {RELEASE_COMMIT[:7]}) and {where}, or point "
        f"--release-dir / ${RELEASE_DIR_ENV} at a checkout of https://github.com/{RELEASE_REPOSITORY}."
    )


def _read_bytes(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise BenchmarkDataError(f"cannot read {path}: {error.strerror or error}") from None


def _download(file, cache_path):
    try:
        with urllib.request.urlopen(RELEASE_URL + file.path, timeout=60) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", None) or error
        raise BenchmarkDataError(
            f"{file.path} of the BARTScore release is not on this machine and could not be downloaded ({reason}). "
            f"{_how_to_get(file, cache_path)}"
        ) from None


def git_blob_sha1(data):
    """The id git gives a file's content: SHA-1 over "blob <size>\\0" and the bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _verify(file, data, where):
    checks = [("git blob id", file.git_blob_sha1, git_blob_sha1(data))]
    if file.sha256:
        checks.append(("SHA-256", file.sha256, hashlib.sha256(data).hexdigest()))
    for kind, expected, actual in checks:
        if actual != expected:
            raise BenchmarkDataError(
                f"{where} is not {file.path} of the BARTScore release at commit {RELEASE_COMMIT[:7]}: its {kind} is "
                f"{actual}, the release's is {expected}. Replace it with the release's file ({RELEASE_URL}{file.path})."
            )


class _PlainUnpickler(pickle.Unpickler):
    """The release's data.pkl files hold dicts, lists, text and numbers; nothing that names a class is unpickled."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name}: a data.pkl holds plain data only")


def read_release_pickle(path):
    data = _read_bytes(path)
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as error:
        raise BenchmarkDataError(f"{path} is not a readable data.pkl: {error}") from None


def load_benchmark(name, *, release_dir=None, cache_dir=None, data_file=None):
    """One benchmark's human judgments as a ``datasets.Dataset`` (the columns are in the module's text).

    data_file: a file in the release's layout to read instead of the release's own (a subset, say); it is not
    checked against the release's checksums."""
    import datasets

    (name,) = resolve_benchmarks([name])
    benchmark = BENCHMARKS[name]
    path = data_file or release_file_path(name, release_dir=release_dir, cache_dir=cache_dir)
    content = read_release_pickle(path)
    if not isinstance(content, dict) or not content:
        raise BenchmarkDataError(f"{path} is not in the release's layout: expected a non-empty dict of documents")
    rows = _ROWS[benchmark.layout](benchmark, content, path)
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
    if data_file:
        origin = f"{path} (a file given for it, not checked against the release)"
    else:
        origin = f"{path} ({benchmark.file.path} of {RELEASE_REPOSITORY}@{RELEASE_COMMIT[:7]}, checked)"
    info = datasets.DatasetInfo(description=f"{benchmark.title} human judgments from {origin}", features=features)
    return datasets.Dataset.from_dict(rows, info=info)


def _field(record, key, path, doc_id, kind=None):
    if not isinstance(record, dict) or key not in record:
        raise BenchmarkDataError(f"{path} is not in the release's layout: document {doc_id!r} has no {key!r}")
    value = record[key]
    if kind is str and not isinstance(value, str):
        raise BenchmarkDataError(f"{path}: document {doc_id!r} has a non-text {key!r} ({type(value).__name__})")
    return value


def _human(scores, aspect, path, doc_id):
    value = _field(scores, aspect, path, doc_id)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise BenchmarkDataError(f"{path}: document {doc_id!r} has a non-numeric {aspect!r}: {value!r}") from None


def _new_rows(benchmark):
    columns = ["doc_id", "system", "source", "references", "hypothesis"]
    return {column: [] for column in [*columns, *(f"human_{a}" for a in benchmark.aspects)]}


def _add(rows, benchmark, doc_id, system, source, references, hypothesis, scores, path):
    for column, value in zip(
        ("doc_id", "system", "source", "references", "hypothesis"),
        (str(doc_id), str(system), source, references, hypothesis),
    ):
        rows[column].append(value)
    for aspect in benchmark.aspects:
        rows[f"human_{aspect}"].append(_human(scores, aspect, path, doc_id))


def _reference_list(record, key, path, doc_id):
    references = _field(record, key, path, doc_id)
    if not isinstance(references, list) or not references or not all(isinstance(r, str) for r in references):
        raise BenchmarkDataError(f"{path}: document {doc_id!r} has no list of reference texts in {key!r}")
    return references


def _summaries(benchmark, content, path):
    """SUM/*/data.pkl: {doc_id: {src, ref_summ, [ref_summs,] sys_summs: {system: {sys_summ, scores}}}}."""
    rows = _new_rows(benchmark)
    for doc_id, record in content.items():
        source = _field(record, "src", path, doc_id, str)
        if "ref_summs" in record:  # SummEval: 11 references (its ref_summ is the first of them)
            references = _reference_list(record, "ref_summs", path, doc_id)
        else:
            references = [_field(record, "ref_summ", path, doc_id, str)]
        systems = _field(record, "sys_summs", path, doc_id)
        if not isinstance(systems, dict) or not systems:
            raise BenchmarkDataError(f"{path}: document {doc_id!r} has no systems in 'sys_summs'")
        for system, output in systems.items():
            hypothesis = _field(output, "sys_summ", path, doc_id, str)
            _add(rows, benchmark, doc_id, system, source, references, hypothesis, output.get("scores"), path)
    return rows


def _data_to_text_rows(benchmark, content, path):
    """D2T/*/data.pkl: {doc_id: {src, sys_summ, ref_summs, scores}}; the records name no system."""
    rows = _new_rows(benchmark)
    for doc_id, record in content.items():
        source = _field(record, "src", path, doc_id, str)
        references = _reference_list(record, "ref_summs", path, doc_id)
        hypothesis = _field(record, "sys_summ", path, doc_id, str)
        _add(rows, benchmark, doc_id, "", source, references, hypothesis, _field(record, "scores", path, doc_id), path)
    return rows


def _darr(benchmark, content, path):
    """WMT/*/data.pkl: {doc_id: {src, ref, better: {sys_name, sys, scores}, worse: {...}}}: each document is one
    DARR judgment that `better` is the better translation."""
    rows = _new_rows(benchmark)
    for doc_id, record in content.items():
        source = _field(record, "src", path, doc_id, str)
        reference = _field(record, "ref", path, doc_id, str)
        for side, judged in (("better", 1.0), ("worse", 0.0)):
            translation = _field(record, side, path, doc_id)
            system = _field(translation, "sys_name", path, doc_id, str)
            hypothesis = _field(translation, "sys", path, doc_id, str)
            _add(rows, benchmark, doc_id, system, source, [reference], hypothesis, {"darr": judged}, path)
    return rows


_ROWS = {"summaries": _summaries, "data-to-text": _data_to_text_rows, "darr": _darr}
