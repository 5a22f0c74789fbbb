"""markup: a translation breaks inline markup, or changes an inline literal or a role's value.

Errors: markup shown as raw text (glued to Chinese text, a full-width colon
in a role, an unbalanced ``), a parser error or unknown role, a changed inline
literal or value (``:samp:``, ``:file:``, ...). Warnings: a literal or role
that is dropped or written as plain text or in quotation marks, counting each
use (``x`` twice in the English, once here and once as plain text); a literal
that reads like prose (a button label) translated; and changes a reviewer
usually accepts: a placeholder translated (``{RANDOM STRING}``), the reader's
language in an example path (``/images/nl/`` → ``/images/zh_TW/``), a role's
backslashes doubled so that the page shows the ones the English's text holds.
A literal in quotation marks is still on the page, word for word, only not as
code: a warning. Additions are fine: a translator may mark more as code. The
words of a role such as ``:guilabel:`` are free to translate. Cross-references
and links are the references check's.
"""

import difflib
import re
import unicodedata
from collections import Counter

from .common import ERROR, error, warning
from .parsing import PROSE_ROLES, is_xref, parse, spaced, written

_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
_IDEOGRAPH = re.compile(r"[\u3400-\u9fff]")  # a Chinese word, not full-width punctuation
# Quotation marks a translator may write instead of inline code.
_QUOTES = ("「」", "『』", "“”", "‘’", '""', "''", "《》", "〈〉")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|<[^<>]*>")
_LANGUAGE_TAG = re.compile(r"[a-z]{2,3}(?:[-_](?:[a-z]{2}|hans|hant))?", re.IGNORECASE)
# Code, not a word: snake_case, dotted.name, call(), CamelCase.
_IDENTIFIER = re.compile(r"\w*(?:[_.]\w|\(\)|[a-z][A-Z])[\w.()]*")
_WORD = re.compile(r"[A-Za-z_][\w.]*\w|[A-Za-z]")
_ASCII_PUNCTUATION = str.maketrans({"。": ".", "、": ",", "「": "'", "」": "'"})
_QUOTED = re.compile(r"(?<=['\"‘“「])([*`|]+)(?=['\"’”」])")
GLUE = 'put a space or "\\ " between inline markup and the text around it'
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


def tick(syntax):
    """Return the inline-literal delimiter of *syntax*."""
    return "``" if syntax == "rst" else "`"


def squeeze(text):
    """Return *text* without whitespace: (0.5, 0.5) and (0.5,0.5) are the same value."""
    return "".join(text.split())


def context(text, index, width=8):
    """Return the piece of *text* around *index*."""
    return text[max(0, index - width) : index + width].strip()


def quoted(text):
    """Return the markup characters that *text* quotes as characters: '**', “`”."""
    return Counter("".join(_QUOTED.findall(text)))


def shown_roles(text, markup):
    """Return the role markers of *text* that its parser did not take for roles."""
    markers = _ROLE_MARKER.findall(text)
    parsed = Counter(r.name for r in markup.roles if r.name != "title-reference")
    shown = set()
    for marker in markers:
        name = re.sub("[:：]", ":", marker).strip(":").lower()
        if parsed[name] > 0 and "：" not in marker:
            parsed[name] -= 1
        else:
            shown.add(marker)
    return shown


def shown_role(marker, text, known):
    """Return why role *marker* (":name:", "：name：") of *text* is shown as text, and the fix."""
    name = re.sub("[:：]", ":", marker).strip(":").lower()
    if "：" in marker:
        return f"role {marker} written with a full-width colon: write :{name}:"
    if name not in known:
        return f"unknown role {marker} (a typo or a translated role name?)"
    # Of the role's uses (the English's own among them), one glued to a word is shown raw.
    befores = [text[found.start() - 1 : found.start()] for found in re.finditer(re.escape(marker), text)]
    if any(b and not b.isspace() and unicodedata.category(b)[0] != "P" for b in befores):
        return f"role {marker} is glued to the text before it: {GLUE}"
    return f"role {marker} inside other inline markup (*…*, `…`): markup cannot nest"


# Exactly two backquotes: part of neither a single-backquote role nor a longer run.
_DOUBLE_TICKS = re.compile(r"(?<!`)``(?!`)")
# A literal whose other end lost (or gained) one backquote: `code`` or ``code`.
_HALF_LITERAL = re.compile(r"(?<!`)`[^`\s][^`]*``(?!`)|(?<!`)``[^`\s][^`]*`(?!`)")


def lone_double_ticks(message):
    """Return where the translation's unbalanced `` is, or None if its `` are paired.

    One backquote dropped from a literal (the most common slip) leaves an odd
    number of ``; docutils then reports run-on roles and stray backquotes, which
    hide the cause. The English's count is compared so that a message quoting a
    lone `` on purpose is not reported.
    """
    if message.syntax != "rst" or "```" in message.msgstr and "```" not in message.msgid:
        return None  # ``code``` is one backquote too many: "holds a backquote" says so
    count = len(_DOUBLE_TICKS.findall(message.msgstr))
    if count % 2 == 0 or len(_DOUBLE_TICKS.findall(message.msgid)) % 2:
        return None
    half = _HALF_LITERAL.search(message.msgstr)
    return half.start() if half else list(_DOUBLE_TICKS.finditer(message.msgstr))[-1].start()


