"""The release files of each benchmark read into rows, one reader per layout, each a Reader (meta_eval._definitions):
given its benchmark and where the benchmark's files are by role, it returns the rows. The BARTScore release's pickled
summaries, data-to-text and DARR records (the pickle read as plain data, the documents' fields checked one by one),
and the LongDocFACTScore release's reviewer CSV files, articles and LongEval JSON files. meta_eval.benchmarks gives
each benchmark its reader."""

from __future__ import annotations

import csv
import io
import math
import pickle
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from ..corpora._reading import open_bounded, read_bounded, read_json
from ..errors import BenchmarkDataError
from ._definitions import Benchmark, Paths, Rows


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


def read_bytes(path: str) -> bytes:
    """A benchmark file's bytes (at most MAX_FILE_BYTES); BenchmarkDataError says why they cannot be read."""
    return read_bounded(path, error=BenchmarkDataError)


def read_release_pickle(path: str) -> Any:
    """A data.pkl's content: plain containers, text and numbers only (nothing that names a class or function), from
    a file of at most MAX_FILE_BYTES whose data, unfolded, holds at most TEXT_PER_BYTE characters of text (and as many
    containers and values) per byte of the file. BenchmarkDataError names the file and what is wrong."""
    data = read_bytes(path)
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


def _documents(paths: Paths) -> tuple[str, Mapping[Any, Any]]:
    """(the path, the documents) of a benchmark's data.pkl: a non-empty dict, as every layout of the release is."""
    (path,) = paths["judgments"]
    content = read_release_pickle(path)
    if not isinstance(content, dict) or not content:
        raise BenchmarkDataError(f"{path} is not in the release's layout: expected a non-empty dict of documents")
    return path, content


def _field(record: object, key: str, path: str, doc_id: object, kind: type | None = None) -> Any:
    if not isinstance(record, dict) or key not in record:
        raise BenchmarkDataError(f"{path} is not in the release's layout: document {doc_id!r} has no {key!r}")
    value = record[key]
    if kind is str and not isinstance(value, str):
        raise BenchmarkDataError(f"{path}: document {doc_id!r} has a non-text {key!r} ({type(value).__name__})")
    return value


def _human(scores: object, aspect: str, path: str, doc_id: object) -> float:
    value = _field(scores, aspect, path, doc_id)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise BenchmarkDataError(f"{path}: document {doc_id!r} has a non-numeric {aspect!r}: {value!r}") from None
    if not math.isfinite(number):  # refused here, as the file is read: the correlations take finite scores only
        raise BenchmarkDataError(f"{path}: document {doc_id!r} has a {aspect!r} that is not a finite number: {value!r}")
    return number


def _new_rows(benchmark: Benchmark) -> Rows:
    columns = ["doc_id", "system", "source", "references", "hypothesis"]
    return {column: [] for column in [*columns, *(f"human_{a}" for a in benchmark.aspects)]}


def _add(
    rows: Mapping[str, list[Any]],
    benchmark: Benchmark,
    doc_id: object,
    system: object,
    source: str,
    references: list[str],
    hypothesis: str,
    scores: object,
    path: str,
) -> None:
    for column, value in zip(
        ("doc_id", "system", "source", "references", "hypothesis"),
        (str(doc_id), str(system), source, references, hypothesis),
    ):
        rows[column].append(value)
    for aspect in benchmark.aspects:
        rows[f"human_{aspect}"].append(_human(scores, aspect, path, doc_id))


def _reference_list(record: object, key: str, path: str, doc_id: object) -> list[str]:
    references = _field(record, key, path, doc_id)
    if not isinstance(references, list) or not references or not all(isinstance(r, str) for r in references):
        raise BenchmarkDataError(f"{path}: document {doc_id!r} has no list of reference texts in {key!r}")
    return references


def read_summaries(benchmark: Benchmark, paths: Paths) -> Rows:
    """SUM/*/data.pkl: {doc_id: {src, ref_summ, [ref_summs,] sys_summs: {system: {sys_summ, scores}}}}."""
    path, content = _documents(paths)
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


