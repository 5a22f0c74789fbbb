"""references: a translation changes where a cross-reference or link leads, or loses it.

Sphinx keeps a translation's references only as far as they match the
English (sphinx/transforms/i18n.py): cross-references (``:ref:``,
``:term:``, ``:doc:``, ``:func:`` ...) are compared by target in any order,
named links (```name`_``), footnote and citation references as written; any
difference is an "inconsistent references" warning, which fails a ``-W``
build. Titles are free: ``:term:`工作进程 <worker>```.

Errors: a target that does not resolve (checks/project.py says which exist)
or that changed, a cross-reference dropped or left as plain words, a role
that Sphinx resolves otherwise (``:func:`` → ``:meth:``, ``:ref:`` → ``:doc:``,
see role_change), a link whose URI changed or that is no longer a link (a URL
glued to Chinese text, a link without its trailing ``_`` or the space before
``<``, a link name read as a URI), a changed named link, footnote or citation
reference, a substitution the English does not use. Warnings: an added
cross-reference, a role that finds only part of what the English's finds or
shows it otherwise, a link to the site's page in the reader's language or
replaced by a cross-reference to the same page, a substitution left out.
"""

import re
from collections import Counter

from sphinx.transforms.i18n import parse_noqa

from .common import ERROR, error, split_url, warning
from .markup import pairs, squeeze
from .parsing import EXPLICIT_TITLE, inconsistent_references, is_xref, lookup, parse, spaced, written

# A language in a URL: zh.wikipedia.org, /zh-cn/, _ZH-CN.pdf.
_LANGUAGE = re.compile(
    r"[-_./]?(?<![a-z])(?:en|en[-_]us|zh|zh[-_](?:cn|tw|hans|hant)|cn|tw)(?![a-z])",
    re.IGNORECASE,
)
_CHINESE = re.compile(r"(?<![a-z])zh(?:[-_](?:cn|tw|hk|hans|hant))?(?![a-z])", re.IGNORECASE)
_NO_SPACE = re.compile(r"[^\s`]<[^>]*>`")  # `text<URI>`_
INCONSISTENT = 'Sphinx warns "inconsistent references" (fails -W)'


def role_text(role, syntax, target=None):
    """Return a role as the translator writes it, with another *target* if given."""
    text = role.text
    if target is not None:
        match = EXPLICIT_TITLE.match(role.text)
        text = f"{match[1] if match else role.text.split(' <')[0]} <{target}>"
    return written(role.name, text, syntax)


def raw_target(role):
    """Return the target of *role* as written (not lowercased)."""
    match = EXPLICIT_TITLE.match(role.text)
    return match[2] if match else role.text


