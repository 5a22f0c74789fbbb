"""The English into the catalogs: extract it (make gettext), merge it (make update-po), count it.

:func:`merged` is Babel's ``Catalog.update``, as sphinx-intl does, plus: each
location names the file a translator edits, without a line number; a fuzzy
entry keeps its old English (``#|``), and an obsolete entry whose English came
back is used again, fuzzy; no guess is taken from a sentence the English still
has (:func:`drop_cross_page_guesses`); a new page's catalog gets only what needs
no translator (a tutorial's shared download links, bare references).

Counted against the current English: ``make stat``, the status page and each
page's notice count a catalog as :func:`merged` would leave it with a fresh
extraction (:func:`page_counts`): an entry translated from an English edited
since the last ``make update-po`` is outdated, a new page untranslated.
:func:`fresh_templates` runs Sphinx's gettext builder only when a source changed.
"""

import hashlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from checkout_lock import held
from site_layout import BUILD, CONF, DOCS, LOCALE, POT_DIR, ROOT, is_source
from catalogs.po import (
    Catalog,
    CatalogError,
    catalog_text,
    is_translated,
    language_catalogs,
    messages,
    read,
    text,
    write,
)

STAMP = POT_DIR / ".sources"
# The gallery's index page is made from this file (and the examples' cards).
GALLERY_HEADER = "examples/GALLERY_HEADER.rst"
# An entry that is one cross-reference without a title of its own: the link shows
# the target page's title, translated on that page ("Gallery cards": :doc:`/auto_examples/x`).
ONLY_A_REFERENCE = re.compile(r":(?:doc|ref):`[^`<>]+`")
_CREATION_DATE = re.compile(r'^"POT-Creation-Date: .*\\n"\n', re.MULTILINE)


# -- Extracting the English ----------------------------------------------------------


class ExtractionError(RuntimeError):
    """The gettext build failed; the message holds what Sphinx said."""


