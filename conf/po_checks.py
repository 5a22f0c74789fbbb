"""Check the translation catalogs for the mistakes a reviewer would miss (make check).

Usage:
    python conf/po_checks.py [--strict=1|0] [--check NAME]... [options] LANG...

Every problem is printed as ``file:line: [check] what is wrong``. The checks:

    out-of-sync   the catalogs do not match the English sources
    syntax        ``msgfmt -c`` rejects a catalog
    markup        a translation breaks reST/MyST markup, or changes an inline
                  literal, a role target, a link target or a substitution
    script-mix    Simplified characters in zh_TW, Traditional ones in zh_CN
    terminology   a glossary term is not translated as locale/glossary.csv says
    safety        a translation adds a URL, a non-http(s) link, HTML or a directive
    code          translated Python is no longer the same program
    completeness  fuzzy or untranslated entries; problems only with --strict=1

Only translated, non-fuzzy entries are checked for their content: a fuzzy or
empty translation is not used on the site, and ``completeness`` reports it.
``out-of-sync`` extracts the English with Sphinx's gettext builder into a
temporary folder (never _build/gettext), unless ``--pot-dir`` names .pot files.

Exit codes: 0 clean, 1 problems found, 2 bad usage.
"""

import argparse
import ast
import csv
import difflib
import functools
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import opencc
import polib
from docutils import nodes, utils
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser, roles
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser
from sphinx.util.docutils import docutils_namespace

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "locale" / "glossary.csv"
CHECKS = (
    "out-of-sync", "syntax", "markup", "script-mix", "terminology", "safety", "code",
    "completeness",
)  # fmt: skip


@dataclass(frozen=True, order=True)
class Problem:
    """One problem, printed as ``file:line: [check] message``."""

    path: str
    line: int
    check: str
    message: str

    def __str__(self):
        return f"{self.path}:{self.line}: [{self.check}] {self.message}"


def shown(path):
    """Return *path* relative to the working directory if it lies below it."""
    path = os.path.abspath(path)
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def brief(text, width=60):
    """Return *text* on one line, cut to about *width* characters."""
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")


# -- out-of-sync ---------------------------------------------------------------


def extract_pots(workdir):
    """Run Sphinx's gettext builder into *workdir*; return the folder of .pot files."""
    out = Path(workdir, "gettext")
    options = os.environ.get("SPHINXOPTS", "-W --keep-going").split()
    cmd = [
        sys.executable, "-m", "sphinx", "-b", "gettext", "-q", *options,
        "-c", str(ROOT / "conf"), "-d", str(Path(workdir, "doctrees")),
        str(ROOT / "docs"), str(out),
    ]  # fmt: skip
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("the gettext builder failed:\n" + result.stderr[-4000:])
    return out


def source_location(entry, pot_dir, pot_path):
    """Return (file, line) of the English source of a .pot *entry*, else of the .pot."""
    if entry is None or not entry.occurrences:
        return shown(pot_path), 1
    name, line = entry.occurrences[0]
    return shown(pot_dir / name), int(line or 1)


def check_sync(pot_dir, catalog_dir):
    """Yield problems where the catalogs in *catalog_dir* differ from the .pot files."""
    for pot_path in sorted(pot_dir.rglob("*.pot")):
        english = {(e.msgctxt, e.msgid): e for e in polib.pofile(str(pot_path))}
        po_path = catalog_dir / pot_path.relative_to(pot_dir).with_suffix(".po")
        if not po_path.exists():
            first = next(iter(english.values()), None)
            yield Problem(*source_location(first, pot_dir, pot_path), "out-of-sync",
                          f"this page has no catalog {shown(po_path)}; run make update-po")
            continue
        catalog = {(e.msgctxt, e.msgid): e for e in polib.pofile(str(po_path)) if not e.obsolete}
        for key in catalog.keys() - english.keys():
            yield Problem(shown(po_path), catalog[key].linenum, "out-of-sync",
                          f"English no longer in the source: {brief(key[1])}; run make update-po")
        for key in english.keys() - catalog.keys():
            yield Problem(*source_location(english[key], pot_dir, pot_path), "out-of-sync",
                          f"English missing from {shown(po_path)}: {brief(key[1])}; "
                          "run make update-po")  # fmt: skip


