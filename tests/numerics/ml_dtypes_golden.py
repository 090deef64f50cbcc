#!/usr/bin/env python3
"""Regenerates data/ml_dtypes_f32.txt: f32 inputs and what ml_dtypes (E4M3FN, E5M2, bfloat16) and
numpy (float16) make of them, round to nearest even. The C++ test MlDtypes.* reads the file, so
halfway's FP8 semantics are pinned to the library they claim to follow without the tests needing
Python. Run: pip install ml_dtypes numpy && python3 tests/numerics/ml_dtypes_golden.py
"""
import pathlib
import random

import ml_dtypes
import numpy as np


def f32(bits):
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


def bits32(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def boundaries(dtype, nbits):
    """Every positive finite value of an 8-bit format, the midpoints, and the overflow threshold."""
    values = np.arange(1 << (nbits - 1), dtype=np.uint8).view(dtype).astype(np.float64)
    values = sorted(v for v in values if np.isfinite(v))
    values.append(values[-1] + (values[-1] - values[-2]))  # the first value past max finite
    points = values + [(a + b) / 2 for a, b in zip(values, values[1:])]
    return [bits32(np.float32(p)) for p in points]


def main():
    rng = random.Random(1)
    inputs = set()
    for dtype in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2):
        for b in boundaries(dtype, 8):
            for d in (-1, 0, 1):
                for sign in (0, 0x80000000):
                    inputs.add(((b + d) & 0x7FFFFFFF) | sign)
    for _ in range(500):  # bf16 and f16 ties and their neighbours
        inputs.add((rng.getrandbits(16) << 16) | 0x8000)
        inputs.add((rng.getrandbits(16) << 16) | 0x8001)
        h = rng.getrandbits(15) | (rng.getrandbits(1) << 31)
        inputs.add(bits32(np.float32(np.array([h & 0x7FFF], np.uint16).view(np.float16)[0])) + 0x1000)
    for _ in range(1000):
        inputs.add(rng.getrandbits(32))
        inputs.add((rng.getrandbits(1) << 31) | ((rng.randrange(100, 150)) << 23) | rng.getrandbits(23))
    inputs.update([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00001, 0, 0x80000000])
    inputs = sorted(inputs)
    x = np.array(inputs, dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        e4 = x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        e5 = x.astype(ml_dtypes.float8_e5m2).view(np.uint8)
        bf = x.astype(ml_dtypes.bfloat16).view(np.uint16)
        hf = x.astype(np.float16).view(np.uint16)
    out = pathlib.Path(__file__).parent / "data" / "ml_dtypes_f32.txt"
    lines = [f"# f32 e4m3fn e5m2 bf16 f16 (ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__})"]
    lines += [f"{a:08x} {b:02x} {c:02x} {d:04x} {e:04x}" for a, b, c, d, e in zip(inputs, e4, e5, bf, hf)]
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(inputs)} rows to {out}")


if __name__ == "__main__":
    main()
