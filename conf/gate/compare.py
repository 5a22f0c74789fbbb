"""One comparison of a translation with its English, on Sphinx's parse of both, for three checks.

* ``unused``: Sphinx will not use the translation and silently shows the English
  (it parses to a list, a quote, a heading), or drops part of it.
* ``markup``: inline markup shown as raw text, a parser error or unknown role; an
  inline literal or a role's value (``:samp:``, ``:pep:``) changed, or lost to
  plain text. Warnings: a literal in quotation marks, a placeholder translated,
  a path given the reader's language, emphasis dropped. More code is fine;
  the words of ``:guilabel:`` and the like are free.
* ``references``: a cross-reference, link, link name, substitution, footnote
  or citation that leads elsewhere or is lost; a target that does not resolve
  (project.py). Sphinx keeps a translation's references only where they match
  the English and warns otherwise (``-W`` fails): its own comparison
  (parse.inconsistent_references) decides, and only then is the warning claimed.
"""

import difflib
import re
import unicodedata
from collections import Counter
from dataclasses import replace
from urllib.parse import urlsplit

from sphinx.transforms.i18n import LITERAL_TYPE_NODES, parse_noqa

from gate.findings import ERROR, error, warning
from gate.parse import (
    EXPLICIT_TITLE,
    PROSE_ROLES,
    inconsistent_references,
    is_xref,
    lookup,
    parse,
    sphinx_node,
    spaced,
    written,
)

GLUE = 'put a space or "\\ " between inline markup and the text around it'
INCONSISTENT = 'Sphinx warns "inconsistent references" (fails -W)'
_IDEOGRAPH = re.compile(r"[\u3400-\u9fff]")  # a Chinese word, not full-width punctuation


def compare(message):
    """The Findings of the translation in *message*, each tagged with its check."""
    if message.syntax == "text" or "\n" in message.msgid or message.msgid == message.msgstr:
        return []  # plain text; literal blocks are never parsed; Sphinx skips identical ones
    unused = list(structure(message))
    known = message.project.roles
    english, translated = (
        parse(message.msgid, message.syntax, known),
        parse(message.msgstr, message.syntax, known),
    )
    shown = set()
    if message.syntax == "rst":  # MyST reads {role}`text` anywhere
        shown = shown_roles(message.msgstr, translated) - shown_roles(message.msgid, english)
    broken = list(raw_markup(message, english, translated, shown))
    lost = [
        *literals(message, english, translated, broken),
        *value_roles(message, english, translated, shown),
    ]
    if english.emphasis > translated.emphasis and not broken:
        lost.append(warning("drops the emphasis (*…*) the English has: the page shows those words plain"))
    # Markup shown raw loses its literals and roles too: no need to say so again.
    markup = broken + [finding for finding in lost if finding.severity == ERROR or not broken]
    found = [("unused", unused), ("markup", markup), ("references", references(message, english, translated))]
    return [replace(finding, check=check) for check, findings in found for finding in findings]


# -- unused: the node Sphinx makes of the translation ------------------------------

USED = ("paragraph", "title")
AS_TEXT = {node.__name__ for node in LITERAL_TYPE_NODES}  # what Locale takes as a literal's text
UNUSED = "Sphinx will not use this translation and shows the English"
ESCAPE = 'write a backslash before its first character ("\\1. ", "\\(a) ", "\\- ")'
# Why a one-line translation is some other block, and how to keep it a paragraph.
WHY = {
    "bullet_list": ('it starts like a list item ("- ", "* " or "+ ")', 'escape the mark: "\\- "'),
    "enumerated_list": ('it starts like a numbered item ("1. ", "a) ")', 'escape it: "1\\. "'),
    "block_quote": ("it starts with a space (a block quote)", "remove the leading space"),
    "field_list": ('it starts like a field (":name: ")', "reword the start"),
    "option_list": ('it starts like a command-line option ("-x ")', "reword the start"),
    "doctest_block": ('it starts with ">>> "', "reword the start"),
    "line_block": ('it starts with "| "', 'escape it: "\\| "'),
    "comment": ('it starts with ".. "', "reword the start"),
    "section": ('it starts with "#" (a heading)', 'escape it: "\\#"'),
    "raw": ("it is a directive", "write a paragraph"),
}
# MyST's nodes that mean something else than reST's.
WHY_MYST = {
    **WHY,
    "block_quote": ('it starts with ">" (a block quote)', 'escape it: "\\>"'),
    "literal_block": ("it starts with four spaces (a code block)", "remove the leading spaces"),
    "raw": ("it is HTML (a block of it)", "write a paragraph, or escape the < as &lt;"),
}
# A paragraph ends a sentence; a title does not ("Open the file." / "Opening files").
_SENTENCE_END = re.compile(r"[.!?;:。！？；：]['\"’”」』)）*`_]*$")


