"""Tiny project for tests/test_reader_path.py: collapsed_sections.py with sphinx-design.

The test puts conf/ on PYTHONPATH, so ``extensions.*`` import from there;
offline_copies tells the transform which builds are PDF or EPUB.
"""

extensions = ["sphinx_design", "extensions.offline_copies", "extensions.collapsed_sections"]
html_theme = "basic"
html_search_language = "en"
project = "Fixture"
epub_copyright = "2026"
