#!/usr/bin/env python3
"""The smoke test of workloads_bench: runs it with --quick and checks what it prints.

usage: check_quick.py path/to/workloads_bench

Passes when the bench exits 0 (it exits 1 itself when a baseline that claims halfway's bits
differs), every stdout line is one JSON object with the bench's fields, and every case of the
issue appears on each device it applies to: vulkan rows unless the bench said on stderr that it
has no Vulkan device, the OpenBLAS rows unless it said it was built without OpenBLAS.
"""
import json
import subprocess
import sys

HAND = ["matmul_512", "gemv_f32_4096", "group_norm_silu", "exp_f32", "attention", "conv3x3",
        "act_f16", "act_f32", "softmax_f16out"]
VS_F32 = ["gemv_f16_vs_f32", "gemv_e5m2_vs_f32", "gemv_e4m3_vs_f32"]
BLAS = {"matmul_512_vs_openblas": "cpu", "matmul_512_relaxed_vs_openblas": "cpu:relaxed",
        "gemv_f32_4096_vs_openblas": "cpu", "gemv_f32_4096_relaxed_vs_openblas": "cpu:relaxed"}
FIELDS = {"case": str, "device": str, "metric": str, "value": (int, float),
          "baseline": (int, float), "ratio": (int, float)}


def fail(message):
    print("check_quick: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 2:
        fail("usage: check_quick.py path/to/workloads_bench")
    run = subprocess.run([sys.argv[1], "--quick"], capture_output=True, text=True, timeout=600)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        fail("workloads_bench --quick exited with status %d" % run.returncode)
    rows = []
    for number, line in enumerate(run.stdout.splitlines(), 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            fail("stdout line %d is not JSON (%s): %s" % (number, e, line))
        for field, kind in FIELDS.items():
            if not isinstance(row.get(field), kind):
                fail("line %d has no %s field of the right type: %s" % (number, field, line))
        if row["case"] != "threads":
            if not row["device"].startswith(("interp", "cpu", "vulkan")):
                fail("line %d: device %r" % (number, row["device"]))
            if row["value"] <= 0 or row["baseline"] <= 0:
                fail("line %d: a time is not positive: %s" % (number, line))
            if abs(row["ratio"] - row["baseline"] / row["value"]) > 1e-3 * row["ratio"]:
                fail("line %d: ratio is not baseline / value: %s" % (number, line))
            if row.get("bit_exact") not in (True, False, None):
                fail("line %d: bit_exact %r" % (number, row.get("bit_exact")))
        rows.append(row)
    seen = {(r["case"], r["device"].split(":")[0] if not r["device"].startswith("cpu:")
             else r["device"]) for r in rows}
    vulkan = "no Vulkan device" not in run.stderr and "without the Vulkan device" not in run.stderr
    blas = "without OpenBLAS" not in run.stderr
    wanted = [(c, d) for c in HAND + VS_F32 for d in ["interp", "cpu"] + (["vulkan"] * vulkan)]
    wanted += [("matmul_512", "cpu:relaxed"), ("gemv_f32_4096", "cpu:relaxed")]
    if blas:
        wanted += list(BLAS.items())
    missing = [w for w in wanted if w not in seen]
    if missing:
        fail("rows missing: " + ", ".join("%s on %s" % w for w in missing))
    print("check_quick: %d rows, every case present (vulkan: %s, OpenBLAS: %s)"
          % (len(rows), "yes" if vulkan else "no", "yes" if blas else "no"))


if __name__ == "__main__":
    main()
