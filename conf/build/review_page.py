"""What a change did to the translations, entry by entry (make review-diff).

Compares every catalog of LANG (default: every translation) at ``--base``
(default: the merge base of HEAD with ``main``) with the working tree, entry by
entry (catalogs/diff.py), and writes ``_build/review/index.html``: the English
sources' word diff (catalogs/source_diff.py), then per language and page, in the
site's reading order, each changed entry with its old and new English, its
translation before and after, its change of state, ``make check``'s findings on
it and a link to its section of the built pages; and ``summary.md``, short enough
for a pull request comment. Everything taken from a catalog is escaped.
"""

import argparse
import os
import pickle
import re
import string
import sys
from pathlib import Path
from types import SimpleNamespace

from docutils import nodes
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup
from sphinx import addnodes
from sphinx.util.nodes import extract_messages

from languages import SOURCE, by_sphinx_code, select
from content_security_policy import meta, policy
from site_layout import BUILD, LOCALE, ROOT
from catalogs.diff import (
    attach_findings,
    glossary_at,
    keep_changed,
    resolve_base,
    review_language,
    state,
    translation,
    unchanged_catalogs,
    word_diff,
)
from catalogs.po import CatalogError, printable, unreadable
from catalogs.repository import ReviewError
from gate.run_checks import CHECKS, run_checks, untranslated_elsewhere
from catalogs.source_diff import (
    locale_changes,
    render as render_sources,
    source_changes,
    stale_languages,
)

# The states of a change, in the order the summary counts them.
STATES = (
    "new",
    "translated",
    "became fuzzy",
    "fuzzy resolved",
    "changed",
    "untranslated",
    "removed",
    "obsolete",
    "restored",
)
SUMMARY_FINDINGS = 20  # findings listed in summary.md; the page lists them all


def check_findings(langs, locale_dir, pot_dir=None, commit=None):
    """Run make check's checks on *langs*, as ``make check BASE=commit``; return their Problems."""
    allowed = glossary_at(commit, Path(locale_dir) / "glossary.csv") if commit else None
    return run_checks(langs, set(CHECKS), locale_dir, pot_dir, allowed_glossary=allowed)


def load_doctree(doctrees, docname):
    """Return the pickled doctree of *docname* under *doctrees*, or None."""
    path = Path(doctrees, docname + ".doctree")
    if not path.is_file():
        return None
    with open(path, "rb") as stream:
        return pickle.load(stream)


def section_of_messages(doctree):
    """Map each msgid of *doctree* to (section id, section title), as Sphinx extracts them."""
    found = {}
    for node, message in extract_messages(doctree):
        section = node.parent if isinstance(node, nodes.title) else node
        while section is not None and not (isinstance(section, nodes.section) and section["ids"]):
            section = section.parent
        if section is not None:
            found.setdefault(message, (section["ids"][0], section[0].astext()))
    return found


def page_ids(page):
    """The ids of the elements of a built HTML page."""
    if not page.is_file():
        return set()
    return set(re.findall(r'\sid="([^"]+)"', page.read_text("utf-8")))


def link_changes(pages, site, doctrees, out):
    """Give each change a link to its section of the built page, where there is one."""
    for page in pages:
        html_page = site / page.lang / f"{page.domain}.html"
        doctree = load_doctree(doctrees, page.domain)
        if doctree is None or not html_page.is_file():
            continue
        sections = section_of_messages(doctree)
        ids = page_ids(html_page)
        translated = load_doctree(Path(doctrees).parent / page.lang, page.domain)
        titles = {} if translated is None else _titles(translated)
        href = os.path.relpath(html_page, out).replace(os.sep, "/")
        for change in page.changes:
            if change.new is None or change.new.obsolete:
                continue
            found = sections.get(change.new_english)
            if found and found[0] in ids:
                change.anchor = f"{href}#{found[0]}"
                change.section = titles.get(found[0], found[1])
            else:
                change.anchor, change.section = href, None


def _titles(doctree):
    """Map each section id of *doctree* to its (translated) title."""
    return {s["ids"][0]: s[0].astext() for s in doctree.findall(nodes.section) if s["ids"]}


def reading_order(doctrees, root="index"):
    """The docnames in the order of the site's table of contents, from the doctrees."""
    order, todo = [], [root]
    while todo:
        docname = todo.pop(0)
        if docname in order:
            continue
        order.append(docname)
        doctree = load_doctree(doctrees, docname)
        if doctree is not None:
            children = [d for t in doctree.findall(addnodes.toctree) for d in t["includefiles"]]
            todo = children + todo
    return order


