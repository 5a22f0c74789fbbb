"""make review-diff, make check BASE= and the Read the Docs pull-request preview, on real repositories.

The small tests use a one-catalog repository and no site. The others make a
copy of the built mini site (tests/roots/mini-site, with a second page and a
few more sentences) a repository whose branch ``pr`` makes every kind of catalog
change with the real tools (an English sentence changed, a paragraph removed
and one added, ``make update-po``; a page removed and ``make prune-po``;
translations made, fixed and resolved; a catalog re-wrapped only), then build
its Read the Docs pull-request preview from a shallow clone, as Read the Docs
does, and read the review page in it.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup
from conftest import outside_env, translate
from conftest import readthedocs_commands
from babel.messages.pofile import write_po
from catalogs.po import messages, read
from gate.run_checks import main as make_check

ROOT = Path(__file__).resolve().parent.parent
REVIEW = [sys.executable, "-m", "build.review_page"]
CHECK = [sys.executable, "-m", "gate.run_checks"]
CLEAN_ENV = outside_env()


def run(cmd, cwd, env=None, ok=True):
    """Run *cmd*; fail the test with its output if it fails and *ok* says it must not."""
    result = subprocess.run(cmd, cwd=cwd, env=env or CLEAN_ENV, capture_output=True, text=True)
    if ok:
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def git(repo, *args):
    """Run git in *repo* as a test author."""
    return run(["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", *args], repo)


def edit(path, old, new, count=1):
    """Replace *old* by *new* in the file at *path*, which must contain it."""
    text = path.read_text("utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count), "utf-8")


def write_wrapped(catalog, path, width, reverse=False):
    """Write *catalog* as a PO editor wrapping at *width* would (its entries reversed)."""
    if reverse:
        for message in reversed(messages(catalog)):
            del catalog[message.id]
            catalog[message.id] = message
    comment = path.read_text("utf-8").split('msgid ""', 1)[0]
    with open(path, "wb") as file:
        write_po(file, catalog, width=width)
    wrapped = path.read_text("utf-8")  # its strings, not the header comment
    path.write_text(comment + 'msgid ""' + wrapped.split('msgid ""', 1)[1], "utf-8")


# -- One catalog, no site -------------------------------------------------------


@pytest.fixture
def small_repo(tmp_path):
    """A repository without a main branch: one zh_CN catalog, committed twice (base, HEAD)."""
    repo = tmp_path / "repo"
    catalogs = repo / "locale" / "zh_CN" / "LC_MESSAGES"
    catalogs.mkdir(parents=True)
    shutil.copy(ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po", catalogs / "index.po")
    git(repo, "init", "--quiet", "--initial-branch=trunk")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "base")
    (tmp_path / "pots").mkdir()  # out-of-sync compares with no page: it finds nothing
    return repo


def review(repo, out, *args, ok=True):
    """Run review_diff.py on *repo*'s catalogs, writing to *out*; return the result."""
    return run(
        [
            *REVIEW,
            "--locale-dir",
            str(repo / "locale"),
            "--site",
            str(out / "no-site"),
            "--pot-dir",
            str(repo.parent / "pots"),
            "--out",
            str(out),
            *args,
            "zh_CN",
        ],
        repo,
        env={**CLEAN_ENV, "PYTHONPATH": str(ROOT / "conf")},
        ok=ok,
    )


def test_rewrapping_moved_locations_and_reordering_show_nothing(small_repo, tmp_path):
    po = small_repo / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po"
    catalog = read(po)
    for message in messages(catalog):
        message.locations = [(name, n) for n, (name, _) in enumerate(message.locations, 7)]
    write_wrapped(catalog, po, width=40, reverse=True)
    assert len(git(small_repo, "diff").stdout.splitlines()) > 100  # a big raw diff
    result = review(small_repo, tmp_path / "out", "--base", "HEAD")
    summary = (tmp_path / "out" / "summary.md").read_text("utf-8")
    assert "No translation changed." in summary, summary
    page = BeautifulSoup((tmp_path / "out" / "index.html").read_text("utf-8"), "html.parser")
    assert page.select("li.entry") == []
    assert "0 changed entries" in result.stderr
    # Only the catalog's form is reported: make format-po puts it back.
    assert "\\[canonical\\]" in summary and "| findings |" in summary


