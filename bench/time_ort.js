// SPDX-License-Identifier: MIT
// Times onnxruntime (single thread) on a model with one uint8/float input of the given shape.
// Usage: node bench/time_ort.js MODEL.onnx [iterations] [--shape 1x3x224x224] [--dtype uint8|float32]
//        [--once]   (needs tests/oracle/node_modules)
// Prints the best per-run wall and process CPU time (user + sys) over the iterations after one
// warm-up run. --once: load, create the session, run once and exit (what a whole-process timing
// of onnxruntime measures: `/usr/bin/time node bench/time_ort.js MODEL --once`).
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, '..', 'tests', 'oracle', 'node_modules', 'onnxruntime-node'));

function arg(name, def) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

async function main() {
  const pos = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(i > 0 && ['--shape', '--dtype'].includes(all[i - 1])));
  const iters = Number(pos[1] || 10);
  const shape = arg('--shape', '1x3x224x224').split('x').map(Number);
  const dtype = arg('--dtype', 'uint8');
  const n = shape.reduce((a, b) => a * b, 1);
  const s = await ort.InferenceSession.create(pos[0], {intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential'});
  // A deterministic pattern (bytes 0..255; floats in [0, 1)): the run time does not depend on it.
  const data = dtype === 'float32' ? Float32Array.from({length: n}, (_, i) => ((i * 131) & 0xff) / 256)
                                   : Uint8Array.from({length: n}, (_, i) => (i * 131) & 0xff);
  const input = new ort.Tensor(dtype, data, shape);
  await s.run({[s.inputNames[0]]: input});
  if (process.argv.includes('--once')) return;
  let best = 1e30, bestCpu = 1e30;
  for (let i = 0; i < iters; i++) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    await s.run({[s.inputNames[0]]: input});
    const c = process.cpuUsage(c0);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6);
    bestCpu = Math.min(bestCpu, (c.user + c.system) / 1e3);
  }
  console.log(`onnxruntime ${require(path.join(__dirname, '..', 'tests', 'oracle', 'node_modules', 'onnxruntime-node', 'package.json')).version} single-thread best: ${best.toFixed(1)} ms wall, ${bestCpu.toFixed(1)} ms cpu (process)`);
}
main();
