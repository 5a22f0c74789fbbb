"""safety: a translation adds a URL, a non-http(s) link, HTML or a directive."""

import re
from collections import Counter
from urllib.parse import urlsplit

from .parsing import parse


_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s<>`'\"()\[\]]+")
_BAD_SCHEME = re.compile(r"(?<![\w.+-])(?:javascript|vbscript|data|file):", re.IGNORECASE)
_DIRECTIVE = re.compile(
    r"^\s*\.\.\s+[\w:.-]+::|^\s*(?:`{3,}|:{3,})\s*\{[\w:.-]+\}|:raw(?:-\w+)?:`|\{raw(?:-\w+)?\}",
    re.MULTILINE,
)


def link_schemes(text, markup):
    """Return the URL schemes other than http(s) of *text*'s links and dangerous URIs."""
    schemes = {urlsplit(link).scheme.lower() for link in markup.links}
    schemes |= {scheme.lower().rstrip(":") for scheme in _BAD_SCHEME.findall(text)}
    return schemes - {"", "http", "https"}


def check(msgid, msgstr, kind, lang):
    """Yield links, schemes, HTML and directives the translation adds."""
    english, translated = parse(msgid, kind), parse(msgstr, kind)
    for url in sorted(set(_URL.findall(msgstr)) - set(_URL.findall(msgid))):
        yield f"adds a URL the English does not have: {url}"
    for scheme in sorted(link_schemes(msgstr, translated) - link_schemes(msgid, english)):
        yield f"adds a link that is not http(s): {scheme}:"
    tags = Counter(translated.html) - Counter(english.html)
    if tags:
        yield "adds raw HTML: " + " ".join(sorted(tags))
    directives = Counter(_DIRECTIVE.findall(msgstr)) - Counter(_DIRECTIVE.findall(msgid))
    if directives:
        yield "adds a directive or raw role: " + " ".join(d.strip() for d in directives)
