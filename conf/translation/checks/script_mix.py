"""script-mix: Simplified characters in zh_TW, Traditional ones in zh_CN.

A language's script comes from conf/languages.py: Hant (Traditional) or
Hans (Simplified); other scripts are not checked.
"""

import difflib
import functools

import opencc

from languages import by_sphinx_code


_TW_USAGE = set("台了")  # s2tw writes 臺 and 瞭, Taiwan writes these too


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
    if script not in ("Hans", "Hant"):
        return []
    converted = _opencc("s2tw" if script == "Hant" else "t2s").convert(text)
    found = []
    matcher = difflib.SequenceMatcher(None, text, converted, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace" or i2 - i1 != j2 - j1:
            continue
        for old, new in zip(text[i1:i2], converted[j1:j2]):
            if old in english or f"{old}→{new}" in found:
                continue
            # s2tw also normalises Traditional variants (裏→裡): those are not Simplified.
            if script == "Hant" and (old in _TW_USAGE or _opencc("t2s").convert(old) != old):
                continue
            found.append(f"{old}→{new}")
    return found


def check(msgid, msgstr, kind, lang):
    """Yield the Simplified characters of a zh_TW translation, or the reverse."""
    found = other_script(msgstr, lang, msgid)
    if found:
        wrong = "Simplified" if script_of(lang) == "Hant" else "Traditional"
        yield f"{wrong} characters in {lang}: {', '.join(found)}"
