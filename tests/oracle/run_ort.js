// SPDX-License-Identifier: MIT
// Oracle runner: for every case directory under <root> (manifest.json + model.onnx + input .npy
// files), runs the model with onnxruntime-node (single thread, default graph optimisations unless the
// manifest asks for "optimization": "disabled") and
// writes the outputs as the .npy files the manifest names under "expected". Cases onnxruntime
// rejects get "ort_error" in <case>/ort_error.txt so the C++ test can report them.
// Usage: node run_ort.js <root>
'use strict';
const fs = require('fs');
const path = require('path');

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  console.error('run_ort: onnxruntime-node is not installed (scripts/deps.sh installs it): ' + e.message);
  process.exit(2);
}

const DESCR = {float32: '<f4', int8: '|i1', uint8: '|u1', int32: '<i4', int64: '<i8', bool: '|b1'};
const ARRAYS = {float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int32: Int32Array,
                int64: BigInt64Array, bool: Uint8Array};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const off = major === 1 ? 10 : 12;
  const hdr = buf.toString('latin1', off, off + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(hdr)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(hdr)[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const type = Object.keys(DESCR).find((k) => DESCR[k] === descr || DESCR[k].slice(1) === descr.slice(1));
  if (!type) throw new Error(file + ': unsupported dtype ' + descr);
  const start = off + hlen;
  const bytes = buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length);
  const data = new ARRAYS[type](bytes.slice(0));
  return {type, shape, data: type === 'bool' ? Array.from(data, (v) => v !== 0) : data};
}

function writeNpy(file, type, dims, data) {
  const shape = dims.length === 0 ? '()' : dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let hdr = `{'descr': '${DESCR[type]}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + hdr.length + 1;
  hdr += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, hdr.length & 0xff, hdr.length >> 8]);
  let body;
  if (type === 'bool') body = Buffer.from(Uint8Array.from(data, (v) => (v ? 1 : 0)));
  else body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(hdr, 'latin1'), body]));
}

async function runCase(dir) {
  const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const opts = {intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential'};
  // "optimization": "disabled" runs a QDQ graph node by node where onnxruntime's QDQ fusion rejects
  // a valid graph (its fused QLinearConv takes only 8-bit weights; tnpuv2's 20-bit ones are int32).
  if (m.optimization) opts.graphOptimizationLevel = m.optimization;
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), opts);
  const feeds = {};
  for (const f of m.feeds) {
    const a = readNpy(path.join(dir, f.file));
    feeds[f.name] = new ort.Tensor(a.type, a.data, a.shape);
  }
  const res = await session.run(feeds);
  m.output_names.forEach((name, i) => {
    const t = res[name];
    writeNpy(path.join(dir, m.expected[i]), t.type, t.dims, t.data);
  });
}

async function main() {
  const root = process.argv[2];
  let ok = 0, bad = 0;
  for (const name of fs.readdirSync(root).sort()) {
    const dir = path.join(root, name);
    if (!fs.existsSync(path.join(dir, 'manifest.json'))) continue;
    try {
      await runCase(dir);
      ok++;
    } catch (e) {
      bad++;
      fs.writeFileSync(path.join(dir, 'ort_error.txt'), String(e && e.message ? e.message : e));
    }
  }
  console.log(`run_ort: ${ok} cases run, ${bad} rejected by onnxruntime (ort ${require('onnxruntime-node/package.json').version})`);
}

main().catch((e) => {
  console.error('run_ort: ' + e.stack);
  process.exit(1);
});
