#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 14 measurements: the zoo's float MobileNetV2, ResNet50 v2 and YOLOv5s quantized with each
# calibration method on a small seeded calibration set, then
#   - `npusim run --quantize int8` on rk3588 and rk3566: NPU share of MACs, CPU layers, latency,
#     the isolated per-layer check (every NPU layer within 1 LSB of its reference node);
#   - the NPU's end-to-end outputs (bench_npu_outputs) against onnxruntime running the written QDQ
#     model on a held-out input: max and mean difference in output LSB;
#   - the accuracy report: output cosine, worst layer (entire and single cosine);
#   - `npusim run --quantize fp16` on each SoC: NPU share of MACs, every fp16 layer's relative error
#     in isolation (tolerance 2^-7), the outputs against onnxruntime running the float model.
# usage: bench/quantize/quantize_zoo.sh BUILD_DIR OUT_DIR [models] [methods] [socs]
# Needs /usr/bin/python3 with onnx + numpy, node with tests/oracle/node_modules/onnxruntime-node,
# and BUILD_DIR configured with -DNPUSIM_BUILD_BENCH=ON (bench_npu_outputs). About 35 minutes on 2 busy cores.
set -eu
BUILD=$(cd "$1" && pwd); OUT=$2
MODELS=${3:-mobilenetv2 resnet50v2 yolov5s}
METHODS=${4:-minmax kl mmse}
SOCS=${5:-rk3588 rk3566}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NPUSIM=$BUILD/sim/npusim
PY=/usr/bin/python3
mkdir -p "$OUT/zoo" "$OUT/cal" "$OUT/q"
[ -f "$OUT/zoo/yolov5s.onnx" ] || $PY "$ROOT/tools/zoo/make_zoo.py" "$OUT/zoo" --models mobilenetv2,resnet50v2,yolov5s --no-qdq >/dev/null
# Calibration set (8 samples) and a held-out input per input size, seeded: image-like smooth random
# fields (bilinearly upsampled noise over 6 octaves, normalised to [0, 1], plus 1% pixel noise),
# ImageNet-normalised for 224x224 (torchvision's mean/std), [0, 1] for YOLO's 640x640.
$PY - "$OUT/cal" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
def up(n, h, w):
    c, gh, gw = n.shape
    ys, xs = np.linspace(0, gh - 1, h), np.linspace(0, gw - 1, w)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, gh - 1), np.minimum(x0 + 1, gw - 1)
    fy, fx = (ys - y0)[None, :, None], (xs - x0)[None, None, :]
    top = n[:, y0][:, :, x0] * (1 - fx) + n[:, y0][:, :, x1] * fx
    bot = n[:, y1][:, :, x0] * (1 - fx) + n[:, y1][:, :, x1] * fx
    return top * (1 - fy) + bot * fy
def field(rng, c, h, w):
    f = np.zeros((c, h, w))
    for s in (2, 4, 8, 16, 32, 64):
        f += up(rng.standard_normal((c, h // s + 2, w // s + 2)), h, w) * (s / 64.0) ** 0.5
    f = (f - f.min()) / (f.max() - f.min())
    return np.clip(f + rng.normal(0, 0.01, f.shape), 0, 1)
mean = np.array([0.485, 0.456, 0.406]).reshape(3, 1, 1)
std = np.array([0.229, 0.224, 0.225]).reshape(3, 1, 1)
for size in (224, 640):
    rng = np.random.RandomState(1234)
    xs = [field(rng, 3, size, size) for _ in range(9)]
    if size == 224:
        xs = [(x - mean) / std for x in xs]
    xs = np.stack(xs).astype(np.float32)
    np.save("%s/cal_%d.npy" % (out, size), xs[:8])
    np.save("%s/eval_%d.npy" % (out, size), xs[8:9])
PY
cat >"$OUT/summary.py" <<'PY'
import json, os, sys
import numpy as np
kind = sys.argv[1]
if kind == "run":
    r = json.load(open(sys.argv[2]))
    rows = r["layers"]
    npu = sum(l["macs"] for l in rows if l["unit"] == "NPU")
    tot = sum(l["macs"] for l in rows)
    cpu = ["%s(%s)" % (l["name"], l["op"]) for l in rows if l["unit"] == "CPU"]
    iso = r["isolated_check"]
    print("NPU %.3f%% of %.3f GMAC, %d NPU / %d CPU / %d view layers, latency %.3f ms, isolated: %d layers, %d worse, max %d LSB; CPU: %s"
          % (100.0 * npu / tot, tot / 1e9, r["totals"]["npu_layers"], r["totals"]["cpu_layers"], r["totals"]["view_layers"],
             r["totals"]["latency_ms"], iso["layers"], iso["layers_worse"], iso["max_abs_diff"], " ".join(cpu)))
elif kind == "ort":
    lsb = json.load(open(sys.argv[2]))["outputs"]
    worst = 0.0
    parts = []
    def load(where, k, name):  # OUT_PREFIX<k>.npy, or DIR/<name>.npy (--output-dir)
        return np.load("%s/%s.npy" % (where, name) if os.path.isdir(where) else "%s%d.npy" % (where, k)).astype(np.float64)
    for k, o in enumerate(lsb):
        a, b = load(sys.argv[3], k, o["name"]), load(sys.argv[4], k, o["name"])
        d = np.rint(np.abs(a - b) / o["lsb"])  # whole steps (float32 scale rounding aside)
        worst = max(worst, d.max())
        parts.append("%s max %.0f mean %.3f LSB (%.2f%% > 1)" % (o["name"], d.max(), d.mean(), 100.0 * (d > 1.5).mean()))
    verdict = " -> within 4 LSB" if worst <= 4 else " -> OVER 4 LSB"  # the acceptance: NPU vs onnxruntime
    print(sys.argv[5] + ": " + "; ".join(parts) + (verdict if sys.argv[5] == "NPU vs onnxruntime" else ""))
elif kind == "fp16":
    r = json.load(open(sys.argv[2]))
    rows = r["layers"]
    npu = sum(l["macs"] for l in rows if l["unit"] == "NPU")
    tot = sum(l["macs"] for l in rows)
    fl = [(l["fp16_check"]["max_rel_error"], l["name"], l["fp16_check"]["ok"]) for l in rows if "fp16_check" in l]
    worst = max(fl)
    parts = []
    for k, name in enumerate(sys.argv[5:]):
        a = np.load("%s/%s.npy" % (sys.argv[3], name)).astype(np.float64)
        b = np.load("%s%d.npy" % (sys.argv[4], k)).astype(np.float64)
        cos = float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b)))
        parts.append("%s max |d| / max |ort| %.2e, cos %.6f" % (name, np.abs(a - b).max() / np.abs(b).max(), cos))
    print("NPU %.3f%% of %.3f GMAC, %d NPU / %d CPU / %d view layers, latency %.3f ms; fp16 layers %d, %d over 2^-7, worst %.2e (%s); vs onnxruntime (float model): %s"
          % (100.0 * npu / tot, tot / 1e9, r["totals"]["npu_layers"], r["totals"]["cpu_layers"], r["totals"]["view_layers"],
             r["totals"]["latency_ms"], len(fl), sum(1 for f in fl if not f[2]), worst[0], worst[1], "; ".join(parts)))
