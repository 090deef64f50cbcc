#!/usr/bin/env python3
"""make_npy.py OUT DESCR SHAPE HEX: writes a version 1.0 .npy file as numpy.save lays it out (the
header padded to 64 bytes), with the given dtype string, shape ("(2, 3)") and data bytes in hex.
The lit tests make ml_dtypes-style and big-endian files with it, without needing NumPy."""
import sys

out, descr, shape, data = sys.argv[1:5]
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("ascii"))
    f.write(bytes.fromhex(data))