def sentence(text):
    """Whether English *text* ends like a sentence, so that it is a paragraph, not a title."""
    return bool(_SENTENCE_END.search(text.rstrip())) and not text.rstrip().endswith("...")


def reason(node, syntax):
    """Return why a translation is a *node*, and the fix."""
    why, fix = (WHY_MYST if syntax == "myst" else WHY).get(
        node, (f"it parses as {node.replace('_', ' ')}", "reword it")
    )
    return f"{why}; {fix}"


def usable(shape):
    """Whether Sphinx uses a translation of this (node, dropped) shape, entirely."""
    return shape[0] in USED and not shape[1]


def structure(message):
    """Yield an error if Sphinx would drop the translation, or part of it.

    The English's own parse tells its node: one that could be a title is a
    paragraph if it ends a sentence. One whose line starts like a list item
    ("(a) ...") is a paragraph whose source lines break elsewhere.
    """
    msgid, msgstr, syntax = message.msgid, message.msgstr, message.syntax
    english, translated = sphinx_node(msgid, syntax, False), sphinx_node(msgstr, syntax, False)
    if usable(english) and usable(translated):
        return  # the common case: a paragraph for a paragraph
    if usable(english) and translated[0] in AS_TEXT and not translated[1]:
        # Locale takes these for a literal block's text: their text, no markup, in the paragraph
        shown = "its HTML tags as text" if translated[0] == "raw" else "its markup unrendered"
        yield (error if translated[0] == "raw" else warning)(
            f"Sphinx shows this translation as plain text, {shown}: {reason(translated[0], syntax)}"
        )
    elif usable(english) and translated[0] in USED:
        dropped = ", ".join(d.replace("_", " ") for d in translated[1])
        yield error(
            f"Sphinx uses only the first paragraph of this translation, not the rest ({dropped}): write one"
        )
    elif english[0] in AS_TEXT or usable(translated):
        return  # a literal block's text is never parsed; a paragraph for a one-line list is fine
    elif not usable(english) and sentence(msgid) and translated[0] == english[0]:
        yield error(
            f"{UNUSED}: {reason(translated[0], syntax)} as the one line of the English does; {ESCAPE}"
        )
    else:  # Is it a section title? Sphinx parses those with an underline added.
        title = usable(sphinx_node(msgid, syntax, True))
        as_title = sphinx_node(msgstr, syntax, True)
        indented = msgstr[:1].isspace() and not msgid[:1].isspace()
        if usable(english) and (indented or not title or not usable(as_title) or sentence(msgid)):
            yield error(f"{UNUSED}: {reason(translated[0], syntax)}")
        elif usable(english):
            yield warning(f"Sphinx shows the English if this is no title: {reason(translated[0], syntax)}")
        elif not usable(as_title) and (title or syntax == "myst"):
            # A title such as "1. Install": reST reads it back, MyST does not ("2\\. ...").
            yield error(f"{UNUSED}: {reason(as_title[0], syntax)}")


# -- markup: inline markup shown raw, literals and values changed ------------------

# Quotation marks a translator may write instead of inline code.
_QUOTES = ("「」", "『』", "“”", "‘’", '""', "''", "《》", "〈〉")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|<[^<>]*>")
_CHINESE_TAG = re.compile(r"zh(?:[-_](?:cn|tw|hk|hans|hant))?|cn|tw", re.IGNORECASE)
_LANGUAGE_TAG = re.compile(r"[a-z]{2}(?:[-_][a-z]{2})?", re.IGNORECASE)
# Code, not a word: snake_case, dotted.name, call(), CamelCase.
_IDENTIFIER = re.compile(r"\w*(?:[_.]\w|\(\)|[a-z][A-Z])[\w.()]*")
_WORD = re.compile(r"[A-Za-z_][\w.]*\w|[A-Za-z]")
_ASCII_PUNCTUATION = str.maketrans({"。": ".", "、": ",", "「": "'", "」": "'"})
_QUOTED = re.compile(r"['\"‘“「] ?([*`|]+) ?['\"’”」]")  # '**', “ | ”: the characters themselves
_ESCAPED = re.compile(r"\\([*`|])")  # a markup character the translator wrote as a character
_UNBALANCED = {
    "Inline literal start-string without end-string.": "``",
    "Inline strong start-string without end-string.": "**",
    "Inline emphasis start-string without end-string.": "*",
    "Inline interpreted text or phrase reference start-string without end-string.": "`",
    "Inline substitution_reference start-string without end-string.": "|",
}
# docutils' words (and MyST's), and Sphinx's for a role in a domain it does not have.
_UNKNOWN_ROLE = re.compile(r'Unknown interpreted text role "([^"]+)"|^unknown role name: (\S+)')
# A role written out: ":name:`" (also with full-width colons or quotes). Role names
# are ASCII: Chinese words between two full-width colons, then code, are not one.
_ROLE_MARKER = re.compile(r"[:：](?:[a-zA-Z0-9_.+-]{1,24}[:：])?[a-zA-Z0-9_.+-]{1,24}[:：](?=[`'‘“])")
# Exactly two backquotes: part of neither a single-backquote role nor a longer run.
_DOUBLE_TICKS = re.compile(r"(?<!`)``(?!`)")
# A literal whose other end lost (or gained) one backquote: `code`` or ``code`.
_HALF_LITERAL = re.compile(r"(?<!`)`[^`\s][^`]*``(?!`)|(?<!`)``[^`\s][^`]*`(?!`)")


