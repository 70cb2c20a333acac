#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Recurrent layers on the fp16 path (issue 15, assumption A-RNN in drivers/compiler/rknpu/COMPILER.md):
float ONNX LSTM / GRU models (sequence length 1 and > 1, forward / reverse / bidirectional, with and
without initial states, GRU linear_before_reset 0 and 1, an input size that is not a whole number
of fp16 atoms) run with `npusim run -p rk3588 | rk3566` (full mode, fp16). Asserts: exit 0 (npusim's own
isolated layer check within drv::rknpu::kFp16LayerRtol passed), the LSTM / GRU node in an NPU
layer, and every output (Y, Y_h, Y_c) against onnxruntime (tests/oracle/run_ort.js) and against an
independent numpy float64 evaluation of the ONNX operator definitions, on rk3588 and rk3566, within
max|npusim - expected| <= 2^-7 x max|expected| (fp16 storage of every gate, state and output
between the steps; the LUT's interpolation error is far below that). Prints the figures.

usage: rnn_fp16_test.py NPUSIM"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RTOL = 2.0 ** -7
HERE = os.path.dirname(os.path.abspath(__file__))
RUN_ORT = os.path.join(HERE, "..", "oracle", "run_ort.js")


def sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def ref_lstm(x, W, R, B, h0, c0, direction):
    """ONNX LSTM (gates i o f c, default activations, no peepholes), float64, batch 1."""
    S, D, H = x.shape[0], W.shape[0], R.shape[2]
    Y = np.zeros((S, D, 1, H))
    Yh, Yc = np.zeros((D, 1, H)), np.zeros((D, 1, H))
    for d in range(D):
        rev = direction == "reverse" or (direction == "bidirectional" and d == 1)
        h = h0[d, 0].copy() if h0 is not None else np.zeros(H)
        c = c0[d, 0].copy() if c0 is not None else np.zeros(H)
        for k in range(S):
            t = S - 1 - k if rev else k
            a = W[d] @ x[t, 0] + R[d] @ h + B[d, :4 * H] + B[d, 4 * H:]
            i, o, f, g = sig(a[:H]), sig(a[H:2 * H]), sig(a[2 * H:3 * H]), np.tanh(a[3 * H:])
            c = f * c + i * g
            h = o * np.tanh(c)
            Y[t, d, 0] = h
        Yh[d, 0], Yc[d, 0] = h, c
    return Y, Yh, Yc


def ref_gru(x, W, R, B, h0, direction, lbr, clip=None):
    """ONNX GRU (gates z r h, default activations, clip bounding every activation's input), float64, batch 1."""
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    S, D, H = x.shape[0], W.shape[0], R.shape[2]
    Y = np.zeros((S, D, 1, H))
    Yh = np.zeros((D, 1, H))
    for d in range(D):
        rev = direction == "reverse" or (direction == "bidirectional" and d == 1)
        h = h0[d, 0].copy() if h0 is not None else np.zeros(H)
        Wb, Rb = B[d, :3 * H], B[d, 3 * H:]
        for k in range(S):
            t = S - 1 - k if rev else k
            xw = W[d] @ x[t, 0] + Wb
            z = sig(cl(xw[:H] + R[d, :H] @ h + Rb[:H]))
            r = sig(cl(xw[H:2 * H] + R[d, H:2 * H] @ h + Rb[H:2 * H]))
            if lbr:
                n = np.tanh(cl(xw[2 * H:] + r * (R[d, 2 * H:] @ h + Rb[2 * H:])))
            else:
                n = np.tanh(cl(xw[2 * H:] + R[d, 2 * H:] @ (r * h) + Rb[2 * H:]))
            h = (1 - z) * n + z * h
            Y[t, d, 0] = h
        Yh[d, 0] = h
    return Y, Yh


def case(name, op, S, I, H, direction="forward", init=False, lbr=0, outputs=(0, 1, 2), bias=True, extra=None):
    rng = np.random.RandomState(sum(map(ord, name)))
    D = 2 if direction == "bidirectional" else 1
    G = 4 if op == "LSTM" else 3
    s = 1.0 / np.sqrt(H)
    W = rng.uniform(-s, s, (D, G * H, I)).astype(np.float32)
    R = rng.uniform(-s, s, (D, G * H, H)).astype(np.float32)
    B = rng.uniform(-s, s, (D, 2 * G * H)).astype(np.float32) if bias else np.zeros((D, 2 * G * H), np.float32)
    feeds = {"x": rng.uniform(-1, 1, (S, 1, I)).astype(np.float32)}
    ins = ["x", "W", "R", "B" if bias else ""]
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R")]
    if bias:
        inits.append(numpy_helper.from_array(B, "B"))
    if init:
        feeds["h0"] = rng.uniform(-1, 1, (D, 1, H)).astype(np.float32)
        ins += ["", "h0"]
        if op == "LSTM":
            feeds["c0"] = rng.uniform(-1, 1, (D, 1, H)).astype(np.float32)
            ins.append("c0")
    names = ["Y", "Y_h", "Y_c"][:3 if op == "LSTM" else 2]
    outs = [nm if k in outputs else "" for k, nm in enumerate(names)]
    while outs and not outs[-1]:
        outs.pop()
    attrs = dict(hidden_size=H, direction=direction)
    if op == "GRU":
        attrs["linear_before_reset"] = lbr
    attrs.update(extra or {})
    node = helper.make_node(op, ins, outs, name="rnn", **attrs)
    shapes = {"Y": [S, D, 1, H], "Y_h": [D, 1, H], "Y_c": [D, 1, H]}
    g = helper.make_graph([node], name, [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape)) for k, v in feeds.items()],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, shapes[o]) for o in outs if o], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    x64 = {k: v.astype(np.float64) for k, v in feeds.items()}
    if op == "LSTM":
        ref = ref_lstm(x64["x"], W.astype(np.float64), R.astype(np.float64), B.astype(np.float64), x64.get("h0"),
                       x64.get("c0"), direction)
    else:
        ref = ref_gru(x64["x"], W.astype(np.float64), R.astype(np.float64), B.astype(np.float64), x64.get("h0"),
                      direction, lbr, (extra or {}).get("clip"))
    want = {o: ref[k] for k, o in enumerate(names) if o in outs and o}
    return name, model, feeds, want


