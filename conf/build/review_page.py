"""What a change did to the translations, entry by entry (make review-diff).

Usage:
    python conf/build/review_page.py [--base REV] [--site DIR] [--doctrees DIR]
                                           [--out DIR] [--pot-dir DIR] [LANG...]

Compares every catalog of LANG (default: every translation) at REV (default:
the merge base of HEAD with ``main``, else ``origin/main``) with the working
tree, entry by entry: the English (msgid) and the translation, never the
lines, so re-wrapping, moved ``#:`` locations and reordering show nothing.
An entry whose English changed is paired with its old self through the old
English a merge records (``#| msgid``), or, once that is gone, by similarity
(catalogs/diff.py, which ``make check BASE=`` uses too). It writes

- OUT/index.html (default _build/review/): one section per language and page
  in the site's reading order; per changed entry the old and new English (a
  word diff), the translation before and after (a diff by character for
  Chinese), the change of state, the findings of ``make check`` on it, and a
  link to its section in the built pages under SITE (default _build/html/),
  found through the English doctrees (DOCTREES, default _build/doctrees/en/);
- OUT/summary.md: counts per language and page and the findings, short
  enough for a pull request comment or a CI job summary.

Above the catalogs' entries, the page shows the change to the English
sources themselves (catalogs/source_diff.py): a word diff of every file
of docs/ and examples/ that differs from REV (the working tree's, new files
included), and what a changed tutorial printed when it last ran; and it warns
when the built pages it links to are older than their sources or catalogs.

Everything taken from a catalog is escaped: a translation never becomes
markup on the review page.

Exit codes: 0 written, 1 a catalog or the checks could not be read, 2 bad
usage (an unknown revision, no ``main`` and no REV, not a git repository).
"""

import argparse
import html
import os
import pickle
import re
import string
import sys
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util.nodes import extract_messages

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from languages import SOURCE, by_sphinx_code, select  # noqa: E402
from content_security_policy import meta, policy  # noqa: E402
from site_layout import BUILD, LOCALE, ROOT  # noqa: E402
from catalogs.diff import (  # noqa: E402
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
from catalogs.po import CatalogError  # noqa: E402
from catalogs.repository import ReviewError  # noqa: E402
from gate.run_checks import CHECKS, run_checks, untranslated_elsewhere  # noqa: E402
from catalogs.po import printable  # noqa: E402
from catalogs.source_diff import (  # noqa: E402
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
    """Show a text that may have changed: a diff when it did, else the text."""
    if old is None or new is None or old == new:
        shown = new if new is not None else old
        return html.escape(shown or "") if shown else "<em>(none)</em>"
    return word_diff(old, new, "html")


def _slug(*parts):
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(parts)).strip("-")


def render_change(change, page):
    """Return the HTML of one changed entry."""
    lang = by_sphinx_code(page.lang)
    before = state(change.old) if change.old is not None else "absent"
    after = state(change.new) if change.new is not None else "absent"
    old_text = translation(change.old) if change.old is not None else None
    new_text = translation(change.new) if change.new is not None else None
    where = (
        f"{os.path.relpath(page.path, ROOT)}:{change.new.lineno}"
        if change.new
        else (f"{os.path.relpath(page.path, ROOT)} (at the base)")
    )
    rows = [
        ("English", SOURCE.html, _text(change.old_english, change.new_english, SOURCE.sphinx)),
        ("Translation", lang.html, _text(old_text or None, new_text or None, page.lang)),
    ]
    findings = "".join(
        f"<li><code>[{html.escape(p.check)}]</code> {html.escape(p.message)}"
        f' <span class="where">line {p.line}</span></li>'
        for p in change.findings
    )
    if change.anchor:
        title = (
            f'<span lang="{lang.html}">{html.escape(change.section)}</span>' if change.section else "the page"
        )
        preview = f'<a href="{html.escape(change.anchor)}">{title}</a>'
    else:
        preview = "<em>not on a built page</em>"
    body = "".join(f'<dt>{name}</dt><dd lang="{tag}">{value}</dd>' for name, tag, value in rows)
    return (
        f'<li class="entry" data-state="{_slug(change.state)}">'
        f'<p class="state"><span class="badge state-{_slug(change.state)}">{change.state}</span>'
        f' {before} → {after} <span class="where">{html.escape(where)}</span></p>'
        f"<dl>{body}<dt>Checks</dt><dd>"
        + (f'<ul class="findings">{findings}</ul>' if findings else "no findings")
        + f"</dd><dt>Preview</dt><dd>{preview}</dd></dl></li>"
    )


def counts(page):
    """Map each state to how many of *page*'s changes have it."""
    return {s: sum(1 for c in page.changes if c.state == s) for s in STATES}


def page_findings(page):
    """Every finding shown for *page*: on its changed entries and on no entry."""
    return [p for c in page.changes for p in c.findings] + page.findings


STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; color: #1a1a1a; background: #fff; margin: 0 auto;
       max-width: 72rem; padding: 1rem 1.5rem 4rem; }
