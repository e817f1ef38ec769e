"""Builds small random BART checkpoints for the tests and benchmarks: a byte-level BPE tokenizer trained on the spot
with `tokenizers`, a randomly initialised `BartForConditionalGeneration`, both saved with `save_pretrained`, so that
the code under test loads them exactly as it loads a real checkpoint directory."""

import json
import random

import torch
from tokenizers import ByteLevelBPETokenizer
from transformers import BartConfig, BartForConditionalGeneration, BartTokenizer

SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # BART's ids 0..4

_WORDS = [
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "cat",
    "dog",
    "mat",
    "house",
    "city",
    "river",
    "government",
    "report",
    "study",
    "people",
    "year",
    "day",
    "week",
    "model",
    "summary",
    "article",
    "news",
    "market",
    "company",
    "team",
    "game",
    "player",
    "result",
    "data",
    "system",
    "text",
    "translation",
    "source",
    "reference",
    "is",
    "was",
    "are",
    "were",
    "has",
    "had",
    "will",
    "would",
    "can",
    "could",
    "said",
    "says",
    "found",
    "made",
    "took",
    "went",
    "gave",
    "told",
    "asked",
    "shows",
    "new",
    "old",
    "good",
    "bad",
    "big",
    "small",
    "first",
    "last",
    "many",
    "few",
    "more",
    "most",
    "other",
    "same",
    "high",
    "low",
    "early",
    "late",
    "local",
    "national",
    "in",
    "on",
    "at",
    "by",
    "for",
    "with",
    "from",
    "about",
    "into",
    "over",
    "after",
    "before",
    "under",
    "between",
    "during",
    "without",
    "and",
    "or",
    "but",
    "because",
    "while",
    "although",
    "if",
    "when",
    "where",
    "which",
    "who",
    "very",
    "quite",
    "rather",
    "almost",
    "nearly",
    "just",
    "only",
    "also",
    "still",
    "even",
    "again",
]


def english_like(rng, words):
    """A sentence of `words` words drawn from a small English vocabulary, capitalised and punctuated."""
    tokens = [rng.choice(_WORDS) for _ in range(words)]
    text = " ".join(tokens)
    return text[0].upper() + text[1:] + rng.choice([".", ".", ".", "!", "?"])


def english_like_text(rng, words):
    """A paragraph of about `words` words, in sentences of 8 to 20 words."""
    sentences, total = [], 0
    while total < words:
        n = min(rng.randint(8, 20), words - total)
        sentences.append(english_like(rng, max(n, 1)))
        total += n
    return " ".join(sentences)


def build_tokenizer(directory, vocab_size=600):
    rng = random.Random(1234)
    corpus = [english_like_text(rng, 40) for _ in range(400)]
    corpus += ["This is interesting.", "This is fun.", "There is a cat on the mat.", "I feel good today."]
    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(corpus, vocab_size=vocab_size, min_frequency=1, special_tokens=SPECIAL_TOKENS)
    merges = json.loads(trainer._tokenizer.to_str())["model"]["merges"]  # pairs, or "a b" strings in old versions
    tokenizer = BartTokenizer(
        vocab=trainer.get_vocab(), merges=[tuple(m if isinstance(m, list) else m.split(" ")) for m in merges]
    )
    tokenizer.save_pretrained(directory)
    return tokenizer


def build_tiny_bart(
    directory, *, seed=0, d_model=32, layers=2, heads=4, ffn=64, vocab_size=None, max_positions=1024, init_std=0.2
):
    """Saves a tokenizer and a random BART model into `directory` and returns the directory."""
    tokenizer = build_tokenizer(directory)
    config = BartConfig(
        vocab_size=vocab_size or len(tokenizer),
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn,
        max_position_embeddings=max_positions,
        init_std=init_std,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
    )
    torch.manual_seed(seed)
    model = BartForConditionalGeneration(config)
    with torch.no_grad():  # a non-zero output bias, so that the tests see it is applied
        model.final_logits_bias.normal_(0.0, 0.5)
    model.save_pretrained(directory)
    return str(directory)


def build_copying_bart(directory, *, steps=150, seed=1):
    """A tiny BART trained for a few seconds to copy short sentences, so that, as with real checkpoints, a text scores
    higher given itself than given an unrelated text (a random model cannot tell them apart)."""
    build_tiny_bart(directory, seed=seed)
    tokenizer = BartTokenizer.from_pretrained(directory, trust_remote_code=False)
    model = BartForConditionalGeneration.from_pretrained(directory, trust_remote_code=False)
    rng = random.Random(seed)
    torch.manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # steps this small spend more time synchronising threads than computing
    try:
        _train(model, tokenizer, optimizer, rng, steps)
    finally:
        torch.set_num_threads(threads)
    model.save_pretrained(directory)
    return str(directory)


def _train(model, tokenizer, optimizer, rng, steps):
    for _ in range(steps):
        batch = tokenizer([english_like(rng, rng.randint(2, 12)) for _ in range(32)], return_tensors="pt", padding=True)
        labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
        loss = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
