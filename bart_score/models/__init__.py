"""Model families and checkpoints: which families the engine drives, and how a checkpoint is found and loaded.

    loading       finding a checkpoint's files and loading its family: tokenizer and model, checked first
    checkpoints   where a checkpoint's files are, their identity, and checks of them before anything is loaded
    base          the Family interface (a model's token policy, batching and log-probabilities), and the registry of
                  families by model_type that each family's class joins by being defined
    seq2seq       the sequence-to-sequence families (BART, mBART, T5, Pegasus, Marian)
    causal        decoder-only causal language models, and GPTScore's compatibility policy
    chat          chat-format scoring of causal models with a chat template
    _chat_render  rendering a chat template in a separate, limited process
    gguf          reading and checking a GGUF file's header before transformers loads it
    conversion    a GGUF file written as a plain transformers folder
    served/      causal LMs behind inference servers [transport, kinds, server, scorer]

The package imports none of them, so that importing one (checkpoints, gguf, served._transport) does not load the
others."""
