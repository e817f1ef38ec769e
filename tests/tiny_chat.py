"""Tiny instruction-tuned causal LMs for chat-format scoring, and the plain loop that scores them.

A tiny Llama or Qwen2 checkpoint (tiny_models.build_tiny) gets the special tokens of a chat format, a chat template
and embeddings for the new tokens, and is saved again. Two formats whose assistant turns end differently:
ChatML (Qwen2.5, SmolLM2: <|im_end|> then a newline, and a default system turn) and Llama 3's (<|eot_id|>, the BOS
first, every message trimmed)."""

from __future__ import annotations

import statistics

import torch
from tiny_models import build_tiny
from transformers import AutoModelForCausalLM, AutoTokenizer

CHATML = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
LLAMA3 = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)
# A format whose replies end in plain text, with no token of its own to close them.
PLAIN_TEXT_TURNS = (
    "{% for message in messages %}{{ '### ' + message['role'] + ':\n' + message['content'] + '\n\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '### assistant:\n' }}{% endif %}"
)
TEMPLATES = {"chatml": CHATML, "llama3": LLAMA3, "plain-text-turns": PLAIN_TEXT_TURNS}
# The token that closes an assistant turn in each format, as its model card gives it.
CLOSING_TOKENS = {"chatml": "<|im_end|>", "llama3": "<|eot_id|>"}
CHAT_TOKENS = ["<|im_start|>", "<|im_end|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]


def build_tiny_chat(family: str, template: str, directory, seed: int = 0) -> str:
    """Saves a tiny `family` ("llama", "qwen2") checkpoint with the chat format `template` (a key of TEMPLATES)."""
    plain = build_tiny(family, directory / "plain", seed=seed)
    tokenizer = AutoTokenizer.from_pretrained(plain, trust_remote_code=False)
    model = AutoModelForCausalLM.from_pretrained(plain, trust_remote_code=False)
    tokenizer.add_special_tokens({"additional_special_tokens": CHAT_TOKENS})
    tokenizer.chat_template = TEMPLATES[template]
    torch.manual_seed(seed)
    model.resize_token_embeddings(max(len(tokenizer), model.config.vocab_size))
    added = tokenizer.convert_tokens_to_ids(CHAT_TOKENS)
    with torch.no_grad():  # the new tokens' rows as random as the others', so that their log-probabilities differ
        for matrix in {model.get_input_embeddings().weight, model.get_output_embeddings().weight}:
            matrix[added] = torch.randn(len(added), matrix.shape[1]) * 0.3
    chat = directory / "chat"
    model.save_pretrained(chat)
    tokenizer.save_pretrained(chat)
    return str(chat)


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
