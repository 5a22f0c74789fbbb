"""The site's languages: Sphinx codes, Read the Docs codes, HTML lang tags, names."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """One language of the site."""

    sphinx: str  # value of ``-D language=`` and the folder under locale/
    rtd: str  # Read the Docs' READTHEDOCS_LANGUAGE and URL segment
    html: str  # BCP 47 tag for <html lang> and hreflang
    name: str  # the language's own name, for the switcher


LANGUAGES = [
    Language("en", "en", "en", "English"),
    Language("zh_CN", "zh-cn", "zh-CN", "简体中文"),
    Language("zh_TW", "zh-tw", "zh-TW", "繁體中文"),
]
TRANSLATIONS = [lang.sphinx for lang in LANGUAGES if lang.sphinx != "en"]


def by_sphinx_code(code):
    """Return the Language whose Sphinx code is *code*; raise ValueError if none."""
    for lang in LANGUAGES:
        if lang.sphinx == code:
            return lang
    known = ", ".join(lang.sphinx for lang in LANGUAGES)
    raise ValueError(f"unknown language {code!r}; known: {known}")


def from_readthedocs(code):
    """Map READTHEDOCS_LANGUAGE (``zh-cn``) to the Sphinx code (``zh_CN``)."""
    for lang in LANGUAGES:
        if lang.rtd == code.strip().lower():
            return lang.sphinx
    known = ", ".join(lang.rtd for lang in LANGUAGES)
    raise ValueError(f"READTHEDOCS_LANGUAGE={code!r} is not one of {known}")
