"""Compile every catalog from its checked .po: a .mo found on disk is never used.

Sphinx compiles a catalog only when its .mo is older than its .po, and a
fresh clone gives both the same mtime, so a .mo committed beside (or instead
of) its .po would reach the pages unchecked, while ``make check`` and the
review page read the .po. conf.py calls :func:`compile_catalogs` before
Sphinx loads any translation (it loads sphinx.mo before extensions are set
up): each .mo is rewritten from its .po with Babel, as Sphinx writes it
(read as strictly as ``msgfmt`` reads it: translation/catalogs.py), and
a .mo without a .po is deleted. Entries are left out that Sphinx must never
use: fuzzy ones (as Sphinx does); plural ones (no English message has a
plural, so a ``msgid_plural`` entry is not from the templates: gettext would
serve its ``msgstr[0]`` where the checks see an empty ``msgstr``); any
translation holding an invisible or direction-changing character; and, in
sphinx.po, an entry that is not one of the site's extracted interface strings
(when the extraction is at hand) or whose translation could leave the place
it lands (translation/words.py, the rules ``make check`` applies too).

As an extension, it fails a build whose language has a catalog that could
not be compiled or held a plural entry, naming the file and line (the rest of
the build goes on, so that every such problem is reported at once).
"""

import io
import os
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from sphinx.util import logging

from site_layout import GLOSSARY, POT_DIR, ROOT, write_if_changed
from translation.catalogs import CatalogError, catalog_text, messages, msgstr_line, read
from translation.checks.interface import INTERFACE, extracted
from translation.checks.terminology import load_glossary
from translation.words import (
    added_controls, controls, glossary_words, interface_problems, too_long,
)  # fmt: skip

logger = logging.getLogger(__name__)

# {language: [("file:line", what was wrong), ...]} of the last compile_catalogs().
PROBLEMS = {}


def refusal(po, message, language, interface_strings):
    """Why *message* of catalog *po* must not reach Sphinx, or None."""
    if message.pluralizable:
        return ("an entry with a plural form (msgid_plural); the English has no plural"
                " messages, so it was left out")  # fmt: skip
    if not message.string or "fuzzy" in message.flags:
        return None  # Sphinx leaves it out; the English is shown
    long = too_long(message.id, message.string)
    if long:
        return long + "; it was left out"
    if po.name == INTERFACE:
        if interface_strings is not None and message.id not in interface_strings:
            return "an interface string the site does not extract; it was left out"
        allowed = glossary_words(message.id, load_glossary(str(GLOSSARY)), language)
        reasons = interface_problems(message.id, message.string, allowed)
        return "; ".join(reasons) + "; it was left out" if reasons else None
    hidden = added_controls(message.id, message.string)
    if hidden:
        return ("it holds invisible or direction-changing characters: "
                + ", ".join(controls("".join(hidden))) + "; it was left out")  # fmt: skip
    return None


def compiled(po, language, interface_strings=None):
    """Return (the .mo bytes of *po*, [problems]) without the entries Sphinx must not use."""
    catalog = read(po, language)
    problems, lines = [], None
    for message in messages(catalog):
        why = refusal(po, message, language, interface_strings)
        if why:
            lines = lines or catalog_text(po).split("\n")
            line = message.lineno if message.pluralizable else msgstr_line(lines, message)
            problems.append((f"{po}:{line}", why))
            catalog.delete(message.id, context=message.context)
    data = io.BytesIO()
    write_mo(data, catalog, use_fuzzy=False)
    return data.getvalue(), problems


def _empty():
    data = io.BytesIO()
    write_mo(data, Catalog())
    return data.getvalue()


EMPTY = _empty()  # the .mo of a catalog with no translation
NEVER_OLDER = 4102444800  # 2100-01-01: the date of a refused catalog's empty .mo


def compile_catalogs(locale_dir, pot_dir=None):
    """Rewrite every ``<lang>/LC_MESSAGES/**.mo`` under *locale_dir* from its .po; record problems.

    Idempotent, and safe while other languages build: every process writes the
    same bytes, each file atomically.
    """
    locale_dir = Path(locale_dir)
    # The extraction of the project these catalogs translate, laid out as this one's.
    pot_dir = pot_dir or locale_dir.parent / POT_DIR.relative_to(ROOT)
    interface_strings = extracted(Path(pot_dir))
    PROBLEMS.clear()
    for mo in locale_dir.glob("*/LC_MESSAGES/**/*.mo"):
        if not mo.with_suffix(".po").is_file():
            mo.unlink(missing_ok=True)
    for po in sorted(locale_dir.glob("*/LC_MESSAGES/**/*.po")):
        language = po.relative_to(locale_dir).parts[0]
        try:
            data, problems = compiled(po, language, interface_strings)
        except CatalogError as err:
            line = err.line
            problems = [(f"{po}{f':{line}' if line else ''}", f"cannot be compiled: {err}")]
            PROBLEMS.setdefault(language, []).extend(problems)
            # An empty .mo dated after anything the file could be (a link to /proc, say):
            # Sphinx compiles, and so reads, a catalog whose .mo is older; this one it leaves.
            write_if_changed(po.with_suffix(".mo"), EMPTY)
            os.utime(po.with_suffix(".mo"), (NEVER_OLDER, NEVER_OLDER))
            continue
        PROBLEMS.setdefault(language, []).extend(problems)
        write_if_changed(po.with_suffix(".mo"), data)


def report(app):
    """Log, as errors at their file and line, what compile_catalogs() found in this language."""
    for location, problem in PROBLEMS.get(app.config.language, []):
        logger.error("translation refused: %s", problem, location=location)


def fail(app, exception):
    """Fail the build, even without -W, when a catalog of its language was not compiled whole."""
    if exception is None and PROBLEMS.get(app.config.language):
        app.statuscode = 1


def setup(app):
    """Report, once the builder exists, what conf.py's compile_catalogs() found."""
    app.connect("builder-inited", report)
    app.connect("build-finished", fail)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
