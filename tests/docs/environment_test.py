#!/usr/bin/env python3
"""Checks that docs/environment.md lists every environment variable the sources read.

Read means: std::getenv("NAME") (or through a constant k...Env = "NAME", or a loop over a list of
names), os.environ.get("NAME") / os.environ["NAME"] in Python, and ${NAME:-...} in shell scripts.
Prints each variable found and where, and exits 1 naming those missing from the document.

Usage: environment_test.py REPOSITORY
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import listed  # noqa: E402 (after the line above)

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".py", ".sh", ".cmake")
SKIP_DIRS = {".git", "shared"}
# PATH is how any program finds others (lit extends it with LLVM's tools), not halfway's setting.
NOT_HALFWAYS = {"PATH"}

CXX_PATTERNS = [
    re.compile(r'getenv\(\s*"([A-Z_][A-Z0-9_]*)"\s*\)'),
    # inline constexpr const char* kDeviceEnv = "HALFWAY_VK_DEVICE";
    re.compile(r'\bk\w*Env\b[^=;]*=\s*"([A-Z_][A-Z0-9_]*)"'),
]
# for (const char* name : {"A", "B"}) { ... getenv(name) ... }
CXX_LOOP = re.compile(r'for\s*\(\s*const char\*\s*(\w+)\s*:\s*\{([^}]*)\}\s*\)')
PY_PATTERNS = [
    re.compile(r'environ\.get\(\s*"([A-Z_][A-Z0-9_]*)"'),
    re.compile(r'environ\[\s*"([A-Z_][A-Z0-9_]*)"\s*\]'),
]
SH_PATTERN = re.compile(r'\$\{([A-Z_][A-Z0-9_]*):?-')


def is_script(path):
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def variables(repo):
    found = {}
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        for name in files:
            path = os.path.join(root, name)
            if os.path.abspath(path) == os.path.abspath(__file__):
                continue  # its own docstring and patterns
            script = not os.path.splitext(name)[1] and is_script(path)
            if not name.endswith(SOURCE_SUFFIXES) and not script:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            names = set()
            if name.endswith((".cpp", ".hpp", ".h")):
                for p in CXX_PATTERNS:
                    names.update(p.findall(text))
                for var, items in CXX_LOOP.findall(text):
                    if re.search(r'getenv\(\s*%s\s*\)' % re.escape(var), text):
                        names.update(re.findall(r'"([A-Z_][A-Z0-9_]*)"', items))
            if name.endswith(".py"):
                for p in PY_PATTERNS:
                    names.update(p.findall(text))
            if name.endswith((".sh", ".cmake")) or script:
                names.update(SH_PATTERN.findall(text))
            for n in names - NOT_HALFWAYS:
                found.setdefault(n, set()).add(os.path.relpath(path, repo))
    return found


def main():
    repo = sys.argv[1]
    with open(os.path.join(repo, "docs", "environment.md"), encoding="utf-8") as f:
        doc = f.read()
    found = {name: ", ".join(sorted(where)) for name, where in variables(repo).items()}
    # The ones every halfway user meets are in the must-find list: without them the scan is broken.
    return listed.check(found, lambda name: re.search(r"`%s`" % re.escape(name), doc) is not None,
                        ("HALFWAY_LOG", "HALFWAY_VK_DEVICE", "HALFWAY_VK_VALIDATION", "NO_COLOR"),
                        "docs/environment.md", "variables")

if __name__ == "__main__":
    sys.exit(main())
