"""Tiny random checkpoints of every model family the scorer supports, BART among them, built at test time; the same
families with a chat format; a sentence-embedding encoder; and an architecture the engine cannot drive.

Each family's builder trains a tokenizer on the spot (a sentencepiece model, or a byte-level BPE with `tokenizers`),
turns it into the family's own tokenizer class the way `transformers` turns a real checkpoint's vocabulary files
into one, initialises a small random model, and `build_tiny` saves both with `save_pretrained`. `AutoTokenizer`,
`AutoConfig` and `AutoModelForSeq2SeqLM` / `AutoModelForCausalLM` then load the directory exactly as they load a real
checkpoint.

Special-token layouts, language codes and configuration flags follow the public checkpoints named in each builder;
the models are a few tens of thousands of parameters, with weights large enough that the log-probabilities of
different tokens differ visibly."""

import io
import json
import os
import random
import shutil
import tempfile

import sentencepiece
import tokenizers
import torch
import transformers
from tokenizers import ByteLevelBPETokenizer, Tokenizer, models, pre_tokenizers, trainers

from bart_score.corpora._reading import file_sha256
from support.cache import cached_folder, digest
from support.text import WORDS, english_like, english_like_text, split_words, training_corpus

SEQ2SEQ_FAMILIES = ("bart", "mbart50", "mbart", "t5", "flan-t5", "mt5", "pegasus", "marian")
CAUSAL_FAMILIES = ("gpt2", "opt", "llama", "qwen2")
FAMILIES = SEQ2SEQ_FAMILIES + CAUSAL_FAMILIES

# The language codes of facebook/mbart-large-50, in their vocabulary order; the first 25 are mbart-large-cc25's.
MBART50_LANGUAGE_CODES = split_words(
    "ar_AR cs_CZ de_DE en_XX es_XX et_EE fi_FI fr_XX gu_IN hi_IN it_IT ja_XX kk_KZ ko_KR lt_LT lv_LV "
    "my_MM ne_NP nl_XX ro_RO ru_RU si_LK tr_TR vi_VN zh_CN af_ZA az_AZ bn_IN fa_IR he_IL hr_HR id_ID "
    "ka_GE km_KH mk_MK ml_IN mn_MN mr_IN pl_PL ps_AF pt_XX sv_SE sw_KE ta_IN te_IN th_TH tl_XX uk_UA "
    "ur_PK xh_ZA gl_ES sl_SI"
)
MBART_CC25_LANGUAGE_CODES = MBART50_LANGUAGE_CODES[:25]


def _sentencepiece_model(lines, vocab_size, **trainer_options):
    """The serialized model proto of a sentencepiece model trained on `lines` (single-threaded, so reproducible)."""
    proto = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=proto,
        vocab_size=vocab_size,
        hard_vocab_limit=False,
        character_coverage=1.0,
        num_threads=1,
        minloglevel=2,
        **trainer_options,
    )
    return proto.getvalue()


