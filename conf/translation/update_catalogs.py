"""Merge the English .pot files into the translators' .po catalogs, losing nothing.

Usage:
    python conf/translation/update_catalogs.py update POT_DIR [LANG...]   merge (make update-po)
    python conf/translation/update_catalogs.py prune POT_DIR [LANG...]    drop obsolete (make prune-po)
    python conf/translation/update_catalogs.py require-gettext TARGET     exit 2 if GNU gettext is missing

LANG defaults to every translation in conf/languages.py.

``update`` creates a catalog for each new page and merges every other one with
GNU ``msgmerge --previous``: a changed English sentence turns its entry fuzzy,
keeps the old translation and records the old English as ``#| msgid``
(sphinx-intl merges with Babel, which does not write ``#|``; a catalog
``sphinx-intl update`` rewrote gets them back from git, see
:func:`restore_previous`). Entries whose
English disappeared stay as obsolete ``#~`` entries, and catalogs of removed
pages stay, until ``prune``. It is idempotent: a catalog is rewritten only when
something besides the POT-Creation-Date header changed.

Location comments (``#:``) name the file a translator edits, from the top of
the repository, without line numbers: ``examples/plot_01_dataparallel.py``,
not the generated ``docs/auto_examples/…rst:52``. Line numbers moved with
every edit of the English and made every catalog change in every language.

It needs GNU gettext (``msgmerge``, ``msgcat``, ``msgattrib``) and says so, in
one line, when it is missing.

Exit codes: 0 done, 1 a tool failed, 2 bad usage or GNU gettext missing.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import polib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from languages import select  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
WIDTH = "79"
_CREATION_DATE = re.compile(r'^"POT-Creation-Date: .*\\n"\n', re.MULTILINE)


GETTEXT = ("msgmerge", "msgcat", "msgattrib")


def require_gettext(target):
    """Exit with one line and code 2 if GNU gettext's tools are not on PATH."""
    missing = [tool for tool in GETTEXT if shutil.which(tool) is None]
    if missing:
        print(f"error: {target} needs GNU gettext ({', '.join(missing)} not found): install it"
              " with `sudo apt-get install gettext` (Debian, Ubuntu) or `brew install"
              " gettext` (macOS)", file=sys.stderr)  # fmt: skip
        sys.exit(2)


def edited_file(path):
    """The file a translator edits for a .pot location: examples/*.py for the gallery."""
    match = re.search(r"(?:^|/)docs/auto_examples/(?P<name>[^/]+)\.rst$", path)
    if match:
        return f"examples/{match['name']}.py"
    return path


def located_by_file(pot, target):
    """Write *pot* to *target* with each location made repo-relative and mapped to its source."""
    template = polib.pofile(str(pot))
    for entry in template:
        places = []
        for name, _line in entry.occurrences:
            # normpath, not resolve: .venv may be a link, and the path must not depend on it.
            path = Path(os.path.normpath(os.path.join(os.path.abspath(pot.parent), name)))
            shown = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else name
            places.append((edited_file(shown), ""))
        entry.occurrences = list(dict.fromkeys(places))
    template.save(str(target))


def _same_but_date(old, new):
    """Return True if two catalogs differ at most in POT-Creation-Date."""
    return _CREATION_DATE.sub("", old) == _CREATION_DATE.sub("", new)


def _new_catalog(pot, lang):
    """Return the text of an empty catalog for *lang* made from *pot*."""
    catalog = polib.pofile(str(pot), wrapwidth=int(WIDTH))
    catalog.metadata["Language"] = lang
    catalog.metadata["Language-Team"] = f"{lang} <dp-tutorial translators>"
    catalog.metadata["Plural-Forms"] = "nplurals=1; plural=0;"
    catalog.metadata.pop("Last-Translator", None)
    # The .pot's header is fuzzy; a catalog's is not, or tools count it unfinished.
    catalog.metadata_is_fuzzy = []
    return str(catalog)


def save(catalog, po):
    """Write a polib *catalog* to *po*, wrapped exactly as msgmerge wraps it."""
    catalog.save(str(po))
    subprocess.run(["msgcat", f"--width={WIDTH}", "-o", str(po), str(po)], check=True)


def committed(po):
    """The text of *po* at git's HEAD, or None (not in a repository, not committed)."""
    try:
        rel = po.resolve().relative_to(ROOT).as_posix()
        return subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout  # fmt: skip
    except (ValueError, OSError, subprocess.CalledProcessError):
        return None


