"""Rewrite catalogs in the one form ``make update-po`` writes (make format-po).

Usage:
    python conf/translation/format_catalogs.py [--check] [LANG...]

LANG defaults to every translation in conf/languages.py. Each catalog of
locale/<LANG>/LC_MESSAGES/ is rewritten in the canonical form of
canonical_po.py: wrapped as ``msgmerge --width=79`` wraps, with update-po's
header fields. A PO editor's re-wrapping, its own
header fields and its revision date go; entries, comments and flags stay
(each rewrite is read back and compared before it is written). Running it
twice changes nothing. It needs no GNU gettext.

With ``--check`` it rewrites nothing and lists the catalogs it would change.

Exit codes: 0 done (or, with --check, nothing to change), 1 a catalog cannot
be read (nothing written for it) or, with --check, would change, 2 bad usage.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from translation.canonical_po import (  # noqa: E402
    CatalogError, canonical_text, catalog_language, first_difference, read,
)  # fmt: skip
from translation.catalog_report import catalog_languages  # noqa: E402
from translation.checks.common import ROOT, shown  # noqa: E402


def content(entries):
    """What a rewrite must keep: every entry's strings, comments, flags and previous strings."""
    return sorted(
        (e.obsolete, repr(e.strings if not e.is_header else e.strings[:1]), repr(e.comments),
         repr(e.extracted), repr(sorted(set(e.flags))), repr(e.previous))
        for e in entries
    )  # fmt: skip


def format_catalog(path, check_only=False):
    """Rewrite *path* canonically; return "unchanged", "formatted" (or "would change")."""
    text = path.read_text("utf-8")
    lang = catalog_language(path)
    canonical = canonical_text(text, lang)
    if canonical == text:
        return "unchanged"
    if check_only:
        return "would change"
    if content(read(canonical)) != content(read(text.lstrip("\ufeff"))):
        raise CatalogError(1, "the rewrite would lose content (a bug in canonical_po.py);"
                              " the catalog was left as it was")  # fmt: skip
    path.write_text(canonical, "utf-8")
    return "formatted"


def main(argv=None):
    """Format (or check) the catalogs of the languages named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("languages", nargs="*", metavar="LANG")
    parser.add_argument("--check", action="store_true", help="change nothing; list what would")
    parser.add_argument("--locale-dir", type=Path, default=ROOT / "locale")
    args = parser.parse_args(argv)
    langs = catalog_languages(parser, args.languages, args.locale_dir)
    failed = changed = 0
    for lang in langs:
        for path in sorted((args.locale_dir / lang / "LC_MESSAGES").rglob("*.po")):
            try:
                result = format_catalog(path, args.check)
            except (CatalogError, UnicodeDecodeError) as err:
                line = getattr(err, "line", 1)
                print(f"{shown(path)}:{line}: error: {err}; fix it, then run make format-po"
                      " again", file=sys.stderr)  # fmt: skip
                failed += 1
                continue
            if result != "unchanged":
                changed += 1
                if args.check:
                    where = first_difference(path.read_text("utf-8"), canonical_text(
                        path.read_text("utf-8"), catalog_language(path)))  # fmt: skip
                    print(f"{shown(path)}:{where[0]}: would change ({where[1]})")
                else:
                    print(f"formatted: {shown(path)}")
    print(f"{changed} catalog(s) {'to format' if args.check else 'formatted'}, {failed} unreadable"
          f" ({', '.join(langs)})", file=sys.stderr)  # fmt: skip
    return 1 if failed or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
