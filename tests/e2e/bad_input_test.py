#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Crafted bad inputs (issue 23): every case of the list of crashes, hangs, memory blow-ups,
# silent wrong answers and unclear errors, written here from scratch (ONNX through the onnx
# package's helper, .npy bytes by hand per the NumPy .npy format v1.0, regcmd words, ISS presets,
# CLI arguments) and run against the CLI. Every case checks: no signal, bounded wall time (each run
# is killed after TIMEOUT s), a bounded address space (RLIMIT_AS, so a blow-up is an error rather than
# the machine's memory), the exit code of README "Exit codes", and for an error exactly one stderr line
# starting with the common prefix `npusim: error: `. Cases with a right answer check the answer
# against the ONNX operator definitions (numpy arithmetic written here, not the simulator's).
#   bad_input_test.py NPUSIM [CASE-SUBSTRING]
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NPUSIM = sys.argv[1]
ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
T = tempfile.mkdtemp(prefix="npusim_bad_")
TIMEOUT = 60
AS_LIMIT = 6 << 30  # bytes of address space per run: a blow-up fails instead of swapping
# An ASan build reserves terabytes of shadow address space at start and cannot run under
# RLIMIT_AS ("ReserveShadowMemoryRange failed"): there the limit is left off (ASan bounds and
# reports memory errors itself) and the case that needs the limit to make an allocation fail is
# skipped. CMake sets NPUSIM_SANITIZED for the sanitizer build.
SANITIZED = os.environ.get("NPUSIM_SANITIZED") == "1"
PREFIX = "npusim: error: "
failures = []
ran = 0


def path(name):
    return os.path.join(T, name)


def save_model(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    p = path(name + ".onnx")
    onnx.save(m, p)
    return p


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def npy_bytes(descr, shape, data=b""):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + data


def write(name, data):
    p = path(name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def run(args, cwd=None, as_limit=AS_LIMIT):
    t0 = time.monotonic()
    try:
        p = subprocess.run([NPUSIM] + args, capture_output=True, text=True, errors="replace", timeout=TIMEOUT,
                           preexec_fn=None if SANITIZED else lambda: resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit)),
                           cwd=cwd or T)
    except subprocess.TimeoutExpired:
        return None, "", "", time.monotonic() - t0
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def case(name, args, codes, *, check=None, cwd=None, err_has=None, report=False, as_limit=AS_LIMIT):
    """codes: the exit codes that are right; a non-zero code also needs a one-line prefixed error
    (report: exit 1 is a findings report on stdout, as lint's, with nothing on stderr)."""
    global ran
    if ONLY and ONLY not in name:
        return
    ran += 1
    rc, out, err, dt = run(args, cwd, as_limit)
    why = None
    if rc is None:
        why = f"hang: killed after {TIMEOUT} s"
    elif rc < 0:
        why = f"signal {-rc}"
    elif rc not in codes:
        why = f"exit {rc}, expected {sorted(codes)}"
    elif rc != 0 and not (report and rc == 1 and not err.strip()):
        lines = [ln for ln in err.splitlines() if ln.strip()]
        errs = [ln for ln in lines if ln.startswith(PREFIX)]
        if len(errs) != 1 or not lines or not lines[-1].startswith(PREFIX):
            why = "error is not one prefixed line: " + repr(err[-400:])
        elif err_has and err_has not in errs[0]:
            why = f"error lacks '{err_has}': {errs[0]}"
        elif "terminate called" in err or "bad_alloc" in err or "uncaught exception" in (out + err):
            why = "internal message: " + repr(err[-300:])
    if why is None and check:
        why = check(rc, out, err)
    status = "ok  " if why is None else "FAIL"
    print(f"{status} {name} ({dt:.1f} s, exit {rc})" + ("" if why is None else f": {why}"), flush=True)
    if why:
        failures.append(name)


ERR2, ERR3, ERR4 = {2}, {3}, {4}
BAD = {2, 3, 4}  # any clean refusal of bad input

# ---- shapes whose byte size overflows (crash: small buffer, huge write) ----
relu = [helper.make_node("Relu", ["x"], ["y"])]
big2 = save_model("big2d", relu, [vi("x", TensorProto.FLOAT, [3037000500, 3037000500])],
                  [vi("y", TensorProto.FLOAT, [3037000500, 3037000500])])