# The header field Babel writes, through sphinx-intl update, and msgmerge never does.
BABEL_FORM = re.compile(r'^"Generated-By: Babel', re.MULTILINE)
# Babel reads the old English (#| lines) of fuzzy entries as comments, "# | msgid ...",
# and wraps them, leaving lines of a lone quote.
_PREVIOUS_AS_COMMENT = re.compile(r'^(?:\| (?:msgctxt |msgid |msgid_plural )?".*|")$')


def restore_previous(text, before):
    """Undo what ``sphinx-intl update`` did to the catalog *text*, from its committed *before*.

    sphinx-intl rewrites a catalog with Babel: the old English (``#| msgid``)
    of every fuzzy entry is dropped or turned into ``# |`` comments, both for
    entries that were fuzzy before and for those it just made fuzzy, and the
    header gains Babel's fields. A fuzzy entry without its old English gets
    it back: the committed entry's, or else the English of the committed
    entry it replaced (the one with the same translation whose English is no
    longer in the catalog), or that entry's own old English if it was fuzzy
    too, as msgmerge would keep it. A catalog not in Babel's form is returned
    as it is.
    """
    if not BABEL_FORM.search(text):
        return text
    catalog, old = polib.pofile(text, wrapwidth=0), polib.pofile(before, wrapwidth=0)
    catalog.header = old.header
    catalog.metadata.pop("Generated-By", None)
    current = {(e.msgctxt, e.msgid) for e in catalog}
    for entry in catalog:
        entry.tcomment = "\n".join(line for line in (entry.tcomment or "").splitlines()
                                   if not _PREVIOUS_AS_COMMENT.match(line))  # fmt: skip
        if entry.obsolete or "fuzzy" not in entry.flags or entry.previous_msgid:
            continue
        same = old.find(entry.msgid, msgctxt=entry.msgctxt)
        replaced = [e for e in old if not e.obsolete and e.msgstr == entry.msgstr
                    and (e.msgctxt, e.msgid) not in current]  # fmt: skip
        if same is not None and same.previous_msgid:
            entry.previous_msgid = same.previous_msgid
        elif len(replaced) == 1:  # the English its translation was made for
            entry.previous_msgid = replaced[0].previous_msgid or replaced[0].msgid
    return str(catalog)


def merge(pot, po, lang):
    """Merge *pot* into *po*; return "created", "updated" or "unchanged"."""
    old = po.read_text("utf-8") if po.exists() else None
    before = committed(po) if old is not None else None
    with tempfile.TemporaryDirectory() as tmp:
        src, out, template = Path(tmp, "in.po"), Path(tmp, "out.po"), Path(tmp, "in.pot")
        located_by_file(pot, template)
        source = old if old is not None else _new_catalog(template, lang)
        src.write_text(restore_previous(source, before) if before else source, "utf-8")
        subprocess.run(
            ["msgmerge", "--quiet", "--previous", "--add-location=file", f"--width={WIDTH}",
             "-o", str(out), str(src), str(template)],
            check=True,
        )  # fmt: skip
        new = out.read_text("utf-8")
    if old is not None and _same_but_date(old, new):
        return "unchanged"
    po.parent.mkdir(parents=True, exist_ok=True)
    po.write_text(new, "utf-8")
    return "created" if old is None else "updated"


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
            result = merge(pot, po, lang)
            counts[result] += 1
            if result != "unchanged":
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
            catalog = polib.pofile(str(po), wrapwidth=int(WIDTH))
            obsolete = catalog.obsolete_entries()
            if obsolete:
                subprocess.run(
                    ["msgattrib", "--no-obsolete", f"--width={WIDTH}", "-o", str(po), str(po)],
                    check=True,
                )
                print(f"pruned {len(obsolete)} obsolete from {po.relative_to(ROOT)}")
    return 0


def main(argv=None):
    """Dispatch to update or prune."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["require-gettext"] and len(argv) == 2:
        require_gettext(argv[1])
        return 0
    if len(argv) < 2 or argv[0] not in ("update", "prune"):
        print(__doc__, file=sys.stderr)
        return 2
    command, pot_dir = argv[0], Path(argv[1])
    require_gettext(f"make {command}-po")
    try:
        langs = select(argv[2:], translations_only=True)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        return (update if command == "update" else prune)(pot_dir, langs)
    except subprocess.CalledProcessError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
