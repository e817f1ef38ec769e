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


def reference_points(model, tokenizer, unrelated_pairs, copied_texts, prompts=(), side="encoder"):
    """(unrelated, copy): the mean score of the given unrelated (condition, target) pairs, and of each text given
    itself, as plain loops."""
    unrelated = [prompted_score(model, tokenizer, c, t, prompts, side) for c, t in unrelated_pairs]
    copies = [prompted_score(model, tokenizer, t, t, prompts, side) for t in copied_texts]
    return statistics.fmean(unrelated), statistics.fmean(copies)
