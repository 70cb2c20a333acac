#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tnpuv2 end to end on the command line (issue 19): platforms, run reports, the command stream
through decode and lint, a refused model with the same verdict as `npusim check`, the YOLOv5 decode
behind quantized heads on the GENBOX unit, option errors, determinism.

Models: the build zoo's MobileNetV2 QDQ (tools/zoo/make_zoo.py, onnxruntime's QDQ convention) and
small QDQ nets written here the way onnxruntime's quantizer writes them (Q -> DQ on activations,
symmetric per-channel int8 weights, int32 bias at x_scale * w_scale); the decode is the ultralytics
YOLOv5 v7.0 export's (tools/zoo/make_zoo_detect.py). Expectations come from the ONNX files (weight
counts, node names) and the seed-003 rule text, not from npusim.

usage: /usr/bin/python3 tnpuv2_cli_test.py NPUSIM ZOO_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "zoo"))

fails = 0


def check(what, ok, detail=""):
    global fails
    print(("ok   - " if ok else "FAIL - ") + what + ("" if ok else "  " + str(detail)[:600]))
    fails += 0 if ok else 1


def run(*args):
    p = subprocess.run([NPUSIM] + [str(a) for a in args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


class Qdq:
    """A QDQ graph as onnxruntime's quantizer writes it (uint8 activations, int8 weights)."""

    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.k = rng, [], [], 0

    def qdq(self, x, scale, zp=128):
        self.k += 1
        s, z = "s%d" % self.k, "z%d" % self.k
        self.inits += [numpy_helper.from_array(np.array(scale, np.float32), s),
                       numpy_helper.from_array(np.array(zp, np.uint8), z)]
        self.nodes += [helper.make_node("QuantizeLinear", [x, s, z], [x + "_q"]),
                       helper.make_node("DequantizeLinear", [x + "_q", s, z], [x + "_dq"])]
        return x + "_dq", scale

    def conv(self, x, xs, cin, cout, k, name, stride=1, out_scale=0.05):
        w = self.rng.standard_normal((cout, cin, k, k)).astype(np.float32) * 0.2
        ws = (np.abs(w).reshape(cout, -1).max(1) / 127).astype(np.float32)
        wq = np.clip(np.round(w / ws[:, None, None, None]), -127, 127).astype(np.int8)
        b = np.round(self.rng.standard_normal(cout) * 0.1 / (xs * ws)).astype(np.int32)
        self.inits += [numpy_helper.from_array(wq, name + "_w"), numpy_helper.from_array(ws, name + "_ws"),
                       numpy_helper.from_array(np.zeros(cout, np.int8), name + "_wz"),
                       numpy_helper.from_array(b, name + "_b"),
                       numpy_helper.from_array((np.float32(xs) * ws).astype(np.float32), name + "_bs"),
                       numpy_helper.from_array(np.zeros(cout, np.int32), name + "_bz")]
        self.nodes += [helper.make_node("DequantizeLinear", [name + "_w", name + "_ws", name + "_wz"], [name + "_wd"], axis=0),
                       helper.make_node("DequantizeLinear", [name + "_b", name + "_bs", name + "_bz"], [name + "_bd"], axis=0),
                       helper.make_node("Conv", [x, name + "_wd", name + "_bd"], [name], kernel_shape=[k, k],
                                        strides=[stride, stride], pads=[k // 2] * 4)]
        return self.qdq(name, out_scale)

    def model(self, inputs, outputs, name):
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        return m


def conv_net(path, stride):
    q = Qdq(np.random.default_rng(7))
    x, xs = q.qdq("x", 1.0 / 127)
    y, _ = q.conv(x, xs, 8, 16, 3, "conv", stride=stride)
    m = q.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])],
                [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], "conv_s%d" % stride)
    onnx.save(m, path)


def detect_net(path):
    """Three quantized 255-channel heads (strides 8/16/32 of a 32x32 image) and the v7.0 decode."""
    import make_zoo_detect as d
    q = Qdq(np.random.default_rng(11))
    x, xs = q.qdq("x", 1.0 / 127)
    heads = []
    for i, s in enumerate((1, 2, 4)):
        h, _ = q.conv(x, xs, 16, 255, 1, "head%d" % i, stride=s, out_scale=0.08)
        heads.append(h)
    shapes = [[1, 255, 4, 4], [1, 255, 2, 2], [1, 255, 1, 1]]
    m = q.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 4, 4])],
                [helper.make_tensor_value_info(h, TensorProto.FLOAT, s) for h, s in zip(heads, shapes)], "detect")
    onnx.save(d.add_decode(m, heads, shapes), path)


