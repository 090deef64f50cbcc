#!/usr/bin/env python3
"""check_bench.py FILE LAUNCHES WARMUP: checks one `halfway bench --json` document: its structure,
the counts it was asked for, and that each summary is ordered min <= median <= max with
non-negative times. Timings themselves are never compared with anything."""
import json
import sys

doc = json.load(open(sys.argv[1]))
launches, warmup = int(sys.argv[2]), int(sys.argv[3])
assert doc["command"] == "bench" and doc["error"] is None, doc
(r,) = doc["results"]
assert r["launches"] == launches and r["warmup"] == warmup, r
assert r["groups"] == [16, 1, 1] and r["lanes_per_group"] == 64, r
for key in ("device_ms", "wall_ms"):
    s = r[key]
    assert set(s) == {"median", "min", "max"}, s
    assert 0 <= s["min"] <= s["median"] <= s["max"], (key, s)
assert r["first_compile_ms"] >= 0, r
if r["device"] == "cpu" and warmup > 0:
    assert r["first_compile_ms"] > 0, r  # the first launch compiles; the timed ones do not
print("ok", r["device"], r["device_ms"])
