"""Read and write catalogs (.po): Babel's reader and writer, strict, with the old English.

The canonical form is :func:`text`'s: Babel's, at :data:`WIDTH` characters, the
revision date unset (editors stamp it on every save), obsolete entries last.

* :func:`read` refuses a catalog at the first line ``msgfmt`` would reject
  (:func:`line_problems`: Babel takes an unterminated string as it is), one that
  is no plain UTF-8 file of at most :data:`MAX_SIZE` bytes (a link under
  ``locale/`` is not opened through), or whose header names another charset;
  an error names the line and quotes no more of it than a keyword.
* Babel reads ``#| msgid`` as a comment (python-babel/babel#206) and writes it
  broken across quotes, which GNU gettext rejects: both are done here.
* :func:`misplaced` names whatever under ``locale/`` is not the glossary or a
  catalog of a translation, under a plain name; :func:`printable` prints a path.
"""

import codecs
import contextlib
import functools
import io
import os
import pickle
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from babel.messages.catalog import Catalog  # noqa: F401  (for the callers that make one)
from babel.messages.pofile import PoFileError, normalize, read_po, unescape, write_po

from languages import select

WIDTH = 79
UNSET_DATE = "YEAR-MO-DA HO:MI+ZONE"
MAX_SIZE = 4 * 2**20  # bytes of one catalog; this project's largest is about 100 KiB
# One quoted string: possessive and atomic, so a line that does not match fails
# at once instead of trying every way to split "\777\777..." (exponential).
_STRING = r'"(?:[^"\\]++|\\(?>[\\"\'?abfnrtv]|[0-7]{1,3}+|x[0-9a-fA-F]++))*+"'
_ENTRY_LINE = re.compile(rf"^(?:#~ ?)?(?:(?P<keyword>[a-z_]+(?:\[\d+\])?)\s+)?(?P<string>{_STRING})\s*$")
# What may come after each part of an entry.
_NEXT = {
    None: {"msgctxt", "msgid"},
    "msgctxt": {"msgid"},
    "msgid": {"msgstr", "msgid_plural"},
    "msgid_plural": {"msgstr[]"},
    "msgstr": {"msgctxt", "msgid"},
    "msgstr[]": {"msgstr[]", "msgctxt", "msgid"},
}
# The header's project name followed by no version, as Babel writes it.
_UNVERSIONED = re.compile(r'^("Project-Id-Version: [^"\n]*?) +\\n', re.MULTILINE)
# A "#|" line as Babel keeps it: a translator comment "| msgid ..." or '| "..."'.
_PREVIOUS = re.compile(r'^\|\s*(?:(msgctxt|msgid_plural|msgid)\s+)?(".*")$')


class CatalogError(ValueError):
    """A catalog that cannot be read; ``line`` says where, ``path`` (set by :func:`read` and
    :func:`catalog_text`) which file."""

    def __init__(self, line, message, path=None):
        super().__init__(message)
        self.line, self.path = line, path

    def located(self):
        """``file:line: error: what is wrong``, as every command prints it."""
        where = f"{shown(self.path)}:" if self.path is not None else "line "
        return f"{where}{self.line or 1}: error: {self}"


@contextlib.contextmanager
def naming(path):
    """Give a CatalogError raised inside the ``with`` the *path* of its catalog."""
    try:
        yield
    except CatalogError as err:
        err.path = path if err.path is None else err.path
        raise


def unreadable(locale_dir, langs):
    """The CatalogError of each catalog of *langs* under *locale_dir* that cannot be read."""
    found = []
    for lang in langs:
        for path in language_catalogs(locale_dir, lang).values():
            try:
                read(path, lang)
            except CatalogError as err:
                found.append(err)
    return found


def _bad_line(text):
    """Say what is wrong with a line that is neither a comment nor a valid entry line."""
    body = text[3:] if text.startswith("#~ ") else text
    keyword = body.split(None, 1)[0] if body.split() else ""
    if not body.startswith('"') and not re.fullmatch(r"[a-z_]+(\[\d+\])?", keyword):
        return _unknown(keyword)
    if re.sub(r"\\.", "", body).count('"') % 2:
        return "end-of-line within string"
    bad = re.search(r'(?<!\\)(?:\\\\)*+(\\[^\\"\'?abfnrtv0-7x])', body)
    if bad and bad[1] == "\\ ":
        return (
            "invalid control sequence '\\ ': inside a .po a backslash is written"
            " twice; write the reST escape between markup and Chinese as '\\\\ '"
        )
    if bad:
        return f"invalid control sequence '{bad[1]}': inside a .po a backslash is written twice ('\\\\')"
    return "invalid control sequence" if re.search(r'\\[^\\"\'?abfnrtv0-7x]', body) else "syntax error"


