"""The halfway Python module: loading, running, diffing, opt-ins, and errors as exceptions."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import ml_dtypes
import numpy as np
import pytest

import halfway
from conftest import DEVICES, SOURCE_DIR


def test_version_and_devices():
    cmake = (SOURCE_DIR / "CMakeLists.txt").read_text()
    assert halfway.__version__ == re.search(r"project\(halfway VERSION ([0-9.]+)", cmake).group(1)
    assert DEVICES[:2] == ["interp", "cpu"]
    info = halfway.device_info("cpu")
    assert info["name"] == "cpu" and info["description"]


def test_load(examples):
    ks = halfway.load(str(examples / "narrow_f16.hk"))
    assert len(ks) == 1 and ks.names == ["narrow_f16"] and "narrow_f16" in ks
    k = ks["narrow_f16"]
    assert ks[0].name == ks[-1].name == k.name == "narrow_f16"
    assert [x.name for x in ks] == ["narrow_f16"]
    assert k.workgroup == (64, 1, 1)
    assert k.params[0] == {"name": "a", "kind": "buffer", "type": "f32", "access": "read"}
    assert k.params[3] == {"name": "out16", "kind": "buffer", "type": "f16", "access": "write"}
    with pytest.raises(halfway.Error, match="unknown kernel nope .*; it has narrow_f16"):
        ks["nope"]
    with pytest.raises(IndexError):
        ks[1]


def test_load_errors(tmp_path):
    with pytest.raises(halfway.Error) as e:
        halfway.load(str(tmp_path / "missing.hk"))
    assert e.value.kind == "usage error" and e.value.file == str(tmp_path / "missing.hk")
    with pytest.raises(halfway.Error) as e:
        halfway.loads("kernel k workgroup(1, 1, 1) {\n  param a: buffer<f32 read>;\n}\n", "t.hk")
    assert e.value.kind == "parse error" and e.value.file == "t.hk" and e.value.line == 2
    assert "t.hk:2:" in str(e.value)
    # Storing an f32 into an f16 buffer without narrow<f16> is refused by the verifier.
    bad = "kernel k workgroup(1, 1, 1) {\n  param a: buffer<f16, write>;\n  a[0:u32] = 1.5:f32;\n}\n"
    with pytest.raises(halfway.Error) as e:
        halfway.loads(bad, "v.hk")
    assert e.value.kind == "verify error" and e.value.line == 3


def two_step_f16(a, b, c):
    # What narrow<f16>(a * b + c) computes: each f32 operation rounded, then one narrowing.
    return (a * b + c).astype(np.float16)


@pytest.mark.parametrize("device", DEVICES)
def test_run_f16(examples, device):
    k = halfway.load(str(examples / "narrow_f16.hk"))[0]
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal((10, 13), dtype=np.float32) for _ in range(3))
    saved = a.copy()
    out = k.run(device, grid=130, a=a, b=b, c=c, out16=np.zeros((10, 13), np.float16))
    assert list(out) == ["out16"]
    r = out["out16"]
    assert r.dtype == np.float16 and r.shape == (10, 13)
    assert np.array_equal(r.view(np.uint16), two_step_f16(a, b, c).view(np.uint16))
    assert np.array_equal(a, saved)
    # A write-only buffer left out gets one element per lane; a count gives that many.
    assert k.run(device, grid=130, a=a, b=b, c=c)["out16"].shape == (130,)
    short = k.run(device, grid=130, a=a, b=b, c=c, out16=7)["out16"]
    assert np.array_equal(short, two_step_f16(a, b, c).reshape(-1)[:7])


READ_WRITE = """
kernel py_bump workgroup(32, 1, 1) {
  param x: buffer<f32, read_write>;
  param n: i32;
  param flag: bool;
  let i: u32 = global_id(0);
  if and(lt(i, len(x)), flag) {
    x[i] = add(x[i], convert<f32>(n));
  }
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_read_write_and_scalars(device):
    k = halfway.loads(READ_WRITE)["py_bump"]
    x = np.arange(40, dtype=np.float32)[::2]  # not contiguous: copied in C order
    out = k.run(device, grid=(20,), x=x, n=np.int32(-3), flag=True)["x"]
    assert np.array_equal(out, x - 3)
    assert np.array_equal(x, np.arange(40, dtype=np.float32)[::2])  # the caller's array is kept
    assert np.array_equal(k.run(device, groups=1, x=x, n=5, flag=np.bool_(False))["x"], x)


GRID_2D = """
kernel py_2d workgroup(8, 8, 1) {
  param out: buffer<u32, write>;
  param w: u32;
  let x: u32 = global_id(0);
  let y: u32 = global_id(1);
  out[add(mul(y, w), x)] = add(mul(y, 1000:u32), x);
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_2d_grids(device):
    k = halfway.loads(GRID_2D)[0]
    want = np.add.outer(np.arange(24, dtype=np.uint32) * 1000, np.arange(16, dtype=np.uint32))
    by_lanes = k.run(device, grid=(16, 24), w=16)["out"]
    assert by_lanes.shape == (384,) and np.array_equal(by_lanes.reshape(24, 16), want)
    by_groups = k.run(device, groups=[2, 3], w=16, out=np.zeros((24, 16), np.uint32))["out"]
    assert np.array_equal(by_groups, want)


# bf16 and fp8 results: ml_dtypes arrays, the same values ml_dtypes' own rounding gives (round to
# nearest even; all inputs are in range, where the formats agree).
NARROW_ALL = """
kernel py_narrow_all workgroup(64, 1, 1) {
  param x: buffer<f32, read>;
  param b: buffer<bf16, write>;
  param e4: buffer<e4m3, write>;
  param e5: buffer<e5m2, write>;
  let i: u32 = global_id(0);
  if lt(i, len(x)) {
    b[i] = narrow<bf16>(x[i]);
    e4[i] = narrow<e4m3>(x[i]);
    e5[i] = narrow<e5m2>(x[i]);
  }
}
"""


def narrow_inputs():
    return np.random.default_rng(2).uniform(-300, 300, 500).astype(np.float32)


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_fp8_results(device):
    k = halfway.loads(NARROW_ALL)[0]
    x = narrow_inputs()
    out = k.run(device, grid=x.size, x=x)
    for name, dtype in [("b", ml_dtypes.bfloat16), ("e4", ml_dtypes.float8_e4m3fn),
                        ("e5", ml_dtypes.float8_e5m2)]:
        assert out[name].dtype == np.dtype(dtype)
        want = x.astype(dtype)
        assert np.array_equal(out[name].view(np.uint8), want.view(np.uint8)), name


@pytest.mark.parametrize("device", DEVICES)
def test_ml_dtypes_inputs(examples, device):
    k = halfway.load(str(examples / "linear_bf16.hk"))[0]
    rng = np.random.default_rng(3)
    x = rng.standard_normal(100, dtype=np.float32)
    w = rng.standard_normal(100, dtype=np.float32).astype(ml_dtypes.bfloat16)
    want = x * w.astype(np.float32) + np.float32(0.5)
    y = k.run(device, grid=100, x=x, w=w, b=0.5)["y"]
    assert np.array_equal(y, want)
    # The bit patterns as uint16 are accepted too (what there is without ml_dtypes).
    assert np.array_equal(k.run(device, grid=100, x=x, w=w.view(np.uint16), b=0.5)["y"], want)


def test_without_ml_dtypes():
    # bf16 and fp8 come back as their bit patterns when ml_dtypes cannot be imported.
    code = f"""
import sys
sys.modules["ml_dtypes"] = None
import numpy as np, halfway
k = halfway.loads({NARROW_ALL!r})[0]
x = np.frombuffer(bytes.fromhex(sys.argv[1]), np.float32)
out = k.run("cpu", grid=x.size, x=x)
print(out["b"].dtype, out["e4"].dtype, out["e5"].dtype, out["b"].tobytes().hex(), out["e4"].tobytes().hex())
"""
    x = narrow_inputs()
    r = subprocess.run([sys.executable, "-c", code, x.tobytes().hex()], capture_output=True,
                       text=True, check=True)
    types_b, types_e4, types_e5, b_hex, e4_hex = r.stdout.split()
    assert (types_b, types_e4, types_e5) == ("uint16", "uint8", "uint8")
    assert b_hex == x.astype(ml_dtypes.bfloat16).tobytes().hex()
    assert e4_hex == x.astype(ml_dtypes.float8_e4m3fn).tobytes().hex()


def narrow_kernel(examples):
    return halfway.load(str(examples / "narrow_f16.hk"))[0]


F32 = np.zeros(64, np.float32)

# Every mistake a caller can make is a halfway.Error naming what is wrong; none may crash.
BAD_RUNS = [
    (dict(grid=64, a=F32.astype(np.float64), b=F32, c=F32), "buffer a is f32: give an array of float32, not float64"),
    (dict(grid=64, a=F32, b=F32), "buffer c \\(f32, read\\) has no value"),
    (dict(grid=64, a=F32, b=F32, c=[0.0] * 64), "must be a NumPy array of float32, not a list"),
    (dict(grid=64, a=F32, b=F32, c=F32, d=F32), "has no parameter 'd'; it has a, b, c, out16"),
    (dict(grid=64, a=F32, b=F32, c=F32, out16=np.zeros(64, np.float32)), "out16 is f16"),
    (dict(grid=0, a=F32, b=F32, c=F32), "every size is at least 1"),
    (dict(grid=-5, a=F32, b=F32, c=F32), "non-negative integer"),
    (dict(grid=2.5, a=F32, b=F32, c=F32), "non-negative integer"),
    (dict(grid=(1, 2, 3, 4), a=F32, b=F32, c=F32), "one size or a tuple of two or three"),
    (dict(grid=64, groups=1, a=F32, b=F32, c=F32), "not both"),
    (dict(a=F32, b=F32, c=F32), "no grid"),
    (dict(grid=2**45, a=F32, b=F32, c=F32), "workgroups"),
    (dict(groups=2**32, a=F32, b=F32, c=F32), "more than the 4294967295"),
]


@pytest.mark.parametrize("kwargs,message", BAD_RUNS)
def test_bad_runs(examples, kwargs, message):
    with pytest.raises(halfway.Error, match=message) as e:
        narrow_kernel(examples).run("cpu", **kwargs)
    assert e.value.kind == "usage error" and e.value.kernel == "narrow_f16"


BAD_SCALARS = [
    ("b", 0.1, "not exactly representable in bf16; the nearest value is 0.10009765"),
    ("b", 1e40, "out of range for f32, and so for bf16"),
    ("b", "1", "not a number"),
    ("n", 2**31, "out of range"),
    ("n", 1.0, "not an integer"),
    ("u", -1, "negative, and u8 is unsigned"),
    ("u", 256, "out of range"),
    ("h", 70000.0, "out of range for f16 \\(the largest finite value is 65504\\)"),
    ("e", float("inf"), "e4m3 has no infinity"),
    ("flag", 1, "not a bool"),
]

SCALARS = """
kernel py_scalars workgroup(1, 1, 1) {
  param o: buffer<f32, write>;
  param b: bf16;
  param n: i32;
  param u: u8;
  param h: f16;
  param e: e4m3;
  param flag: bool;
  o[0:u32] = select(flag, add(add(widen<f32>(b), widen<f32>(h)), widen<f32>(e)), convert<f32>(n));
  o[1:u32] = convert<f32>(u);
}
"""


@pytest.mark.parametrize("name,value,message", BAD_SCALARS)
def test_bad_scalars(name, value, message):
    k = halfway.loads(SCALARS)[0]
    good = dict(b=1.5, n=-7, u=200, h=np.float16(0.1), e=0.5, flag=True)
    assert list(k.run("cpu", grid=1, o=2, **good)["o"]) == [1.5 + float(np.float16(0.1)) + 0.5, 200]
    good[name] = value
    with pytest.raises(halfway.Error, match=message):
        k.run("cpu", grid=1, o=2, **good)


def test_other_errors(examples):
    k = narrow_kernel(examples)
    with pytest.raises(halfway.Error, match="unknown device 'gpu'; this build has interp, cpu"):
        k.run("gpu", grid=64, a=F32, b=F32, c=F32)
    with pytest.raises(halfway.Error, match="not one of random, ties"):
        halfway.diff(k, "cpu", grid=64, inputs="bogus")
    with pytest.raises(halfway.Error, match="timeout=-1.0"):
        k.run("cpu", grid=64, a=F32, b=F32, c=F32, timeout=-1)
    with pytest.raises(halfway.Error, match="given twice"):
        k.run("cpu", grid=64, a=F32, b=F32, c=F32, args={"a": F32})
    with pytest.raises(TypeError):
        k.run(grid=64)


OUT_OF_BOUNDS = """
kernel py_oob workgroup(64, 1, 1) {
  param x: buffer<f32, read>;
  param out: buffer<f32, write>;
  let i: u32 = global_id(0);
  out[i] = x[add(i, 1:u32)];
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_out_of_bounds(device):
    k = halfway.loads(OUT_OF_BOUNDS)[0]
    x = np.ones(64, np.float32)
    with pytest.raises(halfway.Error) as e:
        k.run(device, grid=64, x=x)
    assert e.value.kind == "out-of-bounds access" and e.value.buffer == "x"
    assert "py_oob" in str(e.value)
    # The process carries on: the next launch works.
    x65 = np.arange(65, dtype=np.float32)
    assert np.array_equal(k.run(device, grid=64, x=x65)["out"], x65[1:])


SPIN = """
kernel py_spin workgroup(1, 1, 1) {
  param o: buffer<u32, write>;
  param n: u32;
  let s: u32 = 0:u32;
  for j: u32 = 0:u32 to n step 1:u32 {
    s = add(s, j);
  }
  o[0:u32] = s;
}
"""


def test_timeout():
    k = halfway.loads(SPIN)[0]
    start = time.monotonic()
    with pytest.raises(halfway.Error) as e:
        k.run("interp", grid=1, n=4_000_000_000, timeout=0.2)
    assert e.value.kind == "timeout"
    assert time.monotonic() - start < 30


def test_ctrl_c_cancels_a_launch():
    k = halfway.loads(SPIN)[0]
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        k.run("interp", grid=1, n=4_000_000_000)
    assert time.monotonic() - start < 30
    assert k.run("interp", grid=1, n=4)["o"][0] == 6


def cli_diff(kernel_file, device, *args):
    cli = os.environ["HALFWAY_CLI"]
    r = subprocess.run([cli, "diff", str(kernel_file), "--device", device, "--json", *args],
                       capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)["results"][0]


@pytest.mark.parametrize("device", DEVICES[1:])
def test_diff_is_the_cli_report(examples, device):
    k = narrow_kernel(examples)
    report = halfway.diff(k, device, grid=1000, seed=5)
    assert report == cli_diff(examples / "narrow_f16.hk", device, "--grid", "1000", "--seed", "5")
    assert report["ok"] and report["violations"] == 0
    buf = report["buffers"][0]
    assert buf["name"] == "out16" and buf["exact"] == 1000
    assert buf["histogram"]["buckets"] == [{"label": "0", "lo": 0, "hi": 0, "count": 1000}]


def test_diff_arrays_and_given_inputs(examples):
    k = narrow_kernel(examples)
    a = np.linspace(-4, 4, 200, dtype=np.float32).reshape(20, 10)
    report = halfway.diff(k, "cpu", grid=200, a=a, b=a, c=a, out16=np.zeros((20, 10), np.float16),
                          arrays=True)
    got = report["arrays"]["out16"]
    assert got["reference"].shape == got["device"].shape == got["verdicts"].shape == (20, 10)
    assert np.array_equal(got["reference"].view(np.uint16), two_step_f16(a, a, a).view(np.uint16))
    assert got["verdicts"].dtype == np.uint8 and not got["verdicts"].any()


SINGLE = """
kernel py_single workgroup(64, 1, 1) {
  param a: buffer<f32, read>;
  param b: buffer<f32, read>;
  param c: buffer<f32, read>;
  param out16: buffer<f16, write>;
  let i: u32 = global_id(0);
  if lt(i, len(out16)) {
    out16[i] = narrow<f16>(add(mul(a[i], b[i]), c[i]));
  }
}
"""


def test_single_rounding_opt_in():
    k = halfway.loads(SINGLE)[0]
    before = halfway.diff(k, "cpu", grid=2048)
    assert before["budget"]["single_rounding"] == {"held": False, "reason": None}
    assert before["buffers"][0]["models"] is None
    halfway.accept_single_rounding(k, "the python tests check the rounding models")
    after = halfway.diff(k, "cpu", grid=2048)
    assert after["budget"]["single_rounding"] == {
        "held": True, "reason": "the python tests check the rounding models"}
    models = after["buffers"][0]["models"]
    assert set(models) == {"TwoStep", "FusedF32", "Single", "FusedMul"}
    assert after["buffers"][0]["rounding_models"]["elements"] == 2048
    assert after["ok"]
    assert "the python tests check the rounding models" in halfway.policy_report()


ACCUMULATE = """
kernel py_accumulate workgroup(64, 1, 1) {
  param x: buffer<f32, read>;
  param out: buffer<f32, write>;
  let i: u32 = global_id(0);
  if lt(i, len(out)) {
    let acc: f32 = 0.0:f32;
    for j: u32 = 0:u32 to 8:u32 step 1:u32 {
      acc = add(acc, x[add(mul(i, 8:u32), j)]);
    }
    out[i] = acc;
  }
}
"""


def test_relaxed_accumulation_opt_in():
    k = halfway.loads(ACCUMULATE)[0]
    halfway.accept_relaxed_accumulation("py_accumulate", "sums of eight, any order")
    report = halfway.diff(k, "cpu", grid=64, x=np.ones(512, np.float32), out=64)
    assert report["budget"]["relaxed_accumulation"] == {
        "held": True, "reason": "sums of eight, any order"}
    assert report["budget"]["single_rounding"]["held"] is False
    assert report["ok"]


def test_refusals_carry_the_policy_message(examples):
    with pytest.raises(halfway.Error) as e:
        halfway.accept_single_rounding("narrow_f16", " \t")
    # The same sentence the CLI prints for the same refusal.
    cli = subprocess.run([os.environ["HALFWAY_CLI"], "run", str(examples / "narrow_f16.hk"),
                          "--grid", "1", "--accept-single-rounding=narrow_f16: "],
                         capture_output=True, text=True)
    assert cli.returncode == 2
    sentence = e.value.message.split("refused: ", 1)[1]
    assert sentence and sentence in cli.stderr
    assert e.value.message.startswith("single rounding for kernel 'narrow_f16': refused: ")
    with pytest.raises(halfway.Error, match="refused: .*unnamed_kernel"):
        halfway.accept_relaxed_accumulation("unnamed_kernel", "a reason")
    with pytest.raises(halfway.Error, match="a kernel name, a halfway.Kernel or halfway.ALL_KERNELS"):
        halfway.accept_single_rounding(None, "a reason")


def test_readme_example(source_dir):
    readme = (source_dir / "README.md").read_text()
    section = readme.split("## Using halfway from Python", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    r = subprocess.run([sys.executable, "-c", code], cwd=source_dir, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("True 1000 [{'label': '0', 'lo': 0, 'hi': 0, 'count': 1000}]")


def test_logging_goes_to_stderr():
    code = ("import halfway; halfway.accept_single_rounding('py_log_kernel', 'logged'); "
            "print('result')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env=dict(os.environ, HALFWAY_LOG="info"))
    assert r.stdout == "result\n"
    assert "halfway: info: " in r.stderr and "py_log_kernel" in r.stderr
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=dict(os.environ, HALFWAY_LOG="off"))
    assert quiet.stdout == "result\n" and quiet.stderr == ""
    bogus = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=dict(os.environ, HALFWAY_LOG="loud"))
    assert "RuntimeWarning: HALFWAY_LOG=loud is not one of trace" in bogus.stderr
    assert "py_log_kernel" in bogus.stderr  # info, as for no HALFWAY_LOG
