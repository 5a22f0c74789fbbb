"""Tiny project for tests/test_translation_safety.py: one reST page, one MyST page, zh_TW.

The test puts conf/ on PYTHONPATH, so ``extensions.translation_safety`` imports from there.
"""

import os

from extensions.compiled_catalogs import compile_catalogs

HERE = os.path.dirname(__file__)
# As the site's conf.py does: Sphinx reads only the checked catalogs, compiled apart.
catalog_sources = "locale"
locale_dirs = [os.path.join(HERE, "_compiled")]
compile_catalogs(os.path.join(HERE, "locale"), locale_dirs[0])
extensions = [
    "extensions.compiled_catalogs",
    "myst_parser",
    "extensions.translation_safety",
    "content_security_policy",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
gettext_compact = False
templates_path = ["_templates"]
html_theme = "basic"
html_search_language = "en"  # skip jieba's 3 s dictionary load
