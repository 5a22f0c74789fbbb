"""completeness: fuzzy or untranslated entries (problems only with --strict=1)."""


def check(entry):
    """Return why *entry* is not finished, or None."""
    if "fuzzy" in entry.flags:
        return "fuzzy: check the translation against the new English, then remove the flag"
    return None if entry.msgstr else "untranslated"