def _unknown(keyword):
    """Say that *keyword* is no keyword, quoting it only if it could be one (no file's secrets)."""
    if re.fullmatch(r"[A-Za-z_][\w\[\]]{0,19}", keyword):
        return f"keyword {keyword!r} unknown"
    return "neither a comment nor a keyword with a quoted string"


def line_problems(text):
    """[(line, problem)] where ``msgfmt`` would reject the catalog *text*: each line a comment, a
    keyword with one quoted string or a quoted continuation, in a valid order; no entry twice."""
    problems, entries = [], []  # entries: [obsolete, {part: joined text}, msgid line]
    state, state_line, recovering = None, 0, False
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped or re.match(r"#(?!~)|#~\|", stripped):
            continue  # a comment, or a previous msgid of an obsolete entry
        match = _ENTRY_LINE.match(stripped)
        keyword = match and match["keyword"]
        part = "msgstr[]" if keyword and keyword.startswith("msgstr[") else keyword
        if not match or (keyword and part not in _NEXT):
            problems.append((number, _bad_line(stripped) if not match else _unknown(keyword)))
            state, recovering = None, True  # one mistake, one report
            continue
        string = unescape(match["string"])
        if keyword is None:
            if state is not None and entries:
                entries[-1][1][state] = entries[-1][1].get(state, "") + string
            elif state is None and not recovering:
                problems.append((number, "a string with no keyword before it"))
            continue
        if recovering and part not in ("msgctxt", "msgid"):
            continue
        recovering = False
        if part not in _NEXT[state]:
            if state in ("msgctxt", "msgid", "msgid_plural") and part in ("msgctxt", "msgid"):
                problems.append((state_line, "missing 'msgstr' section"))
            else:
                expected = " or ".join(sorted(_NEXT[state]))
                problems.append((number, f"{keyword!r} where {expected} was expected"))
        if part == "msgctxt" or (part == "msgid" and state != "msgctxt"):
            entries.append([stripped.startswith("#~"), {}, number])
        if entries:
            entries[-1][1].setdefault(part, string)
            if part == "msgid":
                entries[-1][2] = number
        state, state_line = part, number
    if state in ("msgctxt", "msgid", "msgid_plural"):
        problems.append((state_line, "missing 'msgstr' section"))
    if not problems:  # else the entries are not what the translator meant
        seen = {}
        for obsolete, parts, line in entries:
            key = (obsolete, parts.get("msgctxt"), parts.get("msgid"))
            if key in seen:
                problems.append((line, f"duplicate message definition (first at line {seen[key]})"))
            seen.setdefault(key, line)
    return sorted(problems)


def catalog_language(path):
    """The language of a catalog from its place, locale/<lang>/LC_MESSAGES/..., else None."""
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    index = parts.index("LC_MESSAGES") if "LC_MESSAGES" in parts else 0
    return parts[index - 1] if index else None


def catalog_text(path):
    """The text of the catalog file *path*; CatalogError if it is no plain UTF-8 file of at most
    :data:`MAX_SIZE` bytes (a link, a device or a folder is not opened through: ``O_NOFOLLOW``)."""
    with naming(path):
        return _catalog_text(path)