# -- syntax --------------------------------------------------------------------

_MSGFMT_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?:\d+:)? (?P<message>.*)$")


def check_syntax(po_path):
    """Yield msgfmt -c's errors about *po_path* at msgfmt's file and line."""
    result = subprocess.run(
        ["msgfmt", "-c", "-o", os.devnull, str(po_path)], capture_output=True, text=True
    )
    if result.returncode == 0:
        return  # header warnings (no Last-Translator, ...) do not fail the build
    errors = [_MSGFMT_LINE.match(line) for line in result.stderr.splitlines()]
    errors = [m for m in errors if m and not m["message"].startswith("warning:")]
    for match in errors:
        yield Problem(shown(match["path"]), int(match["line"]), "syntax", match["message"])
    if not errors:
        yield Problem(shown(po_path), 1, "syntax", result.stderr.strip() or "msgfmt -c failed")


# -- parsing a message as the page's markup ------------------------------------


@dataclass
class Markup:
    """What a message contains, as the page's parser sees it."""

    items: Counter = field(default_factory=Counter)  # literals, roles, links, ...
    prose: str = ""  # the text outside literals and roles
    stray: Counter = field(default_factory=Counter)  # markup characters left as text
    blocks: list = field(default_factory=list)  # top-level block types ("paragraph")
    links: list = field(default_factory=list)  # link targets
    html: list = field(default_factory=list)  # HTML tags
    messages: Counter = field(default_factory=Counter)  # docutils' warnings


_EXPLICIT_TITLE = re.compile(r"^(.+?)\s*(?<!\x00)<(.*?)>$", re.DOTALL)
_RST_ROLE = re.compile(r":((?:(?!_)\w)+(?:[-._+:](?:(?!_)\w)+)*):`")
_MARKUP_CHARS = "*`|"  # shown as text when inline markup is not recognised
_HTML_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>")


def role_item(name, text):
    """Return the comparable part of a role: its target, not its title."""
    match = _EXPLICIT_TITLE.match(text)
    if match:
        return ("role", name, match[2].replace("\x00", ""), True)
    return ("role", name, text.replace("\x00", ""), False)


def source_kind(entry):
    """Return "md", "rst" or "text" from the entry's ``#:`` location comment."""
    name = entry.occurrences[0][0] if entry.occurrences else ""
    if name.endswith(".md"):
        return "md"
    return "rst" if name.endswith((".rst", ".txt", ".py")) else "text"


def _record_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """Stand in for every reST role: keep its name and text, resolve nothing."""
    return [nodes.inline(rawtext, text, role=name)], []


@functools.cache
def _rst_settings():
    settings = get_default_settings(Parser)
    settings.report_level = settings.halt_level = 5  # collect, never print or stop
    return settings


