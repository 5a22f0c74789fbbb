"""The one folder Sphinx reads translations from: the translations' checked catalogs, compiled.

Python's gettext chains every catalog it finds under a language's names
(``zh_CN/``, ``zh/``, ``zh_CN.gb2312/``...) and Sphinx compiles any .po it finds,
so conf.py points ``locale_dirs`` at ``_build/catalogs/`` and calls
:func:`compile_catalogs` first: for each translation of conf/languages.py, the
.mo of each catalog and nothing else, compiled with Babel from the .po read as
strictly as ``msgfmt`` reads it, without the entries Sphinx must never use
(:func:`refusal`), and loaded back with Python's gettext before it is written
(catalogs/mo_files.py). Anything else under ``locale/`` fails every build,
naming it. As an extension it fails a build whose language had an entry or a
catalog left out, naming the file and line; the English build reads no catalog.
"""

import functools
import gettext
import os
from pathlib import Path

from babel.messages.catalog import Catalog
from sphinx.util import logging
from sphinx.util.i18n import docname_to_domain

from languages import SOURCE, TRANSLATIONS
from site_layout import GLOSSARY, POT_DIR, ROOT, write_if_changed
from catalogs import mo_files
from catalogs.diff import glossary_at, resolve_base
from catalogs.po import (
    CatalogError,
    catalog_text,
    language_catalogs,
    messages,
    misplaced,
    msgstr_line,
    printable,
    read,
)
from catalogs.glossary import load as load_glossary
from gate.project import extracted
from gate.safety import INTERFACE
from catalogs.repository import ReviewError
from gate.words import added_controls, controls, glyphless, interface_verdict, too_long

logger = logging.getLogger(__name__)

# {catalog folder, resolved: {language, or "*" for every build: [("file:line", why), ...]}}
# of the last compile_catalogs() of that folder.
PROBLEMS = {}


@functools.cache
def interface_glossary(base=None):
    """The glossary rows whose words an interface string may add: *base*'s (``BASE``, the
    revision a change is compared with), never the change's own; else this checkout's.
    Raises ReviewError for a revision git does not know."""
    return glossary_at(resolve_base(base)[0], GLOSSARY) if base else load_glossary(str(GLOSSARY))


def refusal(po, message, language, interface_strings, glossary=()):
    """Why *message* of catalog *po* must not reach Sphinx, or None.

    Fuzzy entries are left out as Sphinx leaves them; plural ones (the English
    has none, and gettext would serve ``msgstr[0]``, which the checks never
    see); a translation too long, with a character no font of the PDF has, or
    with invisible or direction-changing ones; in sphinx.po, a string the site
    does not extract (*interface_strings*) or that could leave the place it
    lands or add words (gate/words.py; *glossary*: the rows whose words it may add).
    """
    if message.pluralizable:
        return "an entry with a plural form (msgid_plural); the English has no plural messages, so it was left out"
    if not message.string or "fuzzy" in message.flags:
        return None  # Sphinx leaves it out; the English is shown
    reasons = [too_long(message.id, message.string), glyphless(message.id, message.string)]
    if po.name != INTERFACE:
        hidden = "".join(added_controls(message.id, message.string))
        reasons.append(
            hidden and "it holds invisible or direction-changing characters: " + ", ".join(controls(hidden))
        )
    elif interface_strings is not None and message.id not in interface_strings:
        reasons.append("an interface string the site does not extract")
    else:
        reasons.append("; ".join(interface_verdict(message.id, message.string, glossary, language)))
    first = next(filter(None, reasons), None)
    return first and first + "; it was left out"


def compiled(po, language, interface_strings=None, glossary=()):
    """Return (the .mo bytes of *po*, [problems]) without the entries Sphinx must not use.

    A catalog Python's gettext would not load as written is refused whole:
    its .mo is then one with no translation.
    """
    catalog = read(po, language)
    problems, lines = [], catalog_text(po).split("\n")
    for message in messages(catalog):
        why = refusal(po, message, language, interface_strings, glossary)
        if why:
            line = message.lineno if message.pluralizable else msgstr_line(message)
            problems.append((f"{po}:{line}", why))
            catalog.delete(message.id, context=message.context)
    unloadable = mo_files.problems(catalog, lines)
    if unloadable:
        return EMPTY, problems + [
            (f"{po}:{line}", f"{why}; no entry of it was used") for line, why in unloadable
        ]
    return mo_files.mo(catalog), problems


