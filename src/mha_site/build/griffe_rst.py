"""Griffe extension (mkdocs.yml, the Python handler's ``extensions``): ``mha_ref``'s docstrings,
written in a light reST style to read well in a terminal and run as doctests, rendered right by
mkdocstrings' Markdown. Roles become cross-references to documented objects (else code), doctest
paragraphs ``pycon`` blocks, reST definition lists Markdown ones, ``#:`` comments attribute
docstrings (as Sphinx reads them), and a ``<`` outside code is escaped: a stray ``<title>``
would swallow the rest of the page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|data|meth|attr|exc|obj):`(~?)([^`]+)`")
# A doctest paragraph: from a line starting ">>>" to a blank line.
DOCTEST = re.compile(r"^([^\S\n]*)>>>.*(?:\n[^\S\n]*\S.*)*", re.M)
DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")
REST_TERM = re.compile(r"^``[^`]+``$")
# A fenced block, a code span, or a "<" outside both.
CODE_OR_LT = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$|(`+).+?\1|<", re.M | re.S)


def _walk(obj: griffe.Object) -> list[griffe.Object]:
    return [obj] + [found for member in obj.members.values() if not member.is_alias for found in _walk(member)]


def _resolve(package: griffe.Object, scope: griffe.Object, target: str) -> griffe.Object | None:
    """The package object ``target`` names, trying it as written, then relative to the docstring's module and class."""
    module = scope if scope.is_module else scope.module
    candidates = [target, f"{module.path}.{target}"]
    owner = scope if scope.is_class else scope.parent
    if owner is not None and owner.is_class:
        candidates.append(f"{owner.path}.{target}")
    for path in candidates:
        if path == package.path:
            return package
        if not path.startswith(package.path + "."):
            continue
        try:
            found = package[path[len(package.path) + 1 :]]
            return found.final_target if found.is_alias else found
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
    return None


def rewrite_roles(text: str, package: griffe.Object, scope: griffe.Object) -> str:
    """Turn reST roles into autorefs links (``[`label`][path]``) or plain code spans."""

    def replace(match: re.Match[str]) -> str:
        short, target = match.group(1), match.group(2).strip()
        label = target.rsplit(".", 1)[-1] if short else target
        found = _resolve(package, scope, target)
        if found is not None and (found.is_module or (bool(found.docstring and found.docstring.value.strip())
                                                      and not found.name.startswith("_"))):
            return f"[`{label}`][{found.path}]"
        return f"`{label}`"

    return ROLE.sub(replace, text)


def fence_doctests(text: str) -> str:
    """Wrap each doctest paragraph in a ``pycon`` fence and drop ``# doctest:`` directives."""

    def fence(match: re.Match[str]) -> str:
        indent = match.group(1)
        lines = [indent + DIRECTIVE.sub("", line.removeprefix(indent)) for line in match.group(0).split("\n")]
        blank = "\n" if match.start() and text[: match.start()].split("\n")[-2].strip() else ""
        return f"{blank}{indent}```pycon\n" + "\n".join(lines) + f"\n{indent}```"

    return DOCTEST.sub(fence, text)


def definition_lists(text: str) -> str:
    """reST ``term`` + indented body -> Markdown ``term`` + ``:   body`` (pymdownx def_list syntax)."""
    lines = text.split("\n")
    out: list[str] = []
    state = ""  # "term": the line before is an item's term; "body": inside an item's body
    for i, line in enumerate(lines):
        if state == "term" or (state == "body" and line.startswith("    ") and line.strip()):
            out.append(":   " + line[4:] if state == "term" else line)
            state = "body"
            continue
        follows = lines[i + 1] if i + 1 < len(lines) else ""
        term = REST_TERM.match(line) and follows.startswith("    ") and follows.strip()
        # reST lets one item follow another without a blank line; Markdown needs one before the term.
        if term and (state or not out or not out[-1].strip()):
            out.extend([""] * bool(state) + [line])
            state = "term"
        else:
            out.append(line)
            state = ""
    return "\n".join(out)


def escape_html(text: str) -> str:
    """Escape ``<`` everywhere except in fenced blocks and code spans, so no text becomes an HTML tag."""
    return CODE_OR_LT.sub(lambda match: "&lt;" if match.group(0) == "<" else match.group(0), text)


def comment_docstrings(module: griffe.Module) -> None:
    """Give undocumented module attributes the ``#:`` comment lines written just above them."""
    if module.filepath is None or isinstance(module.filepath, list):
        return
    source = Path(module.filepath).read_text(encoding="utf-8").split("\n")
    for member in module.members.values():
        if member.is_alias or not member.is_attribute or member.docstring is not None or member.lineno is None:
            continue
        comment: list[str] = []
        row = member.lineno - 2  # the line above, 0-based
        while row >= 0 and source[row].lstrip().startswith("#:"):
            comment.insert(0, source[row].lstrip()[2:].strip())
            row -= 1
        if comment:
            member.docstring = griffe.Docstring(" ".join(comment), lineno=row + 2, parent=member)


class RstDocstrings(griffe.Extension):
    """Rewrite every docstring of a loaded package (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        objects = _walk(pkg)
        for obj in objects:
            if obj.is_module:
                comment_docstrings(obj)
        for obj in objects:
            if obj.docstring is None:
                continue
            value = escape_html(definition_lists(fence_doctests(obj.docstring.value)))
            obj.docstring.value = rewrite_roles(value, pkg, obj)
