"""Language-dependent settings, applied once ``-D language=`` is known."""

import csv
import os
import re
from pathlib import Path

from languages import by_sphinx_code


def write_search_words(app, lang):
    """Write the glossary's terms for *lang* as a jieba user dictionary; return its path.

    Sphinx otherwise re-adds jieba's whole default dictionary as a "user"
    dictionary (about 4 s per build); the glossary also keeps terms such as
    数据并行 / 資料平行 whole, so searching for them finds them.
    """
    with open(Path(app.confdir).parent / "locale" / "glossary.csv", encoding="utf-8") as f:
        terms = {row[lang] for row in csv.DictReader(f) if re.search(r"[\u4e00-\u9fff]", row[lang])}
    path = Path(app.doctreedir) / f"search-words-{lang}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{term} 1000\n" for term in sorted(terms)), "utf-8")
    return str(path)


def apply_language(app, config):
    """Check the language and set search, 404 and URL-layout values for it."""
    lang = by_sphinx_code(config.language)  # unknown language: stop the build
    # Sphinx picks jieba-based search for "zh"; without jieba it silently
    # indexes no Chinese, so insist on it.
    if lang.sphinx.startswith("zh"):
        import jieba  # noqa: F401  (fail loudly if missing)

        config.html_search_language = "zh"
        config.html_search_options = {"dict": write_search_words(app, lang.sphinx)}
    else:
        config.html_search_language = "en"
    version = os.environ.get("READTHEDOCS_VERSION")
    if version:
        # Read the Docs serves each language at /<rtd-code>/<version>/.
        config.site_language_dirs = {
            code.sphinx: f"{code.rtd}/{version}" for code in config.site_languages
        }
        config.notfound_urls_prefix = f"/{lang.rtd}/{version}/"
    else:
        config.site_language_dirs = {
            code.sphinx: code.sphinx for code in config.site_languages
        }
        config.notfound_urls_prefix = f"/{lang.sphinx}/"


def setup(app):
    """Register the config values and the handler."""
    app.add_config_value("site_languages", [], "html")
    app.add_config_value("site_language_dirs", {}, "html")
    app.connect("config-inited", apply_language)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