def sort_pages(pages, doctrees):
    """Sort *pages* by language, then reading order (interface strings and the rest last)."""
    order = {name: i for i, name in enumerate(reading_order(doctrees))}
    return sorted(pages, key=lambda p: (p.lang, order.get(p.domain, len(order)), p.domain))


# -- Writing the review page and the summary ---------------------------------


def _text(old, new, lang):
    """A text that may have changed, as HTML: a diff when it did, else the text."""
    if old is None or new is None or old == new:
        shown = new if new is not None else old
        return Markup.escape(shown) if shown else Markup("<em>(none)</em>")
    return Markup(word_diff(old, new, "html"))


def _slug(*parts):
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(parts)).strip("-")


def entries(page):
    """What the review page shows of each changed entry of *page*."""
    for change in page.changes:
        old, new = (translation(c) if c is not None else None for c in (change.old, change.new))
        where = os.path.relpath(page.path, ROOT)
        yield SimpleNamespace(
            state=change.state,
            before=state(change.old) if change.old is not None else "absent",
            after=state(change.new) if change.new is not None else "absent",
            where=f"{where}:{change.new.lineno}" if change.new else f"{where} (at the base)",
            english=_text(change.old_english, change.new_english, SOURCE.sphinx),
            translation=_text(old or None, new or None, page.lang),
            lang=by_sphinx_code(page.lang).html,
            findings=change.findings,
            anchor=change.anchor,
            section=change.section,
        )


def counts(page):
    """Map each state to how many of *page*'s changes have it."""
    return {s: sum(1 for c in page.changes if c.state == s) for s in STATES}


def page_findings(page):
    """Every finding shown for *page*: on its changed entries and on no entry."""
    return [p for c in page.changes for p in c.findings] + page.findings


TEMPLATE = Environment(autoescape=True, loader=FileSystemLoader(Path(__file__).parent)).get_template(
    "review_page.html"
)
STYLE = Markup((Path(__file__).parent / "review_page.css").read_text("utf-8"))


def render_page(pages, base, outside, sources=(), stale=(), locale=()):
    """Return the review page's HTML: the English sources' change, then the catalogs'."""
    changed = [p for p in pages if p.changes or p.findings]
    languages = [
        (lang, by_sphinx_code(lang), [p for p in changed if p.lang == lang])
        for lang in dict.fromkeys(p.lang for p in pages)
    ]
    return TEMPLATE.render(
        commit=base[0],
        how=base[1],
        policy=Markup(meta(policy([]))),
        style=STYLE,
        changed=changed,
        used=[s for s in STATES if any(counts(p)[s] for p in changed)],
        stale=stale,
        sources=Markup(render_sources(list(sources), list(locale))),
        languages=languages,
        outside=outside,
        source_html=SOURCE.html,
        slug=_slug,
        counts=counts,
        page_findings=page_findings,
        entries=entries,
    )


def md(text):
    """*text* as inert Markdown: every ASCII punctuation escaped, on one line.

    The summary quotes catalog file names and translators' text; unescaped,
    they could be links, images or HTML in the pull request's job summary.
    """
    return "".join(f"\\{c}" if c in string.punctuation else c for c in " ".join(str(text).split()))


def render_summary(pages, base, outside, page_href):
    """Return summary.md: counts per language and page, then the findings."""
    commit, how = base
    lines = [f"## Translation review: changes since `{commit[:12]}` ({how})", ""]
    total = sum(len(p.changes) for p in pages)
    lines += [f"{total} changed entries." if total else "No translation changed.", ""]
    changed = [p for p in pages if p.changes or p.findings]
    if changed:
        shown = [s for s in STATES if any(counts(p)[s] for p in changed)]
        lines.append("| language | page | " + " | ".join(shown) + " | findings |")
        lines.append("|---|---|" + "---:|" * (len(shown) + 1))
        for p in changed:
            numbers = [str(counts(p)[s] or "") for s in shown]
            lines.append(
                f"| {md(p.lang)} | {md(p.domain)} | "
                + " | ".join(numbers)
                + f" | {len(page_findings(p)) or ''} |"
            )
    findings = [f for p in changed for f in page_findings(p)] + outside
    lines.append("")
    if findings:
        lines.append(f"**Findings of `make check` on what changed: {len(findings)}**")
        lines.append("")
        for problem in findings[:SUMMARY_FINDINGS]:
            lines.append(
                f"- {md(problem.path)}:{problem.line} \\[{md(problem.check)}\\] " + md(problem.message)
            )
        if len(findings) > SUMMARY_FINDINGS:
            lines.append(f"- … and {len(findings) - SUMMARY_FINDINGS} more on the review page")
    else:
        lines.append("`make check` finds nothing on what changed.")
    lines += ["", f"Review page: {md(page_href)}", ""]
    return "\n".join(lines)