CASES = [
    ("lstm_s1", "LSTM", 1, 16, 16),
    ("lstm_s6_init", "LSTM", 6, 12, 16, "forward", True),
    ("lstm_bidir", "LSTM", 5, 16, 8, "bidirectional", False),
    ("lstm_bidir_init", "LSTM", 4, 20, 16, "bidirectional", True),
    ("lstm_reverse_yh", "LSTM", 7, 8, 24, "reverse", False, 0, (1,)),
    ("lstm_nobias_yc", "LSTM", 3, 16, 16, "forward", True, 0, (2,), False),
    ("gru_s1_lbr0", "GRU", 1, 16, 16, "forward", False, 0),
    ("gru_s1_lbr1", "GRU", 1, 16, 16, "forward", False, 1),
    ("gru_s8_lbr0_init", "GRU", 8, 10, 16, "forward", True, 0),
    ("gru_s8_lbr1_init", "GRU", 8, 10, 16, "forward", True, 1),
    ("gru_bidir_lbr1", "GRU", 5, 16, 32, "bidirectional", False, 1),
    ("gru_reverse_lbr0_yh", "GRU", 6, 24, 8, "reverse", True, 0, (1,)),
]
# Forms the unrolling does not take: the node runs on the CPU ("no NPU lowering yet", a note saying
# why), in float, and check says the same.
CPU_CASES = [
    ("lstm_hidden10", "LSTM", 3, 16, 10),  # h_t would start inside an fp16 atom (8 on rk3588, 4 on rk3566)
    ("gru_clip", "GRU", 3, 16, 16, "forward", False, 0, (0, 1), True, {"clip": 0.5}),
]


