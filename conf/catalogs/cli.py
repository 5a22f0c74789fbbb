"""The catalog commands of the Makefile: python -m catalogs.cli COMMAND [LANG...] (conf/ on PYTHONPATH).

LANG defaults to every translation in conf/languages.py. Exit codes: 0 done,
1 a catalog cannot be read or the English not extracted (or, with --check,
something to change), 2 bad usage.
"""

import argparse
import os
import sys
import time
from pathlib import Path

from languages import select
from site_layout import LOCALE, POT_DIR
from catalogs import merge
from catalogs.diff import word_diff
from catalogs.po import (
    CatalogError,
    canonical_difference,
    catalog_languages,
    catalog_text,
    is_translated,
    language_catalogs,
    messages,
    msgstr_line,
    naming,
    read,
    reformat,
    shown,
    unreadable,
)
from catalogs.seed_zh_tw import seed


def extract(args, force=False):
    """Extract the English into _build/gettext/ (make gettext), showing Sphinx's warnings only."""
    start = time.monotonic()
    try:
        ran, said = merge.fresh_templates(args.pot_dir, quiet=not force, force=force)
    except merge.ExtractionError as err:
        print(f"{err}\nerror: extracting the English failed (above); no catalog was changed", file=sys.stderr)
        return 1
    if said.strip():
        print(said.rstrip(), file=sys.stderr)
    if ran:
        print(
            f"extracted the English into {os.path.relpath(args.pot_dir)} in {time.monotonic() - start:.0f} s"
        )
    else:
        print("the English is unchanged since the last extraction")
    return 0


def gettext(args):
    """Extract the English afresh (a removed page's template goes)."""
    return extract(args, force=True)


def update(args):
    """Merge the current English into the catalogs (make update-po): a changed sentence turns
    fuzzy with its old English (#|), a removed one obsolete (#~) until prune."""
    if extract(args):
        return 1
    for lang in args.langs:
        counts = dict.fromkeys(("created", "updated", "unchanged"), 0)
        for pot in sorted(args.pot_dir.rglob("*.pot")):
            po = args.locale_dir / lang / "LC_MESSAGES" / pot.relative_to(args.pot_dir).with_suffix(".po")
            try:
                result = merge.update_catalog(pot, po, lang)
            except CatalogError as err:
                print(err.located(), file=sys.stderr)
                return 1
            counts[result] += 1
            if result == "created":
                done = sum(is_translated(m) for m in messages(read(po, lang)))
                shared = (
                    f" ({done} entries every tutorial shares filled in from the other tutorials' catalogs)"
                )
                print(f"created: {shown(po)}" + (shared if done else ""))
            elif result == "updated":
                print(f"updated: {shown(po)}")
        print(f"{lang}: " + ", ".join(f"{n} {what}" for what, n in counts.items()))
    return 0


def prune(args):
    """Delete obsolete (#~) entries, and the catalogs of removed pages (make prune-po)."""
    if extract(args):
        return 1
    if not any(args.pot_dir.rglob("*.pot")):  # else every catalog would look like a removed page
        print(f"error: no .pot files under {args.pot_dir}; run make gettext", file=sys.stderr)
        return 1
    for lang in args.langs:
        for domain, po in language_catalogs(args.locale_dir, lang).items():
            try:
                pruned = merge.prune_catalog(po, args.pot_dir / f"{domain}.pot")
            except CatalogError as err:
                print(err.located(), file=sys.stderr)
                return 1
            if pruned is None:
                print(f"removed: {shown(po)} (its page is gone)")
            elif pruned:
                print(f"pruned {pruned} obsolete from {shown(po)}")
    return 0


def format_po(args):
    """Rewrite the catalogs in the canonical form (make format-po); --check lists them instead."""
    changed = failed = 0
    for lang in args.langs:
        for path in language_catalogs(args.locale_dir, lang).values():
            try:
                with naming(path):
                    difference = canonical_difference(catalog_text(path), lang)
                    if difference and not args.check:
                        reformat(path)
            except CatalogError as err:
                print(f"{err.located()}; fix it, then run make format-po again", file=sys.stderr)
                failed += 1
                continue
            changed += difference is not None
            if difference and args.check:
                print(f"{shown(path)}:{difference[0]}: would change ({difference[1]})")
            elif difference:
                print(f"formatted: {shown(path)}")
    done = "to format" if args.check else "formatted"
    print(f"{changed} catalog(s) {done}, {failed} unreadable ({', '.join(args.langs)})", file=sys.stderr)
    return 1 if failed or args.check and changed else 0