def weight_count(path):
    """int8 weights of the Conv/Gemm/MatMul DequantizeLinear inputs (rank >= 2 initializers)."""
    m = onnx.load(path)
    inits = {i.name: i for i in m.graph.initializer}
    n = 0
    for node in m.graph.node:
        if node.op_type == "DequantizeLinear" and node.input[0] in inits:
            t = inits[node.input[0]]
            if t.data_type == TensorProto.INT8 and len(t.dims) >= 2:
                n += int(np.prod(t.dims))
    return n


def main():
    global NPUSIM
    NPUSIM, zoo = sys.argv[1], sys.argv[2]
    T = tempfile.mkdtemp()
    rc, out, _ = run("platforms")
    check("platforms lists tnpuv2", rc == 0 and any(l.startswith("tnpuv2 ") for l in out.splitlines()), out)

    mn = os.path.join(zoo, "mobilenetv2_qdq.onnx")
    if not os.path.exists(mn):
        print("SKIP - %s missing (build zoo not generated)" % mn)
        return 77
    rep, stream, y, dump = (os.path.join(T, f) for f in ("mn.json", "mn.bin", "y.npy", "layers"))
    rc, out, err = run("run", "--platform", "tnpuv2", mn, "--bits", "8", "--report", rep, "--dump-regcmd", stream,
                       "--output", y, "--dump-layers", dump)
    check("MobileNetV2 QDQ runs at 8 bits", rc == 0, err)
    r = json.load(open(rep))
    iso = r.get("isolated_check", {})
    check("every NPU layer within 1 LSB in isolation", iso.get("layers_worse", 1) == 0 and iso.get("layers_exact", 0) > 0, iso)
    npu = [l for l in r["layers"] if l["unit"] == "NPU"]
    check("every NPU layer has its cycles", npu and all(l["cycles"]["total"] > 0 for l in npu), [l["name"] for l in npu if not l["cycles"]["total"]])
    t = r["totals"]
    check("inference = latency = NPU time > 0 (one NPU stream, no host layers)",
          t["inference_ps"] == t["latency_ps"] == t["npu_ps"] > 0, t)
    check("weight bytes = int8 weight count of the ONNX file", t.get("weight_bytes") == weight_count(mn),
          (t.get("weight_bytes"), weight_count(mn)))
    check("--dump-layers holds the graph output as --output wrote it",
          os.path.exists(os.path.join(dump, "output.npy")) and
          np.array_equal(np.load(os.path.join(dump, "output.npy")), np.load(y)), os.listdir(dump)[:5])

    rc, out, err = run("decode", "--platform", "tnpuv2", stream)
    ncmd = sum(1 for l in out.splitlines() if l.startswith("["))
    check("decode lists the stream's commands", rc == 0 and ncmd > 3 * len(npu) and "END" in out, err or out[:300])
    rc, out, err = run("lint", "--platform", "tnpuv2", stream)
    check("lint: the compiled stream is clean", rc == 0 and "0 error(s), 0 warning(s)" in out, out[-600:])
    words = np.fromfile(stream, dtype="<u4")
    listing = subprocess.run([NPUSIM, "decode", "--platform", "tnpuv2", stream], capture_output=True, text=True).stdout
    # The first integer TENSOR command: clear its BITS field (payload word 0, bits 20:16).
    line = next(l for l in listing.splitlines() if "TENSOR" in l and ("FORMAT=U8" in l or "FORMAT=S8" in l))
    pc = int(line.split("]")[0].strip("[ "))
    bad = words.copy()
    bad[pc + 1] &= np.uint32(~(0x1f << 16) & 0xffffffff)
    bad.tofile(os.path.join(T, "bad.bin"))
    rc, out, err = run("lint", "--platform", "tnpuv2", os.path.join(T, "bad.bin"))
    check("lint: an integer tensor with BITS 0 is an error at its word", rc != 0 and ("word %d" % pc) in out and "BITS 0" in out,
          out[-600:])

    v2 = words.copy()
    v2[1] = np.uint32(2 << 16)  # header VERSION: format 2.0
    v2.tofile(os.path.join(T, "v2.bin"))
    rc, out, err = run("lint", "--platform", "tnpuv2", os.path.join(T, "v2.bin"))
    check("lint: a major version the core does not execute is BAD_VERSION", rc != 0 and "E-BAD_VERSION word 0" in out, out)

    # A 64 KiB conv SRAM: the driver bands the convolutions into more tasks,
    # still within 1 LSB, and lint with the same SRAM finds no command that overflows it.
    small = ("--param", "npu.conv_sram_bytes=65536")
    rc, out, err = run("run", "--platform", "tnpuv2", mn, *small, "--report", os.path.join(T, "s.json"), "--dump-regcmd",
                       os.path.join(T, "s.bin"), "-q")
    s16 = json.load(open(os.path.join(T, "s.json"))) if rc == 0 else {}
    check("64 KiB SRAM: more tasks (output bands), every layer still within 1 LSB",
          rc == 0 and s16["totals"]["tasks"] > t["tasks"] and s16["isolated_check"]["layers_worse"] == 0,
          (rc, err, s16.get("totals", {}).get("tasks"), t["tasks"]))
    rc, out, _ = run("lint", "--platform", "tnpuv2", os.path.join(T, "s.bin"), *small)
    check("lint of the banded stream against the 64 KiB SRAM is clean", rc == 0 and "0 error(s)" in out, out[-400:])
    rc, out, _ = run("lint", "--platform", "tnpuv2", stream, *small)
    check("the default-SRAM stream overflows a 64 KiB SRAM: lint says so", rc != 0 and "E-SRAM_OVERFLOW" in out, out[-400:])

    rc, _, _ = run("run", "--platform", "tnpuv2", mn, "--mode", "timing", "--report", os.path.join(T, "a.json"), "-q")
    rc2, _, _ = run("run", "--platform", "tnpuv2", mn, "--mode", "timing", "--report", os.path.join(T, "b.json"), "-q")
    a, b = json.load(open(os.path.join(T, "a.json"))), json.load(open(os.path.join(T, "b.json")))
    check("deterministic: same cycles per layer on a second run",
          rc == rc2 == 0 and [l["cycles"] for l in a["layers"]] == [l["cycles"] for l in b["layers"]] and a["totals"] == b["totals"])

    # Seed 003 Conv2D: "stride_h、stride_w 为 1、2 或 4": stride 3 is refused with the rule, as `check` says.
    s3 = os.path.join(T, "conv_s3.onnx")
    conv_net(s3, 3)
    rc, out, err = run("run", "--platform", "tnpuv2", s3)
    rule = "stride_h = 3 not in {1, 2, 4}"
    check("run refuses a seed-003 rule break (exit 4) citing the rule", rc == 4 and rule in err and "seed 003" in err, err)
    rc, out, err = run("check", "--platform", "tnpuv2", s3)
    check("check gives the same verdict (unsupported, exit 11) with the same rule", rc == 11 and rule in out, out + err)
    s2 = os.path.join(T, "conv_s2.onnx")
    conv_net(s2, 2)
    rc, out, err = run("run", "--platform", "tnpuv2", s2, "-q")
    rc2, out2, _ = run("check", "--platform", "tnpuv2", s2)
    check("stride 2 passes both", rc == 0 and rc2 == 0, err + out2)

    det = os.path.join(T, "detect.onnx")
    detect_net(det)
    for bits in ("8", "16"):
        rc, out, err = run("run", "--platform", "tnpuv2", det, "--bits", bits, "--report", os.path.join(T, "d.json"))
        ok = rc == 0
        if ok:
            d = json.load(open(os.path.join(T, "d.json")))
            gb = [l for l in d["layers"] if l["op"] == "GenerateBox"]
            ok = len(gb) == 1 and d["isolated_check"]["layers_worse"] == 0 and gb[0]["cycles"]["total"] > 0
        check("YOLOv5 decode behind quantized heads runs on the GENBOX unit (%s-bit heads)" % bits
              if bits == "8" else "the same model quantized again at --bits 16 is refused (8-bit QDQ)",
              ok if bits == "8" else (rc == 4 and "16-bit" in err), err[-400:])

    for args, text in (((mn, "--bits", "10"), "--bits 10"), ((mn, "--rtl", "core"), "--rtl"),
                       ((mn, "--weight-bits", "12"), "--weight-bits 12")):
        rc, out, err = run("run", "--platform", "tnpuv2", *args)
        check("run --platform tnpuv2 %s: exit 2, one-line error" % " ".join(args[1:]),
              rc == 2 and err.startswith("npusim: error: ") and text in err and err.count("\n") == 1, (rc, err))
    rc, out, err = run("run", "--platform", "rk3588", mn, "--bits", "8")
    check("--bits on an RKNPU platform is an error", rc == 2 and "apply to --platform tnpuv2" in err, err)
    print("tnpuv2_cli_test: %d failed" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
