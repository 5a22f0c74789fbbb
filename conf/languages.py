"""The site's languages: the one table every part of the build reads.

Adding a language is one row here plus its catalogs (``make update-po`` creates
them). The first row is the source language; the others are translations of it.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """One language of the site."""

    sphinx: str  # value of ``-D language=`` and the folder under locale/
    rtd: str  # Read the Docs' READTHEDOCS_LANGUAGE and URL segment
    html: str  # BCP 47 tag for <html lang> and hreflang
    name: str  # the language's own name, for the switcher
    script: str  # ISO 15924: Hans and Hant get jieba search and the script-mix check
    choose: str  # "Choose a language" in this language, for the root chooser
    browser: tuple = ()  # browser language tags (prefixes) sent here; default: html
    english: str = ""  # its English name, translated on the status page; default: name

    @property
    def chinese(self):
        """Written in Chinese characters: searched with jieba, checked for the other script."""
        return self.script in ("Hans", "Hant")

    @property
    def spaced(self):
        """Whether its words are separated by spaces (not so in Chinese, Japanese, Thai...)."""
        return self.script not in UNSPACED_SCRIPTS


# ISO 15924 scripts whose text puts no space between words.
UNSPACED_SCRIPTS = {"Hans", "Hant", "Hani", "Jpan", "Hira", "Kana", "Thai", "Laoo", "Khmr", "Mymr"}


# A table, one row per language: the formatter would spread each row over ten lines.
LANGUAGES = [
    Language("en", "en", "en", "English", "Latn", "Choose a language"),
    Language("zh_CN", "zh-cn", "zh-CN", "简体中文", "Hans", "选择语言", ("zh",), english="Simplified Chinese"),
    Language("zh_TW", "zh-tw", "zh-TW", "繁體中文", "Hant", "選擇語言", ("zh-tw", "zh-hk", "zh-mo", "zh-hant"),
             english="Traditional Chinese"),
]  # fmt: skip
SOURCE = LANGUAGES[0]
TRANSLATIONS = [lang.sphinx for lang in LANGUAGES[1:]]


def by_sphinx_code(code):
    """Return the Language whose Sphinx code is *code*; raise ValueError if none."""
    for lang in LANGUAGES:
        if lang.sphinx == code:
            return lang
    known = ", ".join(lang.sphinx for lang in LANGUAGES)
    raise ValueError(f"unknown language {code!r}; known: {known}")


def select(codes, translations_only=False):
    """Return the Sphinx codes named in *codes* (all if none), checked against the table.

    With *translations_only*, the source language is refused (it has no
    catalogs) and "all" means every translation.
    """
    codes = [code for item in codes for code in item.split()]
    if not codes:
        return list(TRANSLATIONS) if translations_only else [lang.sphinx for lang in LANGUAGES]
    for code in codes:
        by_sphinx_code(code)
        if translations_only and code == SOURCE.sphinx:
            raise ValueError(f"{code} is the source language: it has no catalogs")
    return list(dict.fromkeys(codes))


def from_readthedocs(code):
    """Map READTHEDOCS_LANGUAGE (``zh-cn``) to the Sphinx code (``zh_CN``)."""
    for lang in LANGUAGES:
        if lang.rtd == code.strip().lower():
            return lang.sphinx
    known = ", ".join(lang.rtd for lang in LANGUAGES)
    raise ValueError(f"READTHEDOCS_LANGUAGE={code!r} is not one of {known}")


def browser_tags(lang):
    """The browser language tags (lower-case prefixes) that the root chooser sends to *lang*."""
    return tuple(tag.lower() for tag in (lang.browser or (lang.html,)))
