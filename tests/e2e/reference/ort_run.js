// SPDX-License-Identifier: MIT
// onnxruntime oracle for the reference-executor e2e test: runs MODEL on .npy inputs (graph-input
// order) with onnxruntime-node (CPU EP, default "all" graph optimizations, i.e. the QDQ fusions the
// executor mirrors) and writes each output as .npy.
// usage: node ort_run.js MODEL.onnx OUT_PREFIX IN0.npy [IN1.npy ...]  -> OUT_PREFIX<k>.npy
'use strict';
const fs = require('fs');
const path = require('path');
const ortPath = process.env.NPUSIM_ORT_NODE ||
    path.join(__dirname, '..', '..', 'oracle', 'node_modules', 'onnxruntime-node');
const ort = require(ortPath);

const DESCR = {'<f4': ['float32', Float32Array], '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array],
               '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array]};

function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(file + ': not a .npy file');
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const hoff = major === 1 ? 10 : 12;
  const header = b.toString('latin1', hoff, hoff + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const [type, Ctor] = DESCR[descr] || [];
  if (!type) throw new Error(file + ': unsupported dtype ' + descr);
  const data = b.subarray(hoff + hlen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return new ort.Tensor(type, new Ctor(copy.buffer), shape);
}

function writeNpy(file, t) {
  const descr = Object.keys(DESCR).find(k => DESCR[k][0] === t.type);
  if (!descr) throw new Error('cannot write dtype ' + t.type);
  const dims = t.dims.length === 1 ? t.dims[0] + ',' : t.dims.join(', ');
  let header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + '), }';
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - total % 64) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const d = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), d]));
}

async function main() {
  const [model, prefix, ...inputs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all', intraOpNumThreads: 1});
  const feeds = {};
  session.inputNames.forEach((n, i) => { feeds[n] = readNpy(inputs[i]); });
  const out = await session.run(feeds);
  session.outputNames.forEach((n, k) => writeNpy(prefix + k + '.npy', out[n]));
}

main().catch(e => { console.error('error: ' + e.message); process.exit(1); });
