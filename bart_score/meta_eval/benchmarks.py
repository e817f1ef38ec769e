"""The human judgments of the BARTScore release and of the LongDocFACTScore release, one loader per benchmark, as
``datasets.Dataset``s.

The release (github.com/neulab/BARTScore) ships each benchmark as a pickled dict, ``data.pkl``, in one of three
layouts (SUM/README.md, D2T/README.md, WMT/README.md of the release). Each benchmark (a ``Benchmark``, see
meta_eval._definitions) names its files by role and holds the reader of its layout (meta_eval._layouts).
``load_benchmark(name)`` finds the files, checks them against the release's checksums, and has the benchmark's reader
return one row per scored text with these columns:

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
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import BenchmarkDataError, InputError
from ..messages import KEYWORDS, Mention, Part, said
from ._definitions import Benchmark, Paths, Reader, Release, ReleaseFile
from ._layouts import (
    read_bytes,
    read_darr,
    read_data_to_text,
    read_longeval,
    read_longsciverify,
    read_summaries,
)

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

RELEASES = {
    "bartscore": Release(
        title="BARTScore",
        repository=RELEASE_REPOSITORY,
        commit=RELEASE_COMMIT,
        url=RELEASE_URL,
        dir_env=RELEASE_DIR_ENV,
        cache_prefix="release",
    ),
    "longdocfactscore": Release(
        title="LongDocFACTScore",
        repository=LONGDOC_REPOSITORY,
        commit=LONGDOC_COMMIT,
        url=f"https://raw.githubusercontent.com/{LONGDOC_REPOSITORY}/{LONGDOC_COMMIT}/",
        dir_env=LONGDOC_DIR_ENV,
        cache_prefix="longdocfactscore",
    ),
}


def _summarization(
    *,
    name: str,
    title: str,
    protocol: str,
    aspects: tuple[str, ...],
    file: ReleaseFile,
    directions: tuple[str, ...],
    paper_table: str,
) -> Benchmark:
    """A benchmark of the release's SUM/ folder: summaries, judged per document; mean over references, detokenized."""
    return Benchmark(
        name=name,
        title=title,
        layout="summaries",
        protocol=protocol,
        aspects=aspects,
        files={"judgments": (file,)},
        read=read_summaries,
        directions=directions,
        aggregation="mean",
        detokenize=True,
        paper_table=paper_table,
    )


def _data_to_text(*, name: str, title: str, file: ReleaseFile) -> Benchmark:
    """A benchmark of the release's D2T/ folder: texts from meaning representations, Spearman over all texts."""
    return Benchmark(
        name=name,
        title=title,
        layout="data-to-text",
        protocol="spearman",
        aspects=("informativeness", "naturalness", "quality"),
        files={"judgments": (file,)},
        read=read_data_to_text,
        directions=("f_score",),
        # D2T/score.py takes the best reference ("We take the max when combining the multi-reference results").
        aggregation="max",
        detokenize=True,
        paper_table="6",
    )


def _translation(*, pair: str, file: ReleaseFile) -> Benchmark:
    """A language pair of the release's WMT/ folder: DARR judgments of WMT19, scored on the texts as they are."""
    return Benchmark(
        name=f"wmt19-{pair}",
        title=pair,
        layout="darr",
        protocol="kendall_like",
        aspects=("darr",),
        files={"judgments": (file,)},
        read=read_darr,
        directions=("f_score",),
        aggregation="mean",
        detokenize=False,
        paper_table="3",
    )