big1 = save_model("big1d", relu, [vi("x", TensorProto.FLOAT, [2**62 + 1])], [vi("y", TensorProto.FLOAT, [2**62 + 1])])
for m, tag in ((big2, "2d"), (big1, "1d")):
    case(f"overflow_shape_{tag}_reference", ["run", "--reference", m], BAD)
    case(f"overflow_shape_{tag}_rk3588", ["run", "-p", "rk3588", m], BAD)
    case(f"overflow_shape_{tag}_ws63", ["run", "-p", "ws63", m], BAD)
    case(f"overflow_shape_{tag}_check", ["check", "-p", "rk3588", m], BAD | {11})
case("overflow_input_shape_option", ["run", "--reference", big2, "--input-shape", "x=4294967296x4294967296"], BAD)
# A shape product that overflows to 0 must not be taken as an empty tensor.
case("overflow_shape_wraps_to_zero", ["run", "--reference", big1, "--input-shape", "x=4294967296x4294967296x16"], BAD)
# Reshape to a shape whose product overflows.
shp = numpy_helper.from_array(np.array([2**32, 2**32, 4], np.int64), "s")
rs = save_model("reshape_overflow", [helper.make_node("Reshape", ["x", "s"], ["y"])],
                [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, None)], [shp])
case("reshape_overflow", ["run", "--reference", rs], BAD, err_has="overflows")  # not "has 0 elements" (wrapped)
# Expand / ConstantOfShape to a huge shape: a clean refusal, not std::bad_alloc.
cs = numpy_helper.from_array(np.array([1 << 20, 1 << 20], np.int64), "s")
cos = save_model("constantofshape_huge", [helper.make_node("ConstantOfShape", ["s"], ["c"]),
                                          helper.make_node("Add", ["x", "c"], ["y"])],
                 [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.FLOAT, None)], [cs])
case("constantofshape_1T_elements", ["run", "--reference", cos], BAD)
huge_in = save_model("huge_input_4g", relu, [vi("x", TensorProto.FLOAT, [1 << 30])], [vi("y", TensorProto.FLOAT, [1 << 30])])
# 4 GiB input: within the default 16 GiB budget but not within a 3 GiB address-space limit (a
# machine with less memory than the budget): a one-line out-of-memory error, not std::bad_alloc.
if SANITIZED:
    print("skip huge_input_out_of_memory: needs RLIMIT_AS, which an ASan build cannot run under", flush=True)
else:
    case("huge_input_out_of_memory", ["run", "--reference", huge_in], BAD | {1}, err_has="memory", as_limit=3 << 30)
case("huge_input_over_budget", ["run", "--reference", huge_in, "--max-memory", "1G"], BAD | {1}, err_has="--max-memory")
case("huge_input_over_budget_rk3588", ["run", "-p", "rk3588", huge_in, "--quantize", "none", "--max-memory", "1G"], BAD | {1},
     err_has="--max-memory")
case("huge_input_over_budget_ws63", ["run", "-p", "ws63", huge_in, "--skip-check", "--max-memory", "1G"], BAD | {1},
     err_has="--max-memory")

# ---- SIGFPE ----
d2s = save_model("d2s_2p32", [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2**32)],
                 [vi("x", TensorProto.FLOAT, [1, 4, 2, 2])], [vi("y", TensorProto.FLOAT, None)])
case("depthtospace_blocksize_2p32_check", ["check", "-p", "rk3588", d2s], BAD | {11})
case("depthtospace_blocksize_2p32_reference", ["run", "--reference", d2s], BAD)
s2d = save_model("s2d_2p32", [helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2**32)],
                 [vi("x", TensorProto.FLOAT, [1, 4, 2, 2])], [vi("y", TensorProto.FLOAT, None)])
case("spacetodepth_blocksize_2p32_reference", ["run", "--reference", s2d], BAD)
a = numpy_helper.from_array(np.array([-2**63], np.int64), "a")
b = numpy_helper.from_array(np.array([-1], np.int64), "b")
fold = save_model("fold_int64min_div", [helper.make_node("Div", ["a", "b"], ["q"]),
                                        helper.make_node("Reshape", ["x", "q"], ["y"])],
                  [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, None)], [a, b])