def role_change(old, new, target):
    """Return a Finding if Sphinx resolves ``:new:`target``` otherwise than ``:old:`target```.

    Sphinx's domains (sphinx/domains/python) look a role's target up among the
    object types of ``objtypes_for_role``: through intersphinx and in a ``.name``
    search only those, and nowhere ``:const:``, which names none. Within the
    project an exact name is found whatever the role, but only the translation's
    own role is used, and Sphinx copies the English's module and class context
    only to a reference with the same role and target (sphinx/transforms/i18n.py).
    So a role that finds all the English's object types, shown alike (the "()"
    of ``:func:``), resolves the same: ``:exc:`` → ``:class:``. So does any
    role of the domain in place of one that names no object type (``:const:``),
    if the target is a full name: the English's link can only be to that name,
    defined in the project, which every role finds exactly (even ``:mod:``).
    One that finds some of them, or shows them otherwise, is a warning; one
    that finds none of them, or looks in another domain (``:ref:`` →
    ``:doc:``), is an error.
    """
    before, after = lookup(old), lookup(new)
    if before is None or after is None or before == after:
        return None  # an unknown role is markup's; :py:func: is :func:
    change = f"changes :{old}:`{target}` to :{new}:`{target}`"
    exact = before[1] is None and "." in target and not target.startswith(".")
    if exact and before[0] == after[0]:
        if before[2] == after[2]:  # a full name any role of the domain finds, as :const: does
            return None
        return warning(
            f"{change}: :{new}: shows it {'with' if after[2] else 'without'} (); "
            f"keep :{old}: unless that is meant",
            at=f":{new}:",
        )
    if before[0] != after[0] or not before[1] or not after[1] or not before[1] & after[1]:

        def kinds(found):
            return ", ".join(sorted(found)) if found else "no object type (exact names only)"

        return error(
            f"{change}: Sphinx looks :{new}: up among {kinds(after[1])} in the "
            f"{after[0]} domain, :{old}: among {kinds(before[1])} in the {before[0]} "
            f"domain, so the link breaks or leads elsewhere; keep :{old}:",
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


def xrefs(message, english, translated, said=None):
    """Yield cross-references whose targets or roles differ from the English's.

    *said*: Sphinx's own warnings on it (:func:`check`). Only where it warns is
    that claimed; where it compared and found nothing (no ``#noqa``), a changed
    target is one it finds alike (``.date`` for ``date``), and a dropped role is
    one written ``:func:`!name```: no link, words only.
    """
    silent = said == [] and not message.noqa
    claim = f": {INCONSISTENT}" if said else ""
    old = [r for r in english.roles if is_xref(r.name)]
    new = [r for r in translated.roles if is_xref(r.name) and "`" not in r.text]  # else markup's
    lost = list((Counter(r.target for r in old) - Counter(r.target for r in new)).elements())
    added = list((Counter(r.target for r in new) - Counter(r.target for r in old)).elements())
    lost_roles = [next(r for r in old if r.target == target) for target in lost]
    for target in sorted({r.target for r in old} & {r.target for r in new}):
        names = Counter(r.name for r in old if r.target == target)
        other = Counter(r.name for r in new if r.target == target)
        for before, after in zip(sorted((names - other).elements()), sorted((other - names).elements())):
            finding = role_change(before, after, target)
            if finding:
                yield finding
    for target in added:
        role = next(r for r in new if r.target == target)
        shown = role_text(role, message.syntax)
        replaced = lost_roles.pop(0) if lost_roles else None
        if message.project.resolves(message.catalog, role) is False:
            fix = role_text(role, message.syntax, raw_target(replaced)) if replaced else ""
            yield error(
                f"{shown} does not resolve: no such target"
                + (f"; keep the English target: {fix}" if fix else ""),
                at=role.text,
            )
        elif replaced and "!" in role.text[:1] + replaced.text[:1]:
            yield error(
                f"changes {role_text(replaced, message.syntax)} to {shown}: written with !, "
                "it is no link, and the reader sees its text; copy it as in the English",
                at=role.text,
            )
        elif replaced and silent:  # ".date" for "date": Sphinx keeps the English's target
            yield warning(
                f"{shown} for the English's {role_text(replaced, message.syntax)}: Sphinx "
                "compares the same target, but may find another object with it; check "
                "the link",
                at=role.text,
            )
        elif replaced:
            yield error(
                f"{shown} leads to {raw_target(role)!r}, the English to {raw_target(replaced)!r}",
                at=role.text,
            )
        else:
            yield warning(f"adds {shown}{claim}", at=role.text)
    for role in lost_roles:
        if silent and not role.text.startswith("!"):
            continue  # Sphinx found each link: the one dropped is the English's other, ``!`` one
        marker = (
            rf"[:：]{re.escape(role.name)}[:：]"
            if message.syntax == "rst"
            else rf"\{{{re.escape(role.name)}\}}"
        )
        if role.text not in translated.prose:
            yield error(f"drops {role_text(role, message.syntax)}{claim}")
        elif not re.search(marker + r"[`'‘“]" + re.escape(role.text), message.msgstr):
            # (else the role is written out but shown raw: markup says why)
            space = spaced(role.name, role.text, message.msgstr, message.syntax)
            why = (
                f"the space after :{role.name}: makes it text"
                if space
                else "its words are plain text or italics here, no link"
            )
            yield error(
                f"drops {role_text(role, message.syntax)} ({why}){claim}",
                at=space[:12] if space else role.text,
            )


def localized(old, new):
    """Say how URL *new* is *old*'s site in another language, or return None.

    The same page with only its language part changed (zh.wikipedia, /zh-cn/);
    or the same site's page in the reader's language where the English's has an
    English one or none (/en-us/windows/… → /zh-tw/microsoft-365/…: a page that
    moved). Both are usually the translator's choice: warnings.
    """
    old_host, new_host = split_url(old).hostname or "", split_url(new).hostname or ""
    if old_host != new_host:
        same = old_host.split(".")[-2:] == new_host.split(".")[-2:] and bool(
            _LANGUAGE.fullmatch(new_host.split(".")[0].lower())
        )
        return "a localized page?" if same else None
    if _LANGUAGE.sub("", old) == _LANGUAGE.sub("", new):  # a #fragment keeps its case
        return "a localized page?"
    if old_host and _CHINESE.search(split_url(new).path) and not _CHINESE.search(old):
        return "the site's page in the reader's language? check that it is the same page"
    return None


def same_page(uri, roles):
    """Return the role of *roles* whose target names the page or section *uri*: speed_python."""
    parts = set(re.split(r"[/#.?=&]+", uri.lower().replace("_", "-")))
    for role in roles:
        name = re.split(r"[.:/#]", role.target.lower().replace("_", "-"))[-1]
        if name and name in parts:
            return role
    return None


def read_as_uri(uri):
    """Whether link *uri* is a name that docutils took for a URI: <Code of Conduct>."""
    return not split_url(uri).scheme and not any(c in uri for c in "/.#")


def links(message, english, translated):
    """Yield links whose URI changed or that are no longer links."""
    lost = list((Counter(english.links) - Counter(translated.links)).elements())
    added = list((Counter(translated.links) - Counter(english.links)).elements())
    for name in [uri for uri in added if read_as_uri(uri)]:
        added.remove(name)  # docutils drops the spaces of "<Code of Conduct>"
        yield error(
            f"link name read as a URI: <{name}> (a link to a named target has _ inside "
            "the brackets: <Name_>)",
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
                f"{address} is no longer a link: a URL glued to text, or a link "
                "without its trailing _ or the space before <",
                at=address,
            )
        elif new is None and same_page(uri, new_refs):
            role = same_page(uri, new_refs)
            yield warning(
                f"replaces the link to {uri} by {role_text(role, message.syntax)}: the "
                "same page in this site's language?",
                at=role.text,
            )
        elif new is None:
            yield error(f"drops the link to {uri}")
        elif localized(uri, new):
            yield warning(f"links to {new} instead of {uri}: {localized(uri, new)}", at=new)
        elif new.split(":", 1)[-1] in uri:
            yield error(
                f"only part of {address} is a link: it is glued to the text before or after it",
                at=new.split(":", 1)[-1],
            )
        else:
            yield error(f"changes the link {uri} to {new}", at=new)


def names(english, translated, noqa=False, said=None):
    """Yield changed named links, substitutions, footnote and citation references
    (*said*: Sphinx's own warnings on it; none without #noqa: it compared the named
    links and notes and found them alike)."""
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
                f"no space before < in {name[:40]}…: the whole text becomes a link "
                "name that leads nowhere; write `文字 <URL>`_",
                at=name[:12],
            )
        form = {"substitutions": "|{}|", "notes": "[{}]_"}.get(attribute, "{}")
        lost, added = [form.format(n) for n in lost], [form.format(n) for n in added]
        for name in [n for n in lost if squeeze(n) in squeeze(translated.prose)]:
            lost.remove(name)  # shown as text; markup reports a lone | itself
            if attribute != "substitutions":
                yield error(
                    f"{name} is shown as text, not as a {what}: it is glued to the text "
                    'around it (put a space or "\\ " there), or has a space inside',
                    at=name.strip("`_[]"),
                )
        if attribute == "substitutions":
            # Another name is undefined unless the English uses it; one left out only takes
            # its text or image off the page, often said in words (|reg|, |deg| → 摄氏度).
            added = [n for n in added if n.strip("|") not in old]
            if lost and not added:
                yield warning(
                    f"leaves out {', '.join(lost)}: its text or image is not on the "
                    "page; fine if the translation says it in words"
                )
                continue
        if not lost and not added:
            continue
        text = f"{what} {', '.join(lost) or '(none)'} becomes {', '.join(added) or '(none)'}"
        if attribute == "refnames" and noqa and len(added) < 2:
            continue  # not compared, and the one renamed name takes the English's target
        if attribute == "refnames" and len(added) > 1:  # Sphinx pairs them in a random order
            fix = (
                (f"{INCONSISTENT}, and" if said else "Sphinx") + " may link each to another's "
                "target, which #noqa does not stop: keep the names as in the English"
            )
        yield error(f"{text}: {fix}", at=added[0].strip("|") if added else "")
    more_links = max(0, len(translated.links) - len(english.links))  # a name read as a URI
    if english.anonymous > translated.anonymous + more_links:
        yield error(f"anonymous links `…`__: {english.anonymous} in the English, {translated.anonymous} here")


