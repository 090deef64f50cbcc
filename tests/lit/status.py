#!/usr/bin/env python3
"""status.py N CMD [ARGS...]: runs CMD with this process's stdin, stdout and stderr and exits 0
when CMD exits with status N (or with one of N,M,...), 1 otherwise (a signal counts as a wrong status). The lit tests use
it to assert that an error is exit status 2, which LLVM's `not` cannot tell from a crash."""
import subprocess
import sys

if len(sys.argv) < 3:
    sys.exit("usage: status.py N CMD [ARGS...]")
want = [int(n) for n in sys.argv[1].split(",")]
got = subprocess.run(sys.argv[2:]).returncode
if got not in want:
    sys.stderr.write("status.py: %s exited with %d, expected %s\n" % (sys.argv[2], got, sys.argv[1]))
    sys.exit(1)
