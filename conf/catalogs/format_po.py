"""Rewrite catalogs in the one form ``make update-po`` writes (make format-po).

Usage:
    python conf/catalogs/format_po.py [--check] [LANG...]

LANG defaults to every translation in conf/languages.py. Each catalog of
locale/<LANG>/LC_MESSAGES/ is rewritten as catalogs/po.py writes it:
Babel's wrapping and header fields. A PO editor's re-wrapping, its own header
fields and its revision date go; entries, comments and flags stay (each
rewrite is read back and compared before it is written). Running it twice
changes nothing. It needs no GNU gettext.

With ``--check`` it rewrites nothing and lists the catalogs it would change.

Exit codes: 0 done (or, with --check, nothing to change), 1 a catalog cannot
be read (nothing written for it) or, with --check, would change, 2 bad usage.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from catalogs.report import catalog_languages  # noqa: E402
from catalogs.po import (  # noqa: E402
    CatalogError,
    catalog_language,
    catalog_text,
    language_catalogs,
    messages,
    parse,
    text,
)
from gate.checks.canonical import first_difference  # noqa: E402
from site_layout import LOCALE  # noqa: E402
from gate.checks.common import shown  # noqa: E402


def content(catalog):
    """What a rewrite must keep: every entry's strings, comments, flags and old English."""
    return sorted(
        (
            m.id,
            m.context,
            repr(m.string),
            " ".join(m.user_comments).split(),
            " ".join(m.auto_comments).split(),
            sorted(m.flags),
            m.previous_id,
        )
        for m in messages(catalog, obsolete=True)
    )


def format_catalog(path, check_only=False):
    """Rewrite *path* canonically; return "unchanged", "formatted" (or "would change")."""
    ours = catalog_text(path)
    language = catalog_language(path)
    catalog = parse(ours, language)
    canonical = text(catalog, language)
    if canonical == ours:
        return "unchanged"
    if check_only:
        where = first_difference(ours, canonical)
        print(f"{shown(path)}:{where[0]}: would change ({where[1]})")
        return "would change"
    if content(parse(canonical, language)) != content(parse(ours, language)):
        raise CatalogError(
            1, "the rewrite would lose content (a bug in catalogs.py); the catalog was left as it was"
        )
    path.write_text(canonical, "utf-8")
    print(f"formatted: {shown(path)}")
    return "formatted"


def main(argv=None):
    """Format (or check) the catalogs of the languages named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("languages", nargs="*", metavar="LANG")
    parser.add_argument("--check", action="store_true", help="change nothing; list what would")
    parser.add_argument("--locale-dir", type=Path, default=LOCALE)
    args = parser.parse_args(argv)
    langs = catalog_languages(parser, args.languages, args.locale_dir)
    failed = changed = 0
    for lang in langs:
        for path in language_catalogs(args.locale_dir, lang).values():
            try:
                changed += format_catalog(path, args.check) != "unchanged"
            except (CatalogError, UnicodeDecodeError) as err:
                line = getattr(err, "line", 1)
                print(
                    f"{shown(path)}:{line}: error: {err}; fix it, then run make format-po again",
                    file=sys.stderr,
                )
                failed += 1
    print(
        f"{changed} catalog(s) {'to format' if args.check else 'formatted'}, {failed} unreadable"
        f" ({', '.join(langs)})",
        file=sys.stderr,
    )
    return 1 if failed or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