# Special-piece ids of the sentencepiece models behind the real checkpoints.
_FAIRSEQ_SPM_IDS = {"unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1}  # mBART, Llama
_T5_SPM_IDS = {"pad_id": 0, "eos_id": 1, "unk_id": 2, "bos_id": -1}  # T5, mT5, Pegasus


def _tokenizer_from_sentencepiece(tokenizer_class, file_name, spm_model, **tokenizer_options):
    """The family's tokenizer built by `from_pretrained` from a lone sentencepiece file, as transformers converts a
    checkpoint that ships only that file (the conversion lays out the family's special tokens and ids)."""
    with tempfile.TemporaryDirectory() as staging:
        with open(os.path.join(staging, file_name), "wb") as handle:
            handle.write(spm_model)
        return tokenizer_class.from_pretrained(staging, **tokenizer_options, trust_remote_code=False)


def byte_level_bpe(pre_tokenizer, normalizer, vocab_size, special_tokens=(), languages=("en", "de", "fr")):
    """Vocabulary and merges of a byte-level BPE trained with the given pre-tokenizer on the corpus of `languages`;
    `special_tokens` take the first ids, as in OPT's vocabulary."""
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizer
    if normalizer is not None:
        backend.normalizer = normalizer
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(training_corpus(languages), trainer)
    model = json.loads(backend.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return dict(model["vocab"]), merges


def _padded(size, multiple=64):
    """A model vocabulary rounded up past the tokenizer's, as t5-*, mt5-* and Qwen2 checkpoints have it."""
    return -(-size // multiple) * multiple


def _encoder_decoder_dims(d_model, layers, heads, ffn):
    return {
        "d_model": d_model,
        "encoder_layers": layers,
        "decoder_layers": layers,
        "encoder_attention_heads": heads,
        "decoder_attention_heads": heads,
        "encoder_ffn_dim": ffn,
        "decoder_ffn_dim": ffn,
    }


def _t5_dims(d_model, layers, heads, ffn):
    return {"d_model": d_model, "d_kv": d_model // heads, "d_ff": ffn, "num_layers": layers, "num_heads": heads}


def decoder_dims(d_model=32, layers=2, heads=4, ffn=64):
    """A decoder-only config's sizes (Llama's, Qwen2's, Gemma 2's names); the defaults are the tiny models'."""
    return {
        "hidden_size": d_model,
        "intermediate_size": ffn,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": max(1, heads // 2),  # grouped-query attention, as Llama-2-70B and Qwen2 use
    }


BART_SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # BART's ids 0..4


def _bart_tokenizer():
    """facebook/bart-*'s tokenizer kind: a byte-level BPE (GPT-2's) whose first ids are <s>, <pad>, </s>, <unk>,
    <mask>, trained on English-like text only."""
    rng = random.Random(1234)
    corpus = [english_like_text(rng, 40) for _ in range(400)]
    corpus += ["This is interesting.", "This is fun.", "There is a cat on the mat.", "I feel good today."]
    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(corpus, vocab_size=600, min_frequency=1, special_tokens=BART_SPECIAL_TOKENS)
    merges = json.loads(trainer._tokenizer.to_str())["model"]["merges"]  # pairs, or "a b" strings in old versions
    return transformers.BartTokenizer(
        vocab=trainer.get_vocab(), merges=[tuple(m if isinstance(m, list) else m.split(" ")) for m in merges]
    )


def _bart(dims, weight_scale, max_positions):
    """facebook/bart-large: `<s> text </s>` on both sides, decoding starts with </s> (id 2); learned positions."""
    tokenizer = _bart_tokenizer()
    config = transformers.BartConfig(
        vocab_size=len(tokenizer),
        **_encoder_decoder_dims(**dims),
        max_position_embeddings=max_positions,
        init_std=weight_scale,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
    )
    return tokenizer, transformers.BartForConditionalGeneration(config)


def _mbart50(dims, weight_scale, max_positions):
    """facebook/mbart-large-50: `<lang> text </s>` on both sides, decoding starts with </s> (id 2)."""
    tokenizer = _tokenizer_from_sentencepiece(
        transformers.MBart50Tokenizer,
        "sentencepiece.bpe.model",
        _sentencepiece_model(training_corpus(), 1000, model_type="unigram", **_FAIRSEQ_SPM_IDS),
        bos_token="<s>",
        model_max_length=max_positions,
    )
    config = transformers.MBartConfig(
        vocab_size=len(tokenizer),
        **_encoder_decoder_dims(**dims),
        max_position_embeddings=max_positions,
        init_std=weight_scale,
        scale_embedding=True,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_eos_token_id=2,
        tokenizer_class="MBart50Tokenizer",
    )
    return tokenizer, transformers.MBartForConditionalGeneration(config)


def _mbart_cc25(dims, weight_scale, max_positions):
    """facebook/mbart-large-cc25: `text </s> <lang>` on both sides; the model moves the code to the decoder's start."""
    tokenizer = _tokenizer_from_sentencepiece(
        transformers.MBartTokenizer,
        "sentencepiece.bpe.model",
        _sentencepiece_model(training_corpus(), 1000, model_type="unigram", **_FAIRSEQ_SPM_IDS),
        model_max_length=max_positions,
    )
    config = transformers.MBartConfig(
        vocab_size=len(tokenizer),
        **_encoder_decoder_dims(**dims),
        max_position_embeddings=max_positions,
        init_std=weight_scale,
        scale_embedding=True,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        forced_eos_token_id=2,
    )
    return tokenizer, transformers.MBartForConditionalGeneration(config)


def _t5_tokenizer(extra_ids, max_positions):
    spm_model = _sentencepiece_model(training_corpus(), 1000, model_type="unigram", **_T5_SPM_IDS)
    options = {"extra_ids": extra_ids}
    if max_positions is not None:
        options["model_max_length"] = max_positions
    return _tokenizer_from_sentencepiece(transformers.T5Tokenizer, "spiece.model", spm_model, **options)


def _t5(dims, weight_scale, max_positions):
    """google-t5/t5-small (T5 v1.0): ReLU feed-forward, lm_head tied to the embeddings, so the decoder output is
    scaled by d_model**-0.5 before it; 100 sentinel tokens; model vocabulary padded past the tokenizer's."""
    tokenizer = _t5_tokenizer(100, max_positions)
    config = transformers.T5Config(
        vocab_size=_padded(len(tokenizer)),
        **_t5_dims(**dims),
        feed_forward_proj="relu",
        tie_word_embeddings=True,
        initializer_factor=weight_scale,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    return tokenizer, transformers.T5ForConditionalGeneration(config)


def _flan_t5(dims, weight_scale, max_positions):
    """google/flan-t5-small (T5 v1.1): gated-GELU feed-forward, a separate lm_head and no output scaling."""
    tokenizer = _t5_tokenizer(100, max_positions)
    config = transformers.T5Config(
        vocab_size=_padded(len(tokenizer)),
        **_t5_dims(**dims),
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=False,
        initializer_factor=weight_scale,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    model = transformers.T5ForConditionalGeneration(config)
    # transformers 5 always builds T5 with lm_head tied to the embeddings and unties them on load only where the
    # checkpoint stores two different matrices, as flan-t5's does.
    model.lm_head.weight = torch.nn.Parameter(torch.randn_like(model.shared.weight) * weight_scale)
    return tokenizer, model


def _mt5(dims, weight_scale, max_positions):
    """google/mt5-small: T5 v1.1 architecture under MT5ForConditionalGeneration; a tokenizer configured with
    extra_ids=0 (mT5's sentinels are ordinary pieces of its sentencepiece model; this one has none); model vocabulary
    padded past the tokenizer's."""
    tokenizer = _t5_tokenizer(0, max_positions)
    config = transformers.MT5Config(
        vocab_size=_padded(len(tokenizer)),
        **_t5_dims(**dims),
        feed_forward_proj="gated-gelu",
        initializer_factor=weight_scale,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    model = transformers.MT5ForConditionalGeneration(config)
    model.lm_head.weight = torch.nn.Parameter(torch.randn_like(model.shared.weight) * weight_scale)
    return tokenizer, model


def _pegasus(dims, weight_scale, max_positions):
    """google/pegasus-large: <pad>=0, </s>=1, <mask_1>, <mask_2>, <unk_2>..<unk_102>, then <unk> and the pieces;
    `text </s>`, decoding starts with <pad>; sinusoidal positions, scaled embeddings."""
    tokenizer = _tokenizer_from_sentencepiece(
        transformers.PegasusTokenizer,
        "spiece.model",
        _sentencepiece_model(training_corpus(), 1000, model_type="unigram", **_T5_SPM_IDS),
        model_max_length=max_positions,
    )
    config = transformers.PegasusConfig(
        vocab_size=len(tokenizer),
        **_encoder_decoder_dims(**dims),
        max_position_embeddings=max_positions,
        init_std=weight_scale,
        scale_embedding=True,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        forced_eos_token_id=1,
    )
    return tokenizer, transformers.PegasusForConditionalGeneration(config)


def _marian(dims, weight_scale, max_positions):
    """Helsinki-NLP/opus-mt-en-de: an English source.spm and a German target.spm (the coverage lines give each every
    character) over one shared vocab.json with
    </s>=0, <unk>=1 and <pad> last; decoding starts with <pad>."""
    with tempfile.TemporaryDirectory() as staging:
        pieces = ["</s>", "<unk>"]
        for name, languages, size in (("source.spm", ("en", "fr"), 350), ("target.spm", ("de",), 300)):
            spm_model = _sentencepiece_model(training_corpus(languages), size, model_type="unigram")
            with open(os.path.join(staging, name), "wb") as handle:
                handle.write(spm_model)
            processor = sentencepiece.SentencePieceProcessor(model_proto=spm_model)
            pieces += [processor.id_to_piece(i) for i in range(3, processor.get_piece_size())]
        vocab = {piece: index for index, piece in enumerate(dict.fromkeys([*pieces, "<pad>"]))}
        with open(os.path.join(staging, "vocab.json"), "w", encoding="utf-8") as handle:
            json.dump(vocab, handle, ensure_ascii=False)
        tokenizer = transformers.MarianTokenizer(
            source_spm=os.path.join(staging, "source.spm"),
            target_spm=os.path.join(staging, "target.spm"),
            vocab=os.path.join(staging, "vocab.json"),
            source_lang="en",
            target_lang="de",
            model_max_length=max_positions,
        )
    config = transformers.MarianConfig(
        vocab_size=len(vocab),
        decoder_vocab_size=len(vocab),
        **_encoder_decoder_dims(**dims),
        max_position_embeddings=max_positions,
        init_std=weight_scale,
        scale_embedding=True,
        share_encoder_decoder_embeddings=True,
        pad_token_id=vocab["<pad>"],
        eos_token_id=0,
        decoder_start_token_id=vocab["<pad>"],
        forced_eos_token_id=0,
    )
    return tokenizer, transformers.MarianMTModel(config)


def _gpt2(dims, weight_scale, max_positions):
    """openai-community/gpt2: byte-level BPE, <|endoftext|> last in the vocabulary and bos = eos = unk; no padding
    token, nothing added around the text."""
    vocab, merges = byte_level_bpe(pre_tokenizers.ByteLevel(add_prefix_space=False), None, 1200)
    vocab["<|endoftext|>"] = len(vocab)
    tokenizer = transformers.GPT2Tokenizer(vocab=vocab, merges=merges, model_max_length=max_positions)
    config = transformers.GPT2Config(
        vocab_size=len(vocab),
        n_embd=dims["d_model"],
        n_layer=dims["layers"],
        n_head=dims["heads"],
        n_inner=dims["ffn"],
        n_positions=max_positions,
        initializer_range=weight_scale,
        bos_token_id=vocab["<|endoftext|>"],
        eos_token_id=vocab["<|endoftext|>"],
    )
    return tokenizer, transformers.GPT2LMHeadModel(config)


def _opt(dims, weight_scale, max_positions):
    """facebook/opt-125m: GPT-2's tokenizer class over a vocabulary starting <s>, <pad>, </s>, <unk>; bos = eos = </s>
    (id 2), added at the start of every text; <pad> (id 1)."""
    vocab, merges = byte_level_bpe(
        pre_tokenizers.ByteLevel(add_prefix_space=False), None, 1200, special_tokens=("<s>", "<pad>", "</s>", "<unk>")
    )
    tokenizer = transformers.GPT2Tokenizer(
        vocab=vocab,
        merges=merges,
        bos_token="</s>",
        eos_token="</s>",
        unk_token="</s>",
        pad_token="<pad>",
        add_bos_token=True,
    )
    config = transformers.OPTConfig(
        vocab_size=len(vocab),
        hidden_size=dims["d_model"],
        word_embed_proj_dim=dims["d_model"],
        num_hidden_layers=dims["layers"],
        num_attention_heads=dims["heads"],
        ffn_dim=dims["ffn"],
        max_position_embeddings=max_positions,
        init_std=weight_scale,
        pad_token_id=1,
        bos_token_id=2,
        eos_token_id=2,
    )
    return tokenizer, transformers.OPTForCausalLM(config)


def _llama(dims, weight_scale, max_positions):
    """meta-llama/Llama-2-7b-hf: a sentencepiece BPE with byte fallback, <unk>=0, <s>=1, </s>=2; <s> added at the
    start of every text; no padding token."""
    spm_model = _sentencepiece_model(
        training_corpus(), 1200, model_type="bpe", byte_fallback=True, split_digits=True, **_FAIRSEQ_SPM_IDS
    )
    tokenizer = _tokenizer_from_sentencepiece(
        transformers.LlamaTokenizer, "tokenizer.model", spm_model, add_bos_token=True
    )
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        **decoder_dims(**dims),
        max_position_embeddings=max_positions,
        initializer_range=weight_scale,
        bos_token_id=1,
        eos_token_id=2,
        tie_word_embeddings=False,
    )
    return tokenizer, transformers.LlamaForCausalLM(config)


def _qwen2(dims, weight_scale, max_positions):
    """Qwen/Qwen2.5-0.5B: byte-level BPE with Qwen2's pre-tokenizer and NFC normalizer, no BOS token, <|endoftext|>
    (last) as eos and padding; tied embeddings; model vocabulary padded past the tokenizer's."""
    template = transformers.Qwen2Tokenizer().backend_tokenizer
    vocab, merges = byte_level_bpe(template.pre_tokenizer, template.normalizer, 1200)
    vocab["<|endoftext|>"] = len(vocab)
    tokenizer = transformers.Qwen2Tokenizer(vocab=vocab, merges=merges, unk_token=None, model_max_length=max_positions)
    config = transformers.Qwen2Config(
        vocab_size=_padded(len(tokenizer)),
        **decoder_dims(**dims),
        max_position_embeddings=max_positions,
        initializer_range=weight_scale,
        bos_token_id=vocab["<|endoftext|>"],
        eos_token_id=vocab["<|endoftext|>"],
        tie_word_embeddings=True,
    )
    return tokenizer, transformers.Qwen2ForCausalLM(config)


# family: (builder, position limit of the checkpoint it imitates or None where positions are relative, weight scale:
# init_std, or T5's initializer_factor, chosen so that the log-probabilities of a target's tokens spread over nats)
_BUILDERS = {
    "bart": (_bart, 1024, 0.2),
    "mbart50": (_mbart50, 1024, 0.3),
    "mbart": (_mbart_cc25, 1024, 0.3),
    "t5": (_t5, 512, 1.0),
    "flan-t5": (_flan_t5, 512, 0.5),
    "mt5": (_mt5, None, 0.5),
    "pegasus": (_pegasus, 1024, 0.3),
    "marian": (_marian, 512, 0.3),
    "gpt2": (_gpt2, 1024, 0.3),
    "opt": (_opt, 2048, 0.3),
    "llama": (_llama, 4096, 0.3),
    "qwen2": (_qwen2, 32768, 0.3),
}


def build_tiny(
    family,
    directory,
    *,
    seed=0,
    d_model=32,
    layers=2,
    heads=4,
    ffn=64,
    init_std=None,
    max_positions=None,
    vocab_size=None,
):
    """Saves a freshly trained tokenizer and a random model of `family` (one of FAMILIES) into `directory`.

    `max_positions` replaces the position limit of the imitated checkpoint (model positions, and the tokenizer's
    model_max_length where the family's tokenizer has one); `init_std` replaces the family's weight scale (for T5
    families, the initializer_factor); `vocab_size` widens the model's vocabulary past the tokenizer's (for the
    benchmarks: a real checkpoint's output layer). Returns the directory as a string."""
    if family not in _BUILDERS:
        raise ValueError(f"family: unknown {family!r}; known: {', '.join(FAMILIES)}")
    builder, default_positions, default_scale = _BUILDERS[family]
    dims = {"d_model": d_model, "layers": layers, "heads": heads, "ffn": ffn}
    torch.manual_seed(seed)
    tokenizer, model = builder(dims, init_std or default_scale, max_positions or default_positions)
    if vocab_size is not None:
        model.resize_token_embeddings(vocab_size, mean_resizing=False)
    if hasattr(model, "final_logits_bias"):  # a non-zero output bias, so that the tests see it is applied
        with torch.no_grad():
            model.final_logits_bias.normal_(0.0, 0.5)
    model.eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    # What loading the staged sentencepiece file left in the tokenizer's init arguments; no public checkpoint has it.
    _rewrite_json(os.path.join(directory, "tokenizer_config.json"), drop=("is_local", "local_files_only", "unk_id"))
    if family in ("flan-t5", "mt5"):
        # These checkpoints publish `"tie_word_embeddings": false`, which transformers 5 reads as "no output scaling"
        # (T5) and then keeps the stored lm_head apart from the embeddings; save_pretrained spells the same model
        # differently (tie true, scale_decoder_outputs false), so the file is written the way the public ones are.
        config_path = os.path.join(directory, "config.json")
        _rewrite_json(config_path, drop=("scale_decoder_outputs",), update={"tie_word_embeddings": False})
    return str(directory)


def build_copying_bart(directory, *, steps=150, seed=1):
    """A tiny BART trained for a few seconds to copy short sentences, so that, as with real checkpoints, a text scores
    higher given itself than given an unrelated text (a random model cannot tell them apart)."""
    build_tiny("bart", directory, seed=seed)
    tokenizer = transformers.BartTokenizer.from_pretrained(directory, trust_remote_code=False)
    model = transformers.BartForConditionalGeneration.from_pretrained(directory, trust_remote_code=False)
    rng = random.Random(seed)
    torch.manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # steps this small spend more time synchronising threads than computing
    try:  # in eval mode (dropout off), as from_pretrained leaves the model
        for _ in range(steps):
            texts = [english_like(rng, rng.randint(2, 12)) for _ in range(32)]
            batch = tokenizer(texts, return_tensors="pt", padding=True)
            labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
            loss = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    finally:
        torch.set_num_threads(threads)
    model.save_pretrained(directory)
    return str(directory)


def _rewrite_json(path, drop=(), update=None):
    with open(path, encoding="utf-8") as handle:
        content = json.load(handle)
    content = {key: value for key, value in content.items() if key not in drop} | (update or {})
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(content, handle, indent=2, ensure_ascii=False)


_BUILT = {}
# What a built checkpoint depends on besides its builder's arguments: the builders, the text their tokenizers are
# trained on, and the libraries that write the files.
_BUILDER_SOURCES = [file_sha256(os.path.join(os.path.dirname(__file__), name)) for name in ("models.py", "text.py")]


def prebuilt(directory, builder, **options):
    """`builder(directory=..., **options)` (build_tiny, build_copying_bart) saved into `directory`: copied from the
    tests' model cache (support/cache.py), where it is built the first time on this machine. Each copy is the test
    session's own, so a test that changes files in it changes nothing for later runs. Returns the directory as a
    string."""
    versions = [module.__version__ for module in (torch, transformers, tokenizers, sentencepiece)]
    name = f"{builder.__name__}-{digest(builder.__name__, options, _BUILDER_SOURCES, versions)}"
    cached = cached_folder(name, lambda folder: builder(directory=folder, **options))
    shutil.copytree(cached, directory, dirs_exist_ok=True)
    return str(directory)


def tiny_checkpoint_for(tmp_path_factory, family, **options):
    """The directory of a tiny `family` checkpoint for this test session (per family and options), from `prebuilt`.

    For a session fixture: `return tiny_checkpoint_for(tmp_path_factory, request.param)`."""
    key = (str(tmp_path_factory.getbasetemp()), family, tuple(sorted(options.items())))
    if key not in _BUILT:
        _BUILT[key] = prebuilt(tmp_path_factory.mktemp(f"tiny-{family}"), build_tiny, family=family, **options)
    return _BUILT[key]


def load_tiny(directory):
    """(model, tokenizer) loaded the way users load a checkpoint: through the Auto classes, in eval mode."""
    auto = (
        transformers.AutoModelForSeq2SeqLM
        if transformers.AutoConfig.from_pretrained(directory, trust_remote_code=False).is_encoder_decoder
        else transformers.AutoModelForCausalLM
    )
    return auto.from_pretrained(directory, trust_remote_code=False).eval(), transformers.AutoTokenizer.from_pretrained(
        directory, trust_remote_code=False
    )


# ---------------------------------------------------------------------------------------------------------------------
# Chat formats: a tiny Llama or Qwen2 checkpoint given the special tokens of a chat format, a chat template and
# embeddings for the new tokens. Two formats whose assistant turns end differently: ChatML (Qwen2.5, SmolLM2:
# <|im_end|> then a newline, and a default system turn) and Llama 3's (<|eot_id|>, the BOS first, every message
# trimmed).

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
    tokenizer = transformers.AutoTokenizer.from_pretrained(plain, trust_remote_code=False)
    model = transformers.AutoModelForCausalLM.from_pretrained(plain, trust_remote_code=False)
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


# ---------------------------------------------------------------------------------------------------------------------
# A sentence-embedding encoder (BERT with a word-level vocabulary), saved as a sentence-transformers checkpoint of
# bert-base-nli-mean-tokens's kind is: the transformers files beside modules.json, 1_Pooling/config.json and
# sentence_bert_config.json, so that the code under test loads it as it loads the real one.

PUNCTUATION = [".", "!", "?", ",", "'", "-"]


def build_sentence_encoder(
    directory, *, seed=0, hidden=32, layers=2, heads=4, ffn=64, max_seq_length=128, pooling="mean_tokens"
):
    """Saves the encoder into `directory` and returns it as a string. `pooling` names the sentence-transformers
    pooling mode written into 1_Pooling/config.json ("mean_tokens", "cls_token" or "max_tokens")."""
    os.makedirs(directory, exist_ok=True)
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *PUNCTUATION]
    vocab_file = os.path.join(directory, "vocab.txt")
    with open(vocab_file, "w", encoding="utf-8") as handle:
        handle.write("\n".join(vocabulary) + "\n")
    tokenizer = transformers.BertTokenizer(vocab_file)
    config = transformers.BertConfig(
        vocab_size=len(vocabulary),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=ffn,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    transformers.BertModel(config).save_pretrained(directory)
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


# ---------------------------------------------------------------------------------------------------------------------
# An architecture the engine cannot drive


def build_gemma2_softcapped(directory, tokenizer_source):
    """A Gemma 2 model over the tokenizer of `tokenizer_source`, whose logits are soft-capped after the output layer:
    an architecture whose log-probabilities the engine cannot split, with finite weights."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(tokenizer_source, trust_remote_code=False)
    config = transformers.Gemma2Config(
        vocab_size=len(tokenizer),
        **decoder_dims(),
        head_dim=8,
        final_logit_softcapping=1.0,
        initializer_range=1.0,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    transformers.Gemma2ForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)