elif kind == "acc":
    a = json.load(open(sys.argv[2]))
    w = a["worst"]
    L = [l for l in a["layers"] if l["tensor"] == w["tensor"]][0]
    outs = ", ".join("%s cos %.6f" % (o["name"], o["cosine"]) for o in a["outputs"])
    print("accuracy: %s; worst layer %s (%s) entire cos %.6f, single cos %.6f; %d layers"
          % (outs, w["layer"], w["op"], w["entire_cosine"], L["single"]["cosine"] if L["single"] else float("nan"), len(a["layers"])))
PY
for m in $MODELS; do
  size=224; [ "$m" = yolov5s ] && size=640
  # fp16: the float model on the NPU (full mode: every fp16 layer checked in isolation against 2^-7
  # relative), its outputs against onnxruntime running the float model.
  f="$OUT/q/${m}_fp16"
  node "$ROOT/tests/e2e/reference/ort_run.js" "$OUT/zoo/$m.onnx" "$f.ort_" "$OUT/cal/eval_$size.npy"
  outs=$($PY -c "import onnx; print(' '.join(o.name for o in onnx.load('$OUT/zoo/$m.onnx', load_external_data=False).graph.output))")
  echo "== $m, fp16"
  for soc in $SOCS; do
    "$NPUSIM" run -p "$soc" "$OUT/zoo/$m.onnx" --quantize fp16 --input "$OUT/cal/eval_$size.npy" -q \
      --report "$f.$soc.json" --output-dir "$f.$soc.out" >"$f.$soc.txt" 2>&1
    echo "   $soc: $($PY "$OUT/summary.py" fp16 "$f.$soc.json" "$f.$soc.out" "$f.ort_" $outs)"
  done
  for meth in $METHODS; do
    q="$OUT/q/${m}_${meth}"
    "$NPUSIM" quantize "$OUT/zoo/$m.onnx" -o "$q.onnx" --calibration "$OUT/cal/cal_$size.npy" --calibration-method "$meth" \
      --accuracy-report "$q.acc.json" --csv "$q.acc.csv" >"$q.quantize.txt" 2>&1
    $PY -c "import onnx; onnx.checker.check_model(onnx.load('$q.onnx'), full_check=True)"
    echo "== $m, $meth: $(head -1 "$q.quantize.txt" | sed 's/.*: \([0-9]* nodes with\)/\1/')"
    echo "   $($PY "$OUT/summary.py" acc "$q.acc.json")"
    for soc in $SOCS; do
      "$NPUSIM" run -p "$soc" "$OUT/zoo/$m.onnx" --quantize int8 --calibration "$OUT/cal/cal_$size.npy" \
        --calibration-method "$meth" --input "$OUT/cal/eval_$size.npy" -q --report "$q.$soc.json" >"$q.$soc.txt" 2>&1
      echo "   $soc: $($PY "$OUT/summary.py" run "$q.$soc.json")"
    done
    node "$ROOT/tests/e2e/reference/ort_run.js" "$q.onnx" "$q.ort_" "$OUT/cal/eval_$size.npy"
    for soc in $SOCS; do
      "$BUILD/bench/bench_npu_outputs" "$q.onnx" "$soc" "$OUT/cal/eval_$size.npy" "$q.$soc.npu_" >/dev/null
      echo "   $soc $($PY "$OUT/summary.py" ort "$q.acc.json" "$q.$soc.npu_" "$q.ort_" "NPU vs onnxruntime")"
    done
    # Where the NPU's distance to onnxruntime comes from: the reference executor (the integer
    # arithmetic each NPU layer is checked against) against each of them.
    "$NPUSIM" run --reference "$q.onnx" --input "$OUT/cal/eval_$size.npy" -q --output-dir "$q.ref" >/dev/null
    echo "   $($PY "$OUT/summary.py" ort "$q.acc.json" "$q.ref" "$q.ort_" "reference vs onnxruntime")"
    soc=${SOCS%% *}; echo "   $soc $($PY "$OUT/summary.py" ort "$q.acc.json" "$q.$soc.npu_" "$q.ref" "NPU vs reference")"
  done
done
