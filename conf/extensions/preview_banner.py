"""The live preview's banner after a failed rebuild, in the page's language.

build/live_preview.py puts it on every page it serves until a rebuild succeeds:
what happened, and why, as ``make html`` reports it. Its sentences are
interface strings; the preview is no Sphinx build, so it reads their
translations from the language's sphinx.po itself, and escapes them.
"""

import html
from pathlib import Path

from extensions.interface_strings import extract
from catalogs.po import CatalogError, is_translated, read

FAILED = "The last rebuild failed, so this page is from the last good build."
REASON = "What make html would refuse, as it reports it:"
FIX = "Fix it and save: the page reloads itself after the next good rebuild."
STRINGS = (FAILED, REASON, FIX)
STYLE = (
    "position:fixed;bottom:0;left:0;right:0;max-height:40vh;overflow:auto;margin:0;"
    "padding:.5em 1em;background:#b00020;color:#fff;z-index:1000;font:15px/1.4 sans-serif"
)


def translations(locale_dir, lang):
    """{English: translation} of the banner's sentences in *lang*'s sphinx.po (none if unreadable)."""
    po = Path(locale_dir) / lang / "LC_MESSAGES" / "sphinx.po"
    try:
        catalog = read(po, lang)
    except (CatalogError, OSError):
        return {}  # a broken sphinx.po: the banner says so in English
    found = {}
    for english in STRINGS:
        message = catalog.get(english)
        if message is not None and is_translated(message):
            found[english] = message.string
    return found


def banner(locale_dir, lang, why, html_lang):
    """The banner's HTML for a page of *lang* whose rebuild failed for *why* (lines of text)."""
    said = translations(locale_dir, lang)

    def text(english):
        shown = said.get(english, english)
        tag = html_lang if english in said else "en"
        return f'<span lang="{tag}">{html.escape(shown)}</span>'

    reason = html.escape(why.strip() or "(see the terminal)")
    return (
        f'<div id="live-preview-failed" role="alert" style="{STYLE}">'
        f'<p style="margin:0"><strong>{text(FAILED)}</strong> {text(REASON)}</p>'
        # A catalog's path has no space to break at: the line number after it must
        # not run off a phone's screen (390 px), so the lines break anywhere.
        f'<pre lang="en" style="margin:.3em 0;white-space:pre-wrap;overflow-wrap:anywhere;'
        f'background:none;color:#fff;font-size:13px">{reason}</pre><p style="margin:0">{text(FIX)}</p></div>'
    )


def setup(app):
    """Offer the banner's sentences to translators."""
    extract(app, STRINGS, __file__)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
