"""Tiny project for tests/test_translation_notice.py: a partly and a fully translated page, zh_TW.

The test puts conf/ on PYTHONPATH, so the extensions import from there.
"""

extensions = ["extensions.bilingual", "extensions.translation_notice"]
locale_dirs = ["locale"]
gettext_compact = False
html_theme = "basic"
html_search_language = "en"  # skip jieba's 3 s dictionary load