def read_data_to_text(benchmark: Benchmark, paths: Paths) -> Rows:
    """D2T/*/data.pkl: {doc_id: {src, sys_summ, ref_summs, scores}}; the records name no system."""
    path, content = _documents(paths)
    rows = _new_rows(benchmark)
    for doc_id, record in content.items():
        source = _field(record, "src", path, doc_id, str)
        references = _reference_list(record, "ref_summs", path, doc_id)
        hypothesis = _field(record, "sys_summ", path, doc_id, str)
        _add(rows, benchmark, doc_id, "", source, references, hypothesis, _field(record, "scores", path, doc_id), path)
    return rows


def read_darr(benchmark: Benchmark, paths: Paths) -> Rows:
    """WMT/*/data.pkl: {doc_id: {src, ref, better: {sys_name, sys, scores}, worse: {...}}}: each document is one
    DARR judgment that `better` is the better translation."""
    path, content = _documents(paths)
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


# ---------------------------------------------------------------------------------------------------------------------
# the LongDocFACTScore release's layouts

# LongSciVerify's systems, in the order of their model_1, model_2, model_3 columns (the release's data/README.md).
LONGSCIVERIFY_SYSTEMS = ("gencomparesumabs", "dancersum", "section_conditional")
LONGEVAL_SYSTEMS = ("bigbird_pegasus", "longt5")


def _clean_abstract(text: str | Iterable[str]) -> str:
    """The release's clean_abstract: sentence tags and <pad>/<br /> removed; a list of sentences joined as the
    release joins them (each with a space before and after)."""

    def clean(sentence: str) -> str:
        for tag in ("<S>", "</S>", "<pad>", "<br />"):
            sentence = sentence.replace(tag, "")
        return sentence

    if isinstance(text, str):
        return clean(text)
    return "".join(f" {clean(sentence)} " for sentence in text)


def _json(path: str) -> Any:
    return read_json(path, error=BenchmarkDataError)


def _csv_rows(path: str) -> list[dict[str, str]]:
    try:
        with io.TextIOWrapper(open_bounded(path, error=BenchmarkDataError), encoding="utf-8-sig", newline="") as handle:
            return list(csv.DictReader(handle))
    except OSError as error:
        raise BenchmarkDataError(f"cannot read {path}: {error.strerror or error}") from None
    except (csv.Error, UnicodeDecodeError) as error:
        raise BenchmarkDataError(f"{path} is not a readable CSV file: {error}") from None


def _rating(row: Mapping[str, str | None], column: str, path: str, number: int) -> float | None:
    """One annotator's rating, or None where the cell is empty (a sentence the annotator did not rate)."""
    if column not in row:
        raise BenchmarkDataError(f"{path} is not in the release's layout: it has no column {column!r}")
    cell = (row[column] or "").strip()
    if not cell:
        return None
    try:
        value = float(cell)
    except ValueError:
        raise BenchmarkDataError(f"{path} row {number}, column {column!r}: {cell!r} is not a number") from None
    if not math.isfinite(value):
        raise BenchmarkDataError(f"{path} row {number}, column {column!r}: {cell!r} is not a finite number")
    return value


