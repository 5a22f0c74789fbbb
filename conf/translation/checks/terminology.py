"""terminology: a glossary term is not translated as locale/glossary.csv says."""

import csv
import functools
import re

from .parsing import parse, python_code


@functools.cache
def load_glossary(path):
    """Return the glossary rows, longest English term first."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return tuple(sorted(rows, key=lambda row: -len(row["en"])))


@functools.cache
def _term_pattern(term):
    """Match *term* as a whole word, in any case, with a plural -s or -es."""
    return re.compile(rf"\b{re.escape(term)}(?:e?s)?\b", re.IGNORECASE)


def check(msgid, msgstr, kind, lang, glossary=()):
    """Yield glossary terms of the English whose translation is not in the msgstr."""
    if python_code(msgid) is not None:
        return  # names in code are not terms
    prose = parse(msgid, kind).prose
    missing = []
    for row in glossary:
        pattern = _term_pattern(row["en"])
        if not pattern.search(prose):
            continue
        prose = pattern.sub(" ", prose)  # "data parallelism" hides "data"
        wanted = row.get(lang)
        if wanted and wanted not in msgstr:
            missing.append(f'"{row["en"]}" → {wanted}')
    if missing:
        yield "glossary term translated otherwise: " + ", ".join(missing)
