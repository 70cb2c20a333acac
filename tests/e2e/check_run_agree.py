#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""`npusim check` and `npusim run` agree node by node (issue 13): for every model and platform given,
check's JSON (--json) and run's report (--report) are compared. Every node of the graph check lists
must sit in a run layer of the same name and unit (NPU / CPU / view) and, on the CPU, with the same
kind of reason; a node the vendor rules send to the CPU must be a CPU layer for that reason; every
node of every run layer must appear in check.

A float model runs without --quantize on the fp16 path (issue 14), which check places the same way;
a platform without an fp16 path refuses it, and it is then compared with run --quantize none.

--zoo NETS --conventions CONVS writes each zoo net (tools/zoo/make_zoo.py) in each producer convention
(tools/zoo/conventions.py) into a temporary folder, one file at a time, compares it and deletes it:
ResNet50 v2 and YOLOv5s in every convention without keeping ~400 MB of models in the build tree.
--zoo shufflenet_se_fx writes tools/zoo/make_zoo_shufflenet.py's net (PyTorch FX convention only);
--zoo kws_convattn,crnn the sequence nets of tools/zoo/make_zoo_seq.py (onnxruntime QDQ only);
  kws_gru (float and QDQ).
--zoo coordatt tests/e2e/coordatt_net.py's coordinate-attention net (broadcast Muls, issue 15).

--probes PREFIX writes every contract probe (tests/e2e/contract_probes.py) whose name starts with PREFIX.
usage: check_run_agree.py NPUSIM MODE PLATFORMS [MODEL...] [--zoo a,b --conventions c,d] [--probes PREFIX]
       (MODE full|timing, PLATFORMS a,b)"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def zoo_models(tmp, nets, convs):
    """Yields the path of each zoo net in each convention, written just before it is compared."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "zoo"))
    import conventions
    import make_zoo
    import make_zoo_effnet
    builders = {"mobilenetv2": make_zoo.mobilenetv2, "resnet50v2": make_zoo.resnet50v2, "yolov5s": make_zoo.yolov5s,
                "efficientnet_lite0": lambda: make_zoo_effnet.efficientnet_lite0(make_zoo.Net)}
    for name in nets:
        if name == "shufflenet_se_fx":  # written in one convention (PyTorch FX) by its own generator
            import make_zoo_shufflenet
            path = os.path.join(tmp, name + ".onnx")
            make_zoo.save(make_zoo_shufflenet.FxNet().build(), path)
            yield path
            os.remove(path)
            continue
        if name == "kws_gru":  # float (the fp16 path: the GRU unrolled on the NPU) and onnxruntime QDQ
            import make_zoo_seq
            for qdq in (False, True):
                path = os.path.join(tmp, name + ("_qdq" if qdq else "") + ".onnx")
                make_zoo.save(make_zoo_seq.SeqEmitter(make_zoo_seq.kws_gru(), qdq).emit(), path)
                yield path
                os.remove(path)
            continue
        if name == "coordatt":  # tests/e2e/coordatt_net.py, onnxruntime QDQ only (issue 15 broadcasts)
            import coordatt_net
            path = os.path.join(tmp, name + "_qdq.onnx")
            make_zoo.save(coordatt_net.build(), path)
            yield path
            os.remove(path)
            continue
        if name in ("kws_convattn", "crnn"):  # onnxruntime QDQ only (make_zoo_seq.py's emitter)
            import make_zoo_seq
            path = os.path.join(tmp, name + "_qdq.onnx")
            make_zoo.save(make_zoo_seq.SeqEmitter(make_zoo_seq.BUILDERS[name](), True).emit(), path)
            yield path
            os.remove(path)
            continue
        net = builders[name]()
        for c in convs:
            path = os.path.join(tmp, "%s_%s.onnx" % (name, c))
            make_zoo.save(conventions.emit(net, c, lambda n, act: make_zoo.Emitter(n, True, act).emit()), path)
            yield path
            os.remove(path)


def probe_models(tmp, prefix):
    """Yields the path of each contract probe named PREFIX..., written just before it is compared."""
    import onnx
    import contract_probes
    for name in sorted(contract_probes.PROBES):
        if name.startswith(prefix):
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(contract_probes.PROBES[name](), path)
            yield path
            os.remove(path)


def main():
    args = sys.argv[1:]
    zoo, convs, probes = [], [], None
    if "--probes" in args:
        k = args.index("--probes")
        probes = args[k + 1]
        del args[k:k + 2]
    if "--zoo" in args:
        k = args.index("--zoo")
        zoo = args[k + 1].split(",")
        del args[k:k + 2]
    if "--conventions" in args:
        k = args.index("--conventions")
        convs = args[k + 1].split(",")
        del args[k:k + 2]
    npusim, mode, platforms, files = args[0], args[1], args[2].split(","), args[3:]
    failures, pairs = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in _chain(files, zoo_models(tmp, zoo, convs) if zoo else [],
                            probe_models(tmp, probes) if probes is not None else []):
            for plat in platforms:
                name = "%s on %s" % (os.path.basename(model), plat)
                c = subprocess.run([npusim, "check", "--platform", plat, "--json", model], capture_output=True, text=True)
                if c.returncode not in (0, 10, 11):
                    failures.append("%s: check exit %d: %s" % (name, c.returncode, c.stderr.strip()))
                    continue
                chk = json.loads(c.stdout)
                rep = os.path.join(tmp, "r.json")
                cmd = [npusim, "run", "--platform", plat, model, "--mode", mode, "--quiet", "--report", rep]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode == 4 and "float model" in r.stderr:
                    # a SoC without an fp16 path refuses a float model unless told how to build it;
                    # check places its nodes as --quantize none runs them (on the host CPU).
                    r = subprocess.run(cmd + ["--quantize", "none"], capture_output=True, text=True)
                if r.returncode not in (0, 1) or not os.path.exists(rep):
                    failures.append("%s: run exit %d: %s" % (name, r.returncode, r.stderr.strip()))
                    continue
                run = json.load(open(rep))
                os.remove(rep)
                pairs += 1
                layer_of = {}
                for layer in run["layers"]:
                    for n in layer["nodes"]:
                        layer_of[n] = layer
                seen = set()
                for n in chk["nodes"]:
                    seen.add(n["name"])
                    p = n.get("npusim")
                    layer = layer_of.get(n["name"])
                    if p is None or layer is None:
                        failures.append("%s: node %s: %s" % (name, n["name"], "no npusim placement in check" if p is None
                                                             else "in no run layer"))
                        continue
                    want = (layer["unit"], layer["name"], layer.get("cpu_reason", ""))
                    got = (p["unit"], p["layer"], p["reason"] if p["unit"] == "CPU" else "")
                    if want != got:
                        failures.append("%s: node %s: check says %s, run says %s" % (name, n["name"], got, want))
                    if n["verdict"] in ("CPU fallback", "unsupported") and p["reason"] != "vendor rule" and p["unit"] != "CPU":
                        failures.append("%s: node %s: the vendor rule sends it to the CPU, npusim places it %s"
                                        % (name, n["name"], p["unit"]))
                for n in layer_of:
                    if n not in seen:
                        failures.append("%s: run layer node %s not in check" % (name, n))
    for f in failures[:40]:
        print("FAIL " + f)
    print("%d model/platform pairs compared, %d disagreement(s)" % (pairs, len(failures)))
    return 1 if failures or pairs == 0 else 0


def _chain(*its):
    for it in its:
        yield from it


if __name__ == "__main__":
    sys.exit(main())
