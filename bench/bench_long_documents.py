#!/usr/bin/env python
"""Long-document benchmark: source-window faithfulness (long_source="windows") through the planned engine, against a
naive copy of LongDocFACTScore's loop (ldfacts.py's score_src_hyp_long), side by side in one run.

Workload: `--documents` sources of about `--source-tokens` BART tokens, `--systems` systems, summaries of about
`--summary-sentences` sentences; like real abstractive summaries, a share of the summary sentences is copied from the
source (and systems copy some of the same salient sentences), the rest recombine a source sentence's words. Models:
a random BART with facebook/bart-large's dimensions (or `--dims base/tiny`) and a random BERT with bert-base's
dimensions as the sentence encoder (saved as a sentence-transformers checkpoint, loaded through retriever=), both in
float32.

The naive loop, for each (source, summary): split the source and the summary into sentences; embed every source
sentence (batches of 32, as sentence-transformers' encode), then each summary sentence alone; cosine; the 3 best
source sentences; their windows by LongDocFACTScore's rule; BARTScore's original batch loop (batches of 4, each window
encoded again for every sentence, the model called with labels=, log-softmax over the vocabulary); max; mean. The
engine: one ``score_directions(..., long_source="windows")`` call; `--before DIR` also measures the engine of another
checkout (an older commit's worktree) on the same workload, in the same run. Each runs in a fresh child process; the
script prints seconds, the speed-up, each side's peak RSS and the largest score difference, and for each engine the
seconds its retriever took, which bound the speed-up: the naive loop's seconds over them are the most that any
scoring side could reach."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time

import _setup  # noqa: F401
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch
import transformers
from bench_engine import build_or_reuse_checkpoint
from workload import naive_scores, reset_peak_rss, status_bytes

transformers.utils.logging.disable_progress_bar()

ENCODER_DIMS = {
    "tiny": dict(hidden=64, layers=2, heads=4, ffn=256),
    "base": dict(hidden=768, layers=12, heads=12, ffn=3072),  # bert-base-nli-mean-tokens
}
K = 3
EMBEDDING_BATCH = 32  # sentence-transformers' encode default
TARGET_SPEEDUP = 5.0


def build_or_reuse_encoder(workdir, dims):
    from support.models import build_sentence_encoder

    directory = os.path.join(workdir, f"random-sentence-encoder-{dims}")
    if not os.path.isfile(os.path.join(directory, "COMPLETE")):
        shutil.rmtree(directory, ignore_errors=True)
        build_sentence_encoder(directory, **ENCODER_DIMS[dims])
        open(os.path.join(directory, "COMPLETE"), "w").close()
    return directory


def make_workload(tokenizer, documents, systems, source_tokens, summary_sentences, copied, seed):
    """(sources, summaries): summaries system by system, each system's summaries in document order."""
    from support.text import WORDS, english_like

    rng = random.Random(seed)
    sources, source_sentences = [], []
    for _ in range(documents):
        sentences, tokens = [], 0
        while tokens < source_tokens:
            sentence = english_like(rng, rng.randint(8, 20))[:-1] + "."
            sentences.append(sentence)
            tokens += len(tokenizer(sentence, add_special_tokens=False)["input_ids"])
        source_sentences.append(sentences)
        sources.append(" ".join(sentences))
    summaries = []
    for _ in range(systems):
        for sentences in source_sentences:
            salient = sentences[: max(K, len(sentences) // 4)]  # summaries draw on the source's first part most
            summary = []
            for _ in range(summary_sentences):
                chosen = rng.choice(salient)
                if rng.random() < copied:
                    summary.append(chosen)
                else:
                    words = chosen[:-1].lower().split()
                    rng.shuffle(words)
                    words[rng.randrange(len(words))] = rng.choice(WORDS)
                    summary.append(" ".join(words).capitalize() + ".")
            summaries.append(" ".join(summary))
    return sources * systems, summaries


# ---------------------------------------------------------------------------------------------------------------------
# the two methods


def window_of(sentences, index):
    """LongDocFACTScore's window: the sentence and the one before it (the first two for the first)."""
    return " ".join(sentences[:2] if index == 0 else sentences[index - 1 : index + 1])


def naive_embed(model, tokenizer, texts):
    """sentence-transformers' encode: length-sorted batches of 32, mean pooling over the mask."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    vectors = [None] * len(texts)
    with torch.inference_mode():
        for start in range(0, len(order), EMBEDDING_BATCH):
            batch = order[start : start + EMBEDDING_BATCH]
            encoded = tokenizer(
                [texts[i] for i in batch], padding=True, truncation=True, max_length=128, return_tensors="pt"
            )
            states = model(**encoded).last_hidden_state
            mask = encoded["attention_mask"].unsqueeze(-1).float()
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            for row, index in enumerate(batch):
                vectors[index] = pooled[row].numpy()
    return np.stack(vectors)


def run_naive(bart_dir, encoder_dir):
    from transformers import AutoModel, AutoModelForSeq2SeqLM, AutoTokenizer

    from bart_score.long_documents.windows import split_sentences

    model = AutoModelForSeq2SeqLM.from_pretrained(bart_dir, trust_remote_code=False).eval()
    tokenizer = AutoTokenizer.from_pretrained(bart_dir, trust_remote_code=False)
    encoder = AutoModel.from_pretrained(encoder_dir, trust_remote_code=False).eval()
    encoder_tokenizer = AutoTokenizer.from_pretrained(encoder_dir, trust_remote_code=False)
    device = torch.device("cpu")

    def call(sources, summaries):
        scores = []
        for source, summary in zip(sources, summaries):
            source_sentences = split_sentences(source)
            source_vectors = naive_embed(encoder, encoder_tokenizer, source_sentences)
            sentence_scores = []
            for sentence in split_sentences(summary):
                query = naive_embed(encoder, encoder_tokenizer, [sentence])[0]
                cosines = source_vectors @ query / (np.linalg.norm(source_vectors, axis=1) * np.linalg.norm(query))
                windows = [window_of(source_sentences, i) for i in np.argsort(-cosines)[:K]]
                pair_scores = naive_scores(model, tokenizer, windows, [sentence] * len(windows), device)
                sentence_scores.append(float(np.max(pair_scores)))
            scores.append(float(np.mean(sentence_scores)))
        return {"faithfulness": scores}

    return call


def run_engine(bart_dir, encoder_dir):
    from bart_score import BARTScorer, load_retriever

    scorer = BARTScorer(checkpoint=bart_dir, device="cpu")
    # The retriever that the call loads (one per process and device): its top_k is timed, the rest of the call is the
    # sentence split, the windows and the model.
    retriever = load_retriever(encoder_dir, scorer.device)
    ranking = retriever.top_k

    def timed_top_k(*args, **keywords):
        start = time.perf_counter()
        try:
            return ranking(*args, **keywords)
        finally:
            call.retriever_seconds += time.perf_counter() - start

    retriever.top_k = timed_top_k

    def call(sources, summaries):
        return scorer.score_directions(
            summaries, sources=sources, long_source="windows", windows_k=K, retriever=encoder_dir
        )

    call.retriever_seconds = 0.0
    return call


METHODS = {"naive": run_naive, "engine": run_engine}


def measure(job):
    """In a fresh process: load, warm up on one summary, then time the whole call and read the peak RSS. An engine
    with a root is that checkout's (its bart_score first on the path)."""
    method, root, bart_dir, encoder_dir, sources, summaries, threads = job
    if root:
        sys.path.insert(0, root)
    torch.set_num_threads(threads)
    call = METHODS[method](bart_dir, encoder_dir)
    call(sources[:1], summaries[:1])  # warm-up on one summary (the engine also loads its retriever here)
    if method == "engine":
        call.retriever_seconds = 0.0  # the timed call's alone
    resident_before = status_bytes("VmRSS")
    reset_peak_rss()
    start = time.perf_counter()
    result = call(sources, summaries)
    seconds = time.perf_counter() - start
    scores = result["faithfulness"]
    counts = {}
    if method == "engine":
        counts = {
            "sentences": int(sum(result["faithfulness_sentences"])),
            "windows_per_summary": float(np.mean(result["faithfulness_windows"])),
        }
    return {
        "method": method,
        "seconds": seconds,
        "retriever_seconds": getattr(call, "retriever_seconds", None),
        "peak_rss": status_bytes("VmHWM"),
        "rss_before": resident_before,
        "scores": scores,
        **counts,
    }


def in_child(job):
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(measure, (job,))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dims", choices=("tiny", "base", "large"), default="large", help="BART's dimensions")
    parser.add_argument("--encoder-dims", choices=tuple(ENCODER_DIMS), default="base")
    parser.add_argument("--documents", type=int, default=2)
    parser.add_argument("--systems", type=int, default=3)
    parser.add_argument("--source-tokens", type=int, default=6000)
    parser.add_argument("--summary-sentences", type=int, default=8)
    parser.add_argument("--copied", type=float, default=0.5, help="share of summary sentences copied from the source")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "bartscore-bench"))
    parser.add_argument("--before", metavar="DIR", help="also measure the engine of this checkout (an older commit)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)

    os.makedirs(args.workdir, exist_ok=True)
    bart_dir = build_or_reuse_checkpoint(args.workdir, args.dims)
    encoder_dir = build_or_reuse_encoder(args.workdir, args.encoder_dims)
    from transformers import AutoTokenizer

    from bart_score.long_documents.windows import split_sentences

    tokenizer = AutoTokenizer.from_pretrained(bart_dir, trust_remote_code=False)
    sources, summaries = make_workload(
        tokenizer, args.documents, args.systems, args.source_tokens, args.summary_sentences, args.copied, args.seed
    )
    source_tokens = [len(tokenizer(s)["input_ids"]) for s in sources[: args.documents]]
    sentences = [len(split_sentences(s)) for s in summaries]
    print(
        f"workload: {args.documents} source(s) of {min(source_tokens)}-{max(source_tokens)} tokens, "
        f"{args.systems} systems, {len(summaries)} summaries of {min(sentences)}-{max(sentences)} sentences "
        f"({sum(sentences)} in all, {args.copied:.0%} copied from the source); BART {args.dims}, sentence encoder "
        f"{args.encoder_dims}, float32, {args.threads} thread(s), k={K}, window rule longdocfactscore",
        flush=True,
    )
    runs = {"naive": ("naive", None), "engine": ("engine", None)}
    if args.before:
        runs["before"] = ("engine", os.path.abspath(args.before))
    results = {}
    for name, (method, root) in runs.items():
        results[name] = in_child((method, root, bart_dir, encoder_dir, sources, summaries, args.threads))
        row = results[name]
        line = f"{name:>7}: {row['seconds']:8.1f} s   peak RSS {row['peak_rss'] / 2**30:6.2f} GiB"
        if row["retriever_seconds"] is not None:
            line += f"   of which the retriever {row['retriever_seconds']:6.1f} s"
        print(line, flush=True)
    engine, naive = results["engine"], results["naive"]
    print(
        f"distinct windows per summary (engine): {engine['windows_per_summary']:.1f} of {K} x "
        f"{engine['sentences'] / len(summaries):.1f} sentences"
    )
    for name in runs:
        if name == "naive":
            continue
        row = results[name]
        row["speedup"] = naive["seconds"] / row["seconds"]
        row["bound"] = naive["seconds"] / row["retriever_seconds"]
        row["max_abs_difference"] = float(np.max(np.abs(np.asarray(row["scores"]) - np.asarray(naive["scores"]))))
        verdict = "met" if row["speedup"] >= TARGET_SPEEDUP else "NOT met"
        print(
            f"{name:>7}: speed-up (naive / {name}) {row['speedup']:.2f}x (target {TARGET_SPEEDUP:.0f}x: {verdict}); "
            f"naive / its retriever alone {row['bound']:.2f}x; largest score difference {row['max_abs_difference']:.2e}"
        )
    print(f"peak RSS: naive {naive['peak_rss'] / 2**30:.2f} GiB, engine {engine['peak_rss'] / 2**30:.2f} GiB")
    print(f"load average after the run: {os.getloadavg()[0]:.1f}")
    if args.json:
        figures = {
            "args": vars(args),
            "source_tokens": source_tokens,
            "summary_sentences": sentences,
            "speedup": engine["speedup"],
            "max_abs_difference": engine["max_abs_difference"],
            **{f"{m}_{k}": v for m, row in results.items() for k, v in row.items() if k != "scores"},
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
