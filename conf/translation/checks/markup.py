"""markup: a translation breaks reST/MyST markup, or changes a literal, role, link or substitution."""

from .parsing import describe, parse, python_code


def check(msgid, msgstr, kind, lang):
    """Yield how the translation's markup differs from the English's."""
    english, translated = parse(msgid, kind), parse(msgstr, kind)
    if translated.blocks != ["paragraph"] and msgstr != msgid and python_code(msgid) is None:
        # Sphinx uses a translation only if it parses as a paragraph.
        yield (f"translation parses as {' + '.join(translated.blocks) or 'nothing'}, not as "
               "the one paragraph Sphinx uses (escape a leading 1. - # or > with a backslash)")
    lost = english.items - translated.items
    added = translated.items - english.items
    if lost or added:
        parts = []
        if lost:
            parts.append("lacks " + ", ".join(describe(i, kind) for i in sorted(lost)))
        if added:
            parts.append("adds " + ", ".join(describe(i, kind) for i in sorted(added)))
        yield "translation " + "; ".join(parts)
    stray = translated.stray - english.stray
    if stray:
        shown = ", ".join(f"{char} ×{n}" for char, n in sorted(stray.items()))
        yield f"markup left as plain text (spaces around it?): {shown}"
    for message in translated.messages - english.messages:
        yield f"reST: {message}"
