#!/usr/bin/env python3
"""Checks that docs/dsl.md mentions every construct the C++ DSL offers its users.

The constructs are read from dsl/include/halfway/dsl/*.hpp, outside `namespace detail`: the free
functions and class templates of namespace halfway, the aliases (In, Out, ...), the atomics the
HALFWAY_ATOMIC macro defines, the operators of HALFWAY_BINARY / HALFWAY_COMPARE, and the
control-flow calls. The math functions generated from the op table are the op table's business
(specs/op-table.md, which dsl.md points to) and are not listed one by one here.

Usage: dsl_coverage_test.py REPOSITORY
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import listed  # noqa: E402 (after the line above)

DECLARATION = re.compile(
    r"^(?:template <[^\n]*>\s*)?(?:inline\s+)?(?:[\w:<>,\s]*?\s)?(\w+)\s*\(", re.M)
CLASS = re.compile(r"^(?:template <[^\n]*>\s*)?(?:class|struct)\s+(\w+)\s*(?:[:{]|$)", re.M)
ALIAS = re.compile(r"^template <[^\n]*>\s*using\s+(\w+)\s*=", re.M)
MACRO_USE = re.compile(r"^HALFWAY_(?:ATOMIC|BINARY|COMPARE)\(([^,]+),", re.M)
# Names that are implementation, not constructs: C++ keywords the declaration pattern catches,
# and the helpers the DSL's own headers use.
NOT_CONSTRUCTS = {"if", "for", "while", "return", "static_assert", "requires", "sizeof", "switch",
                  "operator", "scalar_type_of", "value_of", "common", "body_traits", "Node",
                  "builtin", "type_name"}


def public_text(text):
    """The text outside `namespace detail { ... }` blocks."""
    out, depth, i = [], 0, 0
    for m in re.finditer(r"namespace detail \{|\{|\}", text):
        if depth == 0:
            out.append(text[i:m.start()])
        if m.group(0) == "namespace detail {":
            depth = 1 if depth == 0 else depth + 1
        elif depth:
            depth += 1 if m.group(0) == "{" else -1
        i = m.end()
        if depth == 0 and m.group(0) != "namespace detail {":
            out.append(m.group(0))
    if depth == 0:
        out.append(text[i:])
    return "".join(out)


def top_level(text):
    """Lines at the namespace's top level (not indented): declarations, not statements."""
    return "\n".join(line for line in text.splitlines() if not line.startswith((" ", "\t", "#", "//")))


def constructs(repo):
    folder = os.path.join(repo, "dsl", "include", "halfway", "dsl")
    names = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            text = public_text(f.read())
        top = top_level(text)
        found = set(DECLARATION.findall(top)) | set(CLASS.findall(top)) | set(ALIAS.findall(top))
        found |= {m.strip() for m in MACRO_USE.findall(text)}
        for n in found - NOT_CONSTRUCTS:
            if n.startswith("HALFWAY_"):
                continue  # the macros that stamp out the constructs, not constructs
            names.setdefault(n, name)
    return names


def main():
    repo = sys.argv[1]
    with open(os.path.join(repo, "docs", "dsl.md"), encoding="utf-8") as f:
        doc = f.read()
    def mentioned(n):
        # An operator is mentioned as itself (`+`, `<<`); a name as a whole word.
        if re.fullmatch(r"\w+", n):
            return re.search(r"(?<![\w])%s(?![\w])" % re.escape(n), doc) is not None
        return "`%s`" % n in doc or " %s " % n in doc

    return listed.check(constructs(repo), mentioned,
                        ("kernel", "If", "For", "Shared", "narrow", "atomic_add", "In", "+"),
                        "docs/dsl.md", "constructs")

if __name__ == "__main__":
    sys.exit(main())
