// SPDX-License-Identifier: MIT
// Times onnxruntime (single thread) on a model with one uint8/float input of the given shape.
// Usage: node bench/time_ort.js MODEL.onnx [iterations]   (needs tests/oracle/node_modules)
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, '..', 'tests', 'oracle', 'node_modules', 'onnxruntime-node'));

async function main() {
  const iters = Number(process.argv[3] || 10);
  const s = await ort.InferenceSession.create(process.argv[2], {intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential'});
  const input = new ort.Tensor('uint8', Uint8Array.from({length: 3 * 224 * 224}, (_, i) => (i * 131) & 0xff), [1, 3, 224, 224]);
  await s.run({[s.inputNames[0]]: input});
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
