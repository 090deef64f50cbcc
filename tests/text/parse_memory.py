#!/usr/bin/env python3
"""Peak resident memory of `halfway emit --ir` on dense kernel text, per byte of text.

    tests/text/parse_memory.py build/tools/halfway/halfway [MB ...]   (default: 1 10 16)

Writes each shape of dense text at each size (16 means just under the 16 MiB cap), runs
`halfway emit --ir` on it under /usr/bin/time -v, and prints the peak RSS less that of an empty
kernel, divided by the file's size. emit --ir parses, verifies and prints the IR and its
narrowing sites, so this is the parse plus what the command does after it; the parse alone is
measured exactly, heap bytes rather than pages, by tests/text/parse_memory_test.cpp.
"""
import os
import re
import subprocess
import sys
import tempfile

HEAD = ("kernel k workgroup(1, 1, 1) {\nparam y: buffer<u32, write>;\n"
        "let x: u32 = global_id(0);\nlet b: bool = true;\n")
CAP = 16 << 20


def or_tree(depth):
    return "x" if depth == 0 else "or(" + or_tree(depth - 1) + "," + or_tree(depth - 1) + ")"


def repeated(piece):
    return lambda size: HEAD + piece * ((size - len(HEAD) - 4) // len(piece)) + "\n}\n"


def one_tree(size):
    depth = 1  # the tree of depth d is about 6 << d bytes
    while 6 << (depth + 1) <= size - len(HEAD):
        depth += 1
    return HEAD + "x=" + or_tree(depth) + ";\n}\n"


SHAPES = {
    "store y[x]=x;": repeated("y[x]=x;"),
    "assign x=x;": repeated("x=x;"),
    "lines x=x;\\n": repeated("x=x;\n"),
    "if b{}": repeated("if b{}"),
    "or trees": repeated("x=" + or_tree(8) + ";"),
    "one expression": one_tree,
}


def peak_rss_kb(halfway, path):
    run = subprocess.run(["/usr/bin/time", "-v", halfway, "emit", "--ir", path],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"halfway emit --ir {path} failed:\n{run.stderr[-2000:]}")
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    halfway = sys.argv[1]
    sizes = [float(a) for a in sys.argv[2:]] or [1, 10, 16]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dense.hk")
        with open(path, "w") as f:
            f.write(HEAD + "}\n")
        base = peak_rss_kb(halfway, path)
        print(f"empty kernel: {base} kB peak RSS")
        for name, make in SHAPES.items():
            for mb in sizes:
                size = min(int(mb * 1e6), CAP - 64)
                text = make(size)
                with open(path, "w") as f:
                    f.write(text)
                rss = peak_rss_kb(halfway, path)
                ratio = (rss - base) * 1024 / len(text)
                print(f"{name:16} {len(text):>10} bytes  peak RSS {rss:>8} kB  {ratio:6.2f}x")


if __name__ == "__main__":
    main()
