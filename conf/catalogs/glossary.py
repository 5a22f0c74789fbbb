"""The glossary (locale/glossary.csv): an English term and its rendering in each language."""

import csv
import functools
import io
import re


def parse(text):
    """The glossary rows of the CSV *text* (dicts by column), longest English term first."""
    rows = [row for row in csv.DictReader(io.StringIO(text, newline="")) if row.get("en")]
    return tuple(sorted(rows, key=lambda row: -len(row["en"])))


def load(path):
    """The glossary rows of the file *path*."""
    with open(path, newline="", encoding="utf-8") as file:
        return parse(file.read())


@functools.cache
def term_pattern(term):
    """Match *term* as a whole word, in any case, with a plural -s or -es."""
    return re.compile(rf"\b{re.escape(term)}(?:e?s)?\b", re.IGNORECASE)


def chinese_terms(path, language):
    """The *language* column's terms of the glossary at *path* that hold Chinese characters."""
    terms = {row.get(language, "").strip() for row in load(path)}
    return sorted(term for term in terms if re.search(r"[\u3400-\u9fff]", term))