EMPTY = mo_files.mo(Catalog())  # the .mo of a catalog with no translation


def compile_catalogs(locale_dir, out_dir, languages=TRANSLATIONS, pot_dir=None):
    """Make *out_dir* hold the .mo of every catalog of *languages* under *locale_dir*, only.

    Records what it refused in :data:`PROBLEMS` and returns that.
    """
    locale_dir, out_dir = Path(locale_dir), Path(out_dir)
    # The extraction of the project these catalogs translate, laid out as this one's.
    pot_dir = pot_dir or locale_dir.parent / POT_DIR.relative_to(ROOT)
    interface_strings = extracted(Path(pot_dir))
    found = {"*": [(f"{printable(path)}:1", why) for path, why in misplaced(locale_dir, languages)]}
    try:
        glossary = interface_glossary(os.environ.get("BASE") or None)
    except ReviewError as err:
        glossary = ()
        found["*"].append((f"{GLOSSARY}:1", f"no glossary to allow words from: {err}"))
    written = {}
    for lang in languages:
        problems = found.setdefault(lang, [])
        for domain, po in language_catalogs(locale_dir, lang).items():
            try:
                data, refused = compiled(po, lang, interface_strings, glossary)
            except CatalogError as err:
                data, refused = EMPTY, [(f"{po}:{err.line or 1}", f"cannot be compiled: {err}")]
            mo = out_dir / lang / "LC_MESSAGES" / f"{domain}.mo"
            write_if_changed(mo, data)
            written[mo] = (lang, domain, po)
            problems += refused
    _remove_all_but(out_dir, written)
    for mo, (lang, domain, po) in written.items():
        reached = gettext.find(domain, str(out_dir), [lang], all=True)
        if reached != [str(mo)]:
            why = f"gettext finds {len(reached)} catalogs of this page for the language, not only its own"
            found[lang].append((f"{po}:1", why + "; none of it was used"))
            write_if_changed(mo, EMPTY)
    PROBLEMS[str(locale_dir.resolve())] = found
    return found


def _remove_all_but(folder, kept):
    """Remove everything under *folder* but the files *kept* and the folders holding them."""
    for base, names, files in os.walk(folder, topdown=False):
        for path in (Path(base, name) for name in files + names):
            if path.is_dir() and not path.is_symlink():
                if not any(path.iterdir()):
                    path.rmdir()
            elif path not in kept:
                path.unlink()


def catalog_folder(srcdir, config):
    """The folder of the .po catalogs this build's translations are compiled from, or None."""
    folder = config.catalog_sources or next(iter(config.locale_dirs), None)
    return Path(srcdir, folder).resolve() if folder else None


def problems_of(app):
    """What compile_catalogs() refused that stops this build: ``[("file:line", why)]``.

    The gettext builder, which extracts the English and reads no catalog, is not stopped
    (make check reports the same problems itself).
    """
    folder = catalog_folder(app.srcdir, app.config)
    if app.builder.name == "gettext":
        return []
    found = PROBLEMS.get(str(folder), {}) if folder else {}
    return found.get("*", []) + found.get(app.config.language, [])


def english_reads_none(app, config):
    """The source language's build reads no catalog (gettext would look for en_US/ and more)."""
    if config.language == SOURCE.sphinx:
        config.catalog_sources = config.catalog_sources or next(iter(config.locale_dirs), "")
        config.locale_dirs = []


def report(app):
    """Log, as errors at their file and line, what compile_catalogs() refused for this build."""
    for location, problem in problems_of(app):
        logger.error("translation refused: %s", problem, location=location)


def note_catalog(app, doctree):
    """Make the page's compiled catalog one of its dependencies, as Sphinx does for its own."""
    domain = docname_to_domain(app.env.current_document.docname, app.config.gettext_compact)
    for folder in app.config.locale_dirs:
        mo = Path(app.srcdir, folder, app.config.language, "LC_MESSAGES", f"{domain}.mo")
        if mo.is_file():
            app.env.note_dependency(str(mo))


def fail(app, exception):
    """Fail the build, even without -W, when compile_catalogs() refused anything of it."""
    if exception is None and problems_of(app):
        app.statuscode = 1


def setup(app):
    """Report, once the builder exists, what conf.py's compile_catalogs() refused."""
    app.add_config_value("catalog_sources", "", "env", types=[str])
    app.connect("config-inited", english_reads_none)
    app.connect("builder-inited", report)
    app.connect("doctree-read", note_catalog)
    app.connect("build-finished", fail)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