case("fold_int64min_div_minus1", ["run", "--reference", fold], BAD)
case("fold_int64min_div_minus1_check", ["check", "-p", "rk3588", fold], BAD | {11})
for dt, npd, descr, mn in ((TensorProto.INT32, np.int32, "<i4", -2**31), (TensorProto.INT64, np.int64, "<i8", -2**63)):
    dv = save_model(f"div_{descr[1:]}", [helper.make_node("Div", ["x", "d"], ["y"])],
                    [vi("x", dt, [2]), vi("d", dt, [2])], [vi("y", dt, [2])])
    xi = write(f"div_x_{descr[1:]}.npy", npy_bytes(descr, "(2,)", np.array([mn, 7], npd).tobytes()))
    di = write(f"div_d_{descr[1:]}.npy", npy_bytes(descr, "(2,)", np.array([-1, 0], npd).tobytes()))
    case(f"integer_div_min_by_minus1_{descr[1:]}", ["run", "--reference", dv, "--input", xi, "--input", di], {0, 1, 2, 4})
    mo = save_model(f"mod_{descr[1:]}", [helper.make_node("Mod", ["x", "d"], ["y"])],
                    [vi("x", dt, [2]), vi("d", dt, [2])], [vi("y", dt, [2])])
    # The reference operator library has no Mod: refused as a model it cannot run (exit 3).
    case(f"integer_mod_min_by_minus1_{descr[1:]}", ["run", "--reference", mo, "--input", xi, "--input", di], {0, 1, 2, 3, 4})

# ---- out-of-bounds reads ----
gd = numpy_helper.from_array(np.zeros((2, 1), np.int64), "i")
gnd = save_model("gathernd_neg_batch", [helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=-1)],
                 [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, None)], [gd])
case("gathernd_negative_batch_dims", ["run", "--reference", gnd], BAD)
gd2 = numpy_helper.from_array(np.array([[5], [-9]], np.int64), "i")
gnd2 = save_model("gathernd_oob_index", [helper.make_node("GatherND", ["x", "i"], ["y"])],
                  [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, None)], [gd2])
case("gathernd_index_out_of_range", ["run", "--reference", gnd2], BAD | {1})
w = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")
ct = save_model("convtranspose_short_output_shape",
                [helper.make_node("ConvTranspose", ["x", "w"], ["y"], output_shape=[5], strides=[2, 2])],
                [vi("x", TensorProto.FLOAT, [1, 1, 3, 3])], [vi("y", TensorProto.FLOAT, None)], [w])
case("convtranspose_short_output_shape", ["run", "--reference", ct], BAD)
case("convtranspose_short_output_shape_rk3588", ["run", "-p", "rk3588", ct], BAD | {0})
ga = numpy_helper.from_array(np.array([7, -8], np.int64), "i")
gat = save_model("gather_oob", [helper.make_node("Gather", ["x", "i"], ["y"])],
                 [vi("x", TensorProto.FLOAT, [3])], [vi("y", TensorProto.FLOAT, None)], [ga])
case("gather_index_out_of_range", ["run", "--reference", gat], BAD | {1})

# ---- ws63 converter: rank > 4, BatchNormalization with short parameters ----
r5 = save_model("rank5_relu", relu, [vi("x", TensorProto.FLOAT, [1, 1, 1, 2, 2])], [vi("y", TensorProto.FLOAT, [1, 1, 1, 2, 2])])
case("ws63_rank5", ["run", "-p", "ws63", r5], {0, 1, 4})
r40 = save_model("rank40_relu", relu, [vi("x", TensorProto.FLOAT, [1] * 40)], [vi("y", TensorProto.FLOAT, [1] * 40)])
case("ws63_rank40_skip_check", ["run", "-p", "ws63", r40, "--skip-check"], {0, 1, 4})
sc = numpy_helper.from_array(np.ones((1,), np.float32), "sc")
bn = save_model("bn_short", [helper.make_node("BatchNormalization", ["x", "sc", "sc", "sc", "sc"], ["y"])],
                [vi("x", TensorProto.FLOAT, [1, 8, 2, 2])], [vi("y", TensorProto.FLOAT, [1, 8, 2, 2])], [sc])
