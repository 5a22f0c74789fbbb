"""Merge the English .pot files into the translators' .po catalogs, losing nothing.

Usage:
    python conf/catalogs/update.py extract POT_DIR            the English (make gettext)
    python conf/catalogs/update.py update POT_DIR [LANG...]   merge (make update-po)
    python conf/catalogs/update.py prune POT_DIR [LANG...]    drop obsolete (make prune-po)

``extract`` runs Sphinx's gettext builder into POT_DIR, after deleting the
templates there: the builder writes one for every page but never deletes the
template of a removed page, which ``sphinx-intl update`` would turn back into
catalogs.

Both first extract the current English into POT_DIR with Sphinx's gettext
builder (catalogs/progress.py: skipped when no source changed since the
last extraction; ``--no-extract`` uses POT_DIR as it is), showing Sphinx's
warnings and errors only, then print one line per catalog they change and a
summary per language.

LANG defaults to every translation in conf/languages.py.

``update`` creates a catalog for each new page (a new tutorial's gets the
entries every tutorial shares, the download links, translated as the other
tutorials' catalogs translate them; nothing else is guessed) and merges every other one with
Babel's ``Catalog.update``, as sphinx-intl does, writing the one form of
catalogs/po.py: a changed English sentence turns its entry fuzzy,
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
from catalogs.po import (  # noqa: E402
    CatalogError,
    catalog_text,
    is_translated,
    language_catalogs,
    messages,
    read,
    text,
    write,
)
from catalogs.merge import merged  # noqa: E402
from catalogs.progress import ExtractionError, fresh_templates  # noqa: E402

_CREATION_DATE = re.compile(r'^"POT-Creation-Date: .*\\n"\n', re.MULTILINE)


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
    """Extract the current English into *pot_dir* (catalogs/progress.py); False if it failed.

    *quiet*: Sphinx's progress (about 90 lines) is not shown, its warnings and
    errors are. *force*: even when no source changed (``make gettext``).
    """
    start = time.monotonic()
    try:
        ran, said = fresh_templates(pot_dir, quiet=quiet, force=force)
    except ExtractionError as err:
        print(f"{err}\nerror: extracting the English failed (above); no catalog was changed", file=sys.stderr)
        return False
    if said.strip():
        print(said.rstrip(), file=sys.stderr)
    print(
        f"extracted the English into {os.path.relpath(pot_dir)} in {time.monotonic() - start:.0f} s"
        if ran
        else "the English is unchanged since the last extraction"
    )
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
                print(
                    f"created: {po.relative_to(ROOT)}"
                    + (
                        f" ({done} entries every tutorial shares filled in from the"
                        " other tutorials' catalogs)"
                        if done
                        else ""
                    )
                )
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
        for po in language_catalogs(LOCALE, lang).values():
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