def parse_rst(text):
    """Parse *text* as a reST fragment the way the page's parser will."""
    document = utils.new_document("<message>", _rst_settings())
    with docutils_namespace():  # the stand-in roles vanish afterwards
        for name in set(_RST_ROLE.findall(text)):
            roles.register_local_role(name.lower(), _record_role)
        Parser().parse(text, document)
    found = Markup()
    prose = []

    def walk(node):
        if isinstance(node, nodes.system_message):
            if node["level"] >= 2:
                found.messages[node.children[0].astext()] += 1
            return
        if isinstance(node, nodes.literal):
            found.items["literal", node.astext()] += 1
            return
        if isinstance(node, nodes.FixedTextElement):
            return  # a literal or doctest block is code: see check_code
        if isinstance(node, nodes.inline) and "role" in node:
            found.items[role_item(node["role"], node.astext())] += 1
            return
        if isinstance(node, nodes.reference):
            target = node.get("refuri") or node.get("refname", "")
            found.items["link", target] += 1
            found.links.append(target)
        elif isinstance(node, nodes.substitution_reference):
            found.items["substitution", node["refname"]] += 1
        elif isinstance(node, nodes.Text):
            prose.append(node.astext())
        for child in node.children:
            walk(child)

    for block in document.children:
        if not isinstance(block, nodes.system_message):
            found.blocks.append(block.tagname)
        walk(block)
    found.prose = " ".join(prose)
    found.html = _HTML_TAG.findall(found.prose)
    found.stray = Counter(c for c in found.prose if c in _MARKUP_CHARS)
    return found


@functools.cache
def _markdown():
    return create_md_parser(MdParserConfig(), RendererHTML)


def parse_md(text):
    """Parse *text* as MyST Markdown the way the page's parser will."""
    found = Markup()
    prose = []
    for token in _markdown().parse(text):
        if token.level == 0 and token.nesting >= 0:
            found.blocks.append(token.type.removesuffix("_open"))
        if token.type == "html_block":
            found.html += _HTML_TAG.findall(token.content)
        for child in token.children or []:
            if child.type == "code_inline":
                found.items["literal", child.content] += 1
            elif child.type == "myst_role":
                found.items[role_item(child.meta["name"], child.content)] += 1
            elif child.type == "link_open":
                found.items["link", child.attrs["href"]] += 1
                found.links.append(child.attrs["href"])
            elif child.type == "html_inline":
                found.html += _HTML_TAG.findall(child.content)
            elif child.type == "text":
                prose.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                prose.append(" ")
    found.prose = "".join(prose)
    found.stray = Counter(c for c in found.prose if c in _MARKUP_CHARS)
    return found


@functools.lru_cache(maxsize=4096)
def parse(text, kind):
    """Return the Markup of *text*, parsed as reST ("rst"), MyST ("md") or plain text."""
    if kind == "rst":
        return parse_rst(text)
    if kind == "md":
        return parse_md(text)
    return Markup(prose=text, html=_HTML_TAG.findall(text), blocks=["paragraph"])


def describe(item, kind):
    """Return a markup item as the translator would write it."""
    what, *rest = item
    tick = "``" if kind == "rst" else "`"
    if what == "literal":
        return f"{tick}{rest[0]}{tick}"
    if what == "role":
        name, target, titled = rest
        role = f":{name}:" if kind == "rst" else f"{{{name}}}"
        return f"{role}`{'… <' + target + '>' if titled else target}`"
    if what == "link":
        return f"link target <{rest[0]}>"
    return f"|{rest[0]}|"


# -- the checks of one entry: (msgid, msgstr, kind, lang) -> messages -----------


def check_markup(msgid, msgstr, kind, lang):
    """Yield how the translation's markup differs from the English's."""
    english, translated = parse(msgid, kind), parse(msgstr, kind)
    if translated.blocks != ["paragraph"] and msgstr != msgid and python_code(msgid) is None:
        # Sphinx uses a translation only if it parses as a paragraph.
        yield (f"translation parses as {' + '.join(translated.blocks) or 'nothing'}, not as "
               "the one paragraph Sphinx uses (escape a leading 1. - # or > with a backslash)")
    lost = english.items - translated.items
    added = translated.items - english.items
    if lost or added:
        parts = []
        if lost:
            parts.append("lacks " + ", ".join(describe(i, kind) for i in sorted(lost)))
        if added:
            parts.append("adds " + ", ".join(describe(i, kind) for i in sorted(added)))
        yield "translation " + "; ".join(parts)
    stray = translated.stray - english.stray
    if stray:
        shown = ", ".join(f"{char} ×{n}" for char, n in sorted(stray.items()))
        yield f"markup left as plain text (spaces around it?): {shown}"
    for message in translated.messages - english.messages:
        yield f"reST: {message}"


