"""The BARTScore Space's parts other than its user interface (app.py, beside this package). One concern a module:

    guards      models that cannot be loaded and the messages for them, special tokens in a user's text,
                spreadsheet formulas in downloads, memory returned after a job

Nothing here builds Gradio components; the Space runs from the repository root, where this package is importable."""