def kws_gru():
    """The zoo's keyword spotter with a GRU (tools/zoo/make_zoo_seq.py kws_gru: conv front end,
    Reshape / Transpose to [25, 1, 64], GRU 64 with linear_before_reset 1, Gemm 12, Softmax), float."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "zoo"))
    import make_zoo_seq  # noqa: E402
    model = make_zoo_seq.SeqEmitter(make_zoo_seq.kws_gru(), False).emit()
    return model, {"x": np.random.RandomState(7).uniform(-1, 1, (1, 1, 40, 49)).astype(np.float32)}


def lstm_reshape_gemm():
    """LSTM (seq 4, hidden 16) -> Reshape(Y, [1, 64]) -> Gemm 10: the Reshape reads the flat Y image."""
    name, model, feeds, _ = case("lstm_reshape_gemm", "LSTM", 4, 16, 16, outputs=(0,))
    g = model.graph
    rng = np.random.RandomState(3)
    g.initializer.extend([numpy_helper.from_array(np.array([1, 64], np.int64), "shp"),
                          numpy_helper.from_array(rng.uniform(-0.3, 0.3, (10, 64)).astype(np.float32), "fc_w")])
    g.node.extend([helper.make_node("Reshape", ["Y", "shp"], ["flat_y"], name="flat"),
                   helper.make_node("Gemm", ["flat_y", "fc_w"], ["logits"], name="fc", transB=1)])
    del g.output[:]
    g.output.extend([helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])])
    onnx.checker.check_model(model)
    return model, feeds


def save_npy(path, a):
    np.save(path, a)
    return path


def main():
    npusim = sys.argv[1]
    node = shutil.which("node")
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        built = [case(*c) for c in CASES + CPU_CASES]
        cpu_names = {c[0] for c in CPU_CASES}
        # onnxruntime, every case in one run_ort.js call.
        ort_root = os.path.join(tmp, "ort")
        for name, model, feeds, want in built:
            d = os.path.join(ort_root, name)
            os.makedirs(d)
            onnx.save(model, os.path.join(d, "model.onnx"))
            for k, v in feeds.items():
                save_npy(os.path.join(d, k + ".npy"), v)
            json.dump({"feeds": [{"name": k, "file": k + ".npy"} for k in feeds], "output_names": list(want),
                       "expected": [o + ".expected.npy" for o in want]}, open(os.path.join(d, "manifest.json"), "w"))
        r = subprocess.run([node or "node", RUN_ORT, ort_root], capture_output=True, text=True)
        if r.returncode != 0:
            fails.append("run_ort.js: exit %d: %s" % (r.returncode, (r.stderr + r.stdout).strip()[-400:]))
        for (case_name, model, feeds, want), plat in [(b, p) for b in built for p in ("rk3588", "rk3566")]:
            d = os.path.join(ort_root, case_name)
            name = "%s on %s" % (case_name, plat)
            stem = os.path.join(tmp, case_name + "_" + plat)
            rep, outdir = stem + ".json", stem + "_out"
            cmd = [npusim, "run", "-p", plat, os.path.join(d, "model.onnx"), "--report", rep, "-q", "--output-dir", outdir]
            for k in feeds:
                cmd += ["--input", os.path.join(d, k + ".npy")]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                fails.append("%s: exit %d: %s" % (name, r.returncode, (r.stderr + r.stdout).strip()[-600:]))
                continue
            j = json.load(open(rep))
            rnn = [l for l in j["layers"] if l["name"] == "rnn"]
            unit = "CPU" if case_name in cpu_names else "NPU"
            if len(rnn) != 1 or rnn[0]["unit"] != unit:
                fails.append("%s: the recurrent node is not one %s layer: %s" % (name, unit, rnn))
                continue
            if unit == "CPU" and rnn[0].get("cpu_reason", rnn[0].get("reason", "")) != "no NPU lowering yet":
                fails.append("%s: CPU reason %s" % (name, rnn[0]))
            c = subprocess.run([npusim, "check", "--platform", plat, os.path.join(d, "model.onnx"), "--json"],
                               capture_output=True, text=True)
            try:
                verdict = [v["npusim"]["unit"] for v in json.loads(c.stdout)["nodes"] if v["name"] == "rnn"]
            except (ValueError, KeyError) as e:
                verdict = ["check failed: %s %s" % (e, c.stderr.strip()[-200:])]
            if verdict != [unit]:
                fails.append("%s: npusim check says %s, run %s" % (name, verdict, unit))
            worst_ort = worst_ref = 0.0
            for o, ref in want.items():
                got = np.load(os.path.join(outdir, o + ".npy")).astype(np.float64)
                if got.shape != ref.shape:
                    fails.append("%s: %s shape %s, expected %s" % (name, o, got.shape, ref.shape))
                    continue
                ort_path = os.path.join(d, o + ".expected.npy")
                ort = np.load(ort_path).astype(np.float64) if os.path.exists(ort_path) else None
                if ort is None:
                    fails.append("%s: no onnxruntime result for %s" % (name, o))
                else:
                    # The numpy evaluation and onnxruntime agree (float32 rounding only).
                    if not np.abs(ort - ref).max() <= 1e-5 * max(np.abs(ref).max(), 1e-30):
                        fails.append("%s: %s numpy reference and onnxruntime differ by %.3g" % (name, o, np.abs(ort - ref).max()))
                    e_ort = np.abs(got - ort).max() / max(np.abs(ort).max(), 1e-30)
                    worst_ort = max(worst_ort, e_ort)
                e_ref = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)
                worst_ref = max(worst_ref, e_ref)
                if not max(e_ref, e_ort if ort is not None else 0.0) <= RTOL:
                    fails.append("%s: %s relative error %.3g (numpy) / %.3g (onnxruntime) > %.3g" %
                                 (name, o, e_ref, e_ort if ort is not None else -1, RTOL))
            print("%-30s %s %3d NPU tasks %9.1f us  max rel err vs onnxruntime %.2e, vs numpy %.2e" %
                  (name, rnn[0]["op"], rnn[0]["tasks"], rnn[0]["time_us"], worst_ort, worst_ref))
        # The KWS CRNN: the GRU on the NPU among the conv front end; end to end against onnxruntime.
        # Then a Reshape of Y to [1, S H] (the flat image's own layout: a view) and a Gemm on it.
        for model, feeds, views in (kws_gru() + ([],), lstm_reshape_gemm() + (["flat"],)):
            name = model.graph.name
            d = os.path.join(tmp, "kws", name)
            os.makedirs(d)
            onnx.save(model, os.path.join(d, "model.onnx"))
            np.save(os.path.join(d, "x.npy"), feeds["x"])
            out_name = model.graph.output[0].name
            json.dump({"feeds": [{"name": model.graph.input[0].name, "file": "x.npy"}], "output_names": [out_name],
                       "expected": ["logits.expected.npy"]},
                      open(os.path.join(d, "manifest.json"), "w"))
            r = subprocess.run([node or "node", RUN_ORT, os.path.dirname(d)], capture_output=True, text=True)
            rep, outdir = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + "_out")
            r2 = subprocess.run([npusim, "run", "-p", "rk3588", os.path.join(d, "model.onnx"), "--input", os.path.join(d, "x.npy"),
                                 "--report", rep, "-q", "--output-dir", outdir], capture_output=True, text=True)
            if r.returncode != 0 or r2.returncode != 0:
                fails.append("%s: run_ort exit %d, npusim exit %d: %s" % (name, r.returncode, r2.returncode, (r2.stderr + r.stderr).strip()[-600:]))
            else:
                j = json.load(open(rep))
                rnn = [l for l in j["layers"] if l["op"] in ("GRU", "LSTM")]
                if len(rnn) != 1 or rnn[0]["unit"] != "NPU":
                    fails.append("%s: the recurrent node is not one NPU layer: %s" % (name, rnn))
                want = np.load(os.path.join(d, "logits.expected.npy")).astype(np.float64)
                got = np.load(os.path.join(outdir, out_name + ".npy")).astype(np.float64)
                e = np.abs(got - want).max() / np.abs(want).max()
                if not e <= RTOL:
                    fails.append("%s: output relative error %.3g > %.3g" % (name, e, RTOL))
                npu = [l for l in j["layers"] if l["unit"] == "NPU"]
                macs = sum(l["macs"] for l in j["layers"])
                t_npu = sum(l["time_us"] for l in npu)
                t_all = sum(l["time_us"] for l in j["layers"])
                print("%s: %d layers (%d NPU: %s), MACs on the NPU %.1f %% of %d, NPU time %.1f of %.1f us, recurrent layer %.1f us, "
                      "output max rel err vs onnxruntime %.2e" %
                      (name, len(j["layers"]), len(npu), ", ".join(l["name"] for l in npu),
                       100.0 * sum(l["macs"] for l in npu) / max(macs, 1), macs, t_npu, t_all, rnn[0]["time_us"] if rnn else -1, e))
                for v in views:
                    if [l["unit"] for l in j["layers"] if l["name"] == v] != ["view"]:
                        fails.append("%s: %s is not a view: %s" % (name, v, [l for l in j["layers"] if l["name"] == v]))
                print("  CPU layers: %s" % ["%s %s %.1f us" % (l["name"], l["op"], l["time_us"]) for l in j["layers"] if l["unit"] == "CPU"])
    for f in fails:
        print("FAIL - " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
