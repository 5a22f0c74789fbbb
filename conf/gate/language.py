"""Chinese as its readers expect it: its script (script-mix) and the glossary's terms (terminology).

A language's script comes from conf/languages.py: Hant (Traditional) or
Hans (Simplified); other scripts are not checked. A character is of the
wrong script only if the other script never uses it: CC-CEDICT's Simplified
characters that no Traditional word uses (个, 给), and the reverse (個, 給),
as ``zhon.cedict`` packages them. Characters both use (台, 游, 里, 只, 干,
发布's 布) are never reported, whatever a converter would make of them.
OpenCC only suggests the replacement.
"""

import functools
import re

import opencc
from zhon import cedict

from languages import by_sphinx_code
from catalogs.glossary import term_pattern
from gate.findings import error
from gate.parse import is_code_message, parse

# A printf-style placeholder, as Python's %-formatting and Sphinx's templates write them.
_PLACEHOLDER = re.compile(r"%\(\w+\)[a-z]")


@functools.cache
def _only(script):
    """Return the characters that only *script* ("Hans" or "Hant") uses."""
    simplified, traditional = set(cedict.simplified), set(cedict.traditional)
    return frozenset(simplified - traditional if script == "Hans" else traditional - simplified)


@functools.cache
def _opencc(config):
    return opencc.OpenCC(config)


def script_of(lang):
    """The script of *lang*: from the languages table, else guessed from the code."""
    try:
        return by_sphinx_code(lang).script
    except ValueError:  # a catalog of another project
        if any(mark in lang for mark in ("Hant", "TW", "HK", "MO")):
            return "Hant"
        return "Hans" if lang.startswith("zh") else None


def other_script(text, lang, english=""):
    """Return "char→suggestion" for each character of the wrong script in *text*.

    Characters that the *english* message itself contains are left alone.
    """
    script = script_of(lang)
    if script not in ("Hans", "Hant"):  # the two that Language.chinese names
        return []
    wrong = _only("Hant" if script == "Hans" else "Hans")
    found = [char for char in dict.fromkeys(text) if char in wrong and char not in english]
    if not found:
        return []
    converter = _opencc("s2tw" if script == "Hant" else "t2s")  # loading it takes a while
    return [f"{char}→{converter.convert(char)}" for char in found]


def check_script(message):
    """Yield the Simplified characters of a zh_TW translation, or the reverse."""
    found = other_script(message.msgstr, message.lang, message.msgid)
    if found:
        wrong = "Simplified" if script_of(message.lang) == "Hant" else "Traditional"
        yield error(f"{wrong} characters in {message.lang}: {', '.join(found)}", at=found[0][0])


def check_terms(message):
    """Yield the glossary terms of the English (locale/glossary.csv) not translated as it says."""
    if is_code_message(message.msgid):
        return  # code: names in it are not terms
    prose = parse(message.msgid, message.syntax, message.project.roles).prose
    prose = _PLACEHOLDER.sub(" ", prose)  # %(backend)s stands for a value, not for the word
    missing = []
    for row in message.project.glossary:
        pattern = term_pattern(row["en"])
        if pattern.search(prose):
            prose = pattern.sub(" ", prose)  # "data parallelism" hides "data"
            wanted = row.get(message.lang)
            if wanted and wanted not in message.msgstr:
                missing.append(f'"{row["en"]}" → {wanted}')
    if missing:
        yield error("glossary term translated otherwise: " + ", ".join(missing))