_FACT = ("fact",)
_ALL: tuple[Benchmark, ...] = (
    _summarization(
        name="realsumm",
        title="REALSumm",
        protocol="summary_level",
        aspects=("litepyramid_recall",),
        file=ReleaseFile(
            path="SUM/REALSumm/data.pkl",
            git_blob_sha1="0e476e1afb671fbe00b639b19cf42dab70e28f94",
            sha256="1f9c97d27e8fe3ade81f76ea33dc6d3b5b333a602b1c568130306039bd701942",
            size=1510489,
        ),
        directions=("recall",),
        paper_table="4",
    ),
    _summarization(
        name="summeval",
        title="SummEval",
        protocol="summary_level",
        aspects=("coherence", "consistency", "fluency", "relevance"),
        file=ReleaseFile(
            path="SUM/SummEval/data.pkl",
            git_blob_sha1="db2fb5c267c023391b802258c94d73b6897b4ae6",
            sha256="008f1639a3352f0248cac88b74ff431c27287a027a888902ef425a26005f0acf",
            size=1176833,
        ),
        directions=("faithfulness",),
        paper_table="4",
    ),
    _summarization(
        name="newsroom",
        title="NeR18",
        protocol="summary_level",
        aspects=("coherence", "fluency", "informativeness", "relevance"),
        file=ReleaseFile(
            path="SUM/Newsroom/data.pkl",
            git_blob_sha1="e2ac937d66786296335928538fc5974c0cddae3f",
            sha256="277795f19d17fef0077061708d468e020c90071854508e774f4addae8a4a0ed5",
            size=419155,
        ),
        directions=("faithfulness",),
        paper_table="4",
    ),
    _summarization(
        name="rank19",
        title="Rank19",
        protocol="pairwise_accuracy",
        aspects=_FACT,
        file=ReleaseFile(
            path="SUM/Rank19/data.pkl",
            git_blob_sha1="ae6251e55137c98ed1c8751278502d5a3f283fdd",
            sha256="19f2a41a6ebc33e69f04b53829dd47844df4b7a3f8fc8225776b66f34e88ff0d",
            size=149521,
        ),
        directions=("faithfulness",),
        paper_table="5",
    ),
    _summarization(
        name="qags-cnn",
        title="QAGS-CNN",
        protocol="pearson",
        aspects=_FACT,
        file=ReleaseFile(
            path="SUM/QAGS_CNN/data.pkl",
            git_blob_sha1="67d518ab176bc489b26cf30f3ff60f9decdf4341",
            sha256="51deeef7dd0b181ac4072db234e41cb128b44ee42854a71d01d37371f5b53289",
            size=515731,
        ),
        directions=("faithfulness",),
        paper_table="5",
    ),
    _summarization(
        name="qags-xsum",
        title="QAGS-XSUM",
        protocol="pearson",
        aspects=_FACT,
        file=ReleaseFile(
            path="SUM/QAGS_XSUM/data.pkl",
            git_blob_sha1="d3f983004c060cfbb3fecf4d319e35dac41f5603",
            sha256="9a49d4b689b093380dfb8627327ce94c8ef1af91cde9cc4ddd0f293b1ac17733",
            size=557039,
        ),
        directions=("faithfulness",),
        paper_table="5",
    ),
    _data_to_text(
        name="bagel",
        title="BAGEL",
        file=ReleaseFile(
            path="D2T/BAGEL/data.pkl",
            git_blob_sha1="04644cf35dcee13ae5264c32bdf3574474694fef",
            sha256="67f2bc57e47501ba3afb00fabb9a4790db2b0828b982799d76c0efe3c6e89ee1",
            size=289110,
        ),
    ),
    _data_to_text(
        name="sfres",
        title="SFRES",
        file=ReleaseFile(
            path="D2T/SFRES/data.pkl",
            git_blob_sha1="4e614c3512914328d37254dcd5203639413bab14",
            sha256="7712d435ff79bb0b42191b8b868c1fe7ae26ae6399829a9b74fd6cb6d76690da",
            size=1189812,
        ),
    ),
    _data_to_text(
        name="sfhot",
        title="SFHOT",
        file=ReleaseFile(
            path="D2T/SFHOT/data.pkl",
            git_blob_sha1="3e51ea981f2fc0645f72f535e633b4e3bea46fd1",
            sha256="00492d3f73341198663eca78cf07cef83a0b4834a6ba15a33a1ea79257f62e61",
            size=1900431,
        ),
    ),
    # de-en, fi-en, ru-en and zh-en are 4 MiB or more: only their git blob ids are known here.
    _translation(
        pair="de-en",
        file=ReleaseFile(path="WMT/de-en/data.pkl", git_blob_sha1="4f2b44dd24cb1ad519fbf0eb33a24553fc6c587c"),
    ),
    _translation(
        pair="fi-en",
        file=ReleaseFile(path="WMT/fi-en/data.pkl", git_blob_sha1="fa62c0e76aa97d28c623eeb301652daede2888e3"),
    ),
    _translation(
        pair="gu-en",
        file=ReleaseFile(
            path="WMT/gu-en/data.pkl",
            git_blob_sha1="dee1b62ac92dbed5bb88929cb4ac72d1c2980672",
            sha256="9a3995e133a2bfc280cfbe57d1b7027d812ab075b54c3b1841471b3b9d6a0e44",
            size=3083502,
        ),
    ),
    _translation(
        pair="kk-en",
        file=ReleaseFile(
            path="WMT/kk-en/data.pkl",
            git_blob_sha1="06f52b75d1ce0dc2d039caeff2e8c5fa1c42acd8",
            sha256="cac631542aa21a1a712d724e5b0cd95198544d03abb22cf007b5a5acc53181e7",
            size=1934187,
        ),
    ),
    _translation(
        pair="lt-en",
        file=ReleaseFile(
            path="WMT/lt-en/data.pkl",
            git_blob_sha1="e6eb35ba3efc9a2aefe08c5ef9092e01d088ef8b",
            sha256="ea0b47ae5618fc64f1a37ee6699b6078ae59ba243771b6402194393b90ff144f",
            size=3844714,
        ),
    ),
    _translation(
        pair="ru-en",
        file=ReleaseFile(path="WMT/ru-en/data.pkl", git_blob_sha1="f89f0238e4a2d500e66058913869a181e2437636"),
    ),
    _translation(
        pair="zh-en",
        file=ReleaseFile(path="WMT/zh-en/data.pkl", git_blob_sha1="9da3ae841dbcab64090f8f255418d25d0be1168c"),
    ),
)