def _catalog_text(path):
    """:func:`catalog_text`, its CatalogError not yet naming *path*."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError as err:
        if Path(path).is_symlink():
            raise CatalogError(
                0, "a symbolic link, not a catalog: catalogs are plain files under locale/"
            ) from None
        raise CatalogError(0, f"cannot be opened ({err.strerror})") from None
    with open(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise CatalogError(0, "not a plain file (a device, a pipe or a folder)")
        data = file.read(MAX_SIZE + 1)
    if len(data) > MAX_SIZE:
        raise CatalogError(0, f"larger than {MAX_SIZE // 2**20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CatalogError(1, f"not UTF-8: {err.reason}") from None


@dataclass
class CatalogFile:
    """A catalog file read once: its text and entries, or the CatalogError that says why not."""

    path: Path
    shown: str  # the path as a message names it (:func:`shown`)
    language: str
    text: str = None
    catalog: Catalog = None
    entries: list = ()  # its entries, the header left out: each knows its msgstr's lines (msgstr_line)
    error: CatalogError = None


def open_catalog(path, language=None):
    """The :class:`CatalogFile` of *path*: read and parsed, or why it cannot be."""
    found = CatalogFile(Path(path), shown(path), language or catalog_language(path))
    try:
        found.text = catalog_text(path)
        found.catalog = parse(found.text, found.language)
        found.entries = messages(found.catalog)
    except CatalogError as err:
        found.error = err
    return found


def read(path, language=None):
    """The Babel Catalog of the file *path* (its language by default its folder's), or CatalogError."""
    with naming(path):
        return parse(catalog_text(path), language or catalog_language(path))


def parse(text, language=None):
    """The Babel Catalog of a catalog's *text*, or CatalogError; parsed once per process, and
    each caller gets its own copy to change."""
    return pickle.loads(_parsed(text, language))


@functools.lru_cache(maxsize=256)  # this project has 20 catalogs; a preview adds one per save
def _parsed(text, language):
    """:func:`parse`'s catalog of *text*, pickled. An error is raised again on each call."""
    text = text.lstrip("\ufeff")
    problems = line_problems(text)
    if problems:
        line, problem = problems[0]
        raise CatalogError(line, f"cannot read this line ({problem})")
    # Babel has no place for an obsolete entry's old English; blank lines keep the numbers.
    lines = ["" if line.lstrip().startswith("#~|") else line for line in text.split("\n")]
    try:  # a language Babel does not know is fine: its catalogs need no plural rules
        catalog = read_po(lines, locale=language, abort_invalid=True)
    except PoFileError as err:
        raise CatalogError(err.lineno + 1, f"cannot read this line ({err})") from None
    try:
        utf8 = codecs.lookup(catalog.charset).name == "utf-8"
    except LookupError:
        utf8 = False
    if not utf8:  # Babel writes the .mo in that charset, and gettext decodes it with it
        raise CatalogError(
            header_line(lines, "Content-Type"),
            f"the header names the charset {catalog.charset[:40]!r}: a catalog is UTF-8 (write charset=UTF-8)",
        )
    for message in [*catalog, *catalog.obsolete.values()]:
        _previous_ids(message)
        message.msgstr_lines = _msgstr_lines(lines, message.lineno or 1)
    return pickle.dumps(catalog)


def _previous_ids(message):
    """Move the ``#|`` lines that Babel read as comments into ``message.previous_id``."""
    previous, kept, target = {}, [], None
    for comment in message.user_comments:
        match = _PREVIOUS.match(comment)
        if match is None:
            kept.append(comment)
            continue
        target = match[1] or target or "msgid"
        previous[target] = previous.get(target, "") + unescape(match[2])
    message.user_comments = kept
    if "msgid" in previous:
        message.previous_id = [previous["msgid"], *filter(None, [previous.get("msgid_plural")])]


def _msgstr_lines(lines, msgid_line):
    """``[(line, offset of its end in the msgstr)]`` of the msgstr after *msgid_line*."""
    number = msgid_line
    while number <= len(lines) and not lines[number - 1].lstrip("#~ ").startswith("msgstr"):
        number += 1
    found, end = [], 0
    while number <= len(lines) and lines[number - 1].rstrip().endswith('"'):
        end += len(unescape(lines[number - 1][lines[number - 1].index('"') :].strip()))
        found.append((number, end))
        number += 1
    return found or [(msgid_line, 0)]


def msgstr_line(message, at=""):
    """The line of the msgstr of *message* (a parsed entry) that holds *at*, else its first."""
    spans = getattr(message, "msgstr_lines", None) or [(message.lineno or 1, 0)]
    string = message.string if isinstance(message.string, str) else "".join(message.string)
    offset = string.find(at) if at else -1
    return next((line for line, end in spans if offset >= 0 and end > offset), spans[0][0])


def header_line(lines, field):
    """The line of the header's *field* (``Plural-Forms``) among a catalog's *lines*, else 1."""
    entries = 0
    for number, line in enumerate(lines, 1):
        entries += line.startswith("msgid")
        if entries > 1:
            break  # past the header
        if line.startswith('"') and line[1:].lower().startswith(field.lower() + ":"):
            return number
    return 1


def messages(catalog, obsolete=False):
    """The catalog's entries, without the header (with its obsolete ones if *obsolete*)."""
    found = [message for message in catalog if message.id]
    return found + list(catalog.obsolete.values()) if obsolete else found


def english(message):
    """A message's English: its msgid (the singular one of a plural entry)."""
    return message.id if isinstance(message.id, str) else message.id[0]


def is_translated(message):
    """True for an entry whose translation the site uses: not empty, not fuzzy."""
    strings = message.string if isinstance(message.string, (list, tuple)) else [message.string]
    return any(strings) and not message.fuzzy


def text(catalog, language=None):
    """Return *catalog* in the canonical form (see the module's docstring)."""
    if language:
        catalog.locale = language
    catalog.revision_date = UNSET_DATE
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=WIDTH)
    blocks = buffer.getvalue().decode("utf-8").split("\n\n")
    # Babel writes "project version": a .pot of Sphinx's without a version would leave a space.
    blocks[0] = _UNVERSIONED.sub(r"\1\\n", blocks[0])
    # write_po ends every entry with a blank line, and no line of an entry is empty.
    for index, message in enumerate(messages(catalog), 1):
        if message.previous_id:
            lines = blocks[index].split("\n")
            at = next(i for i, line in enumerate(lines) if line.startswith(("msgctxt ", "msgid ")))
            old = []
            for keyword, value in zip(("msgid", "msgid_plural"), message.previous_id):
                # Wrapped as the msgid below it, then marked: normalize() counts a prefix per word.
                wrapped = normalize(value, width=WIDTH - len("#| ")).split("\n")
                old += [f"#| {keyword} {wrapped[0]}", *(f"#| {line}" for line in wrapped[1:])]
            blocks[index] = "\n".join(lines[:at] + old + lines[at:])
    return "\n\n".join(blocks)


