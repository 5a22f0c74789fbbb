"""terminology: a glossary term is not translated as locale/glossary.csv says."""

import csv
import functools
import io
import re

from .common import error
from .parsing import parse


@functools.cache
def load_glossary(path):
    """Return the glossary rows of the file *path*, longest English term first."""
    with open(path, newline="", encoding="utf-8") as f:
        return parse_glossary(f.read())


def parse_glossary(text):
    """Return the glossary rows of the CSV *text*, longest English term first."""
    rows = [row for row in csv.DictReader(io.StringIO(text, newline="")) if row.get("en")]
    return tuple(sorted(rows, key=lambda row: -len(row["en"])))


# A printf-style placeholder, as Python's %-formatting and Sphinx's templates write them.
_PLACEHOLDER = re.compile(r"%\(\w+\)[a-z]")


@functools.cache
def _term_pattern(term):
    """Match *term* as a whole word, in any case, with a plural -s or -es."""
    return re.compile(rf"\b{re.escape(term)}(?:e?s)?\b", re.IGNORECASE)


def check(message):
    """Yield glossary terms of the English whose translation is not in the msgstr."""
    if "\n" in message.msgid or message.msgid.startswith(">>>"):
        return  # code: names in it are not terms
    msgstr, lang = message.msgstr, message.lang
    prose = parse(message.msgid, message.syntax, message.project.roles).prose
    prose = _PLACEHOLDER.sub(" ", prose)  # %(backend)s stands for a value, not for the word
    missing = []
    for row in message.project.glossary:
        pattern = _term_pattern(row["en"])
        if not pattern.search(prose):
            continue
        prose = pattern.sub(" ", prose)  # "data parallelism" hides "data"
        wanted = row.get(lang)
        if wanted and wanted not in msgstr:
            missing.append(f'"{row["en"]}" → {wanted}')
    if missing:
        yield error("glossary term translated otherwise: " + ", ".join(missing))