def write_review(base, langs, locale_dir, site, doctrees, out, pot_dir=None):
    """Compare, check, link and write OUT/index.html and OUT/summary.md.

    Return the pages and the languages whose built pages under *site* are older than the change.
    """
    commit, _ = base
    pages = [page for lang in langs for page in review_language(commit, lang, locale_dir)]
    problems = keep_changed(
        check_findings(langs, locale_dir, pot_dir, commit),
        pages,
        unchanged_catalogs(commit, langs, locale_dir),
    )
    outside = attach_findings(pages, untranslated_elsewhere(problems, pages, locale_dir))
    out.mkdir(parents=True, exist_ok=True)
    link_changes(pages, site, doctrees, out)
    pages = sort_pages(pages, doctrees)
    sources, locale = source_changes(commit), locale_changes(commit, Path(locale_dir).parent)
    at_home = Path(site).resolve() == (BUILD / "html").resolve()
    stale = stale_languages([SOURCE.sphinx, *langs], site) if at_home else []
    (out / "index.html").write_text(render_page(pages, base, outside, sources, stale, locale), "utf-8")
    summary = render_summary(pages, base, outside, os.path.relpath(out / "index.html"))
    for what, changed in (("English sources changed", sources), (LOCALE_CHANGES, locale)):
        if changed:
            summary += (
                f"\n{what}: {len(changed)} file(s): {', '.join(md(printable(c.path)) for c in changed)}\n"
            )
    if stale:
        summary += (
            f"\n**The built pages of {md(', '.join(stale))} are older than the change:"
            " run make html before following the review page's links.**\n"
        )
    (out / "summary.md").write_text(summary, "utf-8")
    return pages, stale


LOCALE_CHANGES = "Other files under locale/ changed (the glossary, or what the checks refuse)"


def main(argv=None):
    """Parse the command line, write the review, say where it is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("languages", nargs="*", metavar="LANG")
    parser.add_argument("--base", help="the revision to compare with (default: merge base with main)")
    parser.add_argument("--site", type=Path, default=BUILD / "html")
    parser.add_argument("--doctrees", type=Path, default=BUILD / "doctrees" / SOURCE.sphinx)
    parser.add_argument("--out", type=Path, default=BUILD / "review")
    parser.add_argument("--pot-dir", type=Path, help="check out-of-sync against these .pot files")
    parser.add_argument("--locale-dir", type=Path, default=LOCALE)
    args = parser.parse_args(argv)
    try:
        langs = select(args.languages, translations_only=True)
        base = resolve_base(args.base, args.locale_dir)
    except (ValueError, ReviewError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if not (args.site / "index.html").is_file():
        print(
            f"note: no built site in {args.site}: the review page links to no page (run make html first)",
            file=sys.stderr,
        )
    try:
        pages, stale = write_review(
            base, langs, args.locale_dir, args.site, args.doctrees, args.out, args.pot_dir
        )
    except (CatalogError, RuntimeError, ReviewError) as err:
        print(err.located() if isinstance(err, CatalogError) else f"error: {err}", file=sys.stderr)
        return 1
    for lang in stale:
        print(
            f"warning: the built pages of {lang} in {os.path.relpath(args.site)} are older than their sources"
            " or catalogs: run make html first, or the review page's links show the old text",
            file=sys.stderr,
        )
    print((args.out / "summary.md").read_text("utf-8"))
    total = sum(len(p.changes) for p in pages)
    shown = os.path.relpath(args.out / "index.html")
    print(f"{total} changed entries since {base[0][:12]}; review page: {shown}", file=sys.stderr)
    broken = unreadable(args.locale_dir, langs)  # the review shows none of their entries
    for err in broken:
        print(f"{err.located()}; the review shows none of this catalog's entries", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
