"""Retrievers for source-window faithfulness: for each sentence of a prediction, the source sentences most like it.

Two kinds, one interface (``Retriever.top_k``):

    EmbeddingRetriever  a sentence-embedding encoder checkpoint run through transformers: each sentence is the mean of
                        its token states over the attention mask, and sentences are compared by cosine (what
                        sentence-transformers computes for ``bert-base-nli-mean-tokens``, LongDocFACTScore's retriever)
    BM25Retriever       lexical BM25 (the bm25s package) over each source's sentences, for machines without an encoder

``load_retriever(name, device)`` turns the ``retriever=`` option into one: "bm25", or an encoder checkpoint (a local
directory, else the Hugging Face cache, else the Hub, as the scoring checkpoints are found). Ranks are ordered by
similarity, most similar first; equal similarities keep the source's order."""

from __future__ import annotations

import os
import stat
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..corpora._reading import read_json
from ..errors import CheckpointLoadError, InputError, LongSourceWarning, MissingExtraError
from ..messages import FileName, Mention
from ..options import BM25, DEFAULT_RETRIEVER, RETRIEVER, Retriever, check_retriever

# sentence-transformers modules that the embedding here reproduces; any other module changes the embedding.
_REPRODUCED_MODULES = {
    "sentence_transformers.models.Transformer": "transformer",
    "sentence_transformers.models.Pooling": "pooling",
    "sentence_transformers.models.Normalize": "normalize",  # cosine ignores the norm
}
# Padded tokens per embedding batch, by device. On a CPU, batches of 1,024 tokens embed as fast as batches of 8,192
# and hold an eighth of the activations: bench_long_documents.py's retriever took 5.4 s either way, and the call's
# peak RSS fell from 1.59 to 1.39 GiB (bench/README.md, "Long documents").
_EMBEDDING_TOKENS = {"cpu": 1024}
_ACCELERATOR_EMBEDDING_TOKENS = 8192
# A batch takes sentences down to this share of its longest one's length, so that padding stays under a quarter of
# each row, for at most log(longest) / log(4/3) batches more: bench_long_documents.py's sentences (11 to 23 tokens)
# were padded to 30% more tokens than they hold in batches cut by 8,192 tokens alone, 12% with this.
_SHORTEST_SHARE = 3 / 4


def _unusable_encoder(checkpoint: str, problem: str, remedy: str | None = None) -> InputError:
    """The error of an encoder checkpoint the retriever cannot embed with, which names it after the option: a folder
    on this machine as a FileName (which a front end may show without its folders), a Hub id as it is written."""
    named = FileName(checkpoint) if os.path.exists(checkpoint) else repr(checkpoint)
    return InputError(RETRIEVER, " ", named, problem, value=checkpoint, remedy=remedy)


# The most bytes of a sentence-transformers settings file (modules.json and the like hold a few keys).
_SETTINGS_FILE_BYTES = 1 << 20


def _ranked(similarities: np.ndarray, k: int) -> list[list[int]]:
    """Per row, the indices of the k highest values, highest first; equal values keep their order."""
    order = np.argsort(-similarities, axis=1, kind="stable")[:, :k]
    return order.tolist()


