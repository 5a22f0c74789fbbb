"""Make the search box work on the Chinese sites, and find the glossary's terms.

A language is Chinese here when its script in conf/languages.py is Hans or Hant.

Two fixes to Sphinx 9.0's Chinese (jieba) search:

* Its ``language_data.js`` ends with ``window.Stemmer = ChineseStemmer``, a class
  that does not exist (Chinese search stems Latin words with the English
  stemmer), so every search on a zh site dies with a ReferenceError
  (sphinx-doc/sphinx#14229, fixed upstream by #14416). :class:`ChineseSearch`
  names the stemmer that is really loaded.
* jieba cuts 数据并行 into 数据 + 并行, while the search box looks a typed term
  up whole, so searching for a glossary term found nothing. Each zh build hands
  jieba the glossary's terms for its language as a user dictionary
  (``html_search_options["dict"]``); jieba's search mode then indexes both the
  term and its parts.
"""

import logging
import re
from pathlib import Path

import jieba  # without it, Sphinx silently indexes no Chinese at all: insist on it
from sphinx.search.zh import SearchChinese

from languages import by_sphinx_code
from catalogs.glossary import chinese_terms

CJK = re.compile(r"[\u3400-\u9fff]")


class ChineseSearch(SearchChinese):
    """Sphinx's Chinese search, with the JavaScript stemmer it actually ships."""

    language_name = "English"  # language_data.js: window.Stemmer = EnglishStemmer


def configure_search(app, config):
    """For a Chinese build, search with jieba, the glossary as its user dictionary."""
    if not by_sphinx_code(config.language).chinese:
        return
    jieba.setLogLevel(logging.WARNING)  # not its DEBUG lines about the dictionary

    config.html_search_language = "zh"
    glossary = Path(app.confdir).parent / "locale" / "glossary.csv"
    words = Path(app.doctreedir) / "search-words.txt"
    words.parent.mkdir(parents=True, exist_ok=True)
    words.write_text("".join(t + "\n" for t in chinese_terms(glossary, config.language)), "utf-8")
    config.html_search_options = {**config.html_search_options, "dict": str(words)}


def setup(app):
    """Register the search language and the dictionary handler."""
    app.add_search_language(ChineseSearch)
    app.connect("config-inited", configure_search)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
