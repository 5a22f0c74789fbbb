"""The words of a tutorial's code: its comments and docstrings found, translated and laid out.

A gettext build offers each paragraph of a code cell's comments and docstrings
as a message (extensions/localized_examples.py); the translated build and
the downloads put the translations back with :func:`localized_code`, which
refuses one that changes any token but the words (``make check``'s ``code``
check asks the same of the catalogs, gate/code.py). Translated prose is
wrapped as the English is: between jieba's words, the glossary's terms
(catalogs/glossary.py) whole, never inside inline markup.
"""

import functools
import inspect
import io
import itertools
import logging
import re
import tokenize
import unicodedata

from docutils import nodes
from sphinx.util.nodes import extract_messages

from site_layout import GLOSSARY

from catalogs.glossary import chinese_terms


# -- Comments and docstrings -------------------------------------------------------

_LAYOUT = (tokenize.NL, tokenize.COMMENT, tokenize.ENCODING)
# Not words for a reader: Sphinx-Gallery's settings and the directives of tools.
_CONFIG = re.compile(r"^(?:sphinx_gallery_\w+\s*=|fmt:|noqa\b|type:|pragma:|pylint:)")


def _tokens(code):
    return list(tokenize.generate_tokens(io.StringIO(code).readline))


def _is_docstring(tokens, i):
    """True if STRING token *i* is a statement of its own, first in a module, class or def."""
    skipped = (*_LAYOUT, tokenize.INDENT, tokenize.NEWLINE)
    before = next((tokens[j] for j in range(i - 1, -1, -1) if tokens[j].type not in skipped), None)
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    alone = after is None or after.type in (tokenize.NEWLINE, tokenize.ENDMARKER)
    first = before is None or (before.type == tokenize.OP and before.string == ":")
    return alone and first and tokens[i].string.lstrip("rbuRBU")[:3] in ('"""', "'''")


# Both are cached: the build and the checks ask for a cell's once per message in it.
@functools.lru_cache(maxsize=1024)
def code_tokens(code):
    """The tokens of *code* that make it the program it is: not comments, docstrings or layout."""
    tokens = _tokens(code)
    return tuple(
        (t.type, t.string)
        for i, t in enumerate(tokens)
        if t.type not in _LAYOUT and not (t.type == tokenize.STRING and _is_docstring(tokens, i))
    )


@functools.lru_cache(maxsize=1024)
def texts(code):
    """((kind, English text, (first line, first column, last line, last column)), ...) of *code*.

    One text per run of whole-line comments at one indentation, per comment
    after code, per paragraph of a docstring (which share its span), each on
    one line as Sphinx extracts a paragraph; Sphinx-Gallery's settings and
    tools' directives (``# noqa``) are none.
    """
    found, run = [], []
    tokens = _tokens(code)

    def close():
        if run:
            first, last = run[0], run[-1]
            text = " ".join(t.string[1:].strip() for t in run)
            found.append(("comment", text, (*first.start, *last.end)))
            run.clear()

    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT:
            words = tok.string[1:].strip()
            if not words or _CONFIG.match(words):
                close()
                continue
            whole = not tok.line[: tok.start[1]].strip()
            if whole and run and run[-1].start[0] == tok.start[0] - 1 and run[0].start[1] == tok.start[1]:
                run.append(tok)
                continue
            close()
            if whole:
                run.append(tok)
            else:
                found.append(("comment", words, (*tok.start, *tok.end)))
        elif tok.type not in (tokenize.NL,):
            close()
            if tok.type == tokenize.STRING and _is_docstring(tokens, i):
                found += [("docstring", text, (*tok.start, *tok.end)) for text in _docstring_text(tok.string)]
    close()
    return tuple(found)


def _docstring_text(literal):
    """The paragraphs of a docstring, each on one line: each a message of its own."""
    body = literal.lstrip("rbuRBU")
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(body[3:-3]))
    return [" ".join(p.split("\n")) for p in paragraphs if p.strip()]


