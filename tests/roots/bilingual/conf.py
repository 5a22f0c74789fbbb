"""Tiny project for tests/test_bilingual.py: bilingual.py alone, one page, zh_TW.

The test puts conf/ on PYTHONPATH, so ``extensions.bilingual`` imports from there.
"""

extensions = ["extensions.bilingual"]
locale_dirs = ["locale"]
gettext_compact = False
translation_progress_classes = True
html_theme = "basic"
html_search_language = "en"  # skip jieba's 3 s dictionary load
