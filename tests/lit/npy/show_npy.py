#!/usr/bin/env python3
"""show_npy.py FILE|-: prints a .npy file's header dict and its data bytes in hex, one line each,
so that FileCheck can match exactly what halfway wrote (standard input with -)."""
import sys

data = sys.stdin.buffer.read() if sys.argv[1] == "-" else open(sys.argv[1], "rb").read()
assert data[:6] == b"\x93NUMPY", "not a .npy file"
if data[6] == 1:
    length, start = int.from_bytes(data[8:10], "little"), 10
else:
    length, start = int.from_bytes(data[8:12], "little"), 12
assert (start + length) % 64 == 0, "data not aligned to 64 bytes"
print("version %d.%d" % (data[6], data[7]))
print(data[start:start + length].decode("latin-1").strip())
print(data[start + length:].hex())
