"""What a translation may put where it lands: words, never a way out of that place.

The character rules of every catalog: ``make check`` reports what they find
(gate/safety.py), and the build compiles no entry they refuse
(extensions/compiled_catalogs.py), naming its file and line.

* :func:`controls`: no invisible or direction-changing character (Unicode's
  format, control, private-use and unassigned characters, line separators,
  variation selectors, Hangul fillers): code or a sentence would read other
  than it runs or says (Trojan Source, CVE-2021-42574).
* :func:`glyphless`: no character that no font of the PDF has, at which XeLaTeX
  would stop ``make pdf`` (conf.py sets ``\\tracinglostchars=3``); pdf_glyphs.txt
  is XeLaTeX's verdict on the PDF's fonts (tools/pdf_glyphs.py writes it).
* :func:`too_long`: at most four times the English plus 500 characters, 6,000 at
  most (docutils recurses once per link: about 7,800 characters of links overflow
  Python's stack; the longest English entry here has 1,450).
* :func:`interface_problems`: an interface string (``sphinx.po``) lands where
  nobody escapes it (Sphinx writes some into HTML attributes and LaTeX, other
  projects' scripts into HTML), so it adds no character that starts or ends
  markup there (where the English is HTML, exactly its HTML), no word of any
  script but Chinese characters nor any number its English lacks (or the
  glossary gives for its terms), and keeps the English's placeholders: a
  provenance sentence cannot claim a GPU, a version or a count the facts do not
  fill in. Words are compared as NFKC reads them (``Ｈ１００`` is ``H100``), case
  aside; a digit of any script is a number, and so is a run of Chinese numerals
  but a lone ``一`` and the words of :data:`NOT_NUMBERS`.
"""

import bisect
import functools
import re
import unicodedata
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from catalogs.glossary import term_pattern

# What starts or ends markup in HTML (text, attributes), JavaScript and CSS
# strings, LaTeX, Markdown and reST; and the line breaks that end a string.
MARKUP = "<>&\"'`\\{}$#^_~%[]*|\n\r\f\v"
# Invisible characters outside Unicode's format category: variation
# selectors and the Hangul fillers, which render as nothing.
_INVISIBLE = {0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)}
MAX_TRANSLATION = 6000  # characters of any one translation
GLYPHS = Path(__file__).with_name("pdf_glyphs.txt")
# A placeholder that Python's %-formatting, str.format or a JavaScript template fills in
# (strftime's %b and %Y are none: a date's translation may choose its own).
_PLACEHOLDER = re.compile(r"%(?:\(\w+\))?[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[diouxXeEfFgGcrsa%]|\$?\{\w*\}")
# What words leave out: those placeholders, and every %-directive (strftime's too).
_DIRECTIVE = re.compile(rf"{_PLACEHOLDER.pattern}|%(?:\(\w+\))?[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]")
# Chinese numerals and their values; units multiply what precedes them.
# (参/參, 3 in accounting, is left out: it is the 参 of 参数, "parameter".)
_DIGITS = dict(zip("〇零一壹二两兩贰貳三叁四肆五伍六陆陸七柒八捌九玖", map(int, "001122222334455666778899")))
_UNITS = dict(zip("十拾百佰千仟万萬亿億", (10, 10, 100, 100, 1000, 1000, 10**4, 10**4, 10**8, 10**8)))
# Words whose numerals are no number: "very", "in case", "by all means", "one by one",
# "both", and the common words of accounting numerals ("team", "mainland", "one after
# another", "tidy up").
NOT_NUMBERS = "十分 万一 萬一 千万 千萬 一一 两者 兩者 二者 队伍 隊伍 大陆 大陸 陆续 陸續 收拾".split()
_ENGLISH_NUMBERS = {
    name: str(n)
    for n, name in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}


def too_long(english, translation):
    """Why *translation* is too long to be a translation of *english*, or None."""
    limit = min(4 * len(english) + 500, MAX_TRANSLATION)
    if len(translation) <= limit or translation == english:  # Sphinx skips an identical one
        return None
    if limit == MAX_TRANSLATION:  # a long English: its length is not the reason
        return f"it is longer than any one translation may be ({len(translation)} characters; at most {limit}): split the paragraph"
    return f"it is far longer than its English ({len(translation)} characters for {len(english)}; at most {limit})"


def controls(text):
    """The invisible and direction-changing characters of *text*, each once, named."""
    return [
        f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"
        for char in dict.fromkeys(text)
        if char not in "\n\t"
        and (
            unicodedata.category(char) in ("Cc", "Cf", "Co", "Cn", "Zl", "Zp", "Cs")
            or ord(char) in _INVISIBLE
        )
    ]


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


def placeholders(text):
    """The placeholders of *text*, in order (``%(name)s``, ``%s``, ``%%``, ``{name}``, ``${name}``)."""
    return _PLACEHOLDER.findall(text)


def _han(char):
    """True for a Chinese character (NFKC has made compatibility ideographs unified ones)."""
    return char == "〇" or unicodedata.name(char, "").startswith("CJK UNIFIED IDEOGRAPH")