def unmarkdown(text):
    """*text* as the job summary shows it: Markdown's backslash escapes removed."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def cells(line):
    """The cells of a Markdown table row, unescaped."""
    return [unmarkdown(c).strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def test_the_summary_quotes_file_names_and_translations_as_text():
    """summary.md goes into the pull request's job summary: nothing it quotes is markup."""
    from gate.findings import Problem
    from catalogs.diff import PageReview
    from build.review_page import render_summary

    name = "x](https://evil.example/)<img src=x onerror=alert(1)>![i](//evil.example/i.png)"
    finding = Problem(
        f"locale/zh_TW/LC_MESSAGES/{name}.po",
        3,
        "safety",
        "adds [a link](https://evil.example/) `code` <b>|</b>",
    )
    page = PageReview("zh_TW", name, Path(f"{name}.po"), [], findings=[finding])
    summary = render_summary([page], ("abc123", "test"), [], "_build/review/index.html")
    for markup in ("](", "<img", "<b>", "!["):  # present only escaped: "\\<img"
        assert not re.search(r"(?<!\\)" + re.escape(markup), summary), markup
    assert "`code`" not in summary
    assert unmarkdown(summary).count(name) == 2 and "adds [a link](https://evil.example/)" in (
        unmarkdown(summary)
    )
    row = next(line for line in summary.splitlines() if line.startswith("| zh"))
    assert cells(row)[:2] == ["zh_TW", name] and cells(row)[-1] == "1"


def test_translations_are_escaped_and_their_findings_shown(small_repo, tmp_path):
    po = small_repo / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po"
    edit(po, 'msgstr "教程"', 'msgstr "教程<script>alert(1)</script><img src=x onerror=alert(2)>"')
    review(small_repo, tmp_path / "out", "--base", "HEAD")
    page = BeautifulSoup((tmp_path / "out" / "index.html").read_text("utf-8"), "html.parser")
    assert page.find("script") is None and page.find("img") is None
    (entry,) = page.select("li.entry")
    assert entry["data-state"] == "changed"
    translation = entry.find("dd", lang="zh-CN")
    assert "<script>alert(1)</script>" in translation.ins.get_text()
    assert "[safety]" in entry.select_one("ul.findings").get_text()
    assert entry.find("dd", lang="en").get_text() == "Tutorials"


