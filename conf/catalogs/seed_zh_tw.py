"""Fill empty zh_TW entries from the zh_CN translation converted by OpenCC (make seed-zh_TW).

OpenCC ``s2twp`` converts characters and common phrases; it does not translate
(程序代码 becomes 程式程式碼), so every seeded entry is marked fuzzy for a person
to check. Only empty zh_TW entries are filled, only from finished zh_CN ones;
no entry or catalog is invented (``make update-po`` makes them).
"""

import opencc

from catalogs.po import is_translated, language_catalogs, messages, read, write


def seed_catalog(cn_path, tw_path, convert):
    """Return (the catalog *tw_path* with its empty entries filled from *cn_path*, those entries)."""
    finished = {(m.context, m.id): m.string for m in messages(read(cn_path)) if is_translated(m)}
    catalog = read(tw_path)
    filled = []
    for message in messages(catalog):
        source = finished.get((message.context, message.id))
        if source and not message.string:
            message.string = convert(source)
            message.flags.add("fuzzy")
            filled.append(message)
    return catalog, filled


def seed(locale_dir, check=False):
    """Seed every zh_TW catalog that has a zh_CN twin (*check*: write nothing); return
    ``[(zh_TW path, filled entries or None if that catalog is missing)]``."""
    tw_paths = language_catalogs(locale_dir, "zh_TW")
    convert = opencc.OpenCC("s2twp").convert
    found = []
    for domain, cn_path in language_catalogs(locale_dir, "zh_CN").items():
        tw_path = tw_paths.get(domain, locale_dir / "zh_TW" / "LC_MESSAGES" / f"{domain}.po")
        if domain not in tw_paths:
            found.append((tw_path, None))
            continue
        catalog, filled = seed_catalog(cn_path, tw_path, convert)
        if filled and not check:
            write(catalog, tw_path)
        found.append((tw_path, filled))
    return found
