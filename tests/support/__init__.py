"""What the tests and the benchmarks build on (tests/README.md says what each module holds): tiny checkpoints of every
model family (models, gguf, real_model) kept in the tests' model cache (cache); the tests' text (text) and the
real-model tests' news-like texts (news_texts); the references the code is compared against (reference: the scorers;
release_analysis: the release's meta-evaluation measures); the command line run as users run it (cli) and the
metric's module (metric); the Space served for the tests (app_server), what they type and upload (space_inputs) and
the contrast of its colours (contrast); the release-format benchmark fixtures (meta_eval_fixtures); one rank of the
multi-process tests (distributed_worker); the extras and the imports put off until a test needs them (extras, lazy);
a test's refusal of any model load (model_loads); the fuzzing of parsers and readers (fuzzing, fuzz_targets), of the
options' checks and the Space's form handling (fuzz_form_targets), and the hostile headers the bounds on them are
probed with (header_probes). Test modules import from here, never from each
other."""
