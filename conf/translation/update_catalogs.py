"""Merge the English .pot files into the translators' .po catalogs, losing nothing.

Usage:
    python conf/translation/update_catalogs.py extract POT_DIR            the English (make gettext)
    python conf/translation/update_catalogs.py update POT_DIR [LANG...]   merge (make update-po)
    python conf/translation/update_catalogs.py prune POT_DIR [LANG...]    drop obsolete (make prune-po)

``extract`` runs Sphinx's gettext builder into POT_DIR, after deleting the
templates there: the builder writes one for every page but never deletes the
template of a removed page, which ``sphinx-intl update`` would turn back into
catalogs.

Both first extract the current English into POT_DIR with Sphinx's gettext
builder (translation/progress.py: skipped when no source changed since the
last extraction; ``--no-extract`` uses POT_DIR as it is), showing Sphinx's
warnings and errors only, then print one line per catalog they change and a
summary per language.

LANG defaults to every translation in conf/languages.py.

``update`` creates a catalog for each new page (a new tutorial's gets the
entries every tutorial shares, the download links, translated as the other
tutorials' catalogs translate them; nothing else is guessed) and merges every other one with
Babel's ``Catalog.update``, as sphinx-intl does, writing the one form of
translation/catalogs.py: a changed English sentence turns its entry fuzzy,
keeps the old translation and records the old English as ``#| msgid`` (which
sphinx-intl does not write: a catalog ``sphinx-intl update`` rewrote gets
them back from git, see :func:`restore_previous`). An entry that was fuzzy
keeps its old English. Entries whose English disappeared stay as obsolete
``#~`` entries, and catalogs of removed pages stay, until ``prune``; an
obsolete entry whose English comes back is used again, fuzzy. It is
idempotent: a catalog is rewritten only when something besides the
POT-Creation-Date header changed. It needs no GNU gettext. A fuzzy guess
that Babel takes from another sentence the English still has (another
tutorial's gallery card) is not kept (:func:`drop_cross_page_guesses`).

Location comments (``#:``) name the file a translator edits, from the top of
the repository, without line numbers: ``examples/plot_01_dataparallel.py``,
not the generated ``docs/auto_examples/…rst:52``. Line numbers moved with
every edit of the English and made every catalog change in every language.

Exit codes: 0 done, 1 a catalog cannot be read, 2 bad usage.
"""

import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from languages import select  # noqa: E402
from site_layout import LOCALE, ROOT  # noqa: E402
from translation.catalog_diff import ReviewError, git  # noqa: E402
from translation.catalogs import (  # noqa: E402
    Catalog, CatalogError, catalog_text, is_translated, messages, parse, read, text, write,
)  # fmt: skip

_CREATION_DATE = re.compile(r'^"POT-Creation-Date: .*\\n"\n', re.MULTILINE)


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
        replaced = [m for m in messages(old) if m.string == message.string
                    and key(m) not in current]  # fmt: skip
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


def shared_entries(lang, new_name, locale_dir=LOCALE):
    """The translations every existing tutorial catalog of *lang* shares, for tutorial *new_name*.

    Sphinx-Gallery writes the same entries into every tutorial's page (the
    download links, "Go to the end"), differing only by the tutorial's name.
    An entry counts as shared when every other tutorial's catalog (at least
    two) has it, with its name in the place of the name, translated the same
    way. Returns {msgid for *new_name*: translation}.
    """
    folder = Path(locale_dir) / lang / "LC_MESSAGES" / "auto_examples"
    others = [p for p in sorted(folder.glob("plot_*.po")) if p.stem != new_name]
    if len(others) < 2:
        return {}
    shared = None
    for po in others:
        found = {m.id.replace(po.stem, "\0"): m.string.replace(po.stem, "\0")
                 for m in messages(read(po, lang)) if is_translated(m) and po.stem in m.id}  # fmt: skip
        shared = found if shared is None else {k: v for k, v in shared.items()
                                               if found.get(k) == v}  # fmt: skip
    return {k.replace("\0", new_name): v.replace("\0", new_name) for k, v in shared.items()}


# An entry that is one cross-reference without a title of its own: the link shows
# the target page's title, translated on that page, so it has no words to
# translate (the gallery's cards: ":doc:`/auto_examples/plot_01_dataparallel`").
ONLY_A_REFERENCE = re.compile(r":(?:doc|ref):`[^`<>]+`")


def fill_references(catalog):
    """Give each empty entry that is only a reference its English; return how many."""
    filled = 0
    for message in messages(catalog):
        if not message.string and ONLY_A_REFERENCE.fullmatch(message.id):
            message.string, filled = message.id, filled + 1
    return filled


