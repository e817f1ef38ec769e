"""What the tests and the benchmarks build on: tiny checkpoints of every model family (models, gguf, real_model), the
tests' text (text) and the real-model tests' news-like texts (news_texts), the reference scorers the scorer is
compared against (reference), the command line run as users run it (cli), the Space served for the tests
(app_server), the release-format benchmark fixtures (meta_eval_fixtures), one rank of the multi-process tests
(distributed_worker) and a test's refusal of any model load (model_loads)."""
