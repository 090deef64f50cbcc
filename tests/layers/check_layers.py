#!/usr/bin/env python3
"""The `layers` test: every library includes only the headers of itself and of what it links.

Reads the table halfway_write_layers (cmake/HalfwayTargets.cmake) writes at generate time, one line
per library: target, source folder, sources, link libraries. A library's files are its sources,
the headers beside them and the headers under its source folder's include/. A header
"halfway/..." belongs to the library whose include/ holds it. An include of a library outside the
including library's link closure is a back-edge (a lower area reaching up), reported with the file
and line; so is a library that links itself through others (a cycle), and a header that no
library or two libraries hold. Exit 0 when there is none, 1 otherwise, 2 for usage errors.

Usage: check_layers.py TABLE SOURCE_ROOT | check_layers.py --self-test
"""
import re
import sys
import tempfile
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"(halfway/[^"]+)"')
LIBRARY = re.compile(r"halfway(?:::|_)(\w+)")


def read_table(path):
    libraries = {}
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        target, folder, sources, links = (line.split("\t") + ["", "", ""])[:4]
        name = target.removeprefix("halfway_")
        deps = {m.group(1) for m in LIBRARY.finditer(links)} - {name}
        libraries[name] = {
            "folder": Path(folder),
            "sources": [s for s in sources.split(";") if s],
            "deps": deps,
        }
    return libraries


def closure(libraries, name):
    seen, todo = set(), list(libraries[name]["deps"])
    while todo:
        d = todo.pop()
        if d in seen or d not in libraries:
            continue
        seen.add(d)
        todo.extend(libraries[d]["deps"])
    return seen


def files_of(lib, root):
    folder = lib["folder"]
    files = set()
    for s in lib["sources"]:
        p = Path(s) if Path(s).is_absolute() else folder / s
        if root in p.resolve().parents and p.exists():
            files.add(p.resolve())
            files.update(h.resolve() for h in p.parent.glob("*.hpp"))
    include = folder / "include"
    if include.is_dir():
        files.update(h.resolve() for h in include.rglob("*.hpp"))
    return files


def check(table, root):
    """The problems found, and the count of includes that follow the link graph."""
    libraries = read_table(table)
    problems = []
    owners = {}
    for name, lib in libraries.items():
        include = lib["folder"] / "include"
        if include.is_dir():
            for h in include.rglob("*.hpp"):
                owners.setdefault(str(h.relative_to(include)), []).append(name)
    for header, names in owners.items():
        if len(names) > 1:
            problems.append(f"{header}: held by {', '.join(sorted(names))}")
    edges = 0
    for name, lib in sorted(libraries.items()):
        reach = closure(libraries, name)
        if name in reach:
            problems.append(f"halfway::{name} links itself through {', '.join(sorted(reach))}")
        for f in sorted(files_of(lib, root)):
            for number, text in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(text)
                if not m:
                    continue
                header = m.group(1)
                owner = owners.get(header)
                where = f"{f.relative_to(root)}:{number}"
                if not owner:
                    problems.append(f"{where}: {header} is held by no library")
                elif owner[0] != name and owner[0] not in reach:
                    problems.append(
                        f"{where}: halfway::{name} includes {header} of halfway::{owner[0]}, "
                        "which it does not link (a lower area reaching up)")
                else:
                    edges += 1
    return libraries, problems, edges


def self_test():
    """The check finds each kind of problem in a small made-up tree, and passes a clean one."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d).resolve()
        def lib(name, source, header):
            (root / name / "src").mkdir(parents=True)
            (root / name / "include/halfway" / name).mkdir(parents=True)
            (root / name / "src/a.cpp").write_text(source)
            (root / name / "include/halfway" / name / "a.hpp").write_text(header)
        lib("low", '#include "halfway/low/a.hpp"\n', "#pragma once\n")
        lib("high", '#include "halfway/low/a.hpp"\n#include "halfway/high/a.hpp"\n', "")
        table = root / "table.tsv"
        def write(low_links, low_source):
            (root / "low/src/a.cpp").write_text(low_source)
            table.write_text(f"halfway_low\t{root}/low\tsrc/a.cpp\t{low_links}\n"
                             f"halfway_high\t{root}/high\tsrc/a.cpp\thalfway::low\n")
            return check(table, root)[1]
        clean = write("", '#include "halfway/low/a.hpp"\n')
        up = write("", '#include "halfway/high/a.hpp"\n')
        cycle = write("halfway::high", '#include "halfway/low/a.hpp"\n')
        missing = write("", '#include "halfway/none/a.hpp"\n')
        ok = (not clean and len(up) == 1 and "reaching up" in up[0] and
              any("links itself" in p for p in cycle) and len(missing) == 1 and
              "held by no library" in missing[0])
        print(f"self-test: clean {clean}, upward {up}, cycle {cycle}, missing {missing}")
        return 0 if ok else 1


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    libraries, problems, edges = check(argv[1], Path(argv[2]).resolve())
    for p in problems:
        print(p, file=sys.stderr)
    print(f"layers: {len(libraries)} libraries, {edges} includes of halfway headers, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