def raw_markup(message, english, translated, shown):
    """Yield markup the translation shows as raw text or that its parser rejects."""
    for marker in sorted(shown):
        yield error(shown_role(marker, message.msgstr, message.project.roles), at=marker)
    lone = lone_double_ticks(message)
    if lone is not None:
        yield error(
            f"unbalanced `` near {context(message.msgstr, lone)!r}: inline code needs "
            "`` at both ends, a role's text ` at both ends",
            at=message.msgstr[lone : lone + 12],
        )
        return  # the run-on role or stray backquote it causes is the same mistake
    new = Counter(translated.messages) - Counter(english.messages)
    for text in new:
        if text in _UNBALANCED and not shown:  # a role shown as text leaves a lone `
            delimiter = _UNBALANCED[text]
            index = message.msgstr.find(delimiter)
            yield error(
                f"unbalanced {delimiter} near {context(message.msgstr, index)!r}: {GLUE}",
                at=message.msgstr[index : index + 12],
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
                f"inline literal {literal[:30]!r} holds a backquote: one too many, or "
                f"it runs on to a later ``; {GLUE}",
                at=literal[:12],
            )
    stray = translated.stray - english.stray - quoted(message.msgstr)
    if stray and not new and not shown:
        index = min(translated.prose.find(char) for char in stray)
        text = context(translated.prose, index)
        yield error(f"markup shown as plain text: {text!r}; {GLUE}", at=text)


def value(literal):
    """Return what a literal holds: "(0.5, 0.5)" is "(0.5,0.5)", "f()" is "f", "x," is "x"."""
    return squeeze(literal).rstrip(",.;:").removesuffix("()")


def pairs(lost, added):
    """Yield (lost, added or None), the most alike first: each added literal is used once."""
    ratio = {(old, new): difflib.SequenceMatcher(None, old, new).ratio() for old in lost for new in added}
    for old, new in sorted(ratio, key=ratio.get, reverse=True):
        if old in lost and new in added:
            lost.remove(old)
            added.remove(new)
            yield old, new
    yield from ((old, None) for old in lost)


def glossed(old, new):
    """Whether literal *new* is *old* with its translation: ``拉伸模式（Stretch Mode）``.

    The addition must hold Chinese words: a full-width parenthesis slipped into
    the literal (``（b"\\x05"``) changes the code.
    """
    return squeeze(old).lower() in squeeze(new).lower() and bool(_IDEOGRAPH.search(new))


def quotes(text, prose):
    """Return *text* as *prose* writes it in quotation marks (「text」), or None."""
    for pair in _QUOTES:
        if re.search(f"{re.escape(pair[0])} ?{re.escape(text)} ?{re.escape(pair[1])}", prose):
            return pair[0] + text + pair[1]
    return None


