"""The tests' reference scorers: deliberately simple re-implementations, written from the published algorithms, for
the tests and the benchmarks to compare the scorer against.

BARTScore one example at a time: the model called the plain Hugging Face way (`labels=` so that it shifts the target
right itself), a full log-softmax over the vocabulary, and Python loops for directions, prompts and references. The
original BARTScorer.score's padded batches, which T5Score's and GPTScore's Flan-T5 scorer share and the benchmarks run
as their naive baseline, read the same log-probabilities. Then the other families' token policies (seq2seq labels,
causal prefixes, chat turns) and GPTScore's scorer for decoder-only models, each with the quirks noted where it is
defined, so that a test can say exactly where the scorer under test agrees with them and where not. The caller loads
the model and tokenizer; the functions only score."""

import statistics
from contextlib import nullcontext

import torch


def label_log_probs(logits, labels, pad_id):
    """log p of each label under `logits` (batch x length x vocabulary), from a log-softmax over the whole vocabulary;
    a label equal to `pad_id` counts as 0, as in the original, whose NLL loss ignores the pad id."""
    chosen = torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return torch.where(labels == pad_id, 0.0, chosen)


def reference_token_log_probs(model, tokenizer, source, target, max_length=1024):
    """log p of each target token (<s> and </s> included) given the source, both truncated to max_length; a <pad>
    written in the target counts as 0."""
    src = tokenizer([source], max_length=max_length, truncation=True, return_tensors="pt")
    tgt = tokenizer([target], max_length=max_length, truncation=True, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=src["input_ids"], attention_mask=src["attention_mask"], labels=tgt).logits
    return label_log_probs(logits.float(), tgt, tokenizer.pad_token_id)[0].tolist()


def reference_score(model, tokenizer, source, target, max_length=1024):
    """-(sum of target-token NLL) / (number of target tokens, written <pad> tokens included)."""
    log_probs = reference_token_log_probs(model, tokenizer, source, target, max_length)
    return sum(log_probs) / len(log_probs)


def padded_batch_scores(model, tokenizer, conditions, targets, batch_size=4, max_length=1024, device="cpu", stage=None):
    """The original BARTScorer.score, deliberately unoptimised: pairs in input order, in fixed batches; conditions and
    targets each tokenized as a padded batch with the tokenizer's ordinary call (the target is not encoded with
    `text_target`); the padded target ids passed as `labels` (so the model also computes its own loss); a
    log-softmax over the whole vocabulary for the whole batch; the target log-probs summed, the model's pad id
    excluded, and divided by the target's attention-mask sum (its length, written <pad> tokens included).

    `device` is where the model is; `stage(name)`, a context manager, times the tokenization and the readout."""
    stage = stage or (lambda name: nullcontext())
    encode = dict(max_length=max_length, truncation=True, padding=True, return_tensors="pt")
    scores = []
    with torch.inference_mode():
        for start in range(0, len(conditions), batch_size):
            with stage("tokenization"):
                src = tokenizer(list(conditions[start : start + batch_size]), **encode)
                tgt = tokenizer(list(targets[start : start + batch_size]), **encode)
            src, tgt = src.to(device), tgt.to(device)
            labels = tgt["input_ids"]
            logits = model(input_ids=src["input_ids"], attention_mask=src["attention_mask"], labels=labels).logits
            with stage("log-softmax / log-prob readout"):
                total = label_log_probs(logits, labels, model.config.pad_token_id).sum(dim=1)
                scores += (total / tgt["attention_mask"].sum(dim=1)).tolist()
    return scores


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
    log_probs = label_log_probs(logits.float(), labels, tokenizer.pad_token_id)[0].tolist()
    return [p for p, label in zip(log_probs, labels[0].tolist()) if label not in _language_codes(tokenizer)]


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


# The peers: T5Score (Qin et al., 2022, the T5Scorer of its evaluation code) and GPTScore (Fu et al., 2023: its
# scorer for decoder-only models and its scorer for Flan-T5), with their tokenization, batching and averaging.


def t5score(model, tokenizer, srcs, tgts, batch_size=4, max_length=1024):
    """T5Score's `T5Scorer.score`: log p(tgt | src) per token, batched as the original BARTScorer.

    Quirks: T5Score creates its tokenizer with `src_lang`/`tgt_lang` but encodes targets with the plain call, so with
    an mBART tokenizer the targets carry the *source* language code, which is scored and counted like any token.
    Written `<pad>` tokens in a target count 0 but stay in the length (the attention mask covers them)."""
    return padded_batch_scores(model, tokenizer, srcs, tgts, batch_size, max_length)


def gptscore_flan(model, tokenizer, srcs, tgts, batch_size=4, max_length=1024):
    """GPTScore's `FLANScorer.score` for Flan-T5: the same computation as T5Score. The prompt is expected to be part
    of each source already, as GPTScore builds it."""
    return padded_batch_scores(model, tokenizer, srcs, tgts, batch_size, max_length)


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


# Chat turns: the prompt built by the tokenizer's chat template, the reply closed by the format's own token.


def chat_reference_ids(tokenizer, condition, reply, instruction, closing_token, system=None, max_length=1024):
    """(prefix ids, scored ids) of the chat policy, built from apply_chat_template and the known closing token.

    Within max_length: the prompt's tokens other than the condition's (those starting before the condition's first
    character, and those starting at or after its end) stay; the reply keeps its first tokens, as many as fit with
    them and the closing token; the condition keeps its first tokens in the room left. The condition must appear
    once in the rendered prompt, as written."""
    messages = [{"role": "system", "content": system}] if system is not None else []
    messages.append({"role": "user", "content": instruction.format(condition=condition)})
    prefix = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=False)
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    assert encoded["input_ids"] == prefix
    assert condition and text.count(condition) == 1, "the test's conditions appear once in their prompts"
    start = text.index(condition)
    end = start + len(condition)
    before = sum(1 for first, _ in encoded["offset_mapping"] if first < start)
    after = sum(1 for first, _ in encoded["offset_mapping"] if first >= end)
    reply_ids = tokenizer(reply, add_special_tokens=False)["input_ids"]
    own = before + after
    reply_ids = reply_ids[: max_length - own - 1]
    keep = max_length - own - len(reply_ids) - 1
    if len(prefix) - own > keep:
        prefix = prefix[: before + keep] + prefix[len(prefix) - after :]
    return prefix, [*reply_ids, tokenizer.convert_tokens_to_ids(closing_token)]


def chat_reference_score(model, tokenizer, condition, reply, instruction, closing_token, system=None, max_length=1024):
    """The mean log-probability of the scored ids, from one full forward pass of the model over prefix + reply. The
    log-softmax is taken in float64: in float32, torch's is off by up to 1.3e-5 over a 49,152-token vocabulary with
    logits near 30 (SmolLM2's), more than the engine's error and the tests' tolerance."""
    prefix, scored = chat_reference_ids(tokenizer, condition, reply, instruction, closing_token, system, max_length)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prefix + scored[:-1]])).logits[0].double()
    log_probs = torch.log_softmax(logits, dim=-1)
    return statistics.fmean(log_probs[len(prefix) - 1 + i, token].item() for i, token in enumerate(scored))
