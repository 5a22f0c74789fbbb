"""Report on the catalogs: counts per page (make stat), entries left to do (make review).

Usage:
    python conf/translation/catalog_report.py stat [LANG...]    translated, fuzzy, untranslated per catalog
    python conf/translation/catalog_report.py review [LANG...]  each fuzzy and untranslated entry, at
                                                    its msgstr line, with a word diff of the
                                                    old and new English

LANG defaults to every translation in conf/languages.py.

Option: --locale-dir DIR (default: locale/).

Exit codes: 0 reported, 2 bad usage.
"""

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from languages import select  # noqa: E402
from site_layout import LOCALE  # noqa: E402
from translation.catalog_diff import changed_parts  # noqa: E402
from translation.catalogs import is_translated, language_catalogs, messages, msgstr_line, read  # noqa: E402



@dataclass
class Counts:
    """How many entries of a catalog are translated, fuzzy and untranslated."""

    translated: int = 0
    fuzzy: int = 0
    untranslated: int = 0

    @property
    def total(self):
        return self.translated + self.fuzzy + self.untranslated

    @property
    def percent(self):
        """Percentage translated, rounded down so that 100 means done."""
        return 100 * self.translated // self.total if self.total else 100

    def add(self, other):
        """Add *other*'s counts to these."""
        self.translated += other.translated
        self.fuzzy += other.fuzzy
        self.untranslated += other.untranslated


def count_entries(po_path):
    """Return the Counts of the catalog at *po_path* (obsolete entries left out)."""
    found = messages(read(po_path))
    fuzzy = sum(1 for m in found if m.fuzzy)
    translated = sum(1 for m in found if is_translated(m))
    return Counts(translated, fuzzy, len(found) - translated - fuzzy)


def stat(locale_dir, langs):
    """Print translated / fuzzy / untranslated counts per catalog and per language."""
    names = [name for lang in langs for name in language_catalogs(locale_dir, lang)]
    width = max([len("catalog"), *map(len, names)])  # long page names stay aligned
    row = "  {:<%d} {:>10} {:>6} {:>12} {:>5}" % width
    for lang in langs:
        print(f"{lang}")
        print(row.format("catalog", "translated", "fuzzy", "untranslated", "done"))
        total = Counts()
        for name, path in language_catalogs(locale_dir, lang).items():
            counts = count_entries(path)
            total.add(counts)
            print(row.format(name, counts.translated, counts.fuzzy, counts.untranslated,
                             f"{counts.percent}%"))  # fmt: skip
        print(row.format("total", total.translated, total.fuzzy, total.untranslated,
                         f"{total.percent}%"))  # fmt: skip
        print()


def word_diff(old, new, color=False, context=6):
    """Show how *new* differs from *old*, word by word: [-removed-]{+added+}.

    Unchanged runs longer than 2 * *context* words are shortened to "…".
    """
    marks = {"removed": ("\033[31m[-", "-]\033[0m"), "added": ("\033[32m{+", "+}\033[0m")} if (
        color) else {"removed": ("[-", "-]"), "added": ("{+", "+}")}  # fmt: skip
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
    todo = Counts()
    for path in language_catalogs(locale_dir, lang).values():
        shown = os.path.relpath(path)
        lines = path.read_text("utf-8").split("\n")
        for message in messages(read(path)):
            if is_translated(message):
                continue
            english = " ".join(message.id.split())
            where = f"{shown}:{msgstr_line(lines, message)}"
            if message.fuzzy:
                todo.fuzzy += 1
                print(f"{where}: fuzzy (the English changed)")
                if message.previous_id:
                    print(f"  change:      {word_diff(message.previous_id[0], english, color)}")
                else:
                    print("  change:      (the old English was not recorded)")
                print(f"  new English: {english}")
                print(f"  translation: {' '.join(message.string.split())}")
            else:
                todo.untranslated += 1
                print(f"{where}: untranslated")
                print(f"  English: {english}")
            print()
    print(f"{lang}: {todo.fuzzy} fuzzy, {todo.untranslated} untranslated")


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
    args = parser.parse_args(argv)
    langs = catalog_languages(parser, args.languages, args.locale_dir)
    if args.report == "review":
        for lang in langs:
            review(args.locale_dir, lang, color=sys.stdout.isatty())
    else:
        stat(args.locale_dir, langs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