code { font-family: ui-monospace, monospace; font-size: 0.9em; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #8c8c8c; padding: 0.2rem 0.6rem; text-align: right; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
td:nth-child(2) { overflow-wrap: anywhere; }
ol.entries { list-style: none; padding: 0; }
li.entry { border: 1px solid #8c8c8c; border-radius: 6px; margin: 1rem 0; padding: 0.5rem 1rem; }
dl { display: grid; grid-template-columns: 8rem 1fr; gap: 0.3rem 1rem; margin: 0.5rem 0; }
dt { font-weight: 600; } dd { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
del { background: #ffe3e3; color: #7a0000; }
ins { background: #dcf5e0; color: #0a4d17; text-decoration: underline; }
del + ins { margin-left: 0.2em; }
.badge { display: inline-block; border-radius: 4px; padding: 0 0.5rem; font-weight: 600;
         background: #e8e8e8; color: #1a1a1a; }
.state-became-fuzzy, .state-untranslated { background: #fff0c2; color: #5c4300; }
.state-removed, .state-obsolete { background: #ffe3e3; color: #7a0000; }
.state-translated, .state-fuzzy-resolved, .state-new { background: #dcf5e0; color: #0a4d17; }
.where { color: #4d4d4d; font-size: 0.9em; }
ul.findings { margin: 0; padding-left: 1.2rem; color: #7a0000; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden;
                   clip: rect(0 0 0 0); white-space: nowrap; }
a { color: #0645ad; }
pre.diff, pre.output { white-space: pre-wrap; overflow-wrap: anywhere; border: 1px solid #8c8c8c;
                       border-radius: 6px; padding: 0.5rem; background: #fafafa; }
p.stale { background: #fff0c2; color: #5c4300; padding: 0.5rem 1rem; border-radius: 6px; }
"""


def render_page(pages, base, outside, sources=(), stale=(), locale=()):
    """Return the review page's HTML: the English sources' change, then the catalogs'."""
    commit, how = base
    out = []
    for lang in dict.fromkeys(p.lang for p in pages):
        language = by_sphinx_code(lang)
        sections = [p for p in pages if p.lang == lang and (p.changes or p.findings)]
        out.append(
            f'<section aria-labelledby="{_slug(lang)}"><h2 id="{_slug(lang)}">'
            f'<span lang="{language.html}">{html.escape(language.name)}</span>'
            f" ({lang})</h2>"
        )
        if not sections:
            out.append("<p>No change to this language's translations.</p>")
        for page in sections:
            anchor = _slug(lang, page.domain)
            # Named by language and page: every language has a page of that name.
            out.append(
                f'<section aria-labelledby="{_slug(lang)} {anchor}"><h3 id="{anchor}">'
                f"{html.escape(page.domain)}</h3>"
            )
            if page.findings:
                items = "".join(
                    f"<li><code>[{html.escape(p.check)}]</code> "
                    f'{html.escape(p.message)} <span class="where">line {p.line}'
                    "</span></li>"
                    for p in page.findings
                )
                out.append(f'<p>Findings on the catalog as a whole:</p><ul class="findings">{items}</ul>')
            out.append('<ol class="entries">')
            out += [render_change(change, page) for change in page.changes]
            out.append("</ol></section>")
        out.append("</section>")
    changed = [p for p in pages if p.changes or p.findings]
    used = [s for s in STATES if any(counts(p)[s] for p in changed)]
    rows = "".join(
        f'<tr><td>{p.lang}</td><td><a href="#{_slug(p.lang, p.domain)}">'
        f"{html.escape(p.domain)}</a></td>"
        + "".join(f"<td>{counts(p)[s] or ''}</td>" for s in used)
        + f"<td>{len(page_findings(p)) or ''}</td></tr>"
        for p in changed
    )
    head = "".join(f'<th scope="col">{s}</th>' for s in used)
    table = (
        f"<table><caption>Changed entries per language and page</caption><thead><tr>"
        f'<th scope="col">language</th><th scope="col">page</th>{head}'
        f'<th scope="col">findings</th></tr></thead><tbody>{rows}</tbody></table>'
        if rows
        else "<p>No translation changed.</p>"
    )
    extra = ""
    if outside:
        items = "".join(f"<li><code>{html.escape(str(p))}</code></li>" for p in outside)
        extra = f'<h2 id="other-findings">Other findings</h2><ul class="findings">{items}</ul>'
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{meta(policy([]))}
<title>Translation review: changes since {html.escape(commit[:12])}</title>
<style>{STYLE}</style>
</head>
<body>
<header>
<h1>Translation review</h1>
<p>What this change did to the translations: every catalog entry whose English or
translation differs from <code>{html.escape(commit[:12])}</code> ({html.escape(how)}).
Re-wrapped lines, moved location comments and reordered entries are not changes.
Each entry links to its section of the built page.</p>
{table}
{render_stale(stale)}
</header>
<main>
{render_sources(list(sources), list(locale))}
{"".join(out)}
{extra}
</main>
</body>
</html>
"""


def render_stale(stale):
    """The warning that the built pages the links lead to are older than the change."""
    if not stale:
        return ""
    names = ", ".join(stale)
    return (
        f'<p class="stale" role="alert"><strong>The built pages of {html.escape(names)} are'
        " older than their sources or catalogs</strong> (make html has not run since"
        " they changed): the links below lead to the old text, and a new heading may"
        " be linked under its old title. Run <code>make html</code>, then"
        " <code>make review-diff</code> again.</p>"
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
    """Compare, check, link and write OUT/index.html and OUT/summary.md; return the pages."""
    commit, _ = base
    pages = [page for lang in langs for page in review_language(commit, lang, locale_dir)]
    problems = keep_changed(
        check_findings(langs, locale_dir, pot_dir, commit),
        pages,
        unchanged_catalogs(commit, langs, locale_dir),
    )
    problems = untranslated_elsewhere(problems, pages, locale_dir)
    outside = attach_findings(pages, problems)
    out.mkdir(parents=True, exist_ok=True)
    link_changes(pages, site, doctrees, out)
    pages = sort_pages(pages, doctrees)
    sources, locale = source_changes(commit), locale_changes(commit, Path(locale_dir).parent)
    stale = (
        stale_languages([SOURCE.sphinx, *langs], site)
        if (Path(site).resolve() == (BUILD / "html").resolve())
        else []
    )
    (out / "index.html").write_text(render_page(pages, base, outside, sources, stale, locale), "utf-8")
    shown = os.path.relpath(out / "index.html")
    summary = render_summary(pages, base, outside, shown)
    if sources:
        summary += (
            f"\nEnglish sources changed: {len(sources)} file(s): "
            + ", ".join(md(printable(c.path)) for c in sources)
            + "\n"
        )
    if locale:
        summary += (
            f"\nOther files under locale/ changed (the glossary, or what the checks"
            f" refuse): {len(locale)} file(s): " + ", ".join(md(printable(c.path)) for c in locale) + "\n"
        )
    if stale:
        summary += (
            f"\n**The built pages of {md(', '.join(stale))} are older than the change:"
            " run make html before following the review page's links.**\n"
        )
    (out / "summary.md").write_text(summary, "utf-8")
    for lang in stale:
        print(
            f"warning: the built pages of {lang} in {os.path.relpath(site)} are older than"
            " their sources or catalogs: run make html first, or the review page's links"
            " show the old text",
            file=sys.stderr,
        )
    return pages


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
        pages = write_review(base, langs, args.locale_dir, args.site, args.doctrees, args.out, args.pot_dir)
    except (CatalogError, RuntimeError, ReviewError) as err:
        line = f":{err.line}" if isinstance(err, CatalogError) else ""
        print(f"error{line}: {err}", file=sys.stderr)
        return 1
    total = sum(len(p.changes) for p in pages)
    print((args.out / "summary.md").read_text("utf-8"))
    print(
        f"{total} changed entries since {base[0][:12]}; review page:"
        f" {os.path.relpath(args.out / 'index.html')}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
