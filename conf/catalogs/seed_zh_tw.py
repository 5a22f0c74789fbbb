"""Fill empty zh_TW entries from the zh_CN translation converted by OpenCC (make seed-zh_TW).

Each zh_TW entry that has no translation yet gets its zh_CN translation
converted with OpenCC ``s2twp`` and is marked fuzzy: OpenCC converts characters
and common phrases, it does not translate (程序代码 becomes 程式程式碼), so a
person checks every seeded entry before the site uses it. Existing zh_TW
translations, fuzzy or not, are never touched, and only finished (translated,
not fuzzy) zh_CN entries are used. Entries or catalogs that zh_TW lacks are
not invented: ``make update-po`` creates them from the English. Running it
again fills nothing.

Usage:
    python conf/catalogs/seed_zh_tw.py [--check] [--locale-dir DIR]

``--check`` lists what would be filled and writes nothing.

Exit codes: 0 done (with --check: nothing to fill), 1 something to fill with
--check, 2 bad usage.
"""

import argparse
import os
import sys
from pathlib import Path

import opencc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from catalogs.po import is_translated, language_catalogs, messages, read, write  # noqa: E402
from site_layout import LOCALE  # noqa: E402


def seed_catalog(cn_path, tw_path, convert):
    """Fill *tw_path*'s empty entries from *cn_path*; return the filled entries."""
    finished = {(m.context, m.id): m.string for m in messages(read(cn_path)) if is_translated(m)}
    catalog = read(tw_path)
    filled = []
    for message in messages(catalog):
        source = finished.get((message.context, message.id))
        if message.string or not source:
            continue
        message.string = convert(source)
        message.flags.add("fuzzy")
        filled.append(message)
    return catalog, filled


def seed(locale_dir, check):
    """Seed every zh_TW catalog that has a zh_CN twin; return the number filled."""
    tw_paths = language_catalogs(locale_dir, "zh_TW")
    convert = opencc.OpenCC("s2twp").convert
    total = 0
    for domain, cn_path in language_catalogs(locale_dir, "zh_CN").items():
        tw_path = tw_paths.get(domain, locale_dir / "zh_TW" / "LC_MESSAGES" / f"{domain}.po")
        if domain not in tw_paths:
            print(f"skipped: {os.path.relpath(tw_path)} does not exist; run make update-po")
            continue
        catalog, filled = seed_catalog(cn_path, tw_path, convert)
        for message in filled:
            print(f"{os.path.relpath(tw_path)}:{message.lineno}: {message.string!r}")
        if filled and not check:
            write(catalog, tw_path)
        total += len(filled)
    verb = "would fill" if check else "filled"
    print(f"zh_TW: {verb} {total} entries from zh_CN (marked fuzzy)")
    return total


def main(argv=None):
    """Parse the command line and seed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report only, write nothing")
    parser.add_argument("--locale-dir", type=Path, default=LOCALE)
    args = parser.parse_args(argv)
    for lang in ("zh_CN", "zh_TW"):
        if not (args.locale_dir / lang / "LC_MESSAGES").is_dir():
            parser.error(f"no catalogs for {lang} under {args.locale_dir}")
    filled = seed(args.locale_dir, args.check)
    return 1 if args.check and filled else 0


if __name__ == "__main__":
    sys.exit(main())