def squeeze(text):
    """Return *text* without whitespace: (0.5, 0.5) and (0.5,0.5) are the same value."""
    return "".join(text.split())


def context(text, index, width=8):
    """Return the piece of *text* around *index*."""
    return text[max(0, index - width) : index + width].strip()


def role_marker_name(marker):
    return re.sub("[:：]", ":", marker).strip(":").lower()


def shown_roles(text, markup):
    """Return the role markers of *text* that its parser did not take for roles."""
    parsed = Counter(r.name for r in markup.roles if r.name != "title-reference")
    shown = set()
    for marker in _ROLE_MARKER.findall(text):
        name = role_marker_name(marker)
        if parsed[name] > 0 and "：" not in marker:
            parsed[name] -= 1
        else:
            shown.add(marker)
    return shown


def shown_role(marker, text, known):
    """Return why role *marker* (":name:", "：name：") of *text* is shown as text, and the fix."""
    name = role_marker_name(marker)
    if "：" in marker:
        return f"role {marker} written with a full-width colon: write :{name}:"
    if name not in known:
        return f"unknown role {marker} (a typo or a translated role name?)"
    # Of the role's uses (the English's own among them), one glued to a word is shown raw.
    befores = [text[found.start() - 1 : found.start()] for found in re.finditer(re.escape(marker), text)]
    if any(b and not b.isspace() and unicodedata.category(b)[0] != "P" for b in befores):
        return f"role {marker} is glued to the text before it: {GLUE}"
    return f"role {marker} inside other inline markup (*…*, `…`): markup cannot nest"


def lone_double_ticks(message):
    """Where the translation's unbalanced `` is, or None if its `` are paired as the English's: one
    backquote dropped from a literal, which docutils reports as run-on roles and stray backquotes."""
    if message.syntax != "rst" or "```" in message.msgstr and "```" not in message.msgid:
        return None  # ``code``` is one backquote too many: "holds a backquote" says so
    count = len(_DOUBLE_TICKS.findall(message.msgstr))
    if count % 2 == 0 or len(_DOUBLE_TICKS.findall(message.msgid)) % 2:
        return None
    half = _HALF_LITERAL.search(message.msgstr)
    return half.start() if half else list(_DOUBLE_TICKS.finditer(message.msgstr))[-1].start()


def raw_markup(message, english, translated, shown):
    """Yield markup the translation shows as raw text or that its parser rejects."""
    msgstr = message.msgstr
    for marker in sorted(shown):
        yield error(shown_role(marker, msgstr, message.project.roles), at=marker)
    lone = lone_double_ticks(message)
    if lone is not None:
        near = context(msgstr, lone)
        yield error(
            f"unbalanced `` near {near!r}: inline code needs `` at both ends", at=msgstr[lone : lone + 12]
        )
        return  # the run-on role or stray backquote it causes is the same mistake
    new = Counter(translated.messages) - Counter(english.messages)
    for text in new:
        if text in _UNBALANCED and not shown:  # a role shown as text leaves a lone `
            index = msgstr.find(_UNBALANCED[text])
            yield error(
                f"unbalanced {_UNBALANCED[text]} near {context(msgstr, index)!r}: {GLUE}",
                at=msgstr[index : index + 12],
            )
        elif _UNKNOWN_ROLE.search(text):
            name = next(filter(None, _UNKNOWN_ROLE.search(text).groups()))
            if not any(name in marker.lower() for marker in shown):
                role = f":{name}:" if message.syntax == "rst" else f"{{{name}}}"
                yield error(f"unknown role {role} (a typo or a translated role name?)", at=role[1:] + "`")
        elif text not in _UNBALANCED:
            yield error(f"{'reST' if message.syntax == 'rst' else 'MyST'}: {text}")
    for role in translated.roles:
        if "`" in role.text and not any("`" in r.text for r in english.roles):
            yield error(
                f"a role runs on to a later backquote: {role.text[:30]!r}…; {GLUE}", at=role.text[:12]
            )
    for literal in translated.literals:
        if "`" in literal and not any("`" in e for e in english.literals):
            yield error(
                f"inline literal {literal[:30]!r} runs on to a later ``, or has one too many; {GLUE}",
                at=literal[:12],
            )
    # Characters the translator quotes ('**') or escapes (\*) are meant as characters, unless
    # they stand where the English has emphasis the translation lost (\*only\*).
    escaped = Counter(_ESCAPED.findall(msgstr))
    if english.emphasis > translated.emphasis:
        del escaped["*"]
    meant = Counter("".join(_QUOTED.findall(msgstr))) + escaped
    stray = translated.stray - english.stray - meant
    if stray and not new and not shown:
        index = min(translated.prose.find(char) for char in stray)
        text = context(translated.prose, index)
        yield error(f"markup shown as plain text: {text!r}; {GLUE}", at=text)


