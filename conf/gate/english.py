"""english: no English word a reader sees in a Chinese translation, beyond names.

What a translation shows as words (its prose, the titles of its links and of
prose roles; not code, literals or URLs) may hold English only where it is:

* a token that is code, a path, a URL or a number (``nn.DataParallel``,
  ``2.13.0+cpu``), an acronym or a CamelCase name (GPU, DDP, PyTorch), one letter;
* a quotation the English has in quotes, word for word (an error message);
* a term the glossary keeps in English in that language (a row of
  locale/glossary.csv whose zh_CN or zh_TW is its English);
* a name of :data:`NAMES_FILE` (english_names.txt), which
  tests/test_chinese_pages.py reads too: it applies this rule to every word of the
  built pages, the theme's included, in Chromium.

A comment or docstring of a tutorial's code is read as the page shows it: Python's
keywords and calls (``len(x)``) are code, and it must hold Chinese.
"""

import functools
import keyword
import re
from pathlib import Path

from sphinx_gallery.py_source_parser import split_code_and_text_blocks

from languages import TRANSLATIONS
from catalogs.glossary import load as load_glossary
from catalogs.tutorial_text import localized_code
from gate.code import example_of
from gate.findings import brief, error
from gate.parse import EXPLICIT_TITLE, PROSE_ROLES, is_code_message, parse

NAMES_FILE = Path(__file__).with_name("english_names.txt")
# Roles whose text (or explicit title) a page shows as words, not as code.
_WORD_ROLES = (PROSE_ROLES - {"kbd"}) | {"ref", "doc", "term", "numref", "std:ref", "std:doc", "std:term"}
_CJK = re.compile(r"[\u3400-\u9fff]")
QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')  # a quotation: what a program printed, word for word
_CALL = re.compile(r"``[^`]*``|[\w.]+\([^)]*\)")  # literals and calls: code, as on the page


@functools.cache
def names(path=NAMES_FILE):
    """The names of *path*: one a line, ``#`` comments."""
    lines = Path(path).read_text("utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


def kept_terms(glossary, lang=None):
    """The English of the *glossary* rows that *lang* (default: every translation) writes in English."""
    langs = [lang] if lang else TRANSLATIONS
    return [row["en"] for row in glossary if all(row.get(code) == row["en"] for code in langs)]


@functools.cache
def _longest_first(phrases):
    return tuple(sorted(phrases, key=len, reverse=True))


def allowed_words(glossary, lang=None):
    """The names and the terms of the *glossary* (its rows, or the path of its file) that *lang*
    (default: every translation) keeps in English, longest first."""
    rows = load_glossary(glossary) if isinstance(glossary, (str, Path)) else glossary
    return _longest_first(frozenset({*names(), *kept_terms(rows, lang)}))


def english_words(text, allowed):
    """The English words of *text*, beyond the *allowed* phrases, code, acronyms and names."""
    for phrase in allowed:
        text = re.sub(rf"(?<![\w.-]){re.escape(phrase)}(?![\w-])", " ", text, flags=re.IGNORECASE)
    words = []
    for token in re.findall(r"[!-~]+", text):  # runs of printable ASCII
        word = token.strip("\"'.,;:!?()[]")
        if not re.search("[A-Za-z]", word) or len(word) == 1:
            continue
        if re.search(r"[\d_./:=@#<>\[\]{}()+*\\|$%&]", word) or re.search("[A-Z]", word[1:]):
            continue  # code, a path, a URL, a number, a handle; an acronym or CamelCase name
        words.append(word)
    return words


def shown_words(msgstr, syntax, roles=frozenset()):
    """The text a page shows of *msgstr* as words: its prose and the titles of its word roles."""
    if syntax == "text":
        return msgstr
    markup = parse(msgstr, syntax, roles)
    titles = []
    for role in markup.roles:
        if role.name in _WORD_ROLES:
            explicit = EXPLICIT_TITLE.match(role.text)
            if explicit or role.name in PROSE_ROLES:  # else the page shows its target's title
                titles.append(explicit[1] if explicit else role.text)
    return " ".join([markup.prose, *titles])


@functools.cache
def _code_texts(example):
    """The English comments and docstrings of *example*'s code cells."""
    found = set()
    for block in split_code_and_text_blocks(str(example))[1]:
        if block.type == "code":
            localized_code(block.content, lambda text: found.add(text) or text)
    return frozenset(found)


@functools.lru_cache(maxsize=8)
def _allowed_in(project, lang):
    """allowed_words of *project*'s glossary for *lang*: worked out once a run, not once an entry."""
    return allowed_words(getattr(project, "glossary", ()), lang)


FIX = (
    "translate it; a name (a product, a project) may stay English if it is a line of"
    " conf/gate/english_names.txt, a term if locale/glossary.csv gives it as its {lang} translation"
)


def check(message):
    """Yield an error for the English words a reader would see in the translation."""
    if is_code_message(message.msgid):
        return  # a literal block or a doctest: code, shown as it is
    roles = getattr(message.project, "roles", frozenset())
    allowed = _allowed_in(message.project, message.lang)
    text = shown_words(message.msgstr, message.syntax, roles)
    for quoted in QUOTED.finditer(message.msgid):  # the English quotes it: kept as it is
        text = text.replace(quoted[1] or quoted[2], " ")
    example = example_of(message)
    comment = example is not None and message.msgid in _code_texts(example)
    if comment:
        text = _CALL.sub(" ", text)
    words = [w for w in english_words(text, allowed) if not (comment and keyword.iskeyword(w))]
    if words:
        shown = " ".join(dict.fromkeys(words))
        yield error(
            f"English a reader sees in {message.lang}: {brief(shown, 50)}: " + FIX.format(lang=message.lang),
            at=words[0],
        )
    elif comment and not _CJK.search(message.msgstr):
        yield error(f"a comment of the code with no Chinese in {message.lang}: translate it")
