"""A small random sentence-embedding encoder (BERT with a word-level vocabulary), saved as a sentence-transformers
checkpoint of bert-base-nli-mean-tokens's kind is: the transformers files beside modules.json, 1_Pooling/config.json
and sentence_bert_config.json, so that the code under test loads it as it loads the real one."""

import json
import os

import torch
from tiny_bart import _WORDS
from transformers import BertConfig, BertModel, BertTokenizer

PUNCTUATION = [".", "!", "?", ",", "'", "-"]


def build_sentence_encoder(
    directory, *, seed=0, hidden=32, layers=2, heads=4, ffn=64, max_seq_length=128, pooling="mean_tokens"
):
    """Saves the encoder into `directory` and returns it as a string. `pooling` names the sentence-transformers
    pooling mode written into 1_Pooling/config.json ("mean_tokens", "cls_token" or "max_tokens")."""
    os.makedirs(directory, exist_ok=True)
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS, *PUNCTUATION]
    vocab_file = os.path.join(directory, "vocab.txt")
    with open(vocab_file, "w", encoding="utf-8") as handle:
        handle.write("\n".join(vocabulary) + "\n")
    tokenizer = BertTokenizer(vocab_file)
    config = BertConfig(
        vocab_size=len(vocabulary),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=ffn,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    modes = {f"pooling_mode_{mode}": mode == pooling for mode in ("cls_token", "mean_tokens", "max_tokens")}
    files = {
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        ],
        "1_Pooling/config.json": {"word_embedding_dimension": hidden, **modes},
        "sentence_bert_config.json": {"max_seq_length": max_seq_length, "do_lower_case": False},
    }
    for name, content in files.items():
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(content, handle)
    return str(directory)
