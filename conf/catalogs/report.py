"""Report on the catalogs: counts per page (make stat), entries left to do (make review).

Usage:
    python conf/catalogs/report.py stat [LANG...]    translated, outdated, untranslated per page,
                                                    against the current English
    python conf/catalogs/report.py review [LANG...]  each fuzzy and untranslated entry, at
                                                    its msgstr line, with a word diff of the
                                                    old and new English

LANG defaults to every translation in conf/languages.py.

Option: --locale-dir DIR (default: locale/).

Exit codes: 0 reported, 2 bad usage.
"""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from languages import select  # noqa: E402
from site_layout import LOCALE  # noqa: E402
from catalogs.diff import changed_parts  # noqa: E402
from catalogs.po import (  # noqa: E402
    catalog_text,
    is_translated,
    language_catalogs,
    messages,
    msgstr_line,
    read,
)
from catalogs.progress import (
    POT_DIR,
    Counts,
    ExtractionError,
    fresh_templates,
    language_counts,
)  # noqa: E402


def stat(locale_dir, langs, pot_dir=None):
    """Print translated / outdated / untranslated counts per page and per language.

    Counted against the current English (catalogs/progress.py): with
    *pot_dir*, the English is extracted there first and each catalog counted
    as ``make update-po`` would leave it; without, the catalogs as they stand.
    """
    if pot_dir is not None:
        try:
            fresh_templates(pot_dir)
        except ExtractionError as err:
            print(f"{err}\nerror: extracting the English failed (above)", file=sys.stderr)
            return 1
    found = {
        lang: language_counts(lang, locale_dir, pot_dir or locale_dir / ".no-templates") for lang in langs
    }
    names = [name for pages in found.values() for name in pages]
    width = max([len("page"), *map(len, names)])  # long page names stay aligned
    row = "  {:<%d} {:>10} {:>8} {:>12} {:>5}" % width
    for lang, pages in found.items():
        print(f"{lang}")
        print(row.format("page", "translated", "outdated", "untranslated", "done"))
        total = Counts()
        for name, counts in pages.items():
            total.add(counts)
            print(
                row.format(
                    name, counts.translated, counts.outdated, counts.untranslated, f"{counts.percent}%"
                )
            )
        print(row.format("total", total.translated, total.outdated, total.untranslated, f"{total.percent}%"))
        print()
    if pot_dir is not None:
        print(
            "Counted against the current English: an entry whose English changed since"
            " `make update-po` is outdated, a page without a catalog untranslated."
        )
    return 0


def word_diff(old, new, color=False, context=6):
    """Show how *new* differs from *old*, word by word: [-removed-]{+added+}.

    Unchanged runs longer than 2 * *context* words are shortened to "…".
    """
    marks = (
        {"removed": ("\033[31m[-", "-]\033[0m"), "added": ("\033[32m{+", "+}\033[0m")}
        if (color)
        else {"removed": ("[-", "-]"), "added": ("{+", "+}")}
    )
    changes = changed_parts(old.split(), new.split())
    words = []
    for index, (kind, tokens) in enumerate(changes):
        if kind != "same":
            words.append(marks[kind][0] + " ".join(tokens) + marks[kind][1])
        elif len(tokens) > 2 * context:
            head = tokens[:context] if index else []
            tail = tokens[-context:] if index < len(changes) - 1 else []
            words += [*head, "…", *tail]
        else:
            words += tokens
    return " ".join(words)


def review(locale_dir, lang, color=False):
    """Print each fuzzy and untranslated entry of *lang* with what a translator needs."""
    todo = {"fuzzy": 0, "untranslated": 0}
    for path in language_catalogs(locale_dir, lang).values():
        shown = os.path.relpath(path)
        lines = catalog_text(path).split("\n")
        for message in messages(read(path)):
            if is_translated(message):
                continue
            english = " ".join(message.id.split())
            where = f"{shown}:{msgstr_line(lines, message)}"
            if message.fuzzy:
                todo["fuzzy"] += 1
                print(f"{where}: fuzzy (the English changed)")
                if message.previous_id:
                    print(f"  change:      {word_diff(message.previous_id[0], english, color)}")
                else:
                    print("  change:      (the old English was not recorded)")
                print(f"  new English: {english}")
                print(f"  translation: {' '.join(message.string.split())}")
            else:
                todo["untranslated"] += 1
                print(f"{where}: untranslated")
                print(f"  English: {english}")
            print()
    print(f"{lang}: {todo['fuzzy']} fuzzy, {todo['untranslated']} untranslated")


def catalog_languages(parser, codes, locale_dir):
    """The translations named in *codes* (default: all), each with catalogs in *locale_dir*.

    Anything else stops the program with *parser*'s usage error (exit code 2).
    """
    try:
        langs = select(codes, translations_only=True)
    except ValueError as err:
        parser.error(str(err))
    for lang in langs:
        if not (locale_dir / lang / "LC_MESSAGES").is_dir():
            parser.error(f"no catalogs for {lang!r} under {locale_dir}")
    return langs


def main(argv=None):
    """Parse the command line and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", choices=["stat", "review"])
    parser.add_argument("languages", nargs="*", metavar="LANG")
    parser.add_argument("--locale-dir", type=Path, default=LOCALE)
    parser.add_argument(
        "--pot-dir",
        type=Path,
        help="extract the current English here and count"
        " against it (default: _build/gettext for locale/; none for another"
        " --locale-dir)",
    )
    args = parser.parse_args(argv)
    langs = catalog_languages(parser, args.languages, args.locale_dir)
    if args.report == "review":
        for lang in langs:
            review(args.locale_dir, lang, color=sys.stdout.isatty())
        return 0
    pot_dir = args.pot_dir or (POT_DIR if args.locale_dir.resolve() == LOCALE else None)
    return stat(args.locale_dir, langs, pot_dir)


if __name__ == "__main__":
    sys.exit(main())