def _longdoc_file(path: str, blob: str, sha256: str, size: int) -> ReleaseFile:
    return ReleaseFile(path=f"data/{path}", git_blob_sha1=blob, sha256=sha256, size=size)


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


def _long_document(
    *, name: str, title: str, layout: str, files: dict[str, tuple[ReleaseFile, ...]], read: Reader
) -> Benchmark:
    """A benchmark of the LongDocFACTScore release: factuality of long documents' summaries, Kendall's tau-b."""
    return Benchmark(
        name=name,
        title=title,
        layout=layout,
        protocol="kendall",
        aspects=("factuality",),
        files=files,
        read=read,
        directions=("faithfulness",),
        aggregation="mean",
        detokenize=False,
        paper_table="long",
        release="longdocfactscore",
        long_documents=True,
    )


def _longsciverify(corpus: str) -> Benchmark:
    reviewers = tuple(
        _longdoc_file(f"human_eval_results/LongSciVerify/{corpus}_reviewer_{n}.csv", blob, sha256, _SIZES[corpus][0])
        for n, (blob, sha256) in enumerate(_REVIEWERS[corpus], start=1)
    )
    articles = _longdoc_file(f"raw_data/LongSciVerify/{corpus}_test.json", *_ARTICLES[corpus], _SIZES[corpus][1])
    return _long_document(
        name=f"longsciverify-{corpus}",
        title=f"LongSciVerify-{'PubMed' if corpus == 'pubmed' else 'arXiv'}",
        layout="longsciverify",
        files={"reviewers": reviewers, "articles": (articles,)},
        read=read_longsciverify,
    )