def test_without_main_a_base_must_be_given_and_a_bad_one_is_refused(small_repo, tmp_path):
    result = review(small_repo, tmp_path / "out", ok=False)
    assert result.returncode == 2
    assert "no branch main" in result.stderr and "BASE=<revision>" in result.stderr
    result = review(small_repo, tmp_path / "out", "--base", "no-such-revision", ok=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "BASE=no-such-revision is not a revision of this repository" in result.stderr
    assert not (tmp_path / "out" / "index.html").exists()


def test_the_git_diff_driver_hides_locations_and_wrapping(small_repo):
    shutil.copytree(
        ROOT / "conf" / "catalogs",
        small_repo / "conf" / "catalogs",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(ROOT / ".gitattributes", small_repo / ".gitattributes")
    git(small_repo, "add", "-A")
    git(small_repo, "commit", "--quiet", "-m", "the driver")
    # The command docs/translating.md gives, word for word.
    guide = (ROOT / "docs" / "translating.md").read_text("utf-8")
    command = re.search(r"^git config diff\.po\.textconv .*$", guide, re.MULTILINE).group()
    run(["sh", "-c", command], small_repo)
    po = small_repo / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po"
    catalog = read(po)
    for message in messages(catalog):
        message.locations = [(name, 3) for name, _ in message.locations]
    write_wrapped(catalog, po, width=45)
    assert git(small_repo, "diff", "--no-textconv").stdout.count("\n+") > 50
    assert git(small_repo, "diff").stdout == ""  # only wrapping and locations changed
    edit(po, 'msgstr "教程"', 'msgstr "教学"')
    changed = git(small_repo / "locale", "diff").stdout  # from a subfolder too
    assert [line for line in changed.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        '-msgstr "教程"',
        '+msgstr "教学"',
    ]


@pytest.mark.parametrize("target", ["review-diff", "check"])
def test_make_targets_refuse_a_bad_base_before_doing_anything(target):
    result = run(["make", "--no-print-directory", target, "BASE=no-such-revision-13"], ROOT, ok=False)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "BASE=no-such-revision-13 is not a revision of this repository" in result.stderr


def test_check_with_a_base_reports_only_changed_entries(small_repo, tmp_path, capsys):
    po = small_repo / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po"
    edit(po, 'msgstr "教程"', 'msgstr "教學"')  # Traditional characters in zh_CN
    git(small_repo, "commit", "--quiet", "-am", "a mistake that was already there")
    edit(po, 'msgstr "参与贡献"', 'msgstr "參與貢獻"')  # and one this change makes

    def check(*args):  # make check, in this process
        pots = ["--pot-dir", str(tmp_path / "pots")]
        code = make_check(["--locale-dir", str(small_repo / "locale"), *pots, *args, "zh_CN"])
        return code, *capsys.readouterr()

    assert check()[1].count("[script-mix]") == 2
    code, out, err = check("--base", "HEAD")
    assert code == 1
    assert out.count("[script-mix]") == 1 and "參→参" in out
    assert "1 error(s) on what changed since HEAD" in err


# -- A pull request made with the real tools, and its Read the Docs preview ---


def catalog(repo, lang, name="index"):
    return repo / "locale" / lang / "LC_MESSAGES" / f"{name}.po"


def make(repo, *args):
    return run(["make", "--no-print-directory", *args], repo)


# What the mini site's index says on main, besides its own paragraph: a section
# per kind of change the pull request makes, and a second page that it removes.
BASE_INDEX = """
## Who it is for

Readers who want to train one model on several GPUs, with the API which PyTorch
recommends today.

## How to read it

You can download every tutorial as a Python script or a Jupyter notebook at
the end of its page and run it on your own hardware.

Each page has a switch to read it in another language.
"""
HISTORY = "# A short history\n\nThis page is removed by the pull request.\n"
# The base's translations of those entries, as translators would have written them.
BASE_TRANSLATIONS = {
    "zh_CN": {
        "Who it is for": "适用读者",
        "Readers who want to train one model on several GPUs, with the API which PyTorch "
        "recommends today.": "想用 PyTorch 目前推荐的 API 在多块 GPU 上训练同一个模型的读者。",
        "How to read it": "阅读方式",
        "You can download every tutorial as a Python script or a Jupyter notebook at the end of "
        "its page and run it on your own hardware.": "每篇教程的页面末尾都可以下载 Python 脚本或 Jupyter Notebook，在自己的硬件上运行。",
        "Each page has a switch to read it in another language.": "每个页面都有一个开关，可以换成另一种语言阅读。",
        "A short history": "简史",
        "This page is removed by the pull request.": "这个页面会被拉取请求删除。",
    },
    "zh_TW": {
        "Who it is for": "適用讀者",
        "Readers who want to train one model on several GPUs, with the API which PyTorch "
        "recommends today.": "想用 PyTorch 目前推薦的 API 在多張 GPU 上訓練同一個模型的讀者。",
        "How to read it": "閱讀方式",
        "You can download every tutorial as a Python script or a Jupyter notebook at the end of "
        "its page and run it on your own hardware.": "每篇教學的頁面末尾都能下載 Python 腳本或 Jupyter Notebook，在自己的硬體上執行。",
        "Each page has a switch to read it in another language.": "每個頁面都有一個開關，可以換成另一種語言閱讀。",
        "A short history": "簡史",
        "This page is removed by the pull request.": "這個頁面會被拉取請求刪除。",
    },
}
TUTORIAL = "auto_examples/plot_01_tiny"


@pytest.fixture(scope="module")
def pull_request(mini_built, tmp_path_factory):
    """The mini site as a repository whose branch pr changes the translations in every way."""
    tmp = tmp_path_factory.mktemp("pull-request")
    repo = Path(shutil.copytree(mini_built, tmp / "repo", symlinks=True))
    index = repo / "docs" / "index.md"
    edit(index, "\n```{toctree}", BASE_INDEX + "\n```{toctree}")
    edit(index, "auto_examples/index\n", "auto_examples/index\nhistory\n")
    (repo / "docs" / "history.md").write_text(HISTORY, "utf-8")
    make(repo, "update-po")  # extracts the English first, as every make update-po does
    for lang, translations in BASE_TRANSLATIONS.items():
        for path in (repo / "locale" / lang / "LC_MESSAGES").rglob("*.po"):
            translations = translate(path, translations)
        assert not translations, f"{lang}: no entries for {list(translations)}"
    # The executed gallery is committed here, so that no clone runs the examples.
    (repo / ".gitignore").write_text("/_build/\n/.venv\n*.mo\n*.pot\n__pycache__/\n")
    edit(
        catalog(repo, "zh_CN"), 'msgid "Who it is for"\nmsgstr "适用读者"', 'msgid "Who it is for"\nmsgstr ""'
    )
    edit(catalog(repo, "zh_CN"), 'msgid "How to read it"', '#, fuzzy\nmsgid "How to read it"')
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "base: one untranslated, one fuzzy entry")
    git(repo, "switch", "--quiet", "-c", "pr")

    edit(index, "auto_examples/index\nhistory\n", "auto_examples/index\n")
    (repo / "docs" / "history.md").unlink()
    make(repo, "prune-po")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "remove the history page")

    edit(index, "which PyTorch\nrecommends today.", "which PyTorch\nrecommends for new code.")
    edit(
        index,
        "You can download every tutorial as a Python script or a Jupyter notebook at\n"
        "the end of its page and run it on your own hardware.\n\n",
        "",
    )
    edit(
        index,
        "in another language.\n",
        "in another language.\n\nEvery page was built from the same commit of the sources.\n",
    )
    make(repo, "update-po")
    git(repo, "commit", "--quiet", "-am", "English: one sentence changed, one removed, one added")

    edit(
        catalog(repo, "zh_CN"), 'msgid "Who it is for"\nmsgstr ""', 'msgid "Who it is for"\nmsgstr "适用读者"'
    )
    edit(catalog(repo, "zh_CN"), '#, fuzzy\nmsgid "How to read it"', 'msgid "How to read it"')
    edit(
        catalog(repo, "zh_CN"),
        'msgid "Every page was built from the same commit of the sources."\nmsgstr ""',
        'msgid "Every page was built from the same commit of the'
        ' sources."\nmsgstr "每个页面都是由同一次提交的源文件构建的。"',
    )
    edit(catalog(repo, "zh_TW"), 'msgstr "教學"', 'msgstr "教學文章"')
    git(repo, "commit", "--quiet", "-am", "zh_CN: translate and resolve; zh_TW: fix a title")

    rewrapped = catalog(repo, "zh_TW", TUTORIAL)
    write_wrapped(read(rewrapped), rewrapped, width=60)
    git(repo, "commit", "--quiet", "-am", "zh_TW: the tutorial re-wrapped by an editor")
    return repo


