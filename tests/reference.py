"""A deliberately simple BARTScore, written from the original algorithm for the tests to compare against.

One example at a time, the model called the plain Hugging Face way (`labels=` so that it shifts the target right
itself), a full log-softmax over the vocabulary, and Python loops for directions, prompts and references."""

import statistics

import torch


def reference_token_log_probs(model, tokenizer, source, target, max_length=1024):
    """log p of each target token (<s> and </s> included) given the source, both truncated to max_length.

    A <pad> written in the target counts as 0, as in the original, whose NLL loss ignores the pad id."""
    src = tokenizer([source], max_length=max_length, truncation=True, return_tensors="pt")
    tgt = tokenizer([target], max_length=max_length, truncation=True, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=src["input_ids"], attention_mask=src["attention_mask"], labels=tgt).logits
    log_probs = torch.log_softmax(logits[0].float(), dim=-1)
    chosen = log_probs[torch.arange(tgt.shape[1]), tgt[0]]
    return torch.where(tgt[0] == tokenizer.pad_token_id, 0.0, chosen).tolist()


def reference_score(model, tokenizer, source, target, max_length=1024):
    """-(sum of target-token NLL) / (number of target tokens, written <pad> tokens included)."""
    log_probs = reference_token_log_probs(model, tokenizer, source, target, max_length)
    return sum(log_probs) / len(log_probs)


def prompted_score(model, tokenizer, condition, target, prompts, side, max_length=1024):
    """Average over prompts; encoder side: condition + " " + p + ","; decoder side: p + ", " + target."""
    if not prompts:
        return reference_score(model, tokenizer, condition, target, max_length)
    scores = []
    for p in prompts:
        if side == "encoder":
            scores.append(reference_score(model, tokenizer, condition + " " + p + ",", target, max_length))
        else:
            scores.append(reference_score(model, tokenizer, condition, p + ", " + target, max_length))
    return sum(scores) / len(scores)


def reference_directions(
    model,
    tokenizer,
    predictions,
    references=None,
    sources=None,
    aggregation="mean",
    prompts=(),
    side="encoder",
    max_length=1024,
):
    """Per example: faithfulness, precision, recall and f_score, as plain loops."""
    out = {"faithfulness": [], "precision": [], "recall": [], "f_score": []}
    for i, hyp in enumerate(predictions):
        if sources is not None:
            out["faithfulness"].append(prompted_score(model, tokenizer, sources[i], hyp, prompts, side, max_length))
        if references is not None:
            refs = references[i] if isinstance(references[i], list) else [references[i]]
            precisions = [prompted_score(model, tokenizer, r, hyp, prompts, side, max_length) for r in refs]
            recalls = [prompted_score(model, tokenizer, hyp, r, prompts, side, max_length) for r in refs]
            combine = max if aggregation == "max" else statistics.fmean
            p, r = combine(precisions), combine(recalls)
            out["precision"].append(p)
            out["recall"].append(r)
            out["f_score"].append((p + r) / 2)
    return {k: v for k, v in out.items() if v}


# Token policies of the other model families, one example at a time.


def _language_codes(tokenizer):
    """mBART's language-code ids (empty for tokenizers without language codes)."""
    return set(getattr(tokenizer, "lang_code_to_id", {}).values())


def seq2seq_token_log_probs(model, tokenizer, condition, target, max_length=1024, src_lang=None, tgt_lang=None):
    """log p of each scored label token of an encoder-decoder model, the labels being the tokenizer's target encoding.

    src_lang / tgt_lang (mBART only) set the tokenizer's languages for the call. mBART's language-code tokens in the
    labels are left out; a label equal to the pad id counts as 0 (it is still counted)."""
    saved = {name: getattr(tokenizer, name) for name in ("src_lang", "tgt_lang") if hasattr(tokenizer, name)}
    try:
        if src_lang is not None:
            tokenizer.src_lang = src_lang
        if tgt_lang is not None:
            tokenizer.tgt_lang = tgt_lang
        src = tokenizer([condition], max_length=max_length, truncation=True, return_tensors="pt")
        labels = tokenizer(text_target=[target], max_length=max_length, truncation=True, return_tensors="pt")
        labels = labels["input_ids"]
    finally:
        for name, value in saved.items():
            setattr(tokenizer, name, value)
    with torch.no_grad():
        logits = model(input_ids=src["input_ids"], attention_mask=src["attention_mask"], labels=labels).logits
    log_probs = torch.log_softmax(logits[0].float(), dim=-1)
    out = []
    for position, label in enumerate(labels[0].tolist()):
        if label in _language_codes(tokenizer):
            continue
        out.append(0.0 if label == tokenizer.pad_token_id else log_probs[position, label].item())
    return out


