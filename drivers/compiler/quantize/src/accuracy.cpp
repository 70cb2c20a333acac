// SPDX-License-Identifier: MIT
// Accuracy analysis (accuracy.h): the float model and the folded QDQ model on the calibration
// inputs through the reference executor, every quantized activation compared in float.
#include "compiler/quantize/accuracy.h"

#include <cmath>
#include <map>

#include "compiler/ref/reference.h"

namespace drv::quant {

void Similarity::add(const float* ref, const float* got, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const double a = ref[i], b = got[i], d = std::fabs(a - b);
        dot += a * b;
        ref_sq += a * a;
        got_sq += b * b;
        err_sq += d * d;
        sum_abs += d;
        max_abs = std::max(max_abs, d);
    }
    values += n;
}

double Similarity::cosine() const {
    if (ref_sq == 0 && got_sq == 0) return 1.0;
    if (ref_sq == 0 || got_sq == 0) return 0.0;
    return dot / std::sqrt(ref_sq * got_sq);
}

namespace {

/// (q - zp) * scale of an int8/uint8 tensor, per tensor.
std::vector<float> dequantize(const num::Tensor& q, float scale, int32_t zp) {
    std::vector<float> out(q.numel());
    for (size_t i = 0; i < out.size(); ++i) {
        const int32_t v = q.dtype() == num::DType::I8 ? int32_t{q.data<int8_t>()[i]} : int32_t{q.data<uint8_t>()[i]};
        out[i] = static_cast<float>(v - zp) * scale;
    }
    return out;
}

num::Tensor quantize_tensor(const num::Tensor& x, const QuantizedTensor& q) {
    num::Tensor t(q.grid.dtype(), x.shape());
    for (size_t i = 0; i < x.numel(); ++i) {
        const int32_t v = quantize_value(x.data<float>()[i], q.params, q.grid);
        if (q.grid.is_signed)
            t.data<int8_t>()[i] = static_cast<int8_t>(v);
        else
            t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    }
    t.quant.scale = {q.params.scale};
    t.quant.zero_point = {q.params.zero_point};
    return t;
}

void compare(Similarity& s, const num::Tensor& ref, const std::vector<float>& got) {
    if (ref.dtype() == num::DType::F32 && ref.numel() == got.size()) s.add(ref.data<float>(), got.data(), got.size());
}

struct Analysis {
    const ir::Graph& fg;
    const ir::Graph& qg;
    const QuantizeResult& qr;
    AccuracyReport r;
    std::map<std::string, size_t> by_quantized;  // quantized tensor name -> layer index
    std::map<std::string, size_t> by_float;      // float tensor name -> layer index
    std::map<std::string, size_t> producer_of;   // folded-graph value -> node index

    Analysis(const ir::Graph& f, const ir::Graph& q, const QuantizeResult& res) : fg(f), qg(q), qr(res) {
        for (size_t i = 0; i < qr.tensors.size(); ++i) {
            const QuantizedTensor& t = qr.tensors[i];
            LayerAccuracy L;
            L.layer = t.producer, L.op = t.op, L.tensor = t.name;
            L.scale = t.params.scale, L.zero_point = t.params.zero_point;
            r.layers.push_back(L);
            by_quantized[t.quantized] = i;
            by_float[t.name] = i;
        }
        for (size_t i = 0; i < qg.nodes().size(); ++i)
            for (const auto& o : qg.nodes()[i].outputs) producer_of[o] = i;
        for (const std::string& o : fg.outputs()) {
            OutputAccuracy a;
            a.name = o;
            if (auto it = by_float.find(o); it != by_float.end()) a.lsb = qr.tensors[it->second].params.scale;
            r.outputs.push_back(a);
        }
    }

    void sample(const std::map<std::string, num::Tensor>& in) {
        std::map<std::string, num::Tensor> fv;  // float values of the compared tensors
        const std::map<std::string, num::Tensor> fout =
            ref::execute(fg, in, [&](const std::string& n, const num::Tensor& t) {
                if (by_float.count(n)) fv[n] = t;
            });
        const std::map<std::string, num::Tensor> qout =
            ref::execute(qg, in, [&](const std::string& n, const num::Tensor& t) {
                auto it = by_quantized.find(n);
                if (it == by_quantized.end()) return;
                const QuantizedTensor& q = qr.tensors[it->second];
                auto f = fv.find(q.name);
                if (f != fv.end())
                    compare(r.layers[it->second].entire, f->second, dequantize(t, q.params.scale, q.params.zero_point));
            });
        for (OutputAccuracy& o : r.outputs) {
            const num::Tensor& a = fout.at(o.name);
            const num::Tensor& b = qout.at(o.name);
            if (a.dtype() == num::DType::F32 && b.dtype() == num::DType::F32 && a.numel() == b.numel())
                o.sim.add(a.data<float>(), b.data<float>(), a.numel());
        }
        single(fv);
    }

    /// Each layer's integer node alone on the float model's values (quantized where it reads
    /// quantized tensors).
    void single(const std::map<std::string, num::Tensor>& fv) {
        for (size_t li = 0; li < qr.tensors.size(); ++li) {
            const QuantizedTensor& q = qr.tensors[li];
            auto p = producer_of.find(q.quantized);
            auto f = fv.find(q.name);
            if (p == producer_of.end() || f == fv.end()) continue;
            const ir::Node& n = qg.nodes()[p->second];
            std::map<std::string, num::Tensor> env;
            bool ok = true;
            for (const std::string& in : n.inputs) {
                if (in.empty() || qg.value(in).is_constant() || env.count(in)) continue;
                if (auto k = by_quantized.find(in); k != by_quantized.end() && fv.count(qr.tensors[k->second].name))
                    env[in] = quantize_tensor(fv.at(qr.tensors[k->second].name), qr.tensors[k->second]);
                else if (auto g = fv.find(in); g != fv.end())
                    env[in] = g->second;  // a float input the integer node reads as such (QuantizeLinear)
                else
                    ok = false;
            }
            if (!ok) continue;
            std::vector<num::Tensor> out = ref::run_node(qg, n, [&](const std::string& name) -> const num::Tensor* {
                auto it = env.find(name);
                return it == env.end() ? nullptr : &it->second;
            });
            if (out.empty()) continue;
            compare(r.layers[li].single, f->second, dequantize(out[0], q.params.scale, q.params.zero_point));
            r.layers[li].has_single = true;
        }
    }
};

}  // namespace

AccuracyReport analyze_accuracy(const ir::Graph& float_g, const ir::Graph& folded, const QuantizeResult& qr,
                                const CalibrationSet& cal) {
    Analysis a(float_g, folded, qr);
    a.r.scheme = qr.scheme;
    a.r.method = qr.method;
    a.r.calibration = qr.calibration;
    a.r.seeded_calibration = qr.seeded_calibration;
    a.r.samples = cal.samples.size();
    for (const auto& s : cal.samples) a.sample(s);
    double worst = 2;
    for (size_t i = 0; i < a.r.layers.size(); ++i) {
        const LayerAccuracy& L = a.r.layers[i];
        if (L.entire.values && L.entire.cosine() < worst) worst = L.entire.cosine(), a.r.worst = static_cast<int>(i);
    }
    return a.r;
}

std::string seeded_calibration_warning() {
    return "warning: no --calibration data: the activation ranges come from seeded random inputs (uniform [-1, 1)), "
           "not from data the model was trained for; pass --calibration FILE.npy|DIR for meaningful ranges and "
           "accuracy figures";
}

}  // namespace drv::quant
