"""Tiny project for tests/test_translation_safety.py: one reST page, one MyST page, zh_TW.

The test puts conf/ on PYTHONPATH, so ``site_extensions.translation_safety`` imports from there.
"""

import os

from site_extensions.compiled_catalogs import compile_catalogs

# As the site's conf.py does: no .mo on disk is trusted.
compile_catalogs(os.path.join(os.path.dirname(__file__), "locale"))
extensions = [
    "site_extensions.compiled_catalogs",
    "myst_parser",
    "site_extensions.translation_safety",
    "content_security_policy",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
locale_dirs = ["locale"]
gettext_compact = False
templates_path = ["_templates"]
html_theme = "basic"
html_search_language = "en"  # skip jieba's 3 s dictionary load