@pytest.fixture(scope="module")
def preview(pull_request, tmp_path_factory):
    """The pull request built as Read the Docs builds one: a shallow clone, all languages."""
    tmp = tmp_path_factory.mktemp("readthedocs-pr")
    clone = tmp / "clone"
    run(["git", "clone", "--quiet", "--depth=1", "--branch=pr", f"file://{pull_request}", str(clone)], tmp)
    assert run(["git", "rev-parse", "--is-shallow-repository"], clone).stdout.strip() == "true"
    # For make in the clone: the shared environment, not a new one (an old requirements.txt).
    (clone / ".venv").symlink_to(ROOT / ".venv")
    os.utime(clone / "requirements.txt", (0, 0))
    env = {
        **CLEAN_ENV,
        "READTHEDOCS": "True",
        "READTHEDOCS_LANGUAGE": "en",
        "READTHEDOCS_VERSION": "13",
        "READTHEDOCS_VERSION_TYPE": "external",
        "READTHEDOCS_OUTPUT": str(tmp / "out"),
        "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    for command in readthedocs_commands(pull_request=True):
        run(["sh", "-c", command], clone, env=env)
    return clone, tmp / "out" / "html"


def entries(page, lang, domain):
    """The change entries of one language and page on a review page."""
    section = page.find(id=re.sub(r"[^A-Za-z0-9_-]+", "-", f"{lang}-{domain}"))
    return [] if section is None else section.find_parent("section").select("li.entry")


def entry_for(items, english):
    """The entry among *items* whose English contains *english*."""
    found = [e for e in items if english in e.find("dd", lang="en").get_text()]
    assert len(found) == 1, (english, [e.get_text()[:80] for e in items])
    return found[0]


@pytest.mark.gettext
def test_the_preview_holds_every_language_and_the_review_page(preview):
    _, html = preview
    assert (html / "index.html").is_file()  # the root chooser
    for lang in ("en", "zh_CN", "zh_TW"):
        page = BeautifulSoup((html / lang / "index.html").read_text("utf-8"), "html.parser")
        switch = {a["hreflang"]: a["href"] for a in page.select("nav.language-switcher a")}
        others = {"en": "en", "zh-CN": "zh_CN", "zh-TW": "zh_TW"}
        others.pop(page.html["lang"])
        # Side by side, as locally, not /<language>/<version>/ as in Read the Docs' projects.
        assert switch == {tag: f"../{folder}/index.html" for tag, folder in others.items()}
    assert (html / "review" / "index.html").is_file() and (html / "review" / "summary.md").is_file()


@pytest.mark.gettext
def test_every_state_change_is_shown(preview):
    _, html = preview
    page = BeautifulSoup((html / "review" / "index.html").read_text("utf-8"), "html.parser")
    zh_cn, zh_tw = entries(page, "zh_CN", "index"), entries(page, "zh_TW", "index")
    for items in (zh_cn, zh_tw):
        fuzzy = entry_for(items, "recommends")
        assert fuzzy["data-state"] == "became-fuzzy"
        english = fuzzy.find("dd", lang="en")
        assert english.find("del").get_text(strip=True).endswith("today")
        assert "new code" in english.find("ins").get_text()
        assert "[completeness]" in fuzzy.select_one("ul.findings").get_text()
        assert entry_for(items, "You can download every tutorial")["data-state"] == "obsolete"
        assert entry_for(items, "Every page was built")["data-state"] == "new"
    assert entry_for(zh_cn, "Who it is for")["data-state"] == "translated"
    assert entry_for(zh_cn, "How to read it")["data-state"] == "fuzzy-resolved"
    fixed = entry_for(zh_tw, "Tutorials")
    assert fixed["data-state"] == "changed"
    assert [i.get_text() for i in fixed.find("dd", lang="zh-TW").find_all("ins")] == ["added: 文章"]
    for lang in ("zh_CN", "zh_TW"):
        removed = entries(page, lang, "history")
        assert removed and {e["data-state"] for e in removed} == {"removed"}


@pytest.mark.gettext
def test_rewrapping_shows_no_entry_only_the_catalogs_form(preview):
    _, html = preview
    page = BeautifulSoup((html / "review" / "index.html").read_text("utf-8"), "html.parser")
    domain = TUTORIAL
    tutorial = [e for e in entries(page, "zh_TW", domain) if e["data-state"] != "removed"]
    assert tutorial == []  # pruned obsolete entries aside, nothing changed
    heading = page.find(id=f"zh_TW-{domain.replace('/', '-')}")
    assert "[canonical]" in heading.find_parent("section").get_text()


@pytest.mark.gettext
def test_links_point_to_existing_anchors_of_the_built_pages(preview):
    _, html = preview
    review_page = html / "review" / "index.html"
    page = BeautifulSoup(review_page.read_text("utf-8"), "html.parser")
    present = [e for e in page.select("li.entry") if e["data-state"] not in ("removed", "obsolete")]
    assert len(present) >= 7
    links = [e.find("a")["href"] for e in present]
    assert all("#" in link for link in links), links  # each to its section
    for link in links:
        target, _, anchor = link.partition("#")
        built = (review_page.parent / target).resolve()
        assert built.is_relative_to(html.resolve()) and built.is_file(), link
        if anchor:
            ids = {
                tag["id"] for tag in BeautifulSoup(built.read_text("utf-8"), "html.parser").find_all(id=True)
            }
            assert anchor in ids, link
    # The link of the changed sentence lands in the section that shows it.
    fuzzy = entry_for(entries(page, "zh_CN", "index"), "recommends")
    target, _, anchor = fuzzy.find("a")["href"].partition("#")
    built = BeautifulSoup((review_page.parent / target).read_text("utf-8"), "html.parser")
    assert "recommends for new code." in built.find(id=anchor).get_text()


@pytest.mark.gettext
def test_summary_counts_per_language_and_page(preview):
    _, html = preview
    summary = (html / "review" / "summary.md").read_text("utf-8")
    rows = {
        tuple(found[:2]): found[2:]
        for line in summary.splitlines()
        if line.startswith("| zh")
        for found in [cells(line)]
    }
    header = cells(next(line for line in summary.splitlines() if line.startswith("| language")))
    columns = header[2:]
    zh_cn = dict(zip(columns, rows[("zh_CN", "index")]))
    assert zh_cn["became fuzzy"] == "1" and zh_cn["translated"] == "1"
    assert zh_cn["fuzzy resolved"] == "1" and zh_cn["new"] == "1" and zh_cn["obsolete"] == "1"
    assert dict(zip(columns, rows[("zh_TW", "index")]))["changed"] == "1"
    assert ("zh_TW", TUTORIAL) in rows  # its [canonical] finding
    assert "\\[canonical\\]" in summary and len(summary) < 6000


@pytest.mark.gettext
def test_make_review_diff_and_check_in_the_clone_compare_with_origin_main(preview):
    clone, _ = preview
    result = make(clone, "review-diff")
    assert "merge base with origin/main" in result.stdout
    review_page = clone / "_build" / "review" / "index.html"
    page = BeautifulSoup(review_page.read_text("utf-8"), "html.parser")
    link = entry_for(entries(page, "zh_TW", "index"), "Tutorials").find("a")["href"]
    assert link.startswith("../html/zh_TW/index.html#")
    check = run(["make", "--no-print-directory", "check", "BASE=origin/main"], clone, ok=False)
    assert check.returncode != 0
    assert "on what changed since origin/main" in check.stderr
    assert "index.po" in check.stdout and "[completeness]" in check.stdout


def holds(condition, outcomes, failed):
    """Whether a step's ``if:`` holds, for the expressions review.yml uses (others fail)."""
    if condition is None or "()" not in condition:  # without a status function: success() &&
        if failed:
            return False
    if condition is None:
        return True
    results = []
    for term in (term.strip() for term in condition.split("||")):
        outcome = re.fullmatch(r"steps\.(\w+)\.outcome == '(\w+)'", term)
        assert term == "always()" or outcome, f"this test cannot evaluate {term!r}"
        results.append(term == "always()" or outcomes[outcome[1]] == outcome[2])
    return any(results)


@pytest.mark.gettext
def test_the_pull_request_workflow_runs_its_steps_on_a_pull_request(pull_request, tmp_path):
    """review.yml's job, step by step as GitHub runs it (bash -eo pipefail, ``if:``,
    ``continue-on-error``), on the mini pull request: the runner's set-up steps aside
    (the shared environment stands in for them), actionlint checks the rest."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "review.yml").read_text("utf-8"))
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key "on" as True
    job = workflow["jobs"]["review"]
    base = git(pull_request, "rev-parse", "main").stdout.strip()
    known = {"${{ github.event.pull_request.base.sha }}": base}
    summary = tmp_path / "step-summary.md"
    env = {
        **CLEAN_ENV,
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        **{name: known[value] for name, value in job["env"].items()},
    }
    outcomes, failed, uploads = {}, False, []
    for step in job["steps"]:
        if "System packages" in step.get("name", "") or "Virtual environment" in step.get("name", ""):
            continue
        if not holds(step.get("if"), outcomes, failed):
            continue
        if "uses" in step:
            if step["uses"].startswith("actions/upload-artifact"):
                uploads += step["with"]["path"].split()
            continue
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=pull_request,
            env=env,
            capture_output=True,
            text=True,
        )
        outcomes[step.get("id", step["name"])] = "success" if done.returncode == 0 else "failure"
        failed |= done.returncode != 0 and not step.get("continue-on-error", False)
    # The pull request builds; its zh_CN index is not finished, which make check finds.
    assert outcomes["html"] == "success" and outcomes["check"] == "failure", outcomes
    assert failed and outcomes["Fail when the build or the checks failed"] == "failure"
    said = summary.read_text("utf-8")  # the review of this pull request, against its base
    assert said == (pull_request / "_build/review/summary.md").read_text("utf-8")
    assert said.startswith(f"## Translation review: changes since `{base[:12]}` ({base})")
    assert uploads and all((pull_request / path / "index.html").is_file() for path in uploads)


@pytest.mark.gettext
def test_a_preview_without_the_base_fails_clearly(pull_request, tmp_path):
    lonely = tmp_path / "lonely"
    run(
        ["git", "clone", "--quiet", "--depth=1", "--branch=pr", f"file://{pull_request}", str(lonely)],
        tmp_path,
    )
    run(["git", "remote", "set-url", "origin", str(tmp_path / "gone")], lonely)
    env = {
        **CLEAN_ENV,
        "READTHEDOCS": "True",
        "READTHEDOCS_LANGUAGE": "en",
        "READTHEDOCS_VERSION": "13",
        "READTHEDOCS_VERSION_TYPE": "external",
        "READTHEDOCS_OUTPUT": str(tmp_path / "out"),
    }
    env["PYTHONPATH"] = str(lonely / "conf")
    result = run([sys.executable, "-m", "build.site", "readthedocs"], lonely, env=env, ok=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "cannot find the commit this pull request is based on" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.browser
@pytest.mark.gettext
def test_the_review_page_in_chromium(preview, open_page):
    from axe_playwright_python.sync_playwright import Axe

    _, html = preview
    shots = ROOT / "_build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page = open_page((html / "review" / "index.html").as_uri())
    page.screenshot(path=str(shots / "review-page.png"), full_page=True)
    violations = Axe().run(page).response["violations"]
    assert violations == [], [(v["id"], v["nodes"][0]["target"]) for v in violations]
    deleted = page.locator("li.entry[data-state=became-fuzzy] dd[lang=en] del").first
    assert deleted.is_visible()
    assert "line-through" in deleted.evaluate("e => getComputedStyle(e).textDecorationLine")
    # No sideways scrolling on a desktop screen.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.locator("li.entry[data-state=changed] a").first.click()
    page.wait_for_load_state()
    assert "/zh_TW/index.html#" in page.url  # the translated page, at the section
    assert page.locator(f"[id='{page.url.split('#')[1]}']").is_visible()
    # The preview builds no PDF or EPUB, so its pages link none.
    assert page.locator(".offline-downloads").count() == 0