_LONG = (
    _longsciverify("pubmed"),
    _longsciverify("arxiv"),
    _long_document(
        name="longeval-pubmed",
        title="LongEval-PubMed",
        layout="longeval",
        files={
            "scores": (
                _longdoc_file(
                    "human_eval_results/LongEval/pubmed_fine_scores.json",
                    "4c461a73745ce880ae38268f248faa97ed1a084d",
                    "bf10a2f43213ac5dd5109fd31c848df79f47e526edcda6c9c7c75675ae800093",
                    6267,
                ),
            ),
            "texts": (
                _longdoc_file(
                    "raw_data/LongEval/pubmed_summary_src_doc_data.json",
                    "43422a2687a5a3f07ab76c21e2c4515ed5e51be2",
                    "d9fcdc1aec99f24c654d4c8e6904ed88a42973a58ae466697c14508ffabffaa5",
                    1252915,
                ),
            ),
        },
        read=read_longeval,
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
            raise InputError(f"unknown benchmark {name!r}", remedy=f"choose from {', '.join([*BENCHMARKS, *GROUPS])}")
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
    """The path on this machine of a benchmark's release file (`file`, default its first), checked against its
    checksums; downloaded into the cache first if it is nowhere else (and downloads are allowed). BenchmarkDataError
    says why it cannot be had, with what a front end needs to say how to get it (see how_to_get)."""
    benchmark = BENCHMARKS[name]
    release = RELEASES[benchmark.release]
    file = file or benchmark.file
    release_dir = release_dir or os.environ.get(release.dir_env)
    if release_dir:
        path = os.path.join(release_dir, *file.path.split("/"))
        if not os.path.isfile(path):
            reason = f"{path} does not exist: the release checkout {release_dir!r} lacks {file.path}."
            raise _unavailable(reason, benchmark.release, file, None)
        _verify(release, file, read_bytes(path), path)
        return path
    path = os.path.join(cache_dir or default_cache_dir(benchmark.release), *file.path.split("/"))
    if os.path.isfile(path):
        _verify(release, file, read_bytes(path), path)
        return path
    offline = [env for env in _OFFLINE_ENVS if os.environ.get(env, "").lower() in ("1", "true", "yes", "on")]
    if offline:
        reason = (
            f"{benchmark.title}'s human judgments ({file.path} of the {release.title} release) are not at {path}, "
            f"and {offline[0]} is set, so they were not downloaded."
        )
        raise _unavailable(reason, benchmark.release, file, path)
    data = _download(benchmark.release, file, path)
    _verify(release, file, data, release.url + file.path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".download-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(temporary, path)
    return path


def how_to_get(release: str, path: str, cache_path: str | None, checkout: str) -> str:
    """What gets a release file that is not here, in words: download it from the release (`release`, its key; `path`,
    the file's path in it) into the cache at cache_path (None: into the release checkout named), or name a checkout of
    the release by `checkout` (a front end's own words for the option that names one) or by its environment
    variable."""
    return said(_how_to_get(release, path, cache_path, checkout), KEYWORDS)


def _how_to_get(release: str, path: str, cache_path: str | None, checkout: Part) -> list[Part]:
    """how_to_get's words as a message's parts, the option that names a checkout as `checkout`."""
    pinned = RELEASES[release]
    where = f"save it as {cache_path}" if cache_path else "put it there"
    return [
        f"Download {pinned.url}{path} (the release at commit {pinned.commit[:7]}) and {where}, or point ",
        checkout,
        f" / ${pinned.dir_env} at a checkout of https://github.com/{pinned.repository}.",
    ]


def _unavailable(reason: str, release: str, file: ReleaseFile, cache_path: str | None) -> BenchmarkDataError:
    """The error for a release file that cannot be had: the reason, then how to get it in the library's words
    (load_benchmark's release_dir a Mention), with the data a front end says that in its own words from."""
    return BenchmarkDataError(
        f"{reason} ",
        *_how_to_get(release, file.path, cache_path, Mention("release_dir")),
        option="release_dir",
        reason=reason,
        release=release,
        release_file=file.path,
        cache_path=cache_path,
    )


def _download(release: str, file: ReleaseFile, cache_path: str) -> bytes:
    pinned = RELEASES[release]
    try:
        with urllib.request.urlopen(pinned.url + file.path, timeout=60) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as error:
        cause = getattr(error, "reason", None) or error
        reason = (
            f"{file.path} of the {pinned.title} release is not on this machine and could not be downloaded ({cause})."
        )
        raise _unavailable(reason, release, file, cache_path) from None


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


def load_benchmark(
    name: str, *, release_dir: str | None = None, cache_dir: str | None = None, data_file: str | None = None
) -> Dataset:
    """One benchmark's human judgments as a ``datasets.Dataset`` (the columns are in the module's text).

    data_file: a file in the release's layout to read instead of the release's own (a subset, say); for a benchmark
    read from several files (LongDocFACTScore's), a folder holding the release's files at their paths (data/...). It
    is not checked against the release's checksums."""
    import datasets

    (name,) = resolve_benchmarks([name])
    benchmark = BENCHMARKS[name]
    paths: Paths
    if data_file:
        paths = given_paths(benchmark, data_file)
    else:
        paths = {
            role: tuple(release_file_path(name, release_dir=release_dir, cache_dir=cache_dir, file=f) for f in files)
            for role, files in benchmark.files.items()
        }
    first = next(iter(paths.values()))[0]
    path = data_file or (first if benchmark.single_file else os.path.dirname(first))
    rows = benchmark.read(benchmark, paths)
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
        given = "a file" if benchmark.single_file else "a folder"
        origin = f"{path} ({given} given for it, not checked against the release)"
    else:
        origin = f"{path} ({benchmark.file.path} of {release.repository}@{release.commit[:7]}, checked)"
    info = datasets.DatasetInfo(description=f"{benchmark.title} human judgments from {origin}", features=features)
    return datasets.Dataset.from_dict(rows, info=info)


def given_paths(benchmark: Benchmark, data_file: str) -> Paths:
    """Where a benchmark's files are when the user gives them (load_benchmark's data_file): a benchmark read from
    one file is read from that file; one read from several, from a folder that holds them at their release paths."""
    if benchmark.single_file:
        return {role: (data_file,) for role in benchmark.files}
    paths: dict[str, tuple[str, ...]] = {}
    for role, files in benchmark.files.items():
        paths[role] = tuple(os.path.join(data_file, *file.path.split("/")) for file in files)
        for file, path in zip(files, paths[role]):
            if not os.path.isfile(path):
                raise BenchmarkDataError(
                    f"{data_file} is not laid out as the {RELEASES[benchmark.release].title} release: "
                    f"{benchmark.name} needs {file.path} in it"
                )
    return paths