def write(catalog, path, language=None):
    """Write *catalog* to *path* in the canonical form unless it holds exactly that; True if written."""
    path = Path(path)
    new = text(catalog, language or catalog_language(path))
    if path.is_file() and path.read_text("utf-8") == new:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new, "utf-8")
    return True


def _content(catalog):
    """What a rewrite must keep: every entry's strings, comments, flags and old English."""
    return sorted(
        (
            m.id,
            m.context,
            repr(m.string),
            " ".join(m.user_comments).split(),
            " ".join(m.auto_comments).split(),
            sorted(m.flags),
            m.previous_id,
        )
        for m in messages(catalog, obsolete=True)
    )


def canonical_difference(ours, language=None):
    """(line, what) where catalog text *ours* first differs from its canonical form, or None."""
    lines, expected = ours.split("\n"), text(parse(ours, language), language).split("\n")
    for number, (line, want) in enumerate(zip(lines, expected), 1):
        if line != want:
            return number, f"this line should read {want if len(want) <= 50 else want[:49] + '…'!r}"
    if lines != expected:
        return min(len(lines), len(expected)) + 1, "line endings or the end of the file differ"
    return None


def reformat(path):
    """Rewrite catalog *path* in its canonical form; True if that changed it. The rewrite is read
    back first: it must keep every entry, comment and flag (else CatalogError, nothing written)."""
    ours, language = catalog_text(path), catalog_language(path)
    canonical = text(parse(ours, language), language)
    if canonical == ours:
        return False
    if _content(parse(canonical, language)) != _content(parse(ours, language)):
        raise CatalogError(
            1, "the rewrite would lose content (a bug in catalogs/po.py); the catalog was left as it was"
        )
    Path(path).write_text(canonical, "utf-8")
    return True


# -- Where catalogs are -------------------------------------------------------------

# The names a folder or file under locale/ may have: ASCII letters, digits, "_", "-"
# and ".", not first. Any other name is refused before it is printed, and printed escaped.
PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


def plain(name):
    """True if *name* (one part of a path) is a :data:`PLAIN_NAME`."""
    return PLAIN_NAME.fullmatch(name) is not None