def _han_number(run):
    """The value of the Chinese numerals *run* (二〇二六 → 2026, 三百二十 → 320), as text."""
    if all(c in _DIGITS for c in run):
        return "".join(str(_DIGITS[c]) for c in run)
    total = section = digit = 0
    for char in run:
        if char in _DIGITS:
            digit = _DIGITS[char]
        elif _UNITS[char] >= 10**4:
            total += (section + digit or 1) * _UNITS[char]
            section = digit = 0
        else:
            section += (digit or 1) * _UNITS[char]
            digit = 0
    return str(total + section + digit)


def words(text):
    """The words (of any script but Chinese characters) and numbers of *text*, placeholders
    left out, as NFKC reads them, case aside; a number as its digits (八, ８, ٨: 8)."""
    text = unicodedata.normalize("NFKC", _DIRECTIVE.sub(" ", text)).casefold()
    for word in NOT_NUMBERS:
        text = text.replace(word, " ")
    found, run, kind = set(), [], None

    def end():
        if kind == "han" and run != ["一"]:
            found.add(_han_number(run))
        elif kind == "word":
            word = "".join(run)
            found.update([word, _ENGLISH_NUMBERS.get(word, word)])

    for char in text + " ":
        if _han(char):
            now = "han" if char in _DIGITS or char in _UNITS else None
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            now = "word"
            if char.isnumeric():  # a digit or numeral of any script, as its value
                value = unicodedata.numeric(char)
                char = str(int(value)) if value == int(value) else str(value)
        else:
            now = None
        if now != kind:
            end()
            run, kind = [], now
        if now:
            run.append(char)
    return found


def markup_problems(english, translation):
    """Why *translation* of *english* could end or start markup where it lands, or []."""
    reasons = []
    if has_markup(english) and _Markup(translation).found != _Markup(english).found:
        reasons.append("its HTML is not exactly the English's")
    extra = [c for c in MARKUP if translation.count(c) > english.count(c)]
    if extra:
        shown = " ".join(repr(c)[1:-1] if c.isspace() else c for c in extra)
        reasons.append(
            f"it adds {shown}, which can end or start markup where it lands"
            " (HTML, a script, CSS, LaTeX, Markdown)"
        )
    return reasons


def interface_problems(english, translation, allowed_words=()):
    """Why *translation* of the interface string *english* may not be shown, or [].

    *allowed_words* are words a translation may add: the glossary's Latin
    words for the terms of *english* (notebook -> Jupyter Notebook).
    """
    reasons = markup_problems(english, translation)
    allowed = {word for text in allowed_words for word in words(text)}
    new = sorted(words(translation) - words(english) - allowed)
    if new:
        reasons.append(f"it adds words or numbers the English does not say: {' '.join(new)[:80]}")
    theirs, ours = placeholders(english), placeholders(translation)
    positional = [p for p in theirs if p[1:2] != "(" and not p.endswith("}")]
    if sorted(ours) != sorted(theirs) or [p for p in ours if p in positional] != positional:
        reasons.append(
            f"its placeholders are not the English's ({' '.join(theirs) or 'none'}):"
            " it keeps each, as often as the English has it, and the order of"
            " those without a name"
        )
    hidden = added_controls(english, translation)
    if hidden:
        reasons.append(
            "it holds invisible or direction-changing characters: " + ", ".join(controls("".join(hidden)))
        )
    return reasons


def interface_verdict(english, translation, glossary, lang):
    """Why *lang*'s *translation* of the interface string *english* may not be shown, or []:
    :func:`interface_problems`, the *glossary*'s words for its terms allowed. The one rule of
    make check (gate/safety.py), the .mo (compiled_catalogs.py) and the templates
    (translation_safety.py)."""
    return interface_problems(english, translation, glossary_words(english, glossary, lang))


def glossary_words(english, glossary, lang):
    """The words (words()) the *glossary* (rows of locale/glossary.csv) gives *lang* for *english*'s terms."""
    found = set()
    for row in glossary:
        if term_pattern(row["en"]).search(english):
            found |= words(row.get(lang) or "")
    return found


# -- The characters the PDF can show ---------------------------------------------------


@functools.cache
def _table():
    """The table's runs: (first code points, last code points), sorted."""
    firsts, lasts = [], []
    for line in GLYPHS.read_text("utf-8").splitlines():
        if line and not line.startswith("#"):
            first, _, last = line.partition("-")
            firsts.append(int(first, 16))
            lasts.append(int(last or first, 16))
    return firsts, lasts


def in_pdf(char):
    """True if every font of the PDF has *char* (a line break and a tab need none)."""
    if char in "\n\t":
        return True
    firsts, lasts = _table()
    at = bisect.bisect_right(firsts, ord(char)) - 1
    return at >= 0 and ord(char) <= lasts[at]


def glyphless(english, translation):
    """Why *translation* of *english* cannot be in the PDF, or None: the characters it adds
    that no font of the PDF has (:func:`controls` names invisible ones)."""
    missing = [
        c for c in dict.fromkeys(translation) if c not in english and not in_pdf(c) and not controls(c)
    ]
    if not missing:
        return None
    named = ", ".join(f"{c} U+{ord(c):04X} ({unicodedata.name(c, 'unnamed')})" for c in missing[:5])
    return f"it holds characters no font of the PDF has, which would stop make pdf: {named}"