def new_catalog(english, po, lang):
    """The first catalog of a page: its template, a tutorial's shared entries translated.

    Nothing is guessed from another page: every other entry starts empty.
    """
    english.locale, english.fuzzy = lang, False  # a .pot header is fuzzy; a catalog's is not
    fill_references(english)
    english.language_team = f"{lang} <dp-tutorial translators>"
    if po.parent.name == "auto_examples" and po.stem.startswith("plot_"):
        shared = shared_entries(lang, po.stem)
        for message in messages(english):
            if message.id in shared:
                message.string = shared[message.id]
    return english


def merged(pot, po, lang, quiet=False):
    """The catalog *po* (new if missing) with the English of *pot* (a .pot, or a Catalog) merged in.

    *quiet*: only to count (translation/progress.py): git is not asked
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


def merge(pot, po, lang):
    """Merge *pot* into *po*; return "created", "updated" or "unchanged"."""
    old = catalog_text(po) if po.exists() else None
    new = text(merged(pot, po, lang), lang)
    if old is not None and _CREATION_DATE.sub("", old) == _CREATION_DATE.sub("", new):
        return "unchanged"
    po.parent.mkdir(parents=True, exist_ok=True)
    po.write_text(new, "utf-8")
    return "created" if old is None else "updated"


def extract(pot_dir, quiet=True, force=False):
    """Extract the current English into *pot_dir* (translation/progress.py); False if it failed.

    *quiet*: Sphinx's progress (about 90 lines) is not shown, its warnings and
    errors are. *force*: even when no source changed (``make gettext``).
    """
    from translation.progress import ExtractionError, fresh_templates

    start = time.monotonic()
    try:
        ran, said = fresh_templates(pot_dir, quiet=quiet, force=force)
    except ExtractionError as err:
        print(f"{err}\nerror: extracting the English failed (above); no catalog was changed",
              file=sys.stderr)  # fmt: skip
        return False
    if said.strip():
        print(said.rstrip(), file=sys.stderr)
    print(f"extracted the English into {os.path.relpath(pot_dir)} in {time.monotonic() - start:.0f} s"
          if ran else "the English is unchanged since the last extraction")  # fmt: skip
    return True


def update(pot_dir, langs):
    """Merge every .pot under *pot_dir* into each language's catalogs."""
    pots = sorted(pot_dir.rglob("*.pot"))
    if not pots:
        print(f"error: no .pot files under {pot_dir}; run `make gettext`", file=sys.stderr)
        return 1
    for lang in langs:
        counts = {"created": 0, "updated": 0, "unchanged": 0}
        for pot in pots:
            po = LOCALE / lang / "LC_MESSAGES" / pot.relative_to(pot_dir).with_suffix(".po")
            try:
                result = merge(pot, po, lang)
            except CatalogError as err:
                print(f"{po.relative_to(ROOT)}:{err.line}: error: {err}", file=sys.stderr)
                return 1
            counts[result] += 1
            if result == "created":
                done = sum(1 for m in messages(read(po, lang)) if is_translated(m))
                print(f"created: {po.relative_to(ROOT)}"
                      + (f" ({done} entries every tutorial shares filled in from the"
                         " other tutorials' catalogs)" if done else ""))  # fmt: skip
            elif result != "unchanged":
                print(f"{result}: {po.relative_to(ROOT)}")
        print(f"{lang}: " + ", ".join(f"{n} {what}" for what, n in counts.items()))
    return 0


def prune(pot_dir, langs):
    """Remove obsolete entries, and catalogs whose page no longer exists."""
    if not any(pot_dir.rglob("*.pot")):
        # Without templates every catalog would look like a removed page.
        print(f"error: no .pot files under {pot_dir}; run `make gettext`", file=sys.stderr)
        return 1
    for lang in langs:
        for po in sorted((LOCALE / lang / "LC_MESSAGES").rglob("*.po")):
            rel = po.relative_to(LOCALE / lang / "LC_MESSAGES").with_suffix(".pot")
            if not (pot_dir / rel).exists():
                po.unlink()
                print(f"removed: {po.relative_to(ROOT)} (its page is gone)")
                continue
            try:
                catalog = read(po, lang)
            except CatalogError as err:
                print(f"{po.relative_to(ROOT)}:{err.line}: error: {err}", file=sys.stderr)
                return 1
            if catalog.obsolete:
                count = len(catalog.obsolete)
                catalog.obsolete.clear()
                write(catalog, po, lang)
                print(f"pruned {count} obsolete from {po.relative_to(ROOT)}")
    return 0


def main(argv=None):
    """Dispatch to extract, update or prune."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0] not in ("extract", "update", "prune"):
        print(__doc__, file=sys.stderr)
        return 2
    command, pot_dir = argv[0], Path(argv[1])
    if command == "extract":
        return 0 if extract(pot_dir, quiet=False, force=True) else 1
    try:
        langs = select([a for a in argv[2:] if a != "--no-extract"], translations_only=True)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if "--no-extract" not in argv and not extract(pot_dir):
        return 1
    return (update if command == "update" else prune)(pot_dir, langs)


if __name__ == "__main__":
    sys.exit(main())