def stat(args):
    """Count translated, outdated and untranslated entries per page, against the current English."""
    # Another project's locale folder is counted as it stands: its English is not here.
    pot_dir = args.pot_dir if args.locale_dir.resolve() == LOCALE else None
    if pot_dir and extract(args) or not all_readable(args.langs, args.locale_dir, "counted"):
        return 1
    for lang in args.langs:
        pages = merge.language_counts(lang, args.locale_dir, pot_dir)
        width = max(len(name) for name in ["page", *pages])  # long page names stay aligned
        row = f"  {{:<{width}}} {{:>10}} {{:>8}} {{:>12}} {{:>5}}"
        print(f"{lang}\n" + row.format("page", "translated", "outdated", "untranslated", "done"))
        total = merge.Counts()
        for name, counts in pages.items():
            total.add(counts)
            print(
                row.format(
                    name, counts.translated, counts.outdated, counts.untranslated, f"{counts.percent}%"
                )
            )
        print(
            row.format("total", total.translated, total.outdated, total.untranslated, f"{total.percent}%")
            + "\n"
        )
    return 0


def review(args):
    """List each fuzzy and untranslated entry at its msgstr, with a word diff of its old and new English."""
    style = "color" if sys.stdout.isatty() else "text"
    if not all_readable(args.langs, args.locale_dir, "listed"):
        return 1
    for lang in args.langs:
        todo = {"fuzzy": 0, "untranslated": 0}
        for path in language_catalogs(args.locale_dir, lang).values():
            for message in messages(read(path)):
                if is_translated(message):
                    continue
                english, where = " ".join(message.id.split()), f"{shown(path)}:{msgstr_line(message)}"
                if message.fuzzy:
                    todo["fuzzy"] += 1
                    old = message.previous_id[0] if message.previous_id else None
                    change = (
                        word_diff(" ".join(old.split()), english, style, 12)
                        if old
                        else "(the old English was not recorded)"
                    )
                    print(f"{where}: fuzzy (the English changed)\n  change:      {change}")
                    print(f"  new English: {english}\n  translation: {' '.join(message.string.split())}\n")
                else:
                    todo["untranslated"] += 1
                    print(f"{where}: untranslated\n  English: {english}\n")
        print(f"{lang}: {todo['fuzzy']} fuzzy, {todo['untranslated']} untranslated")
    return 0


def seed_zh_tw(args):
    """Fill empty zh_TW entries from zh_CN through OpenCC, marked fuzzy; --check writes nothing."""
    total = 0
    if not all_readable(args.langs, args.locale_dir, "seeded"):
        return 1
    for tw_path, filled in seed(args.locale_dir, args.check):
        if filled is None:
            print(f"skipped: {shown(tw_path)} does not exist; run make update-po")
        for message in filled or ():
            print(f"{shown(tw_path)}:{message.lineno}: {message.string!r}")
        total += len(filled or ())
    print(f"zh_TW: {'would fill' if args.check else 'filled'} {total} entries from zh_CN (marked fuzzy)")
    return 1 if args.check and total else 0


def all_readable(langs, locale_dir, done):
    """True if every catalog of *langs* can be read; else say, at its line, why each cannot,
    and that nothing was *done*."""
    errors = unreadable(locale_dir, langs)
    for err in errors:
        print(err.located(), file=sys.stderr)
    if errors:
        print(f"error: nothing was {done}: fix the catalog(s) above, then run this again", file=sys.stderr)
    return not errors


COMMANDS = {
    "gettext": gettext,
    "update": update,
    "prune": prune,
    "format": format_po,
    "stat": stat,
    "review": review,
    "seed-zh_TW": seed_zh_tw,
}


def main(argv=None):
    """Run one command; return its exit code."""
    parser = argparse.ArgumentParser(prog="python -m catalogs.cli", description=__doc__.split("\n\n")[1])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, command in COMMANDS.items():
        sub = commands.add_parser(name, help=command.__doc__.split("\n")[0], description=command.__doc__)
        sub.add_argument("langs", nargs="*", metavar="LANG")
        sub.add_argument("--locale-dir", type=Path, default=LOCALE)
        sub.add_argument("--pot-dir", type=Path, default=POT_DIR, help="where the English is extracted")
        if name in ("format", "seed-zh_TW"):
            sub.add_argument("--check", action="store_true", help="change nothing; list what would change")
    args = parser.parse_args(argv)
    try:
        if args.command in ("gettext", "update", "prune"):  # update-po makes a new language's catalogs
            args.langs = select(args.langs, translations_only=True)
        else:
            seeding = ["zh_CN", "zh_TW"] if args.command == "seed-zh_TW" else args.langs
            args.langs = catalog_languages(seeding, args.locale_dir)
    except ValueError as err:
        parser.error(str(err))
    try:
        return COMMANDS[args.command](args)
    except CatalogError as err:  # one the command did not expect to read: still named, no traceback
        print(err.located(), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