_TW_USAGE = set("台了")  # s2tw writes 臺 and 瞭, Taiwan writes these too


@functools.cache
def _opencc(config):
    return opencc.OpenCC(config)


def other_script(text, lang, english=""):
    """Return "char→suggestion" for each character of the wrong script in *text*.

    Characters that the *english* message itself contains are left alone.
    """
    if lang not in ("zh_CN", "zh_TW"):
        return []
    converted = _opencc("s2tw" if lang == "zh_TW" else "t2s").convert(text)
    found = []
    matcher = difflib.SequenceMatcher(None, text, converted, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace" or i2 - i1 != j2 - j1:
            continue
        for old, new in zip(text[i1:i2], converted[j1:j2]):
            if old in english or f"{old}→{new}" in found:
                continue
            # s2tw also normalises Traditional variants (裏→裡): those are not Simplified.
            if lang == "zh_TW" and (old in _TW_USAGE or _opencc("t2s").convert(old) != old):
                continue
            found.append(f"{old}→{new}")
    return found


def check_script(msgid, msgstr, kind, lang):
    """Yield the Simplified characters of a zh_TW translation, or the reverse."""
    found = other_script(msgstr, lang, msgid)
    if found:
        script = "Simplified" if lang == "zh_TW" else "Traditional"
        yield f"{script} characters in {lang}: {', '.join(found)}"


@functools.cache
def load_glossary(path):
    """Return the glossary rows, longest English term first."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return tuple(sorted(rows, key=lambda row: -len(row["en"])))


@functools.cache
def _term_pattern(term):
    """Match *term* as a whole word, in any case, with a plural -s or -es."""
    return re.compile(rf"\b{re.escape(term)}(?:e?s)?\b", re.IGNORECASE)


def check_terms(msgid, msgstr, kind, lang, glossary=()):
    """Yield glossary terms of the English whose translation is not in the msgstr."""
    if python_code(msgid) is not None:
        return  # names in code are not terms
    prose = parse(msgid, kind).prose
    missing = []
    for row in glossary:
        pattern = _term_pattern(row["en"])
        if not pattern.search(prose):
            continue
        prose = pattern.sub(" ", prose)  # "data parallelism" hides "data"
        wanted = row.get(lang)
        if wanted and wanted not in msgstr:
            missing.append(f'"{row["en"]}" → {wanted}')
    if missing:
        yield "glossary term translated otherwise: " + ", ".join(missing)


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


def check_safety(msgid, msgstr, kind, lang):
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


_CODE_NODES = (
    ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Import, ast.ImportFrom,
    ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.With, ast.Return, ast.Subscript,
)  # fmt: skip


def python_code(text):
    """Return the Python program in *text* (doctest prompts removed), or None if prose."""
    if ">>>" in text:
        lines = [line.strip() for line in text.splitlines()]
        return "\n".join(line[4:] for line in lines if line[:4] in (">>> ", "... "))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    return text if any(isinstance(node, _CODE_NODES) for node in ast.walk(tree)) else None


def check_code(msgid, msgstr, kind, lang):
    """Yield a problem if the English is code and the translation is other code."""
    code = python_code(msgid)
    if code is None:
        return
    translated = python_code(msgstr) if ">>>" in msgid else msgstr
    try:
        same = ast.dump(ast.parse(code)) == ast.dump(ast.parse(translated or ""))
    except SyntaxError as err:
        yield f"translated code is not valid Python: {err.msg} (line {err.lineno})"
        return
    if not same:
        yield "translated code is not the same Python as the English (translate comments only)"


def check_completeness(entry):
    """Return why *entry* is not finished, or None."""
    if "fuzzy" in entry.flags:
        return "fuzzy: check the translation against the new English, then remove the flag"
    return None if entry.msgstr else "untranslated"


# -- running them --------------------------------------------------------------


def check_catalog(po_path, lang, selected, glossary):
    """Yield the problems of one catalog for the *selected* checks."""
    if "syntax" in selected:
        yield from check_syntax(po_path)
    try:
        catalog = polib.pofile(str(po_path))
    except (OSError, ValueError) as err:
        yield Problem(shown(po_path), 1, "syntax", f"cannot read the catalog: {err}")
        return
    entry_checks = {
        "markup": check_markup,
        "script-mix": check_script,
        "terminology": functools.partial(check_terms, glossary=glossary),
        "safety": check_safety,
        "code": check_code,
    }
    for entry in catalog:
        if entry.obsolete:
            continue
        unfinished = check_completeness(entry)
        if unfinished:
            if "completeness" in selected:
                yield Problem(shown(po_path), entry.linenum, "completeness", unfinished)
            continue
        kind = source_kind(entry)
        for name, check in entry_checks.items():
            if name in selected:
                for message in check(entry.msgid, entry.msgstr, kind, lang):
                    yield Problem(shown(po_path), entry.linenum, name, message)


def run_checks(langs, selected, locale_dir, pot_dir=None, glossary_path=GLOSSARY):
    """Return the sorted problems of *langs*' catalogs for the *selected* checks."""
    glossary = load_glossary(str(glossary_path)) if "terminology" in selected else ()
    problems = []
    if "out-of-sync" in selected:
        with tempfile.TemporaryDirectory(prefix="po-checks-") as workdir:
            pots = pot_dir or extract_pots(workdir)
            for lang in langs:
                problems += check_sync(Path(pots), locale_dir / lang / "LC_MESSAGES")
    for lang in langs:
        for po_path in sorted((locale_dir / lang / "LC_MESSAGES").rglob("*.po")):
            problems += check_catalog(po_path, lang, selected, glossary)
    return sorted(set(problems))


def main(argv=None):
    """Run the checks, print the problems, and return the exit code."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="Exit codes: 0 clean, 1 problems, 2 usage."
    )
    parser.add_argument("languages", nargs="+", metavar="LANG")
    parser.add_argument("--strict", type=int, choices=(0, 1), default=1,
                        help="1 (default): fuzzy or untranslated entries are problems")
    parser.add_argument("--check", action="append", choices=CHECKS, metavar="NAME",
                        help=f"run only this check (repeatable): {', '.join(CHECKS)}")
    parser.add_argument("--locale-dir", type=Path, default=ROOT / "locale")
    parser.add_argument("--pot-dir", type=Path, help="compare with these .pot files")
    parser.add_argument("--glossary", type=Path, default=GLOSSARY)
    args = parser.parse_args(argv)
    selected = set(args.check or CHECKS)
    for lang in args.languages:
        if not (args.locale_dir / lang / "LC_MESSAGES").is_dir():
            parser.error(f"no catalogs for {lang!r} under {args.locale_dir}")
    if "terminology" in selected and not args.glossary.is_file():
        parser.error(f"glossary {args.glossary} not found")
    if args.pot_dir and not args.pot_dir.is_dir():
        parser.error(f"--pot-dir {args.pot_dir} is not a folder")
    try:
        problems = run_checks(
            args.languages, selected, args.locale_dir, args.pot_dir, args.glossary
        )
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    for problem in problems:
        print(problem)
    counted = [p for p in problems if args.strict or p.check != "completeness"]
    unfinished = len(problems) - len(counted)
    if unfinished:
        print(f"{unfinished} fuzzy or untranslated entries reported, not counted "
              "(STRICT=0)", file=sys.stderr)  # fmt: skip
    print(f"{len(counted)} problem(s) found" if counted else "all checks passed", file=sys.stderr)
    return 1 if counted else 0


if __name__ == "__main__":
    sys.exit(main())