def value(literal):
    """Return what a literal holds: "(0.5, 0.5)" is "(0.5,0.5)", "f()" is "f", "x," is "x"."""
    return squeeze(literal).rstrip(",.;:").removesuffix("()")


def pairs(lost, added):
    """Yield (lost, added or None), the most alike first: each added one is used once."""
    ratio = {(old, new): difflib.SequenceMatcher(None, old, new).ratio() for old in lost for new in added}
    for old, new in sorted(ratio, key=ratio.get, reverse=True):
        if old in lost and new in added:
            lost.remove(old)
            added.remove(new)
            yield old, new
    yield from ((old, None) for old in lost)


def glossed(old, new):
    """Whether literal *new* is *old* with its translation: ``拉伸模式（Stretch Mode）`` (Chinese words
    added; a full-width parenthesis slipped into code, ``（b"\\x05"``, is no gloss)."""
    return squeeze(old).lower() in squeeze(new).lower() and bool(_IDEOGRAPH.search(new))


def localised(old, new):
    """Say how value *new* localises *old*, if that is all it changes, else None: a translated
    placeholder (``{RANDOM STRING}``), the reader's language in a path (``/images/zh_TW/``)."""
    old_holders, new_holders = _PLACEHOLDER.findall(old), _PLACEHOLDER.findall(new)
    if (
        old_holders
        and len(old_holders) == len(new_holders)
        and _PLACEHOLDER.sub("{}", old) == _PLACEHOLDER.sub("{}", new)
        and all(_IDEOGRAPH.search(b) for a, b in zip(old_holders, new_holders) if a != b)
    ):
        return "translates its placeholder: fine for text the reader replaces"
    old_parts, new_parts = re.split(r"([/\\])", old), re.split(r"([/\\])", new)
    changed = [(a, b) for a, b in zip(old_parts, new_parts) if a != b]
    if len(old_parts) == len(new_parts) and len(changed) == 1:
        ((before, after),) = changed
        if _LANGUAGE_TAG.fullmatch(before) and _CHINESE_TAG.fullmatch(after):
            return f"puts the language {after} in the path instead of {before}"
    return None


def symbols(text):
    """Return what *text* holds besides words: its punctuation (as ASCII), digits and symbols."""
    text = unicodedata.normalize("NFKC", text).translate(_ASCII_PUNCTUATION)
    return "".join(c for c in text if not (c.isalpha() or c in "_\\'\"" or c.isspace()))