def read_longsciverify(benchmark: Benchmark, paths: Paths) -> Rows:
    """One row per (article, system): each annotator's factuality is the mean of their ratings of the summary's
    sentences; the human score is the mean over the annotators (run_evaluation.py's
    average_scores_accross_annnotators). The article is the first in the raw file whose id is the annotation's id
    (stripped) or contains it, as load_raw_data finds it."""
    reviewer_paths = paths["reviewers"]
    reviewers = [_csv_rows(path) for path in reviewer_paths]
    (articles_path,) = paths["articles"]
    articles = _json(articles_path)
    if not isinstance(articles, list) or not all(isinstance(a, dict) for a in articles):
        raise BenchmarkDataError(f"{articles_path} is not in the release's layout: expected a list of articles")
    counts = {len(rows) for rows in reviewers}
    if len(counts) != 1 or not reviewers[0]:
        raise BenchmarkDataError(
            f"the annotators' files of {benchmark.title} need the same, non-zero number of rows: "
            + ", ".join(f"{path} has {len(rows)}" for path, rows in zip(reviewer_paths, reviewers))
        )
    rows = _new_rows(benchmark)
    for number, annotated in enumerate(reviewers[0], start=1):
        if "id" not in annotated:
            raise BenchmarkDataError(f"{reviewer_paths[0]} is not in the release's layout: it has no column 'id'")
        doc_id = annotated["id"]
        article = next(
            (a for a in articles if a.get("article_id") == doc_id.strip() or doc_id in str(a.get("article_id", ""))),
            None,
        )
        if article is None or "article_text" not in article or "abstract_text" not in article:
            raise BenchmarkDataError(f"{articles_path} has no article (with its text and abstract) for id {doc_id!r}")
        for model, system in enumerate(LONGSCIVERIFY_SYSTEMS, start=1):
            per_annotator = []
            for path, annotator in zip(reviewer_paths, reviewers):
                row = annotator[number - 1]
                ratings = [
                    _rating(row, f"model_{model}_sent_{sentence}_factuality", path, number) for sentence in (1, 2, 3)
                ]
                rated = [rating for rating in ratings if rating is not None]
                if not rated:
                    raise BenchmarkDataError(f"{path} row {number}: model_{model}'s summary has no factuality rating")
                per_annotator.append(sum(rated) / len(rated))
            if system not in annotated:
                raise BenchmarkDataError(f"{reviewer_paths[0]} is not in the release's layout: no column {system!r}")
            _add(
                rows,
                benchmark,
                doc_id.strip(),
                system,
                _clean_abstract(article["article_text"]),
                [_clean_abstract(article["abstract_text"])],
                annotated[system],
                {"factuality": sum(per_annotator) / len(per_annotator)},
                reviewer_paths[0],
            )
    return rows


def read_longeval(benchmark: Benchmark, paths: Paths) -> Rows:
    """One row per (article, system): the human score is the mean of the scores of the first judgment of that summary
    (run_evaluation.py's load_dataframes); summaries, sources and the human reference cleaned as it cleans them."""
    (scores_path,) = paths["scores"]
    (texts_path,) = paths["texts"]
    judgments, texts = _json(scores_path), _json(texts_path)
    if not isinstance(judgments, list) or not isinstance(texts, dict):
        raise BenchmarkDataError(
            f"{scores_path} and {texts_path} are not in the release's layout (a list of judgments, a dict of texts)"
        )
    article_ids = sorted({key.split("_")[1] for key in texts}, key=lambda i: (len(i), i))
    rows = _new_rows(benchmark)
    for article_id in article_ids:
        human_key = f"article_{article_id}_human"
        for system in LONGEVAL_SYSTEMS:
            key = f"article_{article_id}_{system}"
            record = texts.get(key)
            if not isinstance(record, dict) or "summary" not in record or "source_doc" not in record:
                raise BenchmarkDataError(f"{texts_path} has no summary and source_doc for {key!r}")
            judged = next((j.get("score") for j in judgments if isinstance(j, dict) and j.get("story") == key), None)
            if not isinstance(judged, list) or not judged:
                raise BenchmarkDataError(f"{scores_path} has no scores for {key!r}")
            try:
                human = float(sum(judged) / len(judged))
            except TypeError:
                raise BenchmarkDataError(f"{scores_path}: the scores of {key!r} are not numbers") from None
            reference = texts.get(human_key, {}).get("summary") if isinstance(texts.get(human_key), dict) else None
            if reference is None:
                raise BenchmarkDataError(f"{texts_path} has no human summary {human_key!r}")
            _add(
                rows,
                benchmark,
                article_id,
                system,
                _clean_abstract(record["source_doc"]),
                [_clean_abstract(reference)],
                _clean_abstract(record["summary"]),
                {"factuality": human},
                scores_path,
            )
    return rows