def _width(text):
    """Columns *text* takes in a monospaced editor (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


_CJK = "\u3000-\u9fff\uff00-\uffef"
_NO_LINE_START = set("，。、；：？！）」』”’")  # punctuation that never starts a line
_NO_LINE_END = set("（「『“‘")  # nor ends one
# Inline markup, never broken: ``literal``, **strong**, *emphasis*, `text <target>`_, :role:`text`.
_MARKUP = r"(?::[\w.+-]+(?::[\w.+-]+)?:)?(?:``.+?``|\*\*\S.*?\*\*|\*\S.*?\*|`[^`]+`_{0,2})"
_ATOMS = re.compile(rf"{_MARKUP}|[{_CJK}]+|\s+|.")


@functools.cache
def _segmenter():
    """jieba, with the glossary's Chinese terms as words of their own (进程组 is one word)."""
    import jieba  # here: only Chinese text is wrapped, and jieba takes its time to import

    jieba.setLogLevel(logging.WARNING)
    # A copy of jieba's default dictionary, loaded once per process (0.4 s; the
    # live preview loads it before forking its builds, and Sphinx's Chinese
    # search uses it too). Still jieba's own words here: Sphinx's search adds
    # its user dictionary when it writes the pages, after the tutorials'
    # comments and downloads are made, which they are while reading.
    jieba.dt.check_initialized()
    tokenizer = jieba.Tokenizer(jieba.dt.dictionary)
    tokenizer.FREQ, tokenizer.total, tokenizer.initialized = dict(jieba.dt.FREQ), jieba.dt.total, True
    for language in ("zh_CN", "zh_TW"):
        for term in chinese_terms(GLOSSARY, language):
            tokenizer.add_word(_simplified(term))
    return tokenizer


@functools.cache
def _to_simplified():
    import opencc  # here: only Chinese text is compared, and OpenCC loads its dictionaries

    return opencc.OpenCC("t2s")


def _simplified(text):
    """*text* in Simplified characters, one for one, or *text* itself where that cannot be."""
    converted = _to_simplified().convert(text)
    return converted if len(converted) == len(text) else text


def _chinese_words(run):
    """A run of Chinese text cut into words by jieba, at the places it cuts its Simplified form
    (jieba's dictionary is Simplified: it cuts 後端 into 後 + 端)."""
    words, start = [], 0
    for word in _segmenter().lcut(_simplified(run), HMM=False):
        words.append(run[start : start + len(word)])
        start += len(word)
    return words


def _pieces(text):
    """The pieces a line of *text* may break between: words, Chinese words (jieba's, with the
    glossary's terms), inline markup, a space kept with the piece before it. Closing punctuation,
    an opening bracket, reST's escaped space (``\\ ``) and a piece reST could read at a line's
    start as a list or an underline are joined to their neighbour."""
    pieces, word = [], ""
    for atom in _ATOMS.findall(text):
        if atom.isspace():
            pieces.append(word + atom)
            word = ""
        elif re.fullmatch(rf"[{_CJK}]+", atom):
            pieces += [word] if word else []
            pieces += _chinese_words(atom)
            word = ""
        else:
            word += atom
    joined = []
    for piece in [p for p in [*pieces, word] if p]:
        if joined and (
            piece[0] in _NO_LINE_START
            or piece[0] in "\\-+#=|>."
            or joined[-1][-1] in _NO_LINE_END
            or joined[-1].endswith("\\ ")
        ):
            joined[-1] += piece
        else:
            joined.append(piece)
    return joined


def _wrap(text, width):
    """Lines of *text* no wider than *width* (unless one piece is), broken between pieces."""
    lines, line = [], ""
    for piece in _pieces(text):
        if line.strip() and _width(line + piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    return [*lines, line.rstrip()] if line.strip() else lines


def _replace_span(code, span, new):
    """*code* with the characters of *span* (start line, col, end line, col) replaced by *new*."""
    lines = code.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: span[0] - 1]) + span[1]
    end = sum(len(line) for line in lines[: span[2] - 1]) + span[3]
    return code[:start] + new + code[end:]


def raw_prefix(prefix, text):
    """The string *prefix* (``r``, ``u``...) for a literal holding *text* word for word: raw where
    it holds a backslash (reST's escaped space, ``\\ ``), which would otherwise be an escape."""
    if "\\" not in text or "r" in prefix.lower():
        return prefix
    return "r" + prefix.replace("u", "").replace("U", "")


