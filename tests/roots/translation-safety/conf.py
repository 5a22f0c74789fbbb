"""Tiny project for tests/test_translation_safety.py: one reST page, one MyST page, zh_TW.

The test puts conf/ on PYTHONPATH, so ``sphinxext.translation_safety`` imports from there.
"""

extensions = ["myst_parser", "sphinxext.translation_safety", "sphinxext.content_security_policy"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
locale_dirs = ["locale"]
gettext_compact = False
templates_path = ["_templates"]
html_theme = "basic"
html_search_language = "en"  # skip jieba's 3 s dictionary load