def plain_word(text, prose):
    """Whether *prose* holds *text* as a word of its own (a letter beside it makes another)."""
    return bool(re.search(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", prose))


def literals(message, english, translated, broken=()):
    """Yield inline literals the translation changes or drops, counting each use (where
    markup is *broken*, only those it changes: it loses the others)."""
    mark = "``" if message.syntax == "rst" else "`"

    def kept(old, new):
        return value(old) == value(new) or glossed(old, new)

    for old, new in [(o, n) for o in english.literals for n in translated.literals]:
        if glossed(old, new) and _IDENTIFIER.fullmatch(old):
            yield warning(
                f"{mark}{new}{mark} is not the code {old} any more: put the translation after it", at=new
            )
    left, lost = Counter(translated.literals), []
    for old in english.literals.elements():  # ``x`` twice in the English is two uses
        new = next((new for new in left if left[new] and kept(old, new)), None)
        if new is None:
            lost.append(old)
        else:
            left[new] -= 1
    english_words = set(_WORD.findall(english.prose))

    def alike(old, new):  # a literal of the English's own words may still be a changed one
        return difflib.SequenceMatcher(None, old, new).ratio() >= 0.6 or set(old.split()) == set(new.split())

    def marks_prose(new):  # only marks as code words the English writes as prose
        words = set(_WORD.findall(new))
        return bool(words) and words <= english_words and not any(alike(old, new) for old in lost)

    added = [
        new
        for new in left.elements()
        if not any(kept(old, new) for old in english.literals) and not marks_prose(new)
    ]
    lost = [old for old in lost if f"{mark}{old}{mark}" not in translated.prose]  # shown raw
    for old in sorted(set(lost)):
        quotes = [
            q[0] + old + q[1]
            for q in _QUOTES
            if re.search(f"{q[0]} ?{re.escape(old)} ?{q[1]}", translated.prose)
        ]
        if quotes:  # not the added literal it looks most like: do not pair it
            lost = [other for other in lost if other != old]
            yield warning(
                f"{mark}{old}{mark} is in quotation marks here ({quotes[0]}), text, not code", at=quotes[0]
            )
    said = set()
    for old, new in pairs(lost, added):
        if new is not None:
            text = f"changes {mark}{old}{mark} to {mark}{new}{mark}"
            how = localised(old, new)
            if how:
                yield warning(f"{text}: {how}, else copy it exactly", at=new)
            elif " " in old.strip() and _IDEOGRAPH.search(new) and symbols(old) == symbols(new):
                yield warning(
                    f"{text}: only its words; fine for example or interface text, else copy it", at=new
                )
            else:
                yield error(f"{text}: copy inline code exactly", at=new)
        elif old not in said and not broken:
            said.add(old)
            yield from literal_lost(old, mark, english, translated, kept)


def literal_lost(old, mark, english, translated, kept):
    """Yield what became of literal *old*, which the translation has fewer times than the English."""
    uses = sum(n for new, n in translated.literals.items() if kept(old, new))
    cited = [r for r in translated.roles if r.name == "title-reference" and r.text == old]
    if len(cited) > sum(r.name == "title-reference" and r.text == old for r in english.roles):
        yield error(
            f"{mark}{old}{mark} has single backquotes here: italics, not code; write {mark}{old}{mark}",
            at=f"`{old}`",
        )
    elif uses and plain_word(old, translated.prose):  # the other uses became plain text
        yield warning(
            f"{mark}{old}{mark} is code {english.literals[old]} times in the English, {uses} here", at=old
        )
    elif not uses and squeeze(old) in squeeze(translated.prose):
        yield error(f"{mark}{old}{mark} is plain text here, not code: mark it as code again", at=old)
    elif not uses:  # none left; a second use said in other words is silent: a choice
        yield warning(f"drops {mark}{old}{mark}")


def value_roles(message, english, translated, shown):
    """Yield value roles (:samp:, :file:, :pep: ...) the translation changes or drops, and prose
    roles (:guilabel: ...) whose name it loses."""
    syntax = message.syntax

    def values(markup):  # roles running on to a later backquote are raw_markup's
        return [
            (r.name, squeeze(r.target).rstrip("/"), r)
            for r in markup.roles
            if not is_xref(r.name) and r.name not in PROSE_ROLES and "`" not in r.text
        ]

    def raw(name):  # the English's role texts as written, before docutils drops a backslash
        pattern = rf":{re.escape(name)}:`([^`]*)`" if syntax == "rst" else rf"\{{{name}\}}`([^`]*)`"
        return {squeeze(text) for text in re.findall(pattern, message.msgid)}

    old, new = values(english), values(translated)
    added = [item[:2] for item in new if item[:2] not in [o[:2] for o in old]]
    for name, target, role in [item for item in old if item[:2] not in [n[:2] for n in new]]:
        if any(role_marker_name(marker) == name for marker in shown):
            continue  # shown raw: raw_markup says so
        changed = [t for n, t in added if n == name]
        if changed:
            added.remove((name, changed[0]))
            text = f"changes {written(name, target, syntax)} to {written(name, changed[0], syntax)}"
            how = localised(target, changed[0])
            if how is None and changed[0] in raw(name):  # in a role, \\ shows as \
                how = "doubles its backslashes, so that the page shows the English's"
            yield (warning if how else error)(f"{text}: {how or 'copy it exactly'}", at=changed[0])
        elif space := spaced(name, target, message.msgstr, syntax):
            yield error(
                f"the space in {space!r} makes it text and italics: write {written(name, target, syntax)}",
                at=space,
            )
        elif role.links is not False:  # :pep:, :rfc:, a project's own role (an extlink)
            yield error(f"drops {written(name, role.text, syntax)}: the page loses its link")
        elif target not in squeeze(translated.prose):
            yield warning(f"drops {written(name, target, syntax)}")
    # A role whose name is lost or mistyped leaves its text as `default-role text` (italics).
    cited = sum(r.name == "title-reference" for r in translated.roles) > sum(
        r.name == "title-reference" for r in english.roles
    )
    prose_roles = PROSE_ROLES - {"title-reference"}

    def count(markup):
        return Counter(r.name for r in markup.roles if r.name in prose_roles)

    for name in count(english) - count(translated):
        if any(name in marker for marker in shown):
            continue  # raw_markup says so
        if cited:
            yield error(
                f":{name}: lost its role name (its text shows in italics): write {written(name, '…', syntax)}"
            )
        else:
            yield warning(f"drops :{name}: (its words may be translated, the role must stay)")


# -- references: where cross-references and links lead --------------------------------

# A language in a URL: zh.wikipedia.org, /zh-cn/, _ZH-CN.pdf.
_LANGUAGE = re.compile(
    r"[-_./]?(?<![a-z])(?:en|en[-_]us|zh|zh[-_](?:cn|tw|hans|hant)|cn|tw)(?![a-z])", re.IGNORECASE
)
_CHINESE = re.compile(r"(?<![a-z])zh(?:[-_](?:cn|tw|hk|hans|hant))?(?![a-z])", re.IGNORECASE)
_NO_SPACE = re.compile(r"[^\s`]<[^>]*>`")  # `text<URI>`_


def split_url(url):
    """urlsplit(*url*), or an empty split for text that is no URL at all (``x](https://x``)."""
    try:
        return urlsplit(url)
    except ValueError:
        return urlsplit("")


def role_text(role, syntax, target=None):
    """Return a role as the translator writes it, with another *target* if given."""
    text = role.text
    if target is not None:
        match = EXPLICIT_TITLE.match(role.text)
        text = f"{match[1] if match else role.text.split(' <')[0]} <{target}>"
    return written(role.name, text, syntax)


def retargeted(role, english, syntax):
    """*role* leading to the target of the English's *english*: its own title kept, never its own
    (mistyped) target made the title; without a title, the English's role as it is."""
    if EXPLICIT_TITLE.match(role.text):
        return role_text(role, syntax, raw_target(english))
    titled = written(english.name, f"TITLE <{raw_target(english)}>", syntax)
    return f"{role_text(english, syntax)} (or translate only its title: {titled})"


def raw_target(role):
    """Return the target of *role* as written (not lowercased)."""
    match = EXPLICIT_TITLE.match(role.text)
    return match[2] if match else role.text


def role_change(old, new, target, may_be_here=False):
    """Return a Finding if Sphinx resolves ``:new:`target``` otherwise than ``:old:`target```.

    Through intersphinx and in a ``.name`` search, Sphinx looks a target up among
    the object types of the role's ``objtypes_for_role`` (none for ``:const:``);
    an exact name the project defines, under any role of its domain. A role that
    finds all the English's types, shown alike (the "()" of ``:func:``), or a
    full name where the English's finds no type, resolves the same; where nobody
    here can tell whether the project defines it (*may_be_here*), a Python role
    is a warning, as one that finds some types or shows them otherwise; one that
    finds none, or looks in another domain (``:ref:`` → ``:doc:``), an error.
    """
    before, after = lookup(old), lookup(new)
    if before is None or after is None or before == after:
        return None  # an unknown role is markup's; :py:func: is :func:
    change = f"changes :{old}:`{target}` to :{new}:`{target}`"

    def kinds(found):
        return ", ".join(sorted(found)) if found else "no object type (exact names only)"

    exact = before[1] is None and "." in target and not target.startswith(".")
    if before[0] == after[0] and (exact or may_be_here and before[0] == "py"):
        if before[2] != after[2]:
            return warning(
                f"{change}: :{new}: shows it {'with' if after[2] else 'without'} (); keep :{old}: unless that is meant",
                at=f":{new}:",
            )
        if exact:
            return None
        if not (before[1] and after[1] and before[1] <= after[1]):
            return warning(
                f"{change}: Sphinx finds it under any role if this project defines it, but through "
                f"intersphinx :{new}: finds only {kinds(after[1])}; keep :{old}:",
                at=f":{new}:",
            )
    if before[0] != after[0] or not before[1] or not after[1] or not before[1] & after[1]:
        return error(
            f"{change}: Sphinx looks :{new}: up among {kinds(after[1])} in the {after[0]} domain, :{old}: among "
            f"{kinds(before[1])} in the {before[0]} domain, so the link breaks or leads elsewhere; keep :{old}:",
            at=f":{new}:",
        )
    if before[1] <= after[1] and before[2] == after[2]:
        return None
    what = (
        f"finds only some of what :{old}: finds"
        if not before[1] <= after[1]
        else f"shows it {'with' if after[2] else 'without'} ()"
    )
    return warning(f"{change}: :{new}: {what}; keep :{old}: unless that is meant", at=f":{new}:")


def xrefs(message, english, translated, said):
    """Yield cross-references whose targets or roles differ from the English's. Where Sphinx
    compared them and said nothing (*said*), a changed target is one it finds alike (``.date``
    for ``date``), and a dropped role one written ``:func:`!name```: no link, words only."""
    syntax, silent = message.syntax, said == [] and not message.noqa
    claim = f": {INCONSISTENT}" if said else ""
    old = [r for r in english.roles if is_xref(r.name)]
    new = [r for r in translated.roles if is_xref(r.name) and "`" not in r.text]  # else markup's
    lost = list((Counter(r.target for r in old) - Counter(r.target for r in new)).elements())
    added = list((Counter(r.target for r in new) - Counter(r.target for r in old)).elements())
    lost_roles = [next(r for r in old if r.target == target) for target in lost]
    may_be_here = getattr(message.project, "sources", None) is None
    for target in sorted({r.target for r in old} & {r.target for r in new}):
        names = Counter(r.name for r in old if r.target == target)
        other = Counter(r.name for r in new if r.target == target)
        for before, after in zip(sorted((names - other).elements()), sorted((other - names).elements())):
            finding = role_change(before, after, target, may_be_here)
            if finding:
                yield finding
    for target in added:
        role = next(r for r in new if r.target == target)
        shown = role_text(role, syntax)
        replaced = lost_roles.pop(0) if lost_roles else None
        if message.project.resolves(message.catalog, role) is False:
            fix = f"; keep the English's target: {retargeted(role, replaced, syntax)}" if replaced else ""
            yield error(f"{shown} does not resolve: no such target{fix}", at=role.text)
        elif replaced and "!" in role.text[:1] + replaced.text[:1]:
            yield error(
                f"changes {role_text(replaced, syntax)} to {shown}: with !, no link; copy it as in the English",
                at=role.text,
            )
        elif replaced and silent:  # ".date" for "date": Sphinx keeps the English's target
            yield warning(
                f"{shown} for the English's {role_text(replaced, syntax)}: the same target to Sphinx; check the link",
                at=role.text,
            )
        elif replaced:
            yield error(
                f"{shown} leads to {raw_target(role)!r}, the English to {raw_target(replaced)!r}",
                at=role.text,
            )
        else:  # Sphinx warns of an added reference as of a dropped one
            yield (error if said else warning)(f"adds {shown}{claim}", at=role.text)
    for role in lost_roles:
        if silent and not role.text.startswith("!"):
            continue  # Sphinx found each link: the one dropped is the English's other, ``!`` one
        if role.text.startswith("!") and any(value(lit) == value(role.target) for lit in translated.literals):
            continue  # no link either way: the same words as code
        marker = rf"[:：]{re.escape(role.name)}[:：]" if syntax == "rst" else rf"\{{{re.escape(role.name)}\}}"
        if role.text not in translated.prose:
            yield error(f"drops {role_text(role, syntax)}{claim}")
        elif not re.search(marker + r"[`'‘“]" + re.escape(role.text), message.msgstr):
            # (else the role is written out but shown raw: markup says why)
            space = spaced(role.name, role.text, message.msgstr, syntax)
            why = (
                f"the space after :{role.name}: makes it text"
                if space
                else "plain text or italics here, no link"
            )
            yield error(
                f"drops {role_text(role, syntax)} ({why}){claim}", at=space[:12] if space else role.text
            )


def localized(old, new):
    """Say how URL *new* is *old*'s site in another language (zh.wikipedia, /zh-cn/), or None."""
    old_host, new_host = split_url(old).hostname or "", split_url(new).hostname or ""
    if old_host != new_host:
        same = old_host.split(".")[-2:] == new_host.split(".")[-2:]
        return "a localized page?" if same and _LANGUAGE.fullmatch(new_host.split(".")[0].lower()) else None
    if _LANGUAGE.sub("", old) == _LANGUAGE.sub("", new):  # a #fragment keeps its case
        return "a localized page?"
    if old_host and _CHINESE.search(split_url(new).path) and not _CHINESE.search(old):
        return "the site's page in the reader's language? check that it is the same page"
    return None


def same_url(old, new):
    """Whether two URLs name the same page, scheme, ``www.`` and a trailing slash aside."""

    def page(url):
        return re.sub(r"^https?://(?:www\.)?", "", url.lower()).rstrip("/")

    return page(old) == page(new)


def same_page(uri, roles):
    """Return the role of *roles* whose target names the page or section *uri*: speed_python."""
    parts = set(re.split(r"[/#.?=&]+", uri.lower().replace("_", "-")))
    for role in roles:
        name = re.split(r"[.:/#]", role.target.lower().replace("_", "-"))[-1]
        if name and name in parts:
            return role
    return None


def links(message, english, translated):
    """Yield links whose URI changed or that are no longer links."""
    lost = list((Counter(english.links) - Counter(translated.links)).elements())
    added = list((Counter(translated.links) - Counter(english.links)).elements())
    for name in [uri for uri in added if not split_url(uri).scheme and not any(c in uri for c in "/.#")]:
        added.remove(name)  # docutils drops the spaces of "<Code of Conduct>"
        yield error(
            f"link name read as a URI: <{name}> (a named target has _ inside the brackets: <Name_>)",
            at=name[:8],
        )
    plain = squeeze(translated.prose + " ".join(r.text for r in translated.roles))
    targets = {r.target for r in english.roles}
    new_refs = [r for r in translated.roles if is_xref(r.name) and r.target not in targets]
    for uri, new in pairs(lost, added):
        address = uri.removeprefix("mailto:")
        if new is None and split_url(uri).scheme not in ("http", "https", "mailto", ""):
            continue  # docutils links any "scheme:" text; a literal is as good
        if new is None and any(uri in name for name in translated.refnames):
            continue  # `text<URI>`_: names() says so
        if new is None and address in plain:
            yield error(
                f"{address} is no longer a link: glued to text, or without its trailing _ or the space before <",
                at=address,
            )
        elif new is None and same_page(uri, new_refs):
            role = same_page(uri, new_refs)
            yield warning(
                f"replaces the link to {uri} by {role_text(role, message.syntax)}: the same page here?",
                at=role.text,
            )
        elif new is None:
            yield error(f"drops the link to {uri}")
        elif same_url(uri, new):
            continue
        elif localized(uri, new):
            yield warning(f"links to {new} instead of {uri}: {localized(uri, new)}", at=new)
        elif new.split(":", 1)[-1] in uri:
            yield error(
                f"only part of {address} is a link: it is glued to the text around it",
                at=new.split(":", 1)[-1],
            )
        else:
            yield error(f"changes the link {uri} to {new}", at=new)


def names(english, translated, noqa, said):
    """Yield changed named links, substitutions, footnote and citation references (*said*:
    Sphinx's own warnings; none without #noqa: it compared the links and notes, alike)."""
    silent = said == [] and not noqa
    claim = f"{INCONSISTENT}: " if said else ""
    kinds = (
        ("refnames", "link", f"{claim}keep it as in the English, or end the translation with #noqa"),
        ("substitutions", "substitution", "keep |name| as in the English"),
        ("notes", "footnote or citation reference", f"{claim}keep it as in the English"),
    )
    for attribute, what, fix in kinds:
        if silent and attribute != "substitutions":
            continue
        old, new = getattr(english, attribute), getattr(translated, attribute)
        lost, added = sorted((old - new).elements()), sorted((new - old).elements())
        for name in [n for n in added if attribute == "refnames" and _NO_SPACE.search(n)]:
            added.remove(name)  # "`文字<https://…>`_": one long link name
            yield error(
                f"no space before < in {name[:40]}…: one link name that leads nowhere; write `文字 <URL>`_",
                at=name[:12],
            )
        form = {"substitutions": "|{}|", "notes": "[{}]_"}.get(attribute, "{}")
        lost, added = [form.format(n) for n in lost], [form.format(n) for n in added]
        for name in [n for n in lost if squeeze(n) in squeeze(translated.prose)]:
            lost.remove(name)  # shown as text; markup reports a lone | itself
            if attribute != "substitutions":
                yield error(
                    f"{name} is shown as text, not as a {what}: it is glued to the text around it; {GLUE}",
                    at=name.strip("`_[]"),
                )
        if attribute == "substitutions":
            # Another name is undefined unless the English uses it; one left out only takes
            # its text or image off the page, often said in words (|reg|, |deg| → 摄氏度).
            added = [n for n in added if n.strip("|") not in old]
            if lost and not added:
                yield warning(f"leaves out {', '.join(lost)}: fine if the translation says it in words")
                continue
        if not lost and not added or attribute == "refnames" and noqa and len(added) < 2:
            continue  # (with noqa Sphinx compares none, and the one renamed name takes the English's target)
        text = f"{what} {', '.join(lost) or '(none)'} becomes {', '.join(added) or '(none)'}"
        if attribute == "refnames" and len(added) > 1:  # Sphinx pairs them in a random order
            fix = (
                "Sphinx warns, and" if said else "Sphinx"
            ) + " may link each to another's target: keep the names"
        yield error(f"{text}: {fix}", at=added[0].strip("|") if added else "")
    more_links = max(0, len(translated.links) - len(english.links))  # a name read as a URI
    if english.anonymous > translated.anonymous + more_links:
        yield error(f"anonymous links `…`__: {english.anonymous} in the English, {translated.anonymous} here")


# What this comparison cannot see but Sphinx warns of, by the start of its warning.
UNSEEN = {
    "inconsistent references": ": the same links in another order; end it with #noqa (each leads where it did)",
    "inconsistent term references": ": a role the English writes with ! (no link) or without; write it as it does",
}


def references(message, english, translated):
    """The references of the translation that lead elsewhere than the English's; a warning Sphinx
    gives where these are alike (in another order; ``:mod:`!name``` made a link) is an error too."""
    said = None
    if any(
        p.roles or p.refnames or p.notes or p.links or p.anonymous or p.stray for p in (english, translated)
    ):
        translation = parse_noqa(message.msgstr)[0]
        said = inconsistent_references(message.msgid, translation, message.syntax, message.noqa)
    found = [*xrefs(message, english, translated, said), *links(message, english, translated)]
    if message.syntax == "rst":
        found += names(english, translated, message.noqa, said)

    def targets(parsed):
        return Counter(r.target for r in parsed.roles if is_xref(r.name))

    alike = targets(english) == targets(translated) and all(
        getattr(english, name) == getattr(translated, name) for name in ("refnames", "notes", "links")
    )
    if said and alike and not any(finding.severity == ERROR for finding in found):
        fix = next((fix for start, fix in UNSEEN.items() if said[0].startswith(start)), "")
        found.append(error(f"Sphinx warns: {said[0]} (fails -W){fix}"))  # (else markup says why)
    return found