def _rendered(kind, translations, span, code):
    """The source of a translated comment or docstring, laid out like the English's: each of its
    paragraphs *translations* wrapped to the English's width, a blank line between two."""
    indent = " " * span[1]
    width = max(40, 79 - span[1] - 2)
    if kind == "docstring":
        line = code.splitlines()[span[0] - 1]
        literal = line[span[1] :]
        quote = literal.lstrip("rbuRBU")[:3]
        prefix = raw_prefix(literal[: len(literal) - len(literal.lstrip("rbuRBU"))], "".join(translations))
        one_line = f"{prefix}{quote}{translations[0]}{quote}"
        # A docstring the English writes on one line stays on one, if it fits where the English does.
        if (
            span[0] == span[2]
            and len(translations) == 1
            and _width(indent + one_line) <= max(79, _width(line))
        ):
            return one_line
        paragraphs = [_wrap(text, width - 4) for text in translations]
        if len(paragraphs) == 1 and len(paragraphs[0]) == 1:
            return one_line
        lines = [line for i, p in enumerate(paragraphs) for line in ([""] if i else []) + p]
        body = "\n".join(indent + line if line else "" for line in lines).lstrip(" ")
        return f"{prefix}{quote}{body}\n{indent}{quote}"
    (translation,) = translations
    line = code.splitlines()[span[0] - 1]
    if line[: span[1]].strip():  # after code on its line: one line, as the English
        return "# " + translation
    return ("\n" + indent).join("# " + part for part in _wrap(translation, width))


def localized_code(code, translate):
    """Return (*code* with its comments and docstrings translated, [English texts refused]).

    ``translate(text)`` gives a translation or the text itself. One that would
    change the code's tokens is refused: its text (a docstring's every
    paragraph) stays English. One tokenizing checks them all; only if it fails
    is each tried alone, to tell which to refuse.
    """
    english, changes = code_tokens(code), []
    grouped = itertools.groupby(reversed(texts(code)), key=lambda found: found[2])
    for span, found in grouped:  # from the end: earlier spans stay valid
        found = list(found)[::-1]  # a docstring's paragraphs, in their order
        kind, originals = found[0][0], [text for _, text, _ in found]
        translations = [translate(text) for text in originals]
        translations = [t if t.strip() else e for t, e in zip(translations, originals, strict=True)]
        if translations != originals:
            changed = [e for t, e in zip(translations, originals, strict=True) if t != e]
            changes.append((span, _rendered(kind, translations, span, code), changed))
    whole = code
    for span, rendered, _ in changes:
        whole = _replace_span(whole, span, rendered)
    if same_tokens(whole, english):
        return whole, []
    refused = []
    for span, rendered, changed in changes:
        candidate = _replace_span(code, span, rendered)
        if same_tokens(candidate, english):
            code = candidate
        else:
            refused += changed[::-1]
    return code, refused[::-1]


def same_tokens(code, english):
    """Whether *code* is the program whose tokens are *english* (:func:`code_tokens`)."""
    try:
        return code_tokens(code) == english
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return False


# -- Prose ---------------------------------------------------------------------------


def localized_prose(rst, translate, parse, accept=lambda rst: True, width=None):
    """Return (*rst*, a text cell of an example, translated; [English messages refused]).

    *parse* turns reST into a doctree (as the checks parse messages); each
    translatable node's source text is found in *rst* and replaced, if
    ``accept(new rst)``; a title's underline is made as wide as the
    translated title. With a *width*, each other translation is wrapped to
    it (:func:`_wrap`), its lines indented as the English paragraph's first.
    """
    done, refused = 0, []
    for node, message in list(extract_messages(parse(rst))):
        english = message.replace("\n", " ")
        translation = translate(english)
        raw = node.rawsource
        if translation == english or not raw.strip():
            continue
        source_lines = [line.strip() for line in raw.strip().splitlines()]
        pattern = r"\n[ \t]*".join(re.escape(line) for line in source_lines)
        match = re.compile(pattern).search(rst, done)
        if not match:
            continue
        new, end = translation, match.end()
        underline = re.match(r"\n([=\-^~\"'`#*+.:_])\1*", rst[end:])
        if isinstance(node, nodes.title) and underline:
            new += "\n" + underline[1] * max(_width(translation), 1)
            end += underline.end()
        elif width and not isinstance(node, nodes.title):
            indent = match.start() - (rst.rfind("\n", 0, match.start()) + 1)
            new = ("\n" + " " * indent).join(_wrap(translation, max(40, width - indent)))
        candidate = rst[: match.start()] + new + rst[end:]
        if not accept(candidate):
            refused.append(english)
            continue
        rst, done = candidate, match.start() + len(new)
    return rst, refused
