"""What a translation may put where it lands: words, never a way out of that place.

The character rules of every catalog, in one place: ``make check`` reports
what they find (checks/safety.py, checks/interface.py) and the build compiles
no entry they refuse (site_extensions/compiled_catalogs.py), failing with the
entry's file and line.

* :func:`controls`: no invisible or direction-changing character in any
  translation (Unicode's format, control, private-use and unassigned
  characters, line and paragraph separators, variation selectors, the Hangul
  fillers): they make code or a sentence read other than it runs or says
  (Trojan Source, CVE-2021-42574).
* :func:`too_long`: a translation may be at most four times as long as its
  English, plus 500 characters, and 6,000 at most: no reader of it is given
  more than a translation can need (docutils recurses once per link it
  finds, and about 980 of them, 7,800 characters, overflow Python's stack;
  the longest English entry here has 1,450 characters).
* :func:`interface_problems`: an interface string (``sphinx.po``) lands where
  nobody escapes it for us. Sphinx's own Python writes some into HTML
  attributes (a heading link's title) and LaTeX (the date, "Index") as they
  are, and other projects' scripts write them into HTML (sphinx-copybutton's
  tooltip). So its translation may add none of the characters that end or
  start markup in HTML, JavaScript, CSS, LaTeX, Markdown or reST; where the
  English is HTML itself, the translation keeps exactly its HTML. Nor may it
  add a Latin-script word or a number that its English lacks (or the
  glossary's rendering of one of its terms): a provenance sentence cannot
  claim a GPU, a version or a count that the facts do not fill in.
"""

import re
import unicodedata
from collections import Counter
from html.parser import HTMLParser

# What starts or ends markup in HTML (text, attributes), JavaScript and CSS
# strings, LaTeX, Markdown and reST; and the line breaks that end a string.
MARKUP = "<>&\"'`\\{}$#^_~%[]*|\n\r\f\v"
# Invisible characters outside Unicode's format category: variation
# selectors and the Hangul fillers, which render as nothing.
_INVISIBLE = {0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, *range(0xFE00, 0xFE10),
              *range(0xE0100, 0xE01F0)}  # fmt: skip
MAX_TRANSLATION = 6000  # characters of any one translation
_PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[a-zA-Z%]")
_WORD = re.compile(r"[A-Za-z0-9]+")


def too_long(english, translation):
    """Why *translation* is too long to be a translation of *english*, or None."""
    limit = min(4 * len(english) + 500, MAX_TRANSLATION)
    if len(translation) <= limit:
        return None
    if limit == MAX_TRANSLATION:  # a long English: its length is not the reason
        return (f"it is longer than any one translation may be ({len(translation)} characters;"
                f" at most {limit}, which no parser's stack overflows): split the paragraph")  # fmt: skip
    return (f"it is far longer than its English ({len(translation)} characters for"
            f" {len(english)}; at most {limit})")  # fmt: skip


def controls(text):
    """The invisible and direction-changing characters of *text*, each once, named."""
    found = []
    for char in dict.fromkeys(text):
        if char in "\n\t":
            continue
        if unicodedata.category(char) in ("Cc", "Cf", "Co", "Cn", "Zl", "Zp", "Cs") or \
                ord(char) in _INVISIBLE:  # fmt: skip
            name = unicodedata.name(char, "unnamed")
            found.append(f"U+{ord(char):04X} ({name})")
    return found


def added_controls(english, translation):
    """The controls of *translation* that its *english* does not hold, as characters."""
    return [c for c in dict.fromkeys(translation) if c not in english and controls(c)]


class _Markup(HTMLParser):
    """Count the tags, comments and declarations of a string."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.found = Counter()
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.found["<", tag, tuple(attrs)] += 1

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self.found["</", tag] += 1

    def handle_comment(self, data):
        self.found["<!--", data] += 1

    handle_decl = handle_pi = unknown_decl = handle_comment


def has_markup(english):
    """True if the interface string *english* is HTML itself (a tag or an entity)."""
    return "<" in english or "&" in english


def words(text):
    """The Latin-script words and numbers of *text*, its placeholders left out."""
    return set(_WORD.findall(_PLACEHOLDER.sub(" ", text)))


def markup_problems(english, translation):
    """Why *translation* of *english* could end or start markup where it lands, or []."""
    reasons = []
    if has_markup(english) and _Markup(translation).found != _Markup(english).found:
        reasons.append("its HTML is not exactly the English's")
    extra = [c for c in MARKUP if translation.count(c) > english.count(c)]
    if extra:
        shown = " ".join(repr(c)[1:-1] if c.isspace() else c for c in extra)
        reasons.append(f"it adds {shown}, which can end or start markup where it lands"
                       " (HTML, a script, CSS, LaTeX, Markdown)")  # fmt: skip
    return reasons


def interface_problems(english, translation, allowed_words=()):
    """Why *translation* of the interface string *english* may not be shown, or [].

    *allowed_words* are words a translation may add: the glossary's Latin
    words for the terms of *english* (notebook -> Jupyter Notebook).
    """
    reasons = markup_problems(english, translation)
    new = sorted(words(translation) - words(english) - set(allowed_words))
    if new:
        reasons.append(f"it adds words or numbers the English does not say: {' '.join(new)[:80]}")
    hidden = added_controls(english, translation)
    if hidden:
        reasons.append("it holds invisible or direction-changing characters: "
                       + ", ".join(controls("".join(hidden))))  # fmt: skip
    return reasons


def glossary_words(english, glossary, lang):
    """The Latin words the *glossary* (rows of locale/glossary.csv) gives *lang* for *english*'s terms."""
    found = set()
    for row in glossary:
        if re.search(rf"\b{re.escape(row['en'])}(?:e?s)?\b", english, re.IGNORECASE):
            found |= words(row.get(lang) or "")
    return found
