"""The one merge of the English into a catalog: make update-po writes it, make stat counts it.

:func:`merged` returns what a catalog becomes when the current English (a
.pot) is merged into it, with Babel's ``Catalog.update`` as sphinx-intl does,
and what ``update_catalogs.py`` adds: locations that name the file a
translator edits, the old English of a fuzzy entry kept (and given back
after ``sphinx-intl update``), no fuzzy guess taken from another page, and a
new page's catalog with only the entries nothing needs translating in (a
new tutorial's shared download links, bare references) filled in.
"""

import os
import re
from pathlib import Path

from site_layout import LOCALE, ROOT
from catalogs.po import (
    Catalog,
    CatalogError,
    catalog_text,
    is_translated,
    language_catalogs,
    messages,
    parse,
    read,
)
from catalogs.repository import ReviewError, git


# The gallery's index page is made from this file (and the examples' cards).
GALLERY_HEADER = "examples/GALLERY_HEADER.rst"


def edited_file(path):
    """The file a translator edits for a .pot location: examples/*.py for the gallery.

    The gallery's own page, ``docs/auto_examples/index.rst``, is made from
    examples/GALLERY_HEADER.rst: there is no examples/index.py.
    """
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
            shown = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else name
            places.append((edited_file(shown), None))
        message.locations = list(dict.fromkeys(places))
    return catalog


def key(message):
    """An entry's identity in its catalog: English and context."""
    return message.id, message.context


def committed(po):
    """The text of *po* at git's HEAD, or None (not in a repository, not committed)."""
    try:
        return git("show", f"HEAD:{po.resolve().relative_to(ROOT).as_posix()}")
    except (ValueError, ReviewError):
        return None


# sphinx-intl update keeps the template's locations, relative to it; ours never are.
BABEL_FORM = re.compile(r"^#: \.\./\.\./", re.MULTILINE)


def restore_previous(catalog, before):
    """Undo what ``sphinx-intl update`` did to *catalog*, from its committed text *before*.

    sphinx-intl rewrites a catalog with Babel and no ``#|`` lines: the old
    English of every fuzzy entry is dropped or turned into translator
    comments (``# | msgid``), wrapped, both for entries that were fuzzy
    before and for those it just made fuzzy. A fuzzy entry gets its old
    English, and its comments, back: the committed entry's, or else, as a
    merge here records it, the English of the committed entry it replaced
    (the one with the same translation whose English is no longer in the
    catalog). What the wrapped comments still hold of it is not trusted.
    """
    old = parse(before)
    current = {key(m) for m in messages(catalog)}
    for message in messages(catalog):
        same = old.get(message.id, message.context)
        replaced = [m for m in messages(old) if m.string == message.string and key(m) not in current]
        origin = same if same is not None else replaced[0] if len(replaced) == 1 else None
        if origin is None:
            continue
        message.user_comments = list(origin.user_comments)  # sphinx-intl adds none of its own
        if message.fuzzy:
            message.previous_id = list(origin.previous_id) if origin is same else [origin.id]
    return catalog


def drop_cross_page_guesses(catalog, fuzzy_before, english):
    """Empty the fuzzy guesses Babel made from another sentence that the English still has.

    Babel's merge pre-fills a new sentence with the translation of the most
    similar old one, marked fuzzy, even when that old sentence is still
    there, translated in its own entry. Such a guess is another sentence's
    translation: for a new gallery card or download link, another tutorial's,
    and a translator who removes the fuzzy flag links the card to the wrong
    page. Only an edited sentence, whose old English is gone, keeps its old
    translation, fuzzy, with the old English as ``#|``; a guess from a
    sentence still present is left untranslated (nothing is lost: that
    sentence keeps its translation). Returns how many were dropped.
    """
    dropped = 0
    for message in messages(catalog):
        if not message.fuzzy or key(message) in fuzzy_before or not message.previous_id:
            continue
        if english.get(message.previous_id[0]) is not None:
            message.string, message.previous_id = "", []
            message.flags.discard("fuzzy")
            dropped += 1
    return dropped


def shared_entries(lang, domain, locale_dir=LOCALE):
    """The translations every existing tutorial catalog of *lang* shares, for the page *domain*.

    Sphinx-Gallery writes the same entries into every tutorial's page (the
    download links, "Go to the end"), differing only by the tutorial's name.
    An entry counts as shared when every other tutorial's catalog (at least
    two) has it, with its name in the place of the name, translated the same
    way. Returns {msgid for *domain*: translation}; {} for a page that is no
    tutorial (``auto_examples/plot_*``).
    """
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


# An entry that is one cross-reference without a title of its own: the link shows
# the target page's title, translated on that page, so it has no words to
# translate (the gallery's cards: ":doc:`/auto_examples/plot_01_dataparallel`").
ONLY_A_REFERENCE = re.compile(r":(?:doc|ref):`[^`<>]+`")


def fill_references(catalog):
    """Give each empty entry that is only a reference its English."""
    for message in messages(catalog):
        if not message.string and ONLY_A_REFERENCE.fullmatch(message.id):
            message.string = message.id


def filled_by_update_po(message, shared):
    """Whether *message*'s translation is one ``make update-po`` writes itself, no
    translator's work: an entry every tutorial shares (*shared*, from
    :func:`shared_entries`) or a reference copied as it is (:func:`fill_references`)."""
    if shared.get(message.id) == message.string:
        return True
    return message.string == message.id and ONLY_A_REFERENCE.fullmatch(message.id) is not None


def new_catalog(english, po, lang):
    """The first catalog of a page: its template, a tutorial's shared entries translated.

    Nothing is guessed from another page: every other entry starts empty.
    """
    english.locale, english.fuzzy = lang, False  # a .pot header is fuzzy; a catalog's is not
    fill_references(english)
    english.language_team = f"{lang} <dp-tutorial translators>"
    shared = shared_entries(lang, f"{po.parent.name}/{po.stem}")
    for message in messages(english):
        if message.id in shared:
            message.string = shared[message.id]
    return english


def merged(pot, po, lang, quiet=False):
    """The catalog *po* (new if missing) with the English of *pot* (a .pot, or a Catalog) merged in.

    *quiet*: only to count (catalogs/progress.py): git is not asked
    about a catalog sphinx-intl rewrote.
    """
    english = pot if isinstance(pot, Catalog) else template(pot)
    if not po.exists():
        return new_catalog(english, po, lang)
    catalog = read(po, lang)
    before = None if quiet else committed(po)
    if before and BABEL_FORM.search(catalog_text(po)):
        restore_previous(catalog, before)
    for old_key, message in list(catalog.obsolete.items()):
        if english.get(*key(message)) is not None:  # its English came back: use it again
            del catalog.obsolete[old_key]
            message.flags.add("fuzzy")
            catalog[message.id] = message
    previous = {key(m): m.previous_id for m in messages(catalog) if m.fuzzy and m.previous_id}
    fuzzy_before = {key(m) for m in messages(catalog) if m.fuzzy}
    catalog.update(english)
    drop_cross_page_guesses(catalog, fuzzy_before, english)
    fill_references(catalog)
    for message in messages(catalog):
        if message.fuzzy and not message.previous_id:
            message.previous_id = previous.get(key(message), [])
    return catalog