def plain(text, prose):
    """Whether *prose* holds *text* as a word of its own (a letter beside it makes another)."""
    return bool(re.search(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", prose))


def localised(old, new):
    """Say how value *new* localises *old*, if that is all it changes; else return None.

    A translated placeholder (``{RANDOM STRING}``, ``<profile-name>``) stands for
    what the reader types; a language code replaced in a path (``/images/nl/``)
    names the reader's copy. Reviewers accept both, so they are warnings.
    """
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
    if (
        len(old_parts) == len(new_parts)
        and len(changed) == 1
        and all(_LANGUAGE_TAG.fullmatch(part) for part in changed[0])
    ):
        return f"puts the language {changed[0][1]} in the path instead of {changed[0][0]}"
    return None


def symbols(text):
    """Return what *text* holds besides words: its punctuation (as ASCII), digits and symbols."""
    text = unicodedata.normalize("NFKC", text).translate(_ASCII_PUNCTUATION)
    return "".join(c for c in text if not (c.isalpha() or c in "_\\'\"" or c.isspace()))


def marks_prose(literal, english):
    """Whether a translation's *literal* only marks as code words the English writes as prose."""
    words = set(_WORD.findall(literal))
    return bool(words) and words <= set(_WORD.findall(english.prose))


def literals(message, english, translated):
    """Yield inline literals the translation changes or drops, counting each use."""

    def kept(old, new):
        return value(old) == value(new) or glossed(old, new)

    for old, new in [(o, n) for o in english.literals for n in translated.literals]:
        if glossed(old, new) and _IDENTIFIER.fullmatch(old):
            yield warning(
                f"{tick(message.syntax)}{new}{tick(message.syntax)} is not the code "
                f"{old} any more: put the translation outside the literal",
                at=new,
            )
    left, lost = Counter(translated.literals), []
    for old in english.literals.elements():  # ``x`` twice in the English is two uses
        new = next((new for new in left if left[new] and kept(old, new)), None)
        if new is None:
            lost.append(old)
        else:
            left[new] -= 1
    added = [
        new
        for new in left.elements()
        if not marks_prose(new, english) and not any(kept(old, new) for old in english.literals)
    ]
    mark = tick(message.syntax)
    lost = [old for old in lost if f"{mark}{old}{mark}" not in translated.prose]  # shown raw
    for old in sorted(set(lost)):
        quoted = quotes(old, translated.prose)
        if quoted:  # not the added literal it looks most like: do not pair it
            lost = [other for other in lost if other != old]
            yield warning(
                f"{mark}{old}{mark} is in quotation marks here ({quoted}): the page "
                f"shows it as text, not as code; write {mark}{old}{mark}",
                at=quoted,
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
                    f"{text}: only its words changed; fine for example or interface "
                    "text, else copy it exactly",
                    at=new,
                )
            else:
                yield error(f"{text}: copy inline code exactly", at=new)
            continue
        if old in said:
            continue
        said.add(old)
        uses = sum(n for new, n in translated.literals.items() if kept(old, new))
        if uses and plain(old, translated.prose):  # the other uses became plain text
            yield warning(
                f"{mark}{old}{mark} is code {english.literals[old]} times in the "
                f"English, {uses} here, and plain text elsewhere: mark it as code again",
                at=old,
            )
        elif not uses and any(r.name == "title-reference" and r.text == old for r in translated.roles):
            yield error(
                f"{mark}{old}{mark} has single backquotes here (`{old}`): the page shows "
                f"it in italics, not as code; write {mark}{old}{mark}",
                at=f"`{old}`",
            )
        elif not uses and squeeze(old) in squeeze(translated.prose):
            yield warning(f"{mark}{old}{mark} is plain text here: mark it as code again")
        elif not uses:  # none left; a second use said in other words is silent: a choice
            yield warning(f"drops {mark}{old}{mark}")


def roles(message, english, translated, shown):
    """Yield value roles (:samp:, :file:, ...) the translation changes, and roles it loses."""
    syntax = message.syntax

    def values(markup):  # roles running on to a later backquote: raw_markup's
        return [
            (r.name, squeeze(r.target))
            for r in markup.roles
            if not is_xref(r.name) and r.name not in PROSE_ROLES and "`" not in r.text
        ]

    def count(markup, names):
        return Counter(r.name for r in markup.roles if r.name in names)

    def raw(name):  # the English's role texts as written, before docutils drops a backslash
        pattern = rf":{re.escape(name)}:`([^`]*)`" if syntax == "rst" else rf"\{{{name}\}}`([^`]*)`"
        return {squeeze(text) for text in re.findall(pattern, message.msgid)}

    old, new = values(english), values(translated)
    added = [item for item in new if item not in old]
    for name, target in [item for item in old if item not in new]:
        changed = [t for n, t in added if n == name]
        if changed:
            added.remove((name, changed[0]))
            text = f"changes {written(name, target, syntax)} to {written(name, changed[0], syntax)}"
            how = localised(target, changed[0])
            if how is None and changed[0] in raw(name):
                how = (
                    "doubles its backslashes, so that the page shows those of the English's "
                    "text (in a role, \\\\ shows as \\)"
                )
            if how:
                yield warning(f"{text}: {how}, else copy it exactly", at=changed[0])
            else:
                yield error(f"{text}: copy it exactly", at=changed[0])
        elif space := spaced(name, target, message.msgstr, syntax):
            yield error(
                f"the space in {space!r} makes :{name}: text and its value italics: "
                f"write {written(name, target, syntax)}",
                at=space,
            )
        elif target not in squeeze(translated.prose):
            yield warning(f"drops {written(name, target, syntax)}")
    # A role whose name is lost or mistyped leaves its text as `default-role text` (italics).
    cited = count(translated, {"title-reference"}) > count(english, {"title-reference"})
    prose_roles = PROSE_ROLES - {"title-reference"}
    for name in count(english, prose_roles) - count(translated, prose_roles):
        if any(name in marker for marker in shown):
            continue  # raw_markup says so
        if cited:
            yield error(
                f":{name}: lost its role name (its text shows in italics): write {written(name, '…', syntax)}"
            )
        else:
            yield warning(f"drops :{name}: (its words may be translated, the role must stay)")


def check(message):
    """Yield how the translation's inline markup differs from the English's."""
    if message.syntax == "text" or "\n" in message.msgid or message.msgid == message.msgstr:
        return  # plain text; literal blocks are never parsed; Sphinx skips identical ones
    known = message.project.roles
    english = parse(message.msgid, message.syntax, known)
    translated = parse(message.msgstr, message.syntax, known)
    shown = set()
    if message.syntax == "rst":  # MyST reads {role}`text` anywhere
        shown = shown_roles(message.msgstr, translated) - shown_roles(message.msgid, english)
    broken = list(raw_markup(message, english, translated, shown))
    yield from broken
    # Markup shown raw loses its literals and roles too: no need to say so again.
    lost = [*literals(message, english, translated), *roles(message, english, translated, shown)]
    yield from (finding for finding in lost if finding.severity == ERROR or not broken)
