"""safety: a translation adds a link to another site, a non-http(s) link, HTML or a directive.

Links come from the parse (reST, MyST) or, in plain text, from URLs, which
are ASCII: a URL ends at the first space, Chinese character or full-width
punctuation. Each is judged by translation/links.py, the rule the build
applies too: another host or scheme is an error (another page of a host the
English links is the references check's warning). In MyST and plain text HTML
is markup (an error); in reST it is shown as text (a warning). A MyST
``[name]`` in the English links through a definition elsewhere on the page, so
a translation writing that link inline (``[名称](https://…)``) is a warning:
the English's site is not in the message (the build, which sees the page,
judges it by the definition's URL).

Two more places a translation lands: any translation may hold no invisible
or direction-changing character (translation/words.py: Trojan Source in a
download), and a tutorial's prose also becomes its notebook's Markdown
cells, where ``[text](url)``, ``![](url)`` and HTML are live even though the
page shows them as text: a tutorial's translation may add none of them
(links are judged by the link rule, as on the page).
"""

import re
from collections import Counter

from ..links import ERROR, judge
from ..words import added_controls, controls
from .common import error, warning
from .parsing import parse

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[!-~]+")
_SHORTCUT = re.compile(r"(?<![\]!\\])\[([^\[\]]+)\](?![(\[:])")  # [name], a reference link
_BAD_SCHEME = re.compile(r"(?<![\w.+-])(?:javascript|vbscript|data|file):", re.IGNORECASE)
_DIRECTIVE = re.compile(
    r"^\s*\.\.\s+[\w:.-]+::|^\s*(?:`{3,}|:{3,})\s*\{[\w:.-]+\}|:raw(?:-\w+)?:`|\{raw(?:-\w+)?\}",
    re.MULTILINE,
)


def urls(text, markup, syntax):
    """Return the link targets of *text*: parsed links, or URLs in plain text."""
    if syntax != "text":
        return markup.links
    return [url.rstrip(".,;:!?)]}'\"") for url in _URL.findall(text)]


def notebook_bound(message):
    """True if *message* is a tutorial's: its prose becomes a notebook's Markdown too."""
    return message.catalog is not None and "auto_examples" in message.catalog.parts


def in_notebook(message):
    """Yield the links, images and HTML the translation adds to a tutorial's notebook."""
    english = parse(message.msgid, "myst", message.project.roles)
    translated = parse(message.msgstr, "myst", message.project.roles)
    for url in sorted(set(translated.links) - set(english.links)):
        verdict = judge(url, english.links + english.images)
        if verdict and verdict[0] == ERROR:
            yield error(f"adds, in the tutorial's notebook (Markdown), {verdict[1]}", at=url)
    for url in sorted(set(translated.images) - set(english.images)):
        yield error(f"adds, in the tutorial's notebook (Markdown), an image: {url}", at=url)
    tags = Counter(translated.html) - Counter(english.html)
    if tags:
        yield error("adds, in the tutorial's notebook (Markdown), HTML: " + " ".join(sorted(tags)),
                    at=min(tags))  # fmt: skip


def check(message):
    """Yield links, schemes, HTML, directives and hidden characters the translation adds."""
    msgid, msgstr, syntax = message.msgid, message.msgstr, message.syntax
    if msgid == msgstr:
        return
    hidden = added_controls(msgid, msgstr)
    if hidden:
        yield error("holds invisible or direction-changing characters: "
                    + ", ".join(controls("".join(hidden))), at=hidden[0])  # fmt: skip
    if notebook_bound(message):
        yield from in_notebook(message)
    english = parse(msgid, syntax, message.project.roles)
    translated = parse(msgstr, syntax, message.project.roles)
    old, new = urls(msgid, english, syntax), urls(msgstr, translated, syntax)
    # MyST's [name] links through a definition elsewhere on the page, which no message holds.
    shortcuts = _SHORTCUT.findall(msgid) if syntax == "myst" else []
    for url in sorted(set(new) - set(old)):
        verdict = judge(url, old + english.images)  # as the build: links and images
        if not verdict or verdict[0] != ERROR:  # another page of a linked host: references warns
            continue
        if shortcuts and "host" in verdict[1]:
            yield warning(f"links to {url}: the English's [{shortcuts.pop(0)}] links through a "
                          "definition elsewhere on the page; check that it is the same site",
                          at=url)  # fmt: skip
        else:
            yield error(f"adds {verdict[1]}", at=url)
    schemes = set(map(str.lower, _BAD_SCHEME.findall(msgstr)))
    schemes -= set(map(str.lower, _BAD_SCHEME.findall(msgid)))
    linked = {url.split(":", 1)[0].lower() + ":" for url in new if ":" in url}
    for scheme in sorted(schemes - linked):
        yield error(f"adds a link that is not http(s): {scheme}", at=scheme)
    tags = Counter(translated.html) - Counter(english.html)
    if tags and syntax == "rst":  # in reST, HTML is text: the page shows the tags
        yield warning("HTML tags are shown as text in reST: " + " ".join(sorted(tags)),
                      at=min(tags))  # fmt: skip
    elif tags:
        yield error("adds raw HTML: " + " ".join(sorted(tags)), at=min(tags))
    directives = Counter(_DIRECTIVE.findall(msgstr)) - Counter(_DIRECTIVE.findall(msgid))
    if directives:
        yield error("adds a directive or raw role: " + " ".join(d.strip() for d in directives))
