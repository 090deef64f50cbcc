#!/usr/bin/env python3
"""Runs the commands of a Markdown tutorial and checks what they print, so that it stays true.

Each ```sh block is one bash script (set -e -o pipefail), run in one scratch folder shared by the
whole document, in order, with HALFWAY first on PATH as `halfway`. It must exit 0, or N when its
first line is `# exit status N`. The ```output block that follows a ```sh block (if any) lists
lines that must appear in the block's stdout and stderr, in order; `...` in a line matches any
text, and a line that is only `...` is skipped. Other fenced blocks (```text, ```c++) are not run.

Usage: tutorial_test.py HALFWAY DOC.md
Prints one line per block and a closing "N passed, N failed" line; exits 1 on any failure.
"""
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(path):
    """(kind, first line number, text) of every fenced block."""
    out, kind, start, lines = [], None, 0, []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = FENCE.match(line.rstrip("\n"))
            if kind is None and m:
                kind, start, lines = m.group(1), number, []
            elif kind is not None and line.rstrip("\n") == "```":
                out.append((kind, start, "".join(lines)))
                kind = None
            elif kind is not None:
                lines.append(line)
    if kind is not None:
        sys.exit("%s:%d: unterminated fenced block" % (path, start))
    return out


def pattern(line):
    return re.compile(".*".join(re.escape(part) for part in line.split("...")))


def check_output(expected, got):
    """The first expected line not found in order, or None."""
    lines = got.splitlines()
    at = 0
    for want in expected.splitlines():
        if not want.strip() or want.strip() == "...":
            continue
        p = pattern(want.rstrip())
        while at < len(lines) and not p.fullmatch(lines[at].rstrip()):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


def main():
    halfway, doc = os.path.abspath(sys.argv[1]), sys.argv[2]
    found = blocks(doc)
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="halfway-tutorial-") as scratch:
        # `halfway` on PATH is the binary under test, whatever its file is called.
        bin_dir, work = os.path.join(scratch, "bin"), os.path.join(scratch, "work")
        os.mkdir(bin_dir)
        os.mkdir(work)
        os.symlink(halfway, os.path.join(bin_dir, "halfway"))
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""),
                   NO_COLOR="1", LC_ALL="C")
        for i, (kind, line, text) in enumerate(found):
            if kind != "sh":
                continue
            want_status = 0
            m = re.match(r"# exit status (\d+)\n", text)
            if m:
                want_status = int(m.group(1))
            script = ("set -o pipefail\n" if want_status else "set -e -o pipefail\n") + text
            r = subprocess.run(["bash", "-c", script], cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=300)
            got = r.stdout.decode("utf-8", "replace")
            problem = None
            if r.returncode != want_status:
                problem = "exit status %d, expected %d" % (r.returncode, want_status)
            elif i + 1 < len(found) and found[i + 1][0] == "output":
                missing = check_output(found[i + 1][2], got)
                if missing is not None:
                    problem = "no line matching %r (in order)" % missing
            if problem:
                failed += 1
                print("FAIL %s:%d: %s\n--- the block printed:\n%s---" % (doc, line, problem, got))
            else:
                passed += 1
                print("ok   %s:%d" % (doc, line))
    if passed + failed == 0:
        print("no ```sh block in %s" % doc)
        failed = 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