def _length_batches(lengths: Sequence[int], budget: int) -> Iterator[slice]:
    """Batches of sentences sorted longest first (given their token counts): each at most `budget` padded tokens (a
    longer sentence alone), none holding a sentence shorter than _SHORTEST_SHARE of its first."""
    start = 0
    while start < len(lengths):
        longest = max(1, lengths[start])
        limit = min(len(lengths), start + max(1, budget // longest))
        stop = start + 1
        while stop < limit and lengths[stop] >= _SHORTEST_SHARE * longest:
            stop += 1
        yield slice(start, stop)
        start = stop


class BM25Retriever(Retriever):
    """BM25 (bm25s, Lucene's variant, English stop words removed) over one source's sentences at a time. A query
    with no word in common with any sentence scores 0 everywhere and so takes the source's first sentences."""

    label = BM25

    def top_k(self, documents: Sequence[Sequence[str]], queries: Sequence[Sequence[str]], k: int) -> list:
        try:
            import bm25s
        except ImportError:
            raise MissingExtraError.needs("the BM25 retriever", "the bm25s package", "long") from None

        ranks = []
        for sentences, asked in zip(documents, queries):
            corpus = bm25s.tokenize(list(sentences), stopwords="en", show_progress=False)
            words = bm25s.tokenize(list(asked), stopwords="en", return_ids=False, show_progress=False)
            scores = np.zeros((len(asked), len(sentences)), dtype=np.float64)
            if corpus.vocab:  # a source of stop words only has nothing to index
                index = bm25s.BM25()
                index.index(corpus, show_progress=False)
                for row, query in enumerate(words):
                    if query:
                        scores[row] = index.get_scores(query)
            ranks.append(_ranked(scores, k))
        return ranks


class EmbeddingRetriever(Retriever):
    """A sentence-embedding encoder (BERT, RoBERTa, MPNet, ...) checkpoint: mean pooling over the attention mask,
    cosine similarity. Every distinct sentence of a call is embedded once, in length-sorted batches. Sentences are
    cut to the checkpoint's max_seq_length (sentence_bert_config.json), as sentence-transformers cuts them, else to
    the model's positions."""

    def __init__(self, checkpoint: str, device: object = None) -> None:
        import torch
        from transformers import AutoModel

        # bart_score.models.loading imports torch and transformers: only once an encoder is asked for.
        from ..models.loading import find_checkpoint, is_decoder_only, load_tokenizer, loading

        config, where = find_checkpoint(checkpoint)
        if getattr(config, "is_encoder_decoder", False) or is_decoder_only(config):
            kind = "sequence-to-sequence" if getattr(config, "is_encoder_decoder", False) else "causal language"
            raise _unusable_encoder(
                checkpoint,
                f" is a {config.model_type!r} {kind} model, not a sentence encoder",
                f"give a sentence-embedding encoder checkpoint (such as {DEFAULT_RETRIEVER}) or {BM25!r}",
            )
        self.max_length = self._check_sentence_transformers_files(checkpoint, where)
        self.tokenizer = load_tokenizer(f"the retriever {checkpoint!r}", checkpoint, where)
        with loading(f"the retriever {checkpoint!r}"):
            self.model = AutoModel.from_pretrained(
                checkpoint, config=config, dtype=torch.float32, trust_remote_code=False, **where
            )
        usable = _usable_positions(self.model, getattr(config, "max_position_embeddings", None))
        if self.max_length is None:
            limits = [n for n in (usable, getattr(self.tokenizer, "model_max_length", None)) if n and n < 10**6]
            self.max_length = min(limits) if limits else 512
        elif usable is not None and self.max_length > usable:
            warnings.warn(
                LongSourceWarning(
                    Mention("retriever", checkpoint),
                    f": sentence_bert_config.json's max_seq_length {self.max_length} is more than the model's "
                    f"{usable} positions; sentences are cut at {usable} tokens",
                ),
                stacklevel=4,
            )
            self.max_length = usable
        self.model.eval().to(device or "cpu")
        self.label = checkpoint
        self.checkpoint = checkpoint

    @staticmethod
    def _check_sentence_transformers_files(checkpoint: str, where: dict) -> int | None:
        """Refuses a sentence-transformers checkpoint whose modules compute something other than mean pooling of the
        encoder's states (a dense layer, CLS pooling, ...); returns its max_seq_length, if it names one."""
        modules = _json_file(checkpoint, "modules.json", where)
        if modules is not None and not (isinstance(modules, list) and all(isinstance(m, dict) for m in modules)):
            raise CheckpointLoadError(
                f"modules.json of the retriever {checkpoint!r} is not a list of modules (objects with a type and "
                f"a path)"
            )
        pooling_folder = "1_Pooling"
        for module in modules or []:
            kind = _REPRODUCED_MODULES.get(module.get("type"))
            if kind is None:
                raise _unusable_encoder(
                    checkpoint,
                    f" has a sentence-transformers module {module.get('type')!r}, which does more than mean pooling",
                    f"give an encoder with mean pooling, or {BM25!r}",
                )
            if kind == "pooling":
                pooling_folder = _inner_path(checkpoint, module.get("path")) or pooling_folder
        pooling = _json_file(checkpoint, f"{pooling_folder}/config.json", where)
        if pooling:
            modes = sorted(key for key, value in pooling.items() if key.startswith("pooling_mode_") and value is True)
            if modes != ["pooling_mode_mean_tokens"]:
                raise _unusable_encoder(
                    checkpoint,
                    f" pools by {', '.join(modes) or 'nothing'}; this retriever takes the mean of the token states "
                    f"(pooling_mode_mean_tokens), so it would embed differently",
                )
        settings = _json_file(checkpoint, "sentence_bert_config.json", where) or {}
        length = settings.get("max_seq_length")
        return int(length) if isinstance(length, int) and length > 0 else None

    def embed(self, sentences: Sequence[str]) -> np.ndarray:
        """Unit-length mean-pooled embeddings, one row per sentence (each distinct sentence computed once)."""
        import torch

        distinct = list(dict.fromkeys(sentences))
        ids = self.tokenizer(distinct, truncation=True, max_length=self.max_length)["input_ids"]
        order = sorted(range(len(distinct)), key=lambda i: len(ids[i]), reverse=True)
        vectors: list[Any] = [None] * len(distinct)  # each distinct sentence's row, set below
        device = self.model.device
        with torch.inference_mode():
            budget = _EMBEDDING_TOKENS.get(device.type, _ACCELERATOR_EMBEDDING_TOKENS)
            for rows in _length_batches([len(ids[i]) for i in order], budget):
                batch = order[rows]
                padded = self.tokenizer.pad({"input_ids": [ids[i] for i in batch]}, return_tensors="pt")
                mask = padded["attention_mask"].to(device)
                states = self.model(input_ids=padded["input_ids"].to(device), attention_mask=mask).last_hidden_state
                weights = mask.unsqueeze(-1).to(states.dtype)
                pooled = (states * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled.float(), dim=1)
                for row, index in enumerate(batch):
                    vectors[index] = pooled[row].cpu().numpy()
        position = {sentence: index for index, sentence in enumerate(distinct)}
        width = self.model.config.hidden_size
        return np.stack([vectors[position[s]] for s in sentences]) if sentences else np.zeros((0, width), np.float32)

    def top_k(self, documents: Sequence[Sequence[str]], queries: Sequence[Sequence[str]], k: int) -> list:
        every = [sentence for group in (*documents, *queries) for sentence in group]
        embedded = self.embed(list(dict.fromkeys(every)))
        row_of = {sentence: row for row, sentence in enumerate(dict.fromkeys(every))}
        ranks = []
        for sentences, asked in zip(documents, queries):
            source = embedded[[row_of[s] for s in sentences]]
            query = embedded[[row_of[s] for s in asked]]
            ranks.append(_ranked(query @ source.T, k))
        return ranks


def _inner_path(checkpoint: str, path: object) -> str:
    """A module's folder as modules.json gives it ("" for the checkpoint's own), refused unless it is a relative
    path that stays inside the checkpoint."""
    if not isinstance(path, str):
        raise CheckpointLoadError(
            f"modules.json of the retriever {checkpoint!r} gives a module the path {path!r}, which is not text"
        )
    parts = path.replace("\\", "/").split("/")
    if os.path.isabs(path) or ".." in parts or "\0" in path:
        raise CheckpointLoadError(
            f"modules.json of the retriever {checkpoint!r} gives a module the path {path!r}, outside the checkpoint; a "
            f"module's path is a folder inside it"
        )
    return "/".join(part for part in parts if part not in ("", "."))


def _json_file(checkpoint: str, name: str, where: dict) -> Any:  # parsed JSON
    """A JSON file of a checkpoint (its directory, the Hugging Face cache or the Hub), or None when it has none. In a
    directory, a file that is there must be a regular file inside it (a link may point within the directory); any
    file must be a regular file of at most _SETTINGS_FILE_BYTES."""
    from transformers.utils import cached_file

    if os.path.isdir(checkpoint):
        path = os.path.join(checkpoint, name)
        if not os.path.lexists(path):
            return None
        inside = os.path.realpath(checkpoint)
        if os.path.commonpath([inside, os.path.realpath(path)]) != inside:
            raise CheckpointLoadError(
                f"{name} of the retriever {checkpoint!r} ({path}) leads outside the checkpoint folder, to "
                f"{os.path.realpath(path)}"
            )
    else:
        cached = cached_file(
            checkpoint,
            name,
            _raise_exceptions_for_missing_entries=False,
            _raise_exceptions_for_connection_errors=False,
            **where,
        )
        if cached is None:
            return None
        path = cached
    what = f"{name} of the retriever {checkpoint!r} ({path})"
    try:
        mode = os.stat(path)
    except OSError as problem:
        raise CheckpointLoadError(f"cannot read {what}: {problem.strerror or problem}") from None
    if not stat.S_ISREG(mode.st_mode):
        raise CheckpointLoadError(f"{what} is not a regular file")
    return read_json(path, what, limit=_SETTINGS_FILE_BYTES, error=CheckpointLoadError)


def _usable_positions(model: Any, positions: int | None) -> int | None:  # model: a transformers encoder
    """How many tokens the encoder can take: its learned position table's rows, less those before its first position
    where the table reserves the padding index (RoBERTa's 514 rows give 512), else the config's positions."""
    import torch

    table = getattr(getattr(model, "embeddings", None), "position_embeddings", None)
    if isinstance(table, torch.nn.Embedding):
        return table.num_embeddings - (0 if table.padding_idx is None else table.padding_idx + 1)
    return positions


_LOADED: dict = {}


def load_retriever(retriever: object, device: object = None) -> Retriever:
    """The retriever that the ``retriever=`` option names: a Retriever as it is, "bm25", or an encoder checkpoint
    (loaded once per process and device, and again when its files change)."""
    checked = check_retriever(retriever)
    if isinstance(checked, Retriever):
        return checked
    if checked == BM25:
        return BM25Retriever()
    from ..models.loading import checkpoint_identity

    saved = os.path.isfile(os.path.join(checked, "config.json"))
    key = (checked, checkpoint_identity(checked) if saved else None, str(device))
    if key not in _LOADED:
        _LOADED[key] = EmbeddingRetriever(checked, device)
    return _LOADED[key]
