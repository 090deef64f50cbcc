#!/usr/bin/env python3
"""The bad-input catalogue: every class of user mistake and hostile input, run through the built
`halfway` binary the way a user would type it.

Each case asserts that halfway
  - exits with status 2 (not 0, not 1, not killed by a signal, not a sanitizer's abort),
  - prints one message on stderr that names the location (file:line, kernel, buffer, index, ...),
    matched by the case's regular expressions, with no raw control characters in it,
  - writes no file: the case's folder holds exactly the files the case made, byte for byte,
  - and, for the infinite loops under --timeout, ends within the case's time limit.

Usage: catalogue.py HALFWAY [--list] [--only REGEX] [--devices interp,cpu,vulkan] [--groups G,...]
Exits 0 when every case holds, 1 otherwise; prints one line per case and a closing
"N passed, N failed" line.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# --- Kernels ----------------------------------------------------------------------------------

SAXPY = """kernel saxpy workgroup(64, 1, 1) {
  param x: buffer<f32, read>;
  param y: buffer<f32, read_write>;
  param a: f32;
  let i: u32 = global_id(0);
  if lt(i, len(x)) {
    y[i] = add(mul(a, x[i]), y[i]);
  }
}
"""

OOB_STORE = """kernel oob_store workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  let i: u32 = global_id(0);
  y[add(i, 5:u32)] = 1.0:f32;
}
"""

OOB_LOAD_NEG = """kernel oob_load_neg workgroup(64, 1, 1) {
  param x: buffer<f32, read>;
  param y: buffer<f32, write>;
  let i: i32 = bitcast<i32>(global_id(0));
  y[global_id(0)] = x[sub(i, 1:i32)];
}
"""

OOB_ATOMIC = """kernel oob_atomic workgroup(64, 1, 1) {
  param bins: buffer<u32, read_write>;
  atomic_add(bins[global_id(0)], 1:u32);
}
"""

OOB_SHARED = """kernel oob_shared workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  shared t: f32[64];
  t[add(local_id(0), 1:u32)] = 1.0:f32;
  barrier;
  y[global_id(0)] = t[local_id(0)];
}
"""

OOB_SHARED_LOAD = """kernel oob_shared_load workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  shared t: f32[64];
  t[local_id(0)] = 1.0:f32;
  barrier;
  y[global_id(0)] = t[mul(local_id(0), 2:u32)];
}
"""

# Lane 3 stores tile[0][17]: inside the array's 272 elements, outside its second dimension.
OOB_SHARED_2D = """kernel oob_shared_2d workgroup(4, 1, 1) {
  param y: buffer<f32, write>;
  shared tile: f32[16][17];
  tile[0:u32][add(local_id(0), 14:u32)] = 2.0:f32;
  barrier;
  y[global_id(0)] = tile[0:u32][local_id(0)];
}
"""

# Lane 5 reads acc[5] of a private f32[4], at a value index.
OOB_PRIVATE = """kernel oob_private workgroup(8, 1, 1) {
  param y: buffer<f32, write>;
  let acc: f32[4];
  acc[0:u32] = 1.0:f32;
  y[global_id(0)] = acc[local_id(0)];
}
"""

HUGE_PRIVATE = """kernel huge_private workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  let acc: f64[65536][65536];
  y[0:u32] = 0.0:f32;
}
"""

RACE = """kernel race workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  shared t: f32[64];
  t[0:u32] = 1.0:f32;
  barrier;
  y[global_id(0)] = t[0:u32];
}
"""

DIVERGENT_BARRIER = """kernel divergent workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  if lt(local_id(0), 3:u32) {
    barrier;
  }
  y[global_id(0)] = 1.0:f32;
}
"""

DIV_ZERO = """kernel div_zero workgroup(64, 1, 1) {
  param x: buffer<u32, read>;
  param y: buffer<u32, write>;
  let i: u32 = global_id(0);
  y[i] = div(x[i], sub(x[i], x[i]));
}
"""

SHIFT = """kernel shift workgroup(64, 1, 1) {
  param x: buffer<u32, read>;
  param y: buffer<u32, write>;
  let i: u32 = global_id(0);
  y[i] = shl(x[i], add(i, 40:u32));
}
"""

FOREVER = """kernel forever workgroup(64, 1, 1) {
  param y: buffer<u32, read_write>;
  let n: u32 = 0:u32;
  while true {
    n = add(n, 1:u32);
  }
  y[global_id(0)] = n;
}
"""

BIG_SHARED = """kernel big_shared workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  shared t: f32[33554432];
  t[local_id(0)] = 1.0:f32;
  barrier;
  y[global_id(0)] = t[local_id(0)];
}
"""

HUGE_SHARED = """kernel huge_shared workgroup(64, 1, 1) {
  param y: buffer<f64, write>;
  shared t: f64[4294967295];
  t[local_id(0)] = 1.0:f64;
  barrier;
  y[global_id(0)] = t[local_id(0)];
}
"""

VK_SHARED_64K = """kernel shared_64k workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  shared t: f32[16384];
  t[local_id(0)] = 1.0:f32;
  barrier;
  y[global_id(0)] = t[local_id(0)];
}
"""

HALF_ARG = """kernel half_arg workgroup(64, 1, 1) {
  param y: buffer<f16, write>;
  param h: f16;
  y[global_id(0)] = h;
}
"""

PARSE_ERROR = """kernel broken workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  y[global_id(0)] = add(1.0:f32, ;
}
"""

UNKNOWN_OP = """kernel unknown_op workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  y[global_id(0)] = frobnicate(1.0:f32);
}
"""

TYPE_ERROR = """kernel type_error workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  y[global_id(0)] = add(1.0:f32, 2:u32);
}
"""

UNDECLARED = """kernel undeclared workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  y[global_id(0)] = z;
}
"""

IMPLICIT_NARROW = """kernel implicit workgroup(64, 1, 1) {
  param y: buffer<f16, write>;
  y[global_id(0)] = 1.5:f32;
}
"""

ESCAPE_NAME = "kernel ev\x1b[31mil workgroup(64, 1, 1) {\n  param y: buffer<f32, write>;\n}\n"

ESCAPE_BODY = """kernel k workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  y[global_id(0)] = \x1b[31m;
}
"""

ZERO_WORKGROUP = """kernel zero_wg workgroup(0, 1, 1) {
  param y: buffer<f32, write>;
  y[global_id(0)] = 1.0:f32;
}
"""

HUGE_WORKGROUP = """kernel huge_wg workgroup(65536, 65536, 1) {
  param y: buffer<f32, write>;
  y[global_id(0)] = 1.0:f32;
}
"""


def nested(depth):
    return ("kernel deep workgroup(64, 1, 1) {\n  param y: buffer<f32, write>;\n"
            "  y[global_id(0)] = " + "neg(" * depth + "1.0:f32" + ")" * depth + ";\n}\n")


# --- .npy files -------------------------------------------------------------------------------

def npy(header, data=b"", magic=b"\x93NUMPY", version=b"\x01\x00"):
    h = header.encode()
    pad = (64 - (len(magic) + 2 + 2 + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    return magic + version + len(h).to_bytes(2, "little") + h + data


F32x64 = b"\x00\x00\x80\x3f" * 64


# Kernels whose input is bf16 or e4m3, for ml_dtypes' raw-byte files ('<V2', '<V1', '<f1').
def copy_kernel(t):
    return """kernel copy_%s workgroup(64, 1, 1) {
  param x: buffer<%s, read>;
  param y: buffer<%s, write>;
  let i: u32 = global_id(0);
  if lt(i, len(x)) {
    y[i] = x[i];
  }
}
""" % (t, t, t)


COPY_BF16 = copy_kernel("bf16")
COPY_E4M3 = copy_kernel("e4m3")


def npy_typed(descr, count, width):
    return npy("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, count),
               b"\x3c" * (count * width))


def npy_f32(shape, data=F32x64, fortran="False", extra=""):
    return npy("{'descr': '<f4', 'fortran_order': %s, 'shape': %s, %s}" % (fortran, shape, extra),
               data)


# --- Cases ------------------------------------------------------------------------------------


class Case:
    def __init__(self, name, args, expect, files=None, devices=(), timeout_s=None, keep=None,
                 stdin=None):
        self.name = name
        self.args = args          # argv after the binary; {d} is the case folder
        self.expect = expect      # regular expressions that must all match stderr
        self.files = files or {}  # name -> str or bytes, created in the case folder
        self.devices = devices    # devices the case needs (skipped when absent)
        self.timeout_s = timeout_s
        self.keep = keep or {}    # name -> content of a file that exists before and must survive
        self.stdin = stdin        # name of a file of `files` fed as standard input (default none)


def cases():
    c = []
    add = c.append
    # Malformed text and ill-typed kernels.
    add(Case("parse: missing operand", ["run", "{d}/k.hk", "--grid", "64"],
             [r"k\.hk:3:\d+", r"parse error"], {"k.hk": PARSE_ERROR}))
    add(Case("parse: unknown op", ["run", "{d}/k.hk", "--grid", "64"],
             [r"k\.hk:3:\d+", r"frobnicate"], {"k.hk": UNKNOWN_OP}))
    add(Case("verify: add of f32 and u32", ["run", "{d}/k.hk", "--grid", "64"],
             [r"k\.hk:3", r"type_error"], {"k.hk": TYPE_ERROR}))
    add(Case("verify: undeclared name", ["run", "{d}/k.hk", "--grid", "64"],
             [r"k\.hk:3:\d+", r"\bz\b"], {"k.hk": UNDECLARED}))
    add(Case("verify: implicit narrowing", ["run", "{d}/k.hk", "--grid", "64"],
             [r"k\.hk:3", r"narrow"], {"k.hk": IMPLICIT_NARROW}))
    add(Case("terminal: escape in a kernel name", ["sites", "{d}/k.hk"],
             [r"k\.hk", r"\\x1b"], {"k.hk": ESCAPE_NAME}))
    add(Case("terminal: escape in a source line", ["sites", "{d}/k.hk"],
             [r"k\.hk:3", r"\\x1b"], {"k.hk": ESCAPE_BODY}))
    add(Case("parse: nesting too deep", ["sites", "{d}/k.hk"],
             [r"k\.hk", r"(?i)nest|deep"], {"k.hk": nested(100000)}))
    add(Case("parse: file too large", ["sites", "{d}/k.hk"],
             [r"k\.hk", r"(?i)too large|bytes"],
             {"k.hk": SAXPY + "// " + "x" * (33 << 20) + "\n"}))
    add(Case("file: missing kernel file", ["run", "{d}/nosuch.hk", "--grid", "64"],
             [r"nosuch\.hk"]))
    add(Case("file: unknown --kernel", ["run", "{d}/k.hk", "--kernel", "nope", "--grid", "64"],
             [r"nope"], {"k.hk": SAXPY}))
    add(Case("verify: workgroup of zero lanes", ["run", "{d}/k.hk", "--grid", "64"],
             [r"zero_wg|k\.hk"], {"k.hk": ZERO_WORKGROUP}))
    add(Case("verify: workgroup of 2^32 lanes", ["run", "{d}/k.hk", "--grid", "64"],
             [r"huge_wg|k\.hk"], {"k.hk": HUGE_WORKGROUP}))
    add(Case("verify: shared f64[2^32-1]", ["emit", "{d}/k.hk", "--spirv"],
             [r"huge_shared", r"\bt\b"], {"k.hk": HUGE_SHARED}, timeout_s=10))
    add(Case("parse: private f64[65536][65536]", ["run", "{d}/k.hk", "--grid", "64"],
             [r"k\.hk:3:\d+", r"\bacc\b", r"2\^32"], {"k.hk": HUGE_PRIVATE}, timeout_s=10))

    # Out-of-bounds accesses, on every device, without --check.
    for dev in ("interp", "cpu", "vulkan"):
        add(Case("oob: saxpy y too short on " + dev,
                 ["run", "{d}/k.hk", "--grid", "1000", "--arg", "a=1", "--buffer", "y=zeros:10",
                  "--device", dev, "--dump", "y={d}/y.npy"],
                 [r"kernel saxpy", r"buffer y", r"index 10\b", r"length 10\b", r"lane"],
                 {"k.hk": SAXPY}, devices=(dev,)))
        add(Case("oob: store past the end on " + dev,
                 ["run", "{d}/k.hk", "--grid", "64", "--buffer", "y=zeros:64", "--device", dev],
                 [r"kernel oob_store", r"buffer y", r"index 64\b", r"length 64\b",
                  r"lane 59\b"], {"k.hk": OOB_STORE}, devices=(dev,)))
        add(Case("oob: load at a negative index on " + dev,
                 ["run", "{d}/k.hk", "--grid", "64", "--device", dev],
                 [r"kernel oob_load_neg", r"buffer x", r"negative|index -1", r"lane 0\b"],
                 {"k.hk": OOB_LOAD_NEG}, devices=(dev,)))
        add(Case("oob: atomic past the end on " + dev,
                 ["run", "{d}/k.hk", "--grid", "64", "--buffer", "bins=zeros:10", "--device",
                  dev], [r"kernel oob_atomic", r"buffer bins", r"index 10\b", r"length 10\b"],
                 {"k.hk": OOB_ATOMIC}, devices=(dev,)))
        add(Case("oob: shared store past the end on " + dev,
                 ["run", "{d}/k.hk", "--grid", "64", "--device", dev],
                 [r"kernel oob_shared", r"\bt\b", r"index 64\b", r"length 64\b", r"lane 63\b"],
                 {"k.hk": OOB_SHARED}, devices=(dev,)))
        add(Case("oob: shared load past the end on " + dev,
                 ["run", "{d}/k.hk", "--grid", "64", "--device", dev],
                 [r"kernel oob_shared_load", r"\bt\b", r"index 64\b", r"lane 32\b"],
                 {"k.hk": OOB_SHARED_LOAD}, devices=(dev,)))
        add(Case("oob: shared 2-D store past a dimension on " + dev,
                 ["run", "{d}/k.hk", "--grid", "4", "--device", dev],
                 [r"kernel oob_shared_2d", r"shared tile", r"dimension 1", r"index 17\b",
                  r"length 17\b", r"lane 3\b"], {"k.hk": OOB_SHARED_2D}, devices=(dev,)))
        add(Case("oob: private load past the end on " + dev,
                 ["run", "{d}/k.hk", "--grid", "8", "--device", dev],
                 [r"kernel oob_private", r"private acc", r"index 4\b", r"length 4\b",
                  r"lane 4\b"], {"k.hk": OOB_PRIVATE}, devices=(dev,)))
        add(Case("timeout: while true on " + dev,
                 ["run", "{d}/k.hk", "--grid", "64", "--device", dev, "--timeout", "2", "--dump",
                  "y={d}/y.npy"],
                 # lavapipe ends every loop after 65,535 iterations by itself: the Vulkan device
                 # reports that as a limit before the deadline comes.
                 [r"kernel forever", r"(?i)time" if dev != "vulkan" else r"(?i)time|loop", dev],
                 {"k.hk": FOREVER}, devices=(dev,), timeout_s=3.0))
    add(Case("oob: failed launch keeps an existing dump",
             ["run", "{d}/k.hk", "--grid", "1000", "--arg", "a=1", "--buffer", "y=zeros:10",
              "--device", "cpu", "--dump", "y={d}/y.npy"], [r"kernel saxpy", r"buffer y"],
             {"k.hk": SAXPY}, devices=("cpu",), keep={"y.npy": b"precious"}))

    # Undefined behaviour the interpreter and --check report.
    add(Case("race: shared store by every lane", ["run", "{d}/k.hk", "--grid", "64", "--check"],
             [r"kernel race", r"(?i)race", r"\bt\b"], {"k.hk": RACE}))
    add(Case("verify: barrier in divergent control flow", ["run", "{d}/k.hk", "--grid", "64"],
             [r"divergent", r"(?i)barrier", r"k\.hk:4"], {"k.hk": DIVERGENT_BARRIER}))
    add(Case("ub: division by zero on interp", ["run", "{d}/k.hk", "--grid", "64"],
             [r"kernel div_zero", r"(?i)by zero", r"lane 0\b"], {"k.hk": DIV_ZERO}))
    add(Case("ub: division by zero on cpu --check",
             ["run", "{d}/k.hk", "--grid", "64", "--device", "cpu", "--check"],
             [r"kernel div_zero", r"(?i)by zero", r"lane 0\b"], {"k.hk": DIV_ZERO},
             devices=("cpu",)))
    add(Case("ub: shift overflow on interp", ["run", "{d}/k.hk", "--grid", "64"],
             [r"kernel shift", r"(?i)shl", r"40"], {"k.hk": SHIFT}))
    add(Case("ub: shift overflow on cpu --check",
             ["run", "{d}/k.hk", "--grid", "64", "--device", "cpu", "--check"],
             [r"kernel shift", r"(?i)shl", r"40"], {"k.hk": SHIFT}, devices=("cpu",)))
    add(Case("ub: division by zero on vulkan --check",
             ["run", "{d}/k.hk", "--grid", "64", "--device", "vulkan", "--check"],
             [r"kernel div_zero", r"(?i)by zero", r"lane 0\b"], {"k.hk": DIV_ZERO},
             devices=("vulkan",)))
    add(Case("ub: shift overflow on vulkan --check",
             ["run", "{d}/k.hk", "--grid", "64", "--device", "vulkan", "--check"],
             [r"kernel shift", r"(?i)shl", r"40"], {"k.hk": SHIFT}, devices=("vulkan",)))

    # Grids, groups and sizes.
    for grid in ("0", "-1", "18446744073709551615", "1e9", "abc"):
        add(Case("grid: --grid " + grid, ["run", "{d}/k.hk", "--grid", grid, "--arg", "a=1"],
                 [r"(?i)grid"], {"k.hk": SAXPY}))
    add(Case("grid: --groups 2^58+1",
             ["run", "{d}/k.hk", "--groups", "288230376151711745", "--arg", "a=1"],
             [r"(?i)group"], {"k.hk": SAXPY}))
    add(Case("grid: --groups 0", ["run", "{d}/k.hk", "--groups", "0", "--arg", "a=1"],
             [r"(?i)group|grid"], {"k.hk": SAXPY}))
    add(Case("size: --buffer iota:2^62",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--buffer",
              "x=iota:4611686018427387904"], [r"\bx\b", r"4611686018427387904"],
             {"k.hk": SAXPY}))
    add(Case("limit: 128 MiB of shared memory on cpu",
             ["run", "{d}/k.hk", "--grid", "64", "--device", "cpu"],
             [r"big_shared", r"(?i)shared"], {"k.hk": BIG_SHARED}, devices=("cpu",)))
    add(Case("limit: 64 KiB of shared memory on vulkan",
             ["run", "{d}/k.hk", "--grid", "64", "--device", "vulkan"],
             [r"shared_64k", r"(?i)shared", r"65536"], {"k.hk": VK_SHARED_64K},
             devices=("vulkan",)))
    add(Case("device: unknown device", ["run", "{d}/k.hk", "--grid", "64", "--device", "nosuch",
                                        "--arg", "a=1"], [r"nosuch"], {"k.hk": SAXPY}))
    add(Case("device: unknown vulkan device",
             ["run", "{d}/k.hk", "--grid", "64", "--device", "vulkan:nosuch", "--arg", "a=1"],
             [r"nosuch"], {"k.hk": SAXPY}, devices=("vulkan",)))

    # .npy inputs.
    npys = [
        ("negative shape", npy_f32("(-64,)")),
        ("fractional shape", npy_f32("(6.4,)")),
        ("overflowing shape", npy_f32("(4294967296, 4294967296)")),
        ("fortran_order True", npy_f32("(64,)", fortran="True")),
        ("fortran_order 1", npy_f32("(64,)", fortran="1")),
        ("trailing bytes", npy_f32("(64,)", data=F32x64 + b"\x00" * 4)),
        ("truncated data", npy_f32("(64,)", data=F32x64[:100])),
        ("bad magic", npy_f32("(64,)")[:1] + b"XNUMPY" + npy_f32("(64,)")[7:]),
        ("descr hidden in a value",
         npy("{'fortran_order': False, 'shape': (64,), 'x': \"'descr': '<f4'\"}", F32x64)),
        ("wrong element type", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (32,), }",
                                   F32x64)),
        ("header past the end", b"\x93NUMPY\x01\x00\xff\x7f{'descr'"),
        ("ml_dtypes bfloat16 for an f32 buffer", npy_typed("<V2", 128, 2)),
        ("ml_dtypes float8 for an f32 buffer", npy_typed("<V1", 256, 1)),
        ("f4 without a byte order", npy_typed("|f4", 64, 4)),
    ]
    for what, data in npys:
        add(Case("npy: " + what,
                 ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--buffer", "x={d}/x.npy"],
                 [r"x\.npy"], {"k.hk": SAXPY, "x.npy": data}))

    # ml_dtypes' raw-byte dtypes for a type they cannot hold, and byte orders with no conversion.
    typed = [
        ("float8 bytes for a bf16 buffer", COPY_BF16, npy_typed("<V1", 64, 1), r"'<V1'.*bf16"),
        ("big-endian void for a bf16 buffer", COPY_BF16, npy_typed(">V2", 64, 2),
         r"'>V2'.*big-endian"),
        ("bfloat16 for an e4m3 buffer", COPY_E4M3, npy_typed("<V2", 64, 2), r"'<V2'.*e4m3"),
        ("ml_dtypes float8_e5m2 for an e4m3 buffer", COPY_E4M3, npy_typed("<f1", 64, 1),
         r"'<f1'.*e4m3"),
        ("f16 for a bf16 buffer", COPY_BF16, npy_typed("<f2", 64, 2), r"'<f2'.*bf16"),
    ]
    for what, kernel, data, message in typed:
        add(Case("npy: " + what, ["run", "{d}/k.hk", "--grid", "64", "--buffer", "x={d}/x.npy"],
                 [r"x\.npy", r"\bbuffer x\b", message], {"k.hk": kernel, "x.npy": data}))

    # Standard input: one reader only, and what it reads is checked like a file.
    good = npy_f32("(64,)")
    add(Case("stdin: two buffers",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--buffer", "x=-", "--buffer",
              "y=-"], [r"--buffer y=-", r"already read as --buffer x=-"],
             {"k.hk": SAXPY, "x.npy": good}, stdin="x.npy"))
    add(Case("stdin: the kernel and a buffer",
             ["run", "-", "--grid", "64", "--arg", "a=1", "--buffer", "x=-"],
             [r"--buffer x=-", r"already read as the kernel file -"], {"k.hk": SAXPY},
             stdin="k.hk"))
    add(Case("stdin: not a .npy file",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--buffer", "x=-"],
             [r"<stdin>", r"not a \.npy file", r"buffer x"], {"k.hk": SAXPY}, stdin="k.hk"))
    add(Case("stdin: wrong element type",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--buffer", "y=-"],
             [r"<stdin>", r"'<V2'", r"buffer y"],
             {"k.hk": SAXPY, "x.npy": npy_typed("<V2", 128, 2)}, stdin="x.npy"))

    # Output files.
    add(Case("dump: standard output for two dumps",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--dump", "y=-", "--dump",
              "x={d}/x.npy"], [r"--dump y=-", r"one dumped buffer only"], {"k.hk": SAXPY}))
    add(Case("dump: standard output with --json",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--dump", "y=-", "--json"],
             [r"--dump y=-", r"--json"], {"k.hk": SAXPY}))
    add(Case("dump: /dev/full",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--dump", "y=/dev/full"],
             [r"/dev/full"], {"k.hk": SAXPY}))
    add(Case("dump: missing folder",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--dump",
              "y={d}/no/such/y.npy"], [r"no/such"], {"k.hk": SAXPY}))
    add(Case("dump: a folder as the path",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--dump", "y={d}"],
             [r"(?i)folder|directory"], {"k.hk": SAXPY}))
    add(Case("dump: unknown buffer",
             ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--dump", "q={d}/q.npy"],
             [r"\bq\b"], {"k.hk": SAXPY}))

    # Opt-ins.
    narrow = open(os.path.join(EXAMPLES, "narrow_f16.hk")).read()
    add(Case("opt-in: blank reason",
             ["diff", "{d}/k.hk", "--grid", "64", "--accept-single-rounding=narrow_f16:  "],
             [r"(?i)reason"], {"k.hk": narrow}))
    add(Case("opt-in: the default kernel name",
             ["diff", "{d}/k.hk", "--grid", "64",
              "--accept-single-rounding=unnamed_kernel:a reason"],
             [r"unnamed_kernel"], {"k.hk": narrow}))
    add(Case("opt-in: a kernel not in the file",
             ["diff", "{d}/k.hk", "--grid", "64", "--accept-single-rounding=narrow_f1:typo"],
             [r"narrow_f1"], {"k.hk": narrow}))
    add(Case("opt-in: control characters in the reason",
             ["diff", "{d}/k.hk", "--grid", "64",
              "--accept-single-rounding=narrow_f16:bad\x1b[2Jreason"],
             [r"(?i)control|reason"], {"k.hk": narrow}))

    # Scalars.
    add(Case("arg: f16 scalar out of range", ["run", "{d}/k.hk", "--grid", "64", "--arg",
                                              "h=70000"], [r"\bh\b", r"70000"],
             {"k.hk": HALF_ARG}))
    add(Case("arg: repeated", ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--arg",
                               "a=2"], [r"\ba\b"], {"k.hk": SAXPY}))
    add(Case("arg: not a number", ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=pi"],
             [r"\ba\b", r"pi"], {"k.hk": SAXPY}))
    add(Case("arg: unknown scalar", ["run", "{d}/k.hk", "--grid", "64", "--arg", "a=1", "--arg",
                                     "b=2"], [r"\bb\b"], {"k.hk": SAXPY}))
    add(Case("arg: missing scalar", ["run", "{d}/k.hk", "--grid", "64"], [r"\ba\b"],
             {"k.hk": SAXPY}))

    # Pipelines (specs/fusion.md).
    def pipe(body):
        return SAXPY + OOB_STORE + "pipeline p {\n" + body + "}\n"
    ok_buffers = "  buffer x: f32[64];\n  buffer y: f32[64];\n"
    add(Case("pipeline: unknown --pipeline", ["run", "{d}/k.hk", "--pipeline", "nope"],
             [r"k\.hk", r"\bnope\b"], {"k.hk": pipe(ok_buffers)}))
    add(Case("pipeline: unknown buffer in a launch", ["run", "{d}/k.hk", "--pipeline", "p"],
             [r"k\.hk:\d+:\d+", r"launch 1 \(saxpy\)", r"unknown buffer 'z'"],
             {"k.hk": pipe(ok_buffers + "  launch saxpy(x, z, 1.0:f32) groups(1, 1, 1);\n")}))
    add(Case("pipeline: constant of the wrong type", ["fuse", "{d}/k.hk"],
             [r"k\.hk:\d+:\d+", r"parameter a of saxpy is f32"],
             {"k.hk": pipe(ok_buffers + "  launch saxpy(x, y, 1:u32) groups(1, 1, 1);\n")}))
    add(Case("pipeline: temporary read before it is written", ["diff", "{d}/k.hk"],
             [r"k\.hk", r"reads temporary 't' before any launch writes it"],
             {"k.hk": pipe("  buffer x: f32[64];\n  temp t: f32[64];\n"
                           "  launch saxpy(t, x, 1.0:f32) groups(1, 1, 1);\n")}))
    add(Case("pipeline: malformed launch", ["fuse", "{d}/k.hk"],
             [r"k\.hk:\d+:\d+", r"expected 'groups'"],
             {"k.hk": pipe(ok_buffers + "  launch saxpy(x, y, 1.0:f32);\n")}))
    for dev in ("interp", "cpu"):
        add(Case("pipeline: store past the end in launch 2 on " + dev,
                 ["run", "{d}/k.hk", "--device", dev],
                 [r"launch 2 \(oob_store\)", r"buffer y", r"index 64\b", r"length 64\b"],
                 {"k.hk": pipe(ok_buffers + "  launch saxpy(x, y, 1.0:f32) groups(1, 1, 1);\n"
                               "  launch oob_store(y) groups(1, 1, 1);\n")}, devices=(dev,)))
    return c


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "kernels")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def snapshot(folder):
    out = {}
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, folder)] = f.read()
    return out


def run_case(halfway, case, scale):
    folder = tempfile.mkdtemp(prefix="halfway_catalogue_")
    try:
        for name, content in list(case.files.items()) + list(case.keep.items()):
            mode = "wb" if isinstance(content, bytes) else "w"
            with open(os.path.join(folder, name), mode) as f:
                f.write(content)
        before = snapshot(folder)
        argv = [halfway] + [a.replace("{d}", folder) for a in case.args]
        env = dict(os.environ)
        env.setdefault("HALFWAY_VK_VALIDATION", "1")
        # lavapipe and the validation layer leak at exit from libraries already unloaded; halfway's
        # own leaks are the unit tests' business.
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        limit = (case.timeout_s or 60) * scale
        start = time.monotonic()
        try:
            stdin = open(os.path.join(folder, case.stdin), "rb") if case.stdin else None
            try:
                p = subprocess.run(argv, stdin=stdin or subprocess.DEVNULL, capture_output=True,
                                   timeout=max(limit * 4, 30), env=env)
            finally:
                if stdin:
                    stdin.close()
        except subprocess.TimeoutExpired:
            return "hung (killed after %.0f s)" % max(limit * 4, 30)
        elapsed = time.monotonic() - start
        err = p.stderr.decode("utf-8", "replace")
        problems = []
        if p.returncode < 0:
            problems.append("killed by signal %d" % -p.returncode)
        elif p.returncode != 2:
            problems.append("exit %d, not 2" % p.returncode)
        for pattern in case.expect:
            if not re.search(pattern, err):
                problems.append("stderr lacks /%s/" % pattern)
        if CONTROL.search(err.replace("\n", "").replace("\t", "")):
            problems.append("stderr holds raw control characters")
        if "Sanitizer" in err or "runtime error:" in err:
            problems.append("sanitizer report")
        if p.stdout.strip() and "--json" not in case.args:
            problems.append("stdout is not empty: %r" % p.stdout[:200])
        if case.timeout_s and elapsed > limit:
            problems.append("took %.2f s, limit %.1f s" % (elapsed, limit))
        after = snapshot(folder)
        if after != before:
            changed = sorted(set(after) ^ set(before) |
                             {k for k in after if k in before and after[k] != before[k]})
            problems.append("files written or changed: %s" % ", ".join(changed))
        if problems:
            return "; ".join(problems) + "\n    stderr: " + err.strip()[:600].replace("\n",
                                                                                   "\n    ")
        return None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def available_devices(halfway):
    p = subprocess.run([halfway, "devices"], capture_output=True, stdin=subprocess.DEVNULL,
                       env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
    text = p.stdout.decode("utf-8", "replace")
    found = {"interp"}
    for name in ("cpu", "vulkan"):
        if re.search(r"(?m)^\s*%s\b" % name, text):
            found.add(name)
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("halfway")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--devices", default="")
    ap.add_argument("--groups", default="",
                    help="comma-separated groups ctest runs: fail if a case belongs to none")
    args = ap.parse_args()
    all_cases = cases()
    if args.groups:
        known = set(args.groups.split(","))
        orphans = [c.name for c in all_cases if c.name.split(":")[0] not in known]
        for name in orphans:
            print("FAIL %s: its group is not run by ctest" % name)
        print("%d passed, %d failed" % (len(all_cases) - len(orphans), len(orphans)))
        return 1 if orphans else 0
    if args.list:
        for c in all_cases:
            print(c.name)
        print("%d cases" % len(all_cases))
        return 0
    devices = set(args.devices.split(",")) if args.devices else available_devices(args.halfway)
    # Sanitizer builds run several times slower; their time limits scale with them.
    scale = float(os.environ.get("HALFWAY_CATALOGUE_TIME_SCALE", "1"))
    passed = failed = skipped = 0
    for case in all_cases:
        if args.only and not re.search(args.only, case.name):
            continue
        if any(d not in devices for d in case.devices):
            print("SKIP %s (no %s device)" % (case.name, ",".join(case.devices)))
            skipped += 1
            continue
        problem = run_case(args.halfway, case, scale)
        if problem:
            failed += 1
            print("FAIL %s: %s" % (case.name, problem))
        else:
            passed += 1
            print("ok   %s" % case.name)
        sys.stdout.flush()
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    if passed + failed + skipped == 0:
        print("no case matched: the filter names no group")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