def sources_digest(root=ROOT):
    """A digest of what the English is extracted from: names, sizes, mtimes of the sources."""
    digest = hashlib.sha256()
    requirements = root / "requirements.txt"  # the theme's templates hold strings too
    if requirements.is_file():
        digest.update(str(requirements.stat().st_mtime_ns).encode())
    for folder in (root / "docs", root / "examples", root / "conf"):
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.is_file() and is_source(rel):
                size_time = path.stat()
                digest.update(f"{rel}\0{size_time.st_size}\0{size_time.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def fresh_templates(pot_dir=POT_DIR, quiet=True, options=(), force=False):
    """Make *pot_dir* hold the current English, running the gettext builder (under the checkout's
    lock: it may execute a changed example) if a source changed or *force*; return (ran, what
    Sphinx printed), or raise ExtractionError. *options*: more for sphinx-build."""
    stamp = Path(pot_dir) / STAMP.name

    def current():
        return stamp.is_file() and stamp.read_text() == sources_digest() and any(Path(pot_dir).rglob("*.pot"))

    if current() and not force:
        return False, ""
    with held(ROOT, os.environ.get("DP_COMMAND") or "the extraction of the English"):
        if current() and not force:  # another process extracted it while this one waited
            return False, ""
        digest = sources_digest()
        # The builder never deletes a template: a removed page's would keep its catalogs.
        stamp.unlink(missing_ok=True)
        for old in Path(pot_dir).rglob("*.pot"):
            old.unlink()
        sphinx_options = os.environ.get("SPHINXOPTS", "-W --keep-going").split()
        doctrees = ["-d", str(BUILD / "doctrees" / "gettext")]
        cmd = [sys.executable, "-m", "sphinx", "-b", "gettext", "-c", str(CONF), *sphinx_options, *doctrees]
        cmd += [*options, *(["-q"] if quiet else []), str(DOCS), str(pot_dir)]
        result = subprocess.run(cmd, cwd=ROOT, capture_output=quiet, text=True)
        said = (result.stdout or "") + (result.stderr or "")
        if result.returncode != 0:
            raise ExtractionError(said.strip() or "the gettext build failed")
        stamp.write_text(digest)
    return True, said


_CURRENT = {}


def current_pot_dir(srcdir, pot_dir=POT_DIR):
    """*pot_dir* if it holds the current English of the Sphinx sources *srcdir* (this
    project's docs/ only), else None. Checked once per process: a build's sources stay."""
    if Path(srcdir).resolve() != DOCS.resolve():
        return None
    if pot_dir not in _CURRENT:
        stamp = Path(pot_dir) / STAMP.name
        _CURRENT[pot_dir] = stamp.is_file() and stamp.read_text() == sources_digest()
    return pot_dir if _CURRENT[pot_dir] else None


def template_of(domain, pot_dir=POT_DIR):
    """The .pot of *domain* (``index``, ``auto_examples/plot_01_x``) under *pot_dir*, or None."""
    pot = Path(pot_dir) / f"{domain}.pot" if pot_dir else None
    return pot if pot and pot.is_file() else None


# -- Merging ---------------------------------------------------------------------------


def edited_file(path):
    """The file a translator edits for a .pot location: examples/*.py for the gallery."""
    match = re.search(r"(?:^|/)docs/auto_examples/(?P<name>[^/]+)\.rst$", path)
    if match:
        return GALLERY_HEADER if match["name"] == "index" else f"examples/{match['name']}.py"
    return path


def template(pot):
    """The .pot at *pot*, each location made repo-relative and mapped to its source."""
    catalog = read(pot)
    for message in messages(catalog):
        places = []
        for name, _line in message.locations:
            # normpath, not resolve: .venv may be a link, and the path must not depend on it.
            path = Path(os.path.normpath(os.path.join(os.path.abspath(pot.parent), name)))
            places.append(
                (edited_file(path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else name), None)
            )
        message.locations = list(dict.fromkeys(places))
    return catalog


def key(message):
    """An entry's identity in its catalog: English and context."""
    return message.id, message.context


def drop_cross_page_guesses(catalog, fuzzy_before, english):
    """Empty the fuzzy guesses Babel made from a sentence the English still has (for a new gallery
    card, another tutorial's, which would link the card to the wrong page once the flag goes)."""
    for message in messages(catalog):
        guessed = message.fuzzy and key(message) not in fuzzy_before and message.previous_id
        if guessed and english.get(message.previous_id[0]) is not None:
            message.string, message.previous_id = "", []
            message.flags.discard("fuzzy")


def shared_entries(lang, domain, locale_dir=LOCALE):
    """{msgid for the tutorial *domain*: translation} of what every other tutorial catalog of
    *lang* (at least two) translates alike, with its own name in the place of the name:
    Sphinx-Gallery's download links and "Go to the end". {} for a page that is no tutorial."""
    if not domain.startswith("auto_examples/plot_"):
        return {}
    new_name = domain.split("/", 1)[1]
    others = [
        po
        for name, po in language_catalogs(locale_dir, lang).items()
        if re.fullmatch(r"auto_examples/plot_[^/]*", name) and po.stem != new_name
    ]
    if len(others) < 2:
        return {}
    shared = None
    for po in others:
        try:
            catalog = read(po, lang)
        except CatalogError:
            return {}  # one that cannot be read shares nothing (make check says why)
        found = {
            m.id.replace(po.stem, "\0"): m.string.replace(po.stem, "\0")
            for m in messages(catalog)
            if is_translated(m) and po.stem in m.id
        }
        shared = found if shared is None else {k: v for k, v in shared.items() if found.get(k) == v}
    return {k.replace("\0", new_name): v.replace("\0", new_name) for k, v in shared.items()}


def filled_by_update_po(message, shared):
    """Whether *message*'s translation is one ``make update-po`` writes itself, no translator's
    work: an entry every tutorial shares (*shared*: :func:`shared_entries`) or a bare reference."""
    if shared.get(message.id) == message.string:
        return True
    return message.string == message.id and ONLY_A_REFERENCE.fullmatch(message.id) is not None


def merged(pot, po, lang):
    """The catalog *po* (new if missing) with the English of *pot* (a .pot, or a Catalog) merged in."""
    english = pot if isinstance(pot, Catalog) else template(pot)
    if not po.exists():  # a new page: only what needs no translator is filled in
        catalog, shared = english, shared_entries(lang, f"{po.parent.name}/{po.stem}")
        catalog.locale, catalog.fuzzy = lang, False  # a .pot header is fuzzy; a catalog's is not
        catalog.language_team = f"{lang} <dp-tutorial translators>"
        for message in messages(catalog):
            message.string = shared.get(message.id, message.string)
    else:
        catalog = read(po, lang)
        for old_key, message in list(catalog.obsolete.items()):
            if english.get(*key(message)) is not None:  # its English came back: use it again
                del catalog.obsolete[old_key]
                message.flags.add("fuzzy")
                catalog[message.id] = message
        previous = {key(m): m.previous_id for m in messages(catalog) if m.fuzzy and m.previous_id}
        fuzzy_before = {key(m) for m in messages(catalog) if m.fuzzy}
        catalog.update(english)
        drop_cross_page_guesses(catalog, fuzzy_before, english)
        for message in messages(catalog):
            if message.fuzzy and not message.previous_id:
                message.previous_id = previous.get(key(message), [])
    for message in messages(catalog):
        if not message.string and ONLY_A_REFERENCE.fullmatch(message.id):
            message.string = message.id
    return catalog


def update_catalog(pot, po, lang):
    """Merge *pot* into *po* and write it unless only the creation date changed;
    return "created", "updated" or "unchanged"."""
    old = catalog_text(po) if po.exists() else None
    new = text(merged(pot, po, lang), lang)
    if old is not None and _CREATION_DATE.sub("", old) == _CREATION_DATE.sub("", new):
        return "unchanged"
    po.parent.mkdir(parents=True, exist_ok=True)
    po.write_text(new, "utf-8")
    return "created" if old is None else "updated"


def prune_catalog(po, pot):
    """Delete catalog *po* if its template *pot* is gone (return None), else its obsolete
    entries (return how many)."""
    if not pot.exists():
        po.unlink()
        return None
    catalog = read(po)
    count = len(catalog.obsolete)
    if count:
        catalog.obsolete.clear()
        write(catalog, po)
    return count


# -- Counting --------------------------------------------------------------------------


@dataclass
class Counts:
    """How many entries of a page are translated, outdated and untranslated."""

    translated: int = 0
    outdated: int = 0
    untranslated: int = 0
    states: dict = field(default_factory=dict, repr=False, compare=False)  # each msgid's, for badges

    @property
    def total(self):
        return self.translated + self.outdated + self.untranslated

    @property
    def percent(self):
        """Percentage translated, rounded down so that 100 means done."""
        return 100 * self.translated // self.total if self.total else 100

    def add(self, other):
        """Add *other*'s counts to these."""
        self.translated += other.translated
        self.outdated += other.outdated
        self.untranslated += other.untranslated


def page_counts(po, pot, lang):
    """Counts of the catalog *po* (may be missing) merged with *pot* (a .pot path, a Catalog of
    the English, or None: *po* as it stands). An unreadable catalog counts as none."""
    try:
        if pot is not None:
            catalog = merged(pot, Path(po), lang)
        elif Path(po).is_file():
            catalog = read(po, lang)
        else:
            return Counts()
    except CatalogError:
        if pot is None:
            return Counts()
        catalog = pot if isinstance(pot, Catalog) else template(pot)
    counts = Counts()
    for message in messages(catalog):
        state = "translated" if is_translated(message) else "outdated" if message.string else "untranslated"
        setattr(counts, state, getattr(counts, state) + 1)
        counts.states[message.id] = state
    return counts


def language_counts(lang, locale_dir=LOCALE, pot_dir=POT_DIR):
    """{domain: Counts} of every page of *lang*: each template's, with or without a catalog;
    without templates, the catalogs as they stand."""
    catalogs = language_catalogs(locale_dir, lang)
    pots = {}
    if pot_dir and Path(pot_dir).is_dir():
        pots = {
            p.relative_to(pot_dir).with_suffix("").as_posix(): p for p in sorted(Path(pot_dir).rglob("*.pot"))
        }
    if not pots:
        return {domain: page_counts(path, None, lang) for domain, path in catalogs.items()}
    base = Path(locale_dir) / lang / "LC_MESSAGES"
    return {
        domain: page_counts(catalogs.get(domain, base / f"{domain}.po"), pot, lang)
        for domain, pot in sorted(pots.items())
    }