def printable(text):
    """*text* (a path) with every character but printable ASCII escaped as Python escapes it: a
    log line stays one line, and no CI runner's workflow command (``::``) starts in it."""
    escaped = "".join(c if " " <= c <= "~" and c != "\\" else ascii(c)[1:-1] for c in str(text))
    return "./" + escaped if escaped.startswith(":") else escaped


def shown(path):
    """*path* relative to the working directory if it lies below it, :func:`printable`."""
    path = os.path.abspath(path)
    relative = os.path.relpath(path)
    return printable(path if relative.startswith("..") else relative)


def catalog_languages(codes, locale_dir):
    """The translations named in *codes* (default: all), each with catalogs in *locale_dir*;
    ValueError for another language, or one without catalogs there."""
    langs = select(codes, translations_only=True)
    for lang in langs:
        if not (Path(locale_dir) / lang / "LC_MESSAGES").is_dir():
            raise ValueError(f"no catalogs for {lang!r} under {locale_dir}")
    return langs


def language_catalogs(locale_dir, lang):
    """Map each catalog of *lang* under *locale_dir* (its domain, ``auto_examples/x``) to its path.

    Only plain files with plain names: :func:`misplaced` names every other thing.
    """
    base = Path(locale_dir) / lang / "LC_MESSAGES"
    if any(path.is_symlink() for path in (base, base.parent, Path(locale_dir))):
        return {}  # a linked folder is entered by no reader (misplaced names it)
    found = []
    for folder, names, files in os.walk(base):  # does not follow linked folders
        names[:] = [name for name in names if plain(name) and not Path(folder, name).is_symlink()]
        found += [
            Path(folder, name)
            for name in files
            if plain(name) and name.endswith(".po") and stat.S_ISREG(Path(folder, name).lstat().st_mode)
        ]
    return {p.relative_to(base).with_suffix("").as_posix(): p for p in sorted(found)}


def misplaced(locale_dir, languages):
    """``[(path, why)]``, sorted: every path under *locale_dir* but the glossary and the catalogs
    of *languages* (and a .mo an older build left beside its .po), which could reach a build
    that never checked it (gettext reads ``zh_CN.gb2312/``, ``zh/`` for ``zh_CN``)."""
    if Path(locale_dir).is_symlink():
        return [(Path(locale_dir), "a symbolic link: locale/ is a folder of plain files")]
    found = []
    for folder, names, files in os.walk(locale_dir):
        depth = len(Path(folder).relative_to(locale_dir).parts)
        for name in sorted(names + files):
            path = Path(folder, name)
            why = _misplaced(path, name, depth, languages)
            if why:
                found.append((path, why))
        names[:] = [name for name in names if not any(path == Path(folder, name) for path, _ in found)]
    return sorted(found)


def _misplaced(path, name, depth, languages):
    """Why *path* (named *name*, *depth* folders below locale/) does not belong there, or None."""
    mode = path.lstat().st_mode
    folder = stat.S_ISDIR(mode)
    if not plain(name):
        return (
            "a name with characters other than ASCII letters, digits, '_', '-' and '.'"
            " (shown escaped): catalogs and folders under locale/ have plain names"
        )
    if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or folder):
        return "a symbolic link or special file under locale/: only plain files and folders belong there; remove it"
    if depth == 0 and (name == "glossary.csv" and not folder or name in languages and folder):
        return None
    if depth == 0 and folder:
        return (
            f"a folder of a language that is no translation of conf/languages.py"
            f" ({', '.join(languages)}): gettext would read its catalogs into a build"
            " (it looks in zh_CN.gb2312/ and zh/ for zh_CN, in en_US/ for en) that no"
            " check reads; remove it"
        )
    if depth == 0:
        return "not a catalog: locale/ holds glossary.csv and a folder per translation; remove it"
    if depth == 1:
        return (
            None
            if name == "LC_MESSAGES" and folder
            else "locale/<language>/ holds LC_MESSAGES/ only; remove it"
        )
    if folder or name.endswith(".po") or name.endswith(".mo") and path.with_suffix(".po").is_file():
        return None
    return "not a catalog (.po): LC_MESSAGES/ holds catalogs only; remove it"