def seq2seq_score(model, tokenizer, condition, target, max_length=1024, src_lang=None, tgt_lang=None):
    """Sum of the scored label log-probs over the number of counted labels."""
    log_probs = seq2seq_token_log_probs(model, tokenizer, condition, target, max_length, src_lang, tgt_lang)
    return sum(log_probs) / len(log_probs)


def causal_ids(tokenizer, condition, target, template="{condition}\n", max_length=1024):
    """(prefix ids, target ids) of the causal policy: the prefix is the tokenizer's encoding of the filled template,
    with the tokenizer's BOS put first where it has one but does not add it itself; the target is encoded without
    special tokens, then the EOS is appended. The target keeps its first max_length - 2 tokens and its EOS; a prefix
    too long for the rest loses the condition's last tokens, keeping its BOS and the tokens that start in the
    template's text after the condition."""
    text = template.format(condition=condition)
    encoded = tokenizer(text, return_offsets_mapping=True)
    prefix = encoded["input_ids"]
    bos = tokenizer.bos_token_id
    if bos is not None and tokenizer("")["input_ids"][:1] != [bos]:
        prefix = [bos, *prefix]
    target_ids = [*tokenizer(target, add_special_tokens=False)["input_ids"][: max_length - 2], tokenizer.eos_token_id]
    room = max_length - len(target_ids)
    if len(prefix) <= room:
        return prefix, target_ids
    tail_text = template[template.index("{condition}") + len("{condition}") :]
    tail_start = len(text) - len(tail_text)
    tail = sum(1 for start, _ in encoded["offset_mapping"] if start >= tail_start)
    tail_ids = prefix[len(prefix) - tail :]
    starts_with_bos = 1 if bos is not None and prefix[:1] == [bos] else 0
    if room - tail >= starts_with_bos:
        return prefix[: room - tail] + tail_ids, target_ids
    return (prefix[:starts_with_bos] + tail_ids)[:room], target_ids  # the BOS stays, then what fits of the tail


def causal_token_log_probs(model, tokenizer, condition, target, template="{condition}\n", max_length=1024):
    """log p of each target token of a decoder-only model, each predicted from the position before it, with the
    prefix and the target run as one sequence."""
    prefix, target_ids = causal_ids(tokenizer, condition, target, template, max_length)
    if not prefix:
        raise ValueError("the prefix is empty: the first target token has no position to be predicted from")
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prefix + target_ids])).logits
    log_probs = torch.log_softmax(logits[0].float(), dim=-1)
    return [log_probs[len(prefix) + i - 1, token].item() for i, token in enumerate(target_ids)]


def causal_score(model, tokenizer, condition, target, template="{condition}\n", max_length=1024):
    """Mean log-prob of the target tokens and the EOS."""
    return statistics.fmean(causal_token_log_probs(model, tokenizer, condition, target, template, max_length))


def reference_points(model, tokenizer, unrelated_pairs, copied_texts, prompts=(), side="encoder"):
    """(unrelated, copy): the mean score of the given unrelated (condition, target) pairs, and of each text given
    itself, as plain loops."""
    unrelated = [prompted_score(model, tokenizer, c, t, prompts, side) for c, t in unrelated_pairs]
    copies = [prompted_score(model, tokenizer, t, t, prompts, side) for t in copied_texts]
    return statistics.fmean(unrelated), statistics.fmean(copies)
