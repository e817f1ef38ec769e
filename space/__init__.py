"""The BARTScore Space apart from its user interface (app.py, beside this package). One concern a module; nothing here
imports Gradio:

    settings    the operator's settings (app.py's docstring lists them) and the menu's models: checked when the app
                starts, loaded on first use and kept
    form        what the user typed or chose, read and checked before any model loads
    candidates  the Compare tab: candidates scored with their reference points, the table and the chart's rows
    heatmap     the Compare tab's token heatmap (HTML and CSS)
    batch       the Batch tab: uploads read under the Space's limits, every system scored and compared, the CSV
    plots       the Batch tab's means with confidence intervals (SVG and CSS)
    guards      models that cannot be loaded and what browser users are told, special tokens in a user's text,
                spreadsheet formulas in downloads, memory returned after a job

A Hugging Face Space runs from the repository root, where this package is importable; the bartscore wheel leaves it
out (it is not part of the library)."""