def check(message):
    """Yield the references of the translation that lead elsewhere than the English's.

    Whether the build fails on them, Sphinx decides: its own comparison
    (parsing.inconsistent_references). The findings below say why and how to
    fix it, and claim Sphinx's warning only where Sphinx gives it; a warning
    Sphinx gives where this check sees the same references (it counts them in
    any order, Sphinx compares them in order; ``:mod:`!name``` made a link) is
    an error in its words.
    """
    if message.syntax == "text" or "\n" in message.msgid or message.msgid == message.msgstr:
        return
    known = message.project.roles
    english = parse(message.msgid, message.syntax, known)
    translated = parse(message.msgstr, message.syntax, known)
    said = None
    if any(refers(parsed) for parsed in (english, translated)):  # else nothing to compare (most)
        translation = parse_noqa(message.msgstr)[0]
        said = inconsistent_references(message.msgid, translation, message.syntax, message.noqa)
    found = [*xrefs(message, english, translated, said), *links(message, english, translated)]
    if message.syntax == "rst":
        found += names(english, translated, message.noqa, said)
    yield from found
    if said and not any(finding.severity == ERROR for finding in found) and alike(english, translated):
        fix = next((fix for start, fix in UNSEEN if said[0].startswith(start)), "")
        yield error(f"Sphinx warns: {said[0]} (fails -W){fix}")  # (else markup says why)


# What this check's comparison cannot see but Sphinx warns of, by the start of its warning.
UNSEEN = (
    (
        "inconsistent references",
        ": the same named links in another order; end the translation "
        "with #noqa, and each still leads where the English's does",
    ),
    (
        "inconsistent term references",
        ": a role that the English writes with ! (no link) or without; write each as the English does",
    ),
)


def refers(parsed):
    """Whether a message holds a reference, or markup its parse could not read."""
    return bool(
        parsed.roles or parsed.refnames or parsed.notes or parsed.links or parsed.anonymous or parsed.stray
    )


def alike(english, translated):
    """Whether both hold the same references, in any order."""

    def targets(parsed):
        return Counter(r.target for r in parsed.roles if is_xref(r.name))

    return targets(english) == targets(translated) and all(
        getattr(english, name) == getattr(translated, name) for name in ("refnames", "notes", "links")
    )
