"""Plain re-implementations of two published scorers, for parity tests: T5Score (Qin et al., 2022, the T5Scorer of
its evaluation code) and GPTScore (Fu et al., 2023: its scorer for decoder-only models and its scorer for Flan-T5).

Each is written from the algorithm those scorers run, with their tokenization, batching and averaging, including the
quirks noted below, so that a test can say exactly where the scorer under test agrees with them and where not. The
caller loads the model and tokenizer; the functions only score."""

import torch


def _padded_batch_scores(model, tokenizer, srcs, tgts, batch_size, max_length):
    """Scores per pair: sources and targets each tokenized as a padded batch with the tokenizer's ordinary call (the
    target is not encoded with `text_target`), the padded target ids passed as `labels`, and the sum of the target
    log-probs, the pad id excluded, divided by the target's attention-mask sum (its non-padding length)."""
    pad_id = model.config.pad_token_id
    scores = []
    for start in range(0, len(srcs), batch_size):
        encode = dict(max_length=max_length, truncation=True, padding=True, return_tensors="pt")
        src = tokenizer(list(srcs[start : start + batch_size]), **encode)
        tgt = tokenizer(list(tgts[start : start + batch_size]), **encode)
        labels = tgt["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=src["input_ids"], attention_mask=src["attention_mask"], labels=labels).logits
        chosen = torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
        total = torch.where(labels == pad_id, 0.0, chosen).sum(dim=1)
        scores += (total / tgt["attention_mask"].sum(dim=1)).tolist()
    return scores


def t5score(model, tokenizer, srcs, tgts, batch_size=4, max_length=1024):
    """T5Score's `T5Scorer.score`: log p(tgt | src) per token, batched.

    Quirks: T5Score creates its tokenizer with `src_lang`/`tgt_lang` but encodes targets with the plain call, so with
    an mBART tokenizer the targets carry the *source* language code, which is scored and counted like any token.
    Written `<pad>` tokens in a target count 0 but stay in the length (the attention mask covers them)."""
    return _padded_batch_scores(model, tokenizer, srcs, tgts, batch_size, max_length)


def gptscore_flan(model, tokenizer, srcs, tgts, batch_size=4, max_length=1024):
    """GPTScore's `FLANScorer.score` for Flan-T5: the same computation as T5Score (padded batches, `labels=`,
    log-softmax, pad excluded from the sum, divided by the target's attention-mask sum). The prompt is expected
    to be part of each source already, as GPTScore builds it."""
    return _padded_batch_scores(model, tokenizer, srcs, tgts, batch_size, max_length)


def _without_ends(tokenizer, text):
    """`encode(text)[1:-1]`: drops the first and the last id, whether or not they are special tokens."""
    return tokenizer.encode(text)[1:-1]


def gptscore_truncated_source(tokenizer, src, tgt, max_length):
    """GPTScore's input truncation (`trunk_input(src, tgt, src, max_length)`), as its code does it.

    Lengths are counted on `encode(...)[1:-1]`, which removes the BOS and the last real token where the tokenizer adds
    a BOS (OPT, Llama) and the first and the last real tokens where it does not (GPT-2). When the two lengths add up
    to more than max_length, the source's ids lose their last (sum - max_length) ids, and the source is rebuilt by
    decoding those ids once more without their first and last: two more real tokens are lost, the prompt text is not
    counted at all, and an excess larger than the source keeps a prefix of it (a negative slice end)."""
    src_ids = _without_ends(tokenizer, src)
    excess = len(src_ids) + len(_without_ends(tokenizer, tgt)) - max_length
    if excess <= 0:
        return src
    kept = src_ids[: len(src_ids) - excess]
    return tokenizer.decode(kept[1:-1])


def gptscore_causal(model, tokenizer, srcs, tgts, prompt_text, max_length=1024):
    """GPTScore's `OPTScorer.score` for decoder-only models, one pair at a time: -(the model's mean loss).

    The text `src + prompt_text + tgt` is encoded jointly with the tokenizer's special tokens; the labels are -100
    except the last len(tgt_ids) positions, which receive tgt_ids = `encode(tgt)[1:]` (the target encoded on its own).
    The model shifts the labels, so each labelled position is predicted from the one before it.

    Quirks: `encode(tgt)[1:]` is meant to drop a BOS; where the tokenizer adds none (GPT-2, Qwen2) it drops the first
    target token instead, which is then neither scored nor counted. The target's own encoding is written over the
    joint one, so where tokenization at the prompt/target boundary differs (a sentencepiece target gains a "▁" when
    encoded alone; BPE merges across the boundary) the labels are not the tokens in the input. The source is first
    shortened by `gptscore_truncated_source`. Where the labels cannot fit the input, the original catches the torch
    error and leaves the pair out of its list; here the error propagates."""
    scores = []
    for src, tgt in zip(srcs, tgts):
        src = gptscore_truncated_source(tokenizer, src, tgt, max_length)
        input_ids = tokenizer.encode(src + prompt_text + tgt)
        tgt_ids = tokenizer.encode(tgt)[1:]
        labels = [-100] * (len(input_ids) - len(tgt_ids)) + tgt_ids
        with torch.no_grad():
            loss = model(input_ids=torch.tensor([input_ids]), labels=torch.tensor([labels])).loss
        scores.append(-loss.item())
    return scores
