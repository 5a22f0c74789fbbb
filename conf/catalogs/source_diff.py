"""The change to the English sources since a revision, for the review page (make review-diff).

:func:`source_changes`: git's word diff of docs/ and examples/ since the base,
the working tree's new files included; :func:`locale_changes`: the other files
under locale/ than the catalogs (the glossary, anything the checks refuse);
:func:`outputs`: what a changed tutorial printed when it last ran;
:func:`stale_languages`: the languages whose built pages are older than their
sources (make html's stamp), so that their links would show old text.
"""

import hashlib
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from languages import TRANSLATIONS
from site_layout import BUILD, GALLERY, ROOT, is_source, language_digest
from catalogs.diff import word_diff
from catalogs.po import plain, printable
from catalogs.repository import ReviewError, git

FOLDERS = ("docs", "examples")
_MARK = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.DOTALL)


@dataclass
class SourceChange:
    """One changed source file: its path, how it changed, its word-diffed hunks."""

    path: str
    status: str  # "added", "modified", "deleted"
    hunks: list = field(default_factory=list)  # [(header, [line, ...])] in git's word-diff form
    outputs: list = None  # a tutorial's printed output blocks, if it was executed
    current: bool = True  # its last execution was of this very source


def source_changes(commit, root=ROOT, folders=FOLDERS):
    """The SourceChanges of *folders* (docs/ and examples/) from *commit* to the working tree."""
    try:
        names = git("diff", "--name-status", "--no-renames", "-z", commit, "--", *folders, cwd=root)
        new = git("ls-files", "--others", "--exclude-standard", "-z", "--", *folders, cwd=root)
    except ReviewError:
        return []
    fields = names.split("\0")
    changes = []
    for status, path in zip(fields[::2], fields[1::2]):
        if not is_source(path):
            continue  # a repository guide: no page of the site
        kind = {"A": "added", "D": "deleted"}.get(status[0], "modified")
        changes.append(SourceChange(path, kind, _hunks(commit, path, root)))
    for path in filter(None, new.split("\0")):
        if not is_source(path):
            continue
        file = Path(root, path)
        if file.is_symlink() or not file.is_file():  # never what a link points at
            changes.append(SourceChange(path, "added", [("new link or special file", [])]))
            continue
        text = file.read_text("utf-8", errors="replace")
        changes.append(
            SourceChange(
                path, "added", [("new file", [f"{{+{line}+}}" if line else "" for line in text.split("\n")])]
            )
        )
    for change in changes:
        if change.path.startswith("examples/plot_") and change.status != "deleted":
            change.outputs = outputs(Path(change.path).stem)
            change.current = executed_current(Path(root, change.path))
    return sorted(changes, key=lambda c: c.path)


def locale_changes(commit, root=ROOT):
    """The SourceChanges under locale/ but the translations' catalogs: the glossary and the rest."""
    return [change for change in source_changes(commit, root, ("locale",)) if not is_catalog(change.path)]


def is_catalog(path):
    """True if *path* (from the checkout's root) names a translation's catalog: shown entry by entry."""
    parts = path.split("/")
    return (
        len(parts) > 3
        and parts[0] == "locale"
        and parts[1] in TRANSLATIONS
        and parts[2] == "LC_MESSAGES"
        and parts[-1].endswith(".po")
        and all(plain(part) for part in parts)
    )


def _hunks(commit, path, root):
    """The word-diff hunks of *path* since *commit*: [(the @@ header, [lines])]."""
    words = ("--word-diff=plain", "--word-diff-regex=[^[:space:]]+")
    text = git("--literal-pathspecs", "diff", "--no-color", *words, commit, "--", path, cwd=root)
    hunks = []
    for line in text.split("\n"):
        if line.startswith("@@"):
            hunks.append((line, []))
        elif hunks:
            hunks[-1][1].append(line)
    return hunks


def outputs(name, gallery=GALLERY):
    """What tutorial *name* printed at its last execution: its output blocks, or None."""
    page = Path(gallery) / f"{name}.rst"
    if not page.is_file():
        return None
    blocks = re.findall(
        r"\.\. rst-class:: sphx-glr-script-out\n\n \.\. code-block:: none\n\n"
        r"((?:    .*\n|\n)+)",
        page.read_text("utf-8"),
    )
    return ["\n".join(line[4:] for line in block.rstrip().split("\n")) for block in blocks]


def executed_current(source, gallery=GALLERY):
    """True when the gallery's last execution of *source* ran this very text (its .md5)."""
    md5 = Path(gallery) / f"{source.name}.md5"
    return md5.is_file() and md5.read_text().strip() == hashlib.md5(source.read_bytes()).hexdigest()


def stale_languages(langs, site=BUILD / "html"):
    """The languages among *langs* whose pages in *site* are older than their sources or catalogs
    (the digest make html keeps; the build's options and recordings are no sources)."""
    stale = []
    for lang in langs:
        stamp = BUILD / "stamps" / f"{lang}.sources"
        if not (Path(site) / lang / "index.html").is_file():
            continue  # not built at all: the page says so already
        if not stamp.is_file() or stamp.read_text() != language_digest(lang):
            stale.append(lang)
    return stale


def _line_html(line):
    """One line of git's word diff (``[-removed-]{+added+}``) as HTML (diff.word_diff)."""
    old = _MARK.sub(lambda m: m[1] or "", line)
    new = _MARK.sub(lambda m: m[2] or "", line)
    return word_diff(old, new, "html")


def render(changes, locale=()):
    """The review page's section on the English sources, and on the other files under locale/."""
    if not changes:
        out = [
            '<section aria-labelledby="sources"><h2 id="sources">English sources</h2>'
            "<p>No change to docs/ or examples/.</p>"
        ]
    else:
        out = [
            '<section aria-labelledby="sources"><h2 id="sources">English sources</h2>',
            "<p>The change to the English pages and tutorials (git's word diff, "
            "working tree included), beside which the catalog entries below were made.</p>",
        ]
        out += _rendered(changes)
    out.append("</section>")
    if locale:
        out += [
            '<section aria-labelledby="locale-files"><h2 id="locale-files">Other files under'
            " locale/</h2><p>Files under locale/ that are not a translation's catalog: the"
            " glossary (whose words the interface strings may add once it is merged), and"
            " anything else, which the checks and the build refuse.</p>",
            *_rendered(locale),
            "</section>",
        ]
    return "".join(out)


def _rendered(changes):
    """Each change as a section: its path (escaped), its hunks, a tutorial's output."""
    out = []
    for change in changes:
        out.append(
            f'<section class="source"><h3><code>{html.escape(printable(change.path))}</code> '
            f'<span class="badge state-{"new" if change.status == "added" else "changed"}">'
            f"{change.status}</span></h3>"
        )
        for header, lines in change.hunks:
            body = "\n".join(_line_html(line) for line in lines).strip("\n")
            out.append(f'<p class="where">{html.escape(header)}</p><pre class="diff">{body}</pre>')
        if change.outputs is not None:
            when = (
                ""
                if change.current
                else " <strong>before its last edit: run make html for the output of this version</strong>"
            )
            out.append(
                f"<p>What it printed when it was last executed{when} ({len(change.outputs)}"
                " output blocks, from the gallery's page; the base's output is"
                " not kept: compare with the published site):</p>"
            )
            out += [f'<pre class="output">{html.escape(block)}</pre>' for block in change.outputs]
        elif change.path.startswith("examples/plot_") and change.status != "deleted":
            out.append("<p><em>Not executed yet: run make html to see its output.</em></p>")
        out.append("</section>")
    return out
