"""completeness: fuzzy or untranslated entries (problems only with --strict=1)."""


def check(message):
    """Return why *message* (a catalog entry) is not finished, or None."""
    if message.fuzzy:
        return "fuzzy: check the translation against the new English, then remove the flag"
    return None if message.string else "untranslated"
