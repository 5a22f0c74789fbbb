"""The one Sphinx configuration for every language (pass ``-c conf``).

Languages differ only by ``-D language=``; settings that depend on the
language are filled in by a ``config-inited`` handler in
``extensions/site_language.py``. The extensions are in ``extensions/``; the
languages are the rows of ``languages.py``.
"""

import os
import sys

# conf/ holds the extensions' packages: make exports it as PYTHONPATH, sphinx-intl and a
# bare sphinx-build (as Read the Docs runs it) do not.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from languages import LANGUAGES  # noqa: E402
from extensions.compiled_catalogs import compile_catalogs  # noqa: E402
from site_layout import COMPILED, CONF, DOCS, EXAMPLES, GALLERY_NAME, LOCALE, REPOSITORY_GUIDES

# -- Project -----------------------------------------------------------------

project = "Data Parallelism in PyTorch"
author = "The dp-tutorial authors"
copyright = "2026, " + author
language = "en"
root_doc = "index"

extensions = [
    "checkout_lock",  # first: wait for any other build of this checkout
    "extensions.compiled_catalogs",  # refuses what compile_catalogs() below did not compile
    "myst_parser",
    "sphinx_design",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
    "notfound.extension",
    "extensions.site_language",
    "extensions.language_switcher",
    "extensions.gpu_tabs",
    "extensions.collapsed_sections",  # the code a page runs but does not teach, folded
    "extensions.example_guard",
    "extensions.reproducible_files",
    "extensions.recordings",  # recorded output (make html OUTPUTS=...): verified text only
    "extensions.provenance",
    "extensions.bilingual",
    "extensions.translation_notice",
    "extensions.preview_banner",  # the live preview's banner: its sentences, for sphinx.pot
    "extensions.gallery_cards",
    "extensions.localized_examples",  # comments, docstrings, figures and downloads translated
    "extensions.translation_safety",  # translations add words, never markup or script
    "content_security_policy",
    "extensions.chinese_search",
    "extensions.translation_status",
    "extensions.navigation_refresh",
    "extensions.theme_strings",
    "extensions.markup_fixes",
    "extensions.offline_copies",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = [f"{GALLERY_NAME}/*.{kind}" for kind in ("ipynb", "py", "zip")] + list(REPOSITORY_GUIDES)
# Absolute: the gettext builder resolves template paths against the source
# folder, the HTML builder against this one.
templates_path = [str(CONF / "_templates")]
# A link that does not resolve is a bug in every language.
nitpicky = True

# -- Internationalisation ----------------------------------------------------

# The translations' catalogs (relative to docs/): the pages' counts, notices and refusals read them.
catalog_sources = "../locale"
# Sphinx reads only what compile_catalogs() makes of them, now, before it loads any .mo:
# the translations' checked catalogs, compiled, and nothing else (no folder gettext
# would also look in; the English build reads none). sphinx-intl (-c conf/conf.py) reads
# the first of locale_dirs as the folder of its .po files, and compiles nothing for Sphinx.
if os.path.basename(sys.argv[0]) == "sphinx-intl" or "sphinx_intl" in sys.argv[0]:
    locale_dirs = [catalog_sources]
else:
    locale_dirs = [str(COMPILED)]
    compile_catalogs(LOCALE, COMPILED)
gettext_compact = False
gettext_uuid = False
gettext_location = True
gettext_last_translator = "dp-tutorial translators"
gettext_language_team = "dp-tutorial translators"
# Marks each translatable node translated/untranslated (used by bilingual.py).
translation_progress_classes = True
site_languages = LANGUAGES

# -- HTML --------------------------------------------------------------------

html_theme = "furo"
html_title = project
html_static_path = ["_static"]
html_css_files = ["site.css"]
html_js_files = ["bilingual.js", "search_summary.js", "accessibility.js", "interface_strings.js"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
# Furo's sidebar, with this language's PDF and EPUB below the navigation.
html_sidebars = {
    "**": [
        "sidebar/brand.html",
        "sidebar/search.html",
        "sidebar/scroll-start.html",
        "sidebar/navigation.html",
        "sidebar/offline-downloads.html",
        "sidebar/ethical-ads.html",
        "sidebar/scroll-end.html",
        "sidebar/variant-selector.html",
    ]
}
html_theme_options = {
    "top_of_page_buttons": [],
    "navigation_with_keys": True,
}

# -- Offline copies: PDF (LaTeX) and EPUB --------------------------------------

# File names, fonts and the table of contents' title depend on the language:
# extensions/offline_copies.py fills them in.
offline_basename = "data-parallelism-in-pytorch"
latex_engine = "xelatex"
latex_use_xindy = False  # the site has no index; makeindex ships with TeX Live
latex_domain_indices = False
latex_elements = {
    "papersize": "a4paper",
    "printindex": "",
    # Long code and output lines wrap, breaking inside a word if they must.
    "sphinxsetup": "verbatimforcewraps=true, verbatimmaxunderfull=0",
    # A glyph missing from every font is an error (with its line), not a
    # log line nobody reads: build_offline.py reports it with its page.
    # Lines end ragged rather than justified: a justified line before a long
    # code word spread its Chinese characters apart, and pdftotext, search
    # and copy then read a space between every character (the right margin's
    # glue is infinite, so no other glue of a line stretches).
    "preamble": "\\tracinglostchars=3\n"
    "\\usepackage{ragged2e}\\setlength{\\RaggedRightRightskip}{0pt plus 1fil}\n"
    "\\AtBeginDocument{\\RaggedRight}\n",
}
epub_show_urls = "no"
epub_use_index = False
epub_copyright = copyright

# -- 404 page (sphinx-notfound-page) -----------------------------------------

# Filled in per language by site_language.py; ``None`` means relative links.
notfound_urls_prefix = None
# The template writes the title and body itself, so that their strings are
# extracted into sphinx.pot and translated like every other template string.
notfound_template = "404.html"
notfound_context = {"title": "", "body": ""}

# -- Copy buttons ------------------------------------------------------------

# Gallery code blocks hold no prompts; output blocks (``.sphx-glr-script-out``)
# get no button at all, so a copy is always code only.
copybutton_selector = "div:not(.sphx-glr-script-out) > div.highlight pre"
copybutton_exclude = ".linenos, .gp, .go"

# -- Sphinx-Gallery ----------------------------------------------------------

# The gallery's folders, relative to docs/, for Sphinx-Gallery and our extensions.
examples_folder = os.path.relpath(EXAMPLES, DOCS)
gallery_folder = GALLERY_NAME
sphinx_gallery_conf = {
    "examples_dirs": examples_folder,
    "gallery_dirs": gallery_folder,
    # Every example runs; a skipped one would publish a page without output.
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    # Matplotlib's scraper, keeping each figure to draw again in each language.
    "image_scrapers": ("extensions.localized_examples.scrape",),
    "reset_modules": (
        "matplotlib",
        "extensions.localized_examples.readable_figures",
        "extensions.example_guard.arm_timeout",
        "extensions.provenance.record",
    ),
    "reset_modules_order": "both",
    # Each example runs as ``python example.py`` would: __file__ set, no __spec__.
    "reset_argv": "extensions.example_guard.run_as_script",
    # Run times change on every build; they must never become msgids.
    "min_reported_time": float("inf"),
    "write_computation_times": False,
    "show_signature": False,
    "show_memory": False,
    "remove_config_comments": True,
    "download_all_examples": False,
    "first_notebook_cell": None,
    "capture_repr": (),
    "matplotlib_animations": False,
}
# Seconds an example may run before the build gives up on it (-D example_timeout=3).
example_timeout = 300