case("ws63_batchnorm_short_params", ["run", "-p", "ws63", bn, "--skip-check"], BAD)
case("reference_batchnorm_short_params", ["run", "--reference", bn], BAD | {1}, err_has="BatchNormalization")


# ---- silent wrong answers ----
def out_is(expected, name="o.npy"):
    def chk(rc, out, err):
        got = np.load(path(name))
        if got.shape != expected.shape or not np.allclose(got, expected):
            return f"got {got.shape} {got.ravel()[:8]}, expected {expected.shape} {expected.ravel()[:8]}"
        return None
    return chk


xin = np.arange(8, dtype=np.float32).reshape(2, 4)
xin_p = write("x24.npy", npy_bytes("<f4", "(2, 4)", xin.tobytes()))
for st, s0, e0, tag in ((2**63 - 1, 0, 2**63 - 1, "max"), (-2**63, -1, -2**63, "min")):
    ini = [numpy_helper.from_array(np.array([v], np.int64), n) for v, n in ((s0, "st"), (e0, "en"), (0, "ax"), (st, "sp"))]
    sl = save_model(f"slice_step_{tag}", [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
                    [vi("x", TensorProto.FLOAT, [2, 4])], [vi("y", TensorProto.FLOAT, None)], ini)
    want = xin[s0 if s0 >= 0 else s0 + 2:][:1] if tag == "max" else xin[-1:][:1]
    case(f"slice_extreme_step_{tag}", ["run", "--reference", sl, "--input", xin_p, "--output", path("o.npy")], {0},
         check=out_is(want))
lo = numpy_helper.from_array(np.array(5, np.float32), "lo")
hi = numpy_helper.from_array(np.array(2, np.float32), "hi")
clip = save_model("clip_min_gt_max", [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                  [vi("x", TensorProto.FLOAT, [2, 4])], [vi("y", TensorProto.FLOAT, [2, 4])], [lo, hi])
# onnxruntime's Clip: min(max(x, lo), hi), so lo > hi gives hi everywhere.
case("clip_min_greater_than_max", ["run", "--reference", clip, "--input", xin_p, "--output", path("o.npy")], {0},
     check=out_is(np.minimum(np.maximum(xin, 5), 2)))
# The same model on ws63: the MCU kernel clamps low first (nnacl's order), so the converter must
# give it ONNX's result (hi everywhere), not lo; a mismatch against the reference would be exit 1.
case("clip_min_greater_than_max_ws63", ["run", "-p", "ws63", clip, "--input", xin_p, "--output", path("o63.npy")], {0},
     check=out_is(np.minimum(np.maximum(xin, 5), 2), "o63.npy"))
# A QDQ model (onnxruntime's QDQ convention: Q/DQ pairs around a float Conv) that both NPU run
# kinds accept in timing mode: an --input there would be silently ignored (even a missing file).
qs = [numpy_helper.from_array(np.array(0.1, np.float32), "s"), numpy_helper.from_array(np.array(128, np.uint8), "z"),
      numpy_helper.from_array(np.full((4, 4, 1, 1), 130, np.uint8), "w")]
qdq = save_model("qdq_conv", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
                              helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
                              helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wd"]),
                              helper.make_node("Conv", ["xd", "wd"], ["c"]),
                              helper.make_node("QuantizeLinear", ["c", "s", "z"], ["cq"]),
                              helper.make_node("DequantizeLinear", ["cq", "s", "z"], ["y"])],
                 [vi("x", TensorProto.FLOAT, [1, 4, 4, 4])], [vi("y", TensorProto.FLOAT, [1, 4, 4, 4])], qs)
x3 = write("x3.npy", npy_bytes("<f4", "(3,)", bytes(12)))
for plat in ("rk3588", "tnpuv2"):
    case(f"timing_input_missing_{plat}", ["run", "-p", plat, "--mode", "timing", qdq, "--input", path("missing.npy")], ERR2)
    case(f"timing_input_wrong_shape_{plat}", ["run", "-p", plat, "--mode", "timing", qdq, "--input", x3], ERR2)
    case(f"full_input_wrong_shape_{plat}", ["run", "-p", plat, qdq, "--input", x3, "-q"], ERR2)
small = save_model("small_relu", relu, [vi("x", TensorProto.FLOAT, [2, 4])], [vi("y", TensorProto.FLOAT, [2, 4])])
case("output_equals_input", ["run", "--reference", small, "--input", xin_p, "--output", xin_p], ERR2,
     check=lambda rc, o, e: None if np.array_equal(np.load(xin_p), xin) else "the input was overwritten")
case("output_equals_model", ["run", "--reference", small, "--input", xin_p, "--output", small], ERR2)
cwd = tempfile.mkdtemp(prefix="cwd_", dir=T)
case("reference_writes_nothing_unasked", ["run", "--reference", small, "--input", xin_p], {0}, cwd=cwd,
     check=lambda rc, o, e: None if not os.listdir(cwd) else f"wrote {os.listdir(cwd)} into the cwd")
case("ws63_reference_cannot_run", ["run", "-p", "ws63", gnd], {1, 2, 3, 4})

# ---- .npy and non-regular files (memory blow-ups) ----
case("npy_header_claims_4GiB", ["run", "--reference", small, "--input",
                                write("claims4g.npy", npy_bytes("<f4", "(1073741824,)"))], ERR2)
case("npy_header_claims_8EiB", ["run", "--reference", small, "--input",
                                write("claims8e.npy", npy_bytes("<f4", "(4611686018427387904,)"))], ERR2)
case("npy_13_bytes", ["run", "--reference", small, "--input", write("t13.npy", b"\x93NUMPY\x01\x00\xff\xff{'de")], ERR2)
case("npy_v2_header_4GiB", ["run", "--reference", small, "--input",
                            write("v2.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\xff{")], ERR2)
case("npy_shape_overflow", ["run", "--reference", small, "--input",
                            write("ovf.npy", npy_bytes("<f4", "(4294967296, 4294967296)"))], ERR2)
case("npy_bad_shape_digits", ["run", "--reference", small, "--input",
                              write("digits.npy", npy_bytes("<f4", "(99999999999999999999999,)"))], ERR2)
case("input_dev_zero", ["run", "--reference", small, "--input", "/dev/zero"], ERR2)
case("model_dev_zero", ["run", "--reference", "/dev/zero"], BAD)
case("model_directory", ["run", "--reference", T], BAD)
case("lint_dev_zero", ["lint", "/dev/zero", "-p", "rk3588"], BAD)
case("replay_dev_zero", ["replay", "/dev/zero", "-p", "rk3588"], BAD)
os.symlink("/dev/zero", path("zero.tflite"))
os.symlink("/dev/zero", path("zero.onnx"))
case("tflite_dev_zero", ["run", "--reference", path("zero.tflite")], BAD)
case("onnx_link_to_dev_zero_rk3588", ["run", "-p", "rk3588", path("zero.onnx")], BAD)
case("tnpuv2_decode_dev_zero", ["decode", "/dev/zero", "-p", "tnpuv2"], BAD)
case("tnpuv2_lint_dev_zero", ["lint", "/dev/zero", "-p", "tnpuv2"], BAD)
case("sweep_spec_dev_zero", ["sweep", "/dev/zero"], BAD)
case("replay_load_dev_zero", ["replay", write("one.bin", bytes(8)), "-p", "rk3588", "--load", "/dev/zero@0x1000"], BAD)
case("replay_task_list_dev_zero", ["replay", path("one.bin"), "-p", "rk3588", "--task-list", "/dev/zero"], BAD)
case("calibration_dev_zero", ["quantize", small, "-o", path("q.onnx"), "--calibration", "/dev/zero"], BAD)
case("onnx_truncated", ["run", "--reference", write("trunc.onnx", open(small, "rb").read()[:40])], ERR3)
case("onnx_random_bytes", ["check", "-p", "rk3588", write("rand.onnx", bytes(np.random.default_rng(5).integers(0, 256, 4096, np.uint8)))], ERR3)
case("tflite_truncated", ["run", "--reference", write("trunc.tflite", b"\x1c\x00\x00\x00TFL3" + bytes(20))], ERR3)
case("expect_dev_zero", ["run", "--reference", small, "--input", xin_p, "--expect", "/dev/zero"], ERR2)

# ---- regcmd files ----
case("lint_empty_file", ["lint", write("empty.bin", b""), "-p", "rk3588"], {1}, report=True)  # E-empty finding
case("decode_empty_file", ["decode", path("empty.bin"), "-p", "rk3588"], {0, 1, 2})
case("replay_empty_file", ["replay", path("empty.bin"), "-p", "rk3588"], {1}, report=True)  # zero-task kick fault
case("lint_odd_size", ["lint", write("odd.bin", b"\x01\x02\x03"), "-p", "rk3588"], ERR2)
rng = np.random.default_rng(23)
big_regcmd = write("regcmd16m.bin", rng.integers(0, 2**63, size=(16 << 20) // 8, dtype=np.uint64).tobytes())
case("lint_16MB_random", ["lint", big_regcmd, "-p", "rk3588"], {0, 1}, report=True,
     check=lambda rc, o, e: None if len(o) < (8 << 20) else f"printed {len(o)} bytes")
case("replay_tasks_1e9", ["replay", big_regcmd, "-p", "rk3588", "--tasks", "1000000000"], ERR2)
case("replay_amount_huge", ["replay", big_regcmd, "-p", "rk3588", "--amount", "70000"], ERR2)
case("replay_base_huge", ["replay", big_regcmd, "-p", "rk3588", "--base", "0x100000000"], ERR2)
case("replay_tasks_negative", ["replay", big_regcmd, "-p", "rk3588", "--tasks", "-1"], ERR2)

# lint and replay from one rule set: a Mesa rocket conv (tools/streams, Mesa's units: DATA_ENTRIES in
# 64-byte entries per input row, docs/rknpu-register-semantics.md section 8) with DATA_ENTRIES raised
# to 300: 300 x 64 B x 8 rows overflow its one 32 KiB data bank. lint reports E-entries; replay
# faults with the same message (it ran the task before).
STREAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "streams")
sys.path.insert(0, STREAMS)
import rkregs  # noqa: E402

subprocess.run(["/usr/bin/python3", os.path.join(STREAMS, "make_streams.py"), T, "--only", "mesa_conv_int8"], check=True,
               capture_output=True)
mesa = os.path.join(T, "mesa_conv_int8")
words = np.fromfile(os.path.join(mesa, "regcmd.bin"), "<u8")
con1 = [i for i, e in enumerate(words) if int(e) & 0xFFFF == rkregs.R["CNA_CBUF_CON1"]]
assert len(con1) == 1, con1
words[con1[0]] = rkregs.reg("CNA_CBUF_CON1", rkregs.fields("CNA_CBUF_CON1", DATA_ENTRIES=300))
over = path("mesa_entries_overflow.bin")
words.tofile(over)
ENTRIES_MSG = "DatainEntries overflow: 300 entries of 64 bytes x 8 rows need more than the 1 data bank(s) hold (32768 bytes)"
case("lint_entries_overflow", ["lint", over, "-p", "rk3588", "--base", "0x6000"], {1}, report=True,
     check=lambda rc, o, e: None if "E-entries" in o and ENTRIES_MSG in o else "no E-entries finding: " + o[-300:])
case("replay_entries_overflow_faults", ["replay", over, "-p", "rk3588", "--base", "0x6000"], {1}, report=True,
     check=lambda rc, o, e: None if "fault" in o and ENTRIES_MSG in o else "replay did not fault as lint: " + o[-300:])
case("replay_mesa_stream_runs", ["replay", os.path.join(mesa, "regcmd.bin"), "-p", "rk3588", "--base", "0x6000"], {0})

# ---- outputs never overwrite inputs or each other; empty option values ----
def unchanged(*files):
    before = {f: open(f, "rb").read() for f in files}
    return lambda rc, o, e: next((f"{f} was overwritten" for f in files if open(f, "rb").read() != before[f]), None)


OUT_IN = "is also an input"
for opt in ("--trace", "--report", "--vcd", "--csv", "--html"):
    case(f"run_rk3588_{opt[2:]}_equals_model", ["run", "-p", "rk3588", small, "--input", xin_p, opt, small, "-q"], ERR2,
         err_has=OUT_IN, check=unchanged(small))
    case(f"run_rk3588_{opt[2:]}_equals_input", ["run", "-p", "rk3588", small, "--input", f"x={xin_p}", opt, xin_p, "-q"],
         ERR2, err_has=OUT_IN, check=unchanged(xin_p))
case("run_two_outputs_one_file", ["run", "-p", "rk3588", small, "--report", path("r.json"), "--csv", path("./r.json"), "-q"],
     ERR2, err_has="is also the output of --report")
case("run_output_equals_expect", ["run", "--reference", small, "--input", xin_p, "--expect", path("e.npy"),
                                  "--output", path("e.npy")], ERR2)
case("quantize_csv_equals_calibration", ["quantize", small, "-o", path("q.onnx"), "--calibration", xin_p, "--csv", xin_p],
     ERR2, err_has=OUT_IN, check=unchanged(xin_p))
case("quantize_output_equals_model", ["quantize", small, "-o", small], ERR2, check=unchanged(small))
for opt in ("--csv", "--json", "--html"):
    case(f"compare_{opt[2:]}_equals_model", ["compare", small, "-p", "rk3588,rk3566", opt, small], ERR2, err_has=OUT_IN,
         check=unchanged(small))
case("replay_dump_equals_regcmd", ["replay", over, "-p", "rk3588", "--dump", f"0x0:16={over}"], ERR2, err_has=OUT_IN,
     check=unchanged(over))
case("replay_trace_equals_load", ["replay", over, "-p", "rk3588", "--load", f"{xin_p}@0x100000", "--trace", xin_p], ERR2,
     err_has=OUT_IN, check=unchanged(xin_p))
case("replay_two_dumps_one_file", ["replay", over, "-p", "rk3588", "--dump", f"0x0:16={path('d.bin')}",
                                   "--dump", f"0x10:16={path('d.bin')}"], ERR2, err_has="is also the output of")
case("iss_trace_equals_elf", ["iss", elf_p := write("tiny0.elf", b"\x7fELF" + bytes(60)), "--trace", elf_p], {2, 120})
for args in (["run", "-p", "rk3588", small, "--report", ""], ["run", "--reference", small, "--input", ""],
             ["run", "-p", "", small], ["run", "-p", "rk3588", small, "--param", ""],
             ["run", "-p", "rk3588", small, "--core-mask", ""], ["check", "-p", "rk3588", small, "--input-shape", ""],
             ["quantize", small, "-o", ""], ["replay", over, "-p", "rk3588", "--base", ""], ["lint", "", "-p", "rk3588"],
             ["compare", small, "-p", "rk3588,rk3566", "--csv", ""]):
    opt = next((a for a, b in zip(args, args[1:]) if b == ""), "positional")
    case(f"empty_value_{args[0]}_{opt.lstrip('-')}", args, ERR2, err_has="empty value")
case("run_seed_negative", ["run", "--reference", small, "--seed", "-1"], ERR2, err_has="--seed")
case("lint_base_huge", ["lint", over, "-p", "rk3588", "--base", "0x100000000"], ERR2, err_has="out of range, lint")

# ---- CLI text ----
case("cli_unknown_option", ["run", "--no-such-option"], ERR2)
case("cli_missing_value", ["run", "--reference", small, "--input"], ERR2)
case("cli_unknown_subcommand", ["frobnicate"], ERR2)
case("cli_bad_number", ["run", "--reference", small, "--seed", "12abc"], ERR2)
case("cli_profile_dir", ["run", "--profile", T], ERR2)
case("cli_profile_dir_model", ["run", "-p", "rk3588", small, "--profile", T], ERR2)
case("cli_profile_dev_zero", ["run", "-p", "rk3588", small, "--profile", "/dev/zero"], ERR2)
case("cli_param_bad", ["run", "-p", "rk3588", small, "--param", "npu.no_such=1"], ERR2)
case("cli_input_shape_bad", ["run", "--reference", small, "--input-shape", "x=2x-4"], ERR2)
case("cli_input_shape_huge", ["run", "--reference", small, "--input-shape", "x=99999999999999999999"], ERR2)
case("cli_max_memory_bad", ["run", "--reference", small, "--max-memory", "-1"], ERR2)
case("cli_max_memory_small", ["run", "--reference", small, "--input", xin_p, "--max-memory", "16"], {2, 3, 4},
     err_has="--max-memory")
case("cli_max_memory_garbage", ["run", "--reference", small, "--max-memory", "12Q"], ERR2, err_has="--max-memory")
case("cli_max_memory_check", ["check", "-p", "rk3588", huge_in, "--max-memory", "16"], BAD, err_has="--max-memory")

# ---- structurally invalid nodes (ONNX operator definitions): refused at import (exit 3) in check,
# timing and full runs alike; before, check and timing runs accepted them and exited 0 ----
X4 = vi("x", TensorProto.FLOAT, [1, 8, 16, 16])
Y = vi("y", TensorProto.FLOAT, None)
f32 = lambda name, shape: numpy_helper.from_array(np.ones(shape, np.float32), name)  # noqa: E731
i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
invalid = {
    # Conv B: "1-D tensor of size M"
    "conv_bias_not_m": ([helper.make_node("Conv", ["x", "W", "B"], ["y"], pads=[1, 1, 1, 1])], [X4],
                        [f32("W", (8, 8, 3, 3)), f32("B", (3,))], "bias 'B' must be 1-D [8]"),
    # BatchNormalization scale/B/mean/var: "1-D tensor of size C"
    "batchnorm_params_not_c": ([helper.make_node("BatchNormalization", ["x", "a", "a", "a", "a"], ["y"])], [X4],
                               [f32("a", (3,))], "must be 1-D [8]"),
    # QuantizeLinear per-axis: a 1-D scale of x.shape[axis] elements, axis within the rank
    "quantize_axis_out_of_range": ([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=5),
                                    helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=5)], [X4],
                                   [f32("s", (8,)), numpy_helper.from_array(np.zeros(8, np.uint8), "z")], "axis 5"),
    "quantize_per_axis_length": ([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
                                  helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)], [X4],
                                 [f32("s", (5,)), numpy_helper.from_array(np.zeros(5, np.uint8), "z")], "5 elements"),
    # Gather: "it is an error if any of the index values are out of bounds"
    "gather_constant_index_out_of_bounds": ([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], [X4],
                                            [i64("i", [100])], "out of bounds [-8, 7]"),
    # LSTM W: [num_directions, 4*hidden_size, input_size]
    "lstm_w_shape": ([helper.make_node("LSTM", ["s", "Wl", "Rl"], ["y"], hidden_size=4)],
                     [vi("s", TensorProto.FLOAT, [5, 1, 3])], [f32("Wl", (1, 16, 7)), f32("Rl", (1, 16, 4))],
                     "must be 1x16x3"),
    # Add: type constraint T shared by A and B
    "add_mixed_types": ([helper.make_node("Add", ["x", "c"], ["y"])], [X4],
                        [numpy_helper.from_array(np.ones((1, 8, 16, 16), np.int32), "c")], "one type"),
    "softmax_axis_out_of_range": ([helper.make_node("Softmax", ["x"], ["y"], axis=10)], [X4], [], "axis 10"),
    "resize_unknown_mode": ([helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="cubic_spline")], [X4],
                            [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")], "cubic_spline"),
}
for name, (nodes, ins, inits, text) in invalid.items():
    pm = save_model("invalid_" + name, nodes, ins, [Y], inits)
    for tag, args in (("check", ["check", "-p", "rk3588", pm]), ("timing", ["run", "-p", "rk3588", "--mode", "timing", pm]),
                      ("full", ["run", "-p", "rk3588", pm])):
        case(f"invalid_{name}_{tag}", args, {3}, err_has=text)

# ---- ISS presets and options ----
preset = {"schema_version": 1, "name": "bad", "isa": {"extensions": "imc", "reset_pc": "0x80000000"},
          "cycles": {"clock_hz": 0}, "memory": [{"name": "ram", "base": "0x80000000", "size_bytes": "0x1000"}]}
import json  # noqa: E402

pz = write("clock0.json", json.dumps(preset).encode())
elf = write("tiny.elf", b"\x7fELF" + bytes(60))
case("iss_preset_clock_hz_0", ["iss", "--core-preset", pz, elf], {120, 2})
case("iss_max_insns_negative", ["iss", elf, "--max-insns", "-1"], {2, 120})
case("iss_elf_dev_zero", ["iss", "/dev/zero"], {2, 120})

print(f"{ran - len(failures)}/{ran} cases pass" + (": failing " + " ".join(failures) if failures else ""))
sys.exit(1 if failures else 0)
