"""Compile every catalog from its checked .po: a .mo found on disk is never used.

Sphinx compiles a catalog only when its .mo is older than its .po, and a
fresh clone gives both the same mtime, so a .mo committed beside (or instead
of) its .po would reach the pages unchecked, while ``make check`` and the
review page read the .po. conf.py calls :func:`compile_catalogs` before
Sphinx loads any translation (it loads sphinx.mo before extensions are set
up): each .mo is rewritten from its .po with Babel, as Sphinx writes it
(read as strictly as ``msgfmt`` reads it: translation/catalogs.py), and
a .mo without a .po is deleted. Two kinds of entries are left out: fuzzy ones
(as Sphinx does) and plural ones. No English message has a plural, so a
``msgid_plural`` entry is not from the templates: gettext would serve its
``msgstr[0]`` where the checks see an empty ``msgstr``.

As an extension, it fails a build whose language has a catalog that could
not be compiled or held a plural entry, naming the file and line (the rest of
the build goes on, so that every such problem is reported at once).
"""

import io
import os
from pathlib import Path

from babel.messages.mofile import write_mo
from sphinx.util import logging

from translation.catalogs import CatalogError, messages, read

logger = logging.getLogger(__name__)

# {language: [("file:line", what was wrong), ...]} of the last compile_catalogs().
PROBLEMS = {}


def compiled(po, language):
    """Return (the .mo bytes of *po*, [problems]) without its fuzzy and plural entries."""
    catalog = read(po, language)
    problems = []
    for message in messages(catalog):
        if message.pluralizable:
            problems.append((f"{po}:{message.lineno}", "an entry with a plural form "
                             "(msgid_plural); the English has no plural messages, so it was "
                             "left out"))  # fmt: skip
            catalog.delete(message.id, context=message.context)
    data = io.BytesIO()
    write_mo(data, catalog, use_fuzzy=False)
    return data.getvalue(), problems


def write_if_changed(path, data):
    """Replace *path* by *data* atomically, unless it holds exactly that."""
    if path.is_file() and path.read_bytes() == data:
        return
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_bytes(data)
    partial.replace(path)  # a build reading it now sees the old file or the new, never half


def compile_catalogs(locale_dir):
    """Rewrite every ``<lang>/LC_MESSAGES/**.mo`` under *locale_dir* from its .po; record problems.

    Idempotent, and safe while other languages build: every process writes the
    same bytes, each file atomically.
    """
    locale_dir = Path(locale_dir)
    PROBLEMS.clear()
    for mo in locale_dir.glob("*/LC_MESSAGES/**/*.mo"):
        if not mo.with_suffix(".po").is_file():
            mo.unlink(missing_ok=True)
    for po in sorted(locale_dir.glob("*/LC_MESSAGES/**/*.po")):
        language = po.relative_to(locale_dir).parts[0]
        try:
            data, problems = compiled(po, language)
        except CatalogError as err:
            po.with_suffix(".mo").unlink(missing_ok=True)
            line = err.line
            problems, data = [(f"{po}{f':{line}' if line else ''}", f"cannot be compiled: {err}")], None
        PROBLEMS.setdefault(language, []).extend(problems)
        if data is not None:
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
    return {"parallel_read_safe": True, "parallel_write_safe": True}
