// SPDX-License-Identifier: MIT
// Identifier resolution for the spec-DB expression language (see node_context.h).
#include "node_context.h"

#include <cstdlib>
#include <cstring>
#include <variant>

namespace drv::check {

namespace {

/// Splits "in12.d3" into ("in", 12, "d3"); false when it does not have that shape.
bool split_tensor_ref(const std::string& id, std::string& base, size_t& idx, std::string& field) {
    size_t dot = id.find('.');
    if (dot == std::string::npos) return false;
    std::string head = id.substr(0, dot);
    for (const char* b : {"in", "out"}) {
        size_t bl = std::char_traits<char>::length(b);
        if (head.size() > bl && head.compare(0, bl, b) == 0 &&
            head.find_first_not_of("0123456789", bl) == std::string::npos) {
            base = b;
            idx = static_cast<size_t>(std::strtoul(head.c_str() + bl, nullptr, 10));
            field = id.substr(dot + 1);
            return true;
        }
    }
    return false;
}

bool parse_index(const std::string& s, long& out) {
    if (s.empty()) return false;
    char* end = nullptr;
    out = std::strtol(s.c_str(), &end, 10);
    return end && *end == '\0';
}

EVal tensor_element(const num::Tensor& t, long k) {
    if (k < 0) k += static_cast<long>(t.numel());
    if (k < 0 || static_cast<size_t>(k) >= static_cast<size_t>(t.numel())) return EVal::undef();
    const uint8_t* b = t.raw() + static_cast<size_t>(k) * num::dtype_size(t.dtype());
    auto rd = [&](auto tag) {
        decltype(tag) v;
        std::memcpy(&v, b, sizeof v);
        return EVal::of(static_cast<double>(v));
    };
    switch (t.dtype()) {
        case num::DType::F32: return rd(float{});
        case num::DType::I8: return rd(int8_t{});
        case num::DType::U8: return rd(uint8_t{});
        case num::DType::I16: return rd(int16_t{});
        case num::DType::U16: return rd(uint16_t{});
        case num::DType::I32: return rd(int32_t{});
        case num::DType::I64: return rd(int64_t{});
        case num::DType::Bool: return rd(uint8_t{});
        case num::DType::F16: return EVal::undef();
    }
    return EVal::undef();
}

}  // namespace

const ir::Value* NodeContext::tensor(bool is_out, size_t i) const {
    const auto& names = is_out ? n_.outputs : n_.inputs;
    if (i >= names.size() || names[i].empty()) return nullptr;
    return g_.find_value(names[i]);
}

int64_t NodeContext::bits_of(const ir::Value& v) const {
    // --bits is the width the data (activations) are quantized to; constant weights keep their
    // container's width (seed 003 lists data and weight widths separately, e.g. 16-bit data with
    // 8-bit weights); --weight-bits gives the constants' width.
    if (o_.quant_bits > 0 && !v.is_constant()) return o_.quant_bits;
    if (o_.weight_bits > 0 && v.is_constant()) return o_.weight_bits;
    switch (v.dtype) {
        case num::DType::I8:
        case num::DType::U8: return 8;
        case num::DType::I16:
        case num::DType::U16: return 16;
        default: return p_.quant_bits_default;
    }
}

EVal NodeContext::tensor_field(const ir::Value* v, const std::string& f) const {
    if (f == "present") return EVal::of(v ? 1.0 : 0.0);
    if (!v) return EVal::undef();
    if (f == "const") return EVal::of(v->is_constant() ? 1.0 : 0.0);
    if (f == "dtype") return EVal::of(dtype_spec_name(v->dtype));
    if (f == "quantized") return EVal::of(v->is_quantized() ? 1.0 : 0.0);
    if (f == "per_channel") return EVal::of(v->quant.per_axis() ? 1.0 : 0.0);
    if (f == "bits") return EVal::of(static_cast<double>(bits_of(*v)));
    if (!v->shape_known) return EVal::undef();
    const auto& s = v->shape;
    if (f == "rank") return EVal::of(static_cast<double>(s.size()));
    if (f == "numel") {
        int64_t n = v->numel();
        return n < 0 ? EVal::undef() : EVal::of(static_cast<double>(n));
    }
    if (f.size() >= 2 && f[0] == 'd') {
        long k = 0;
        if (f == "dlast") k = -1;
        else if (!parse_index(f.substr(1), k)) return EVal::undef();
        if (k < 0) k += static_cast<long>(s.size());
        if (k < 0 || static_cast<size_t>(k) >= s.size() || s[static_cast<size_t>(k)] < 0) return EVal::undef();
        return EVal::of(static_cast<double>(s[static_cast<size_t>(k)]));
    }
    return EVal::undef();
}

EVal NodeContext::attr_field(const std::string& rest) const {
    size_t dot = rest.find('.');
    std::string name = rest.substr(0, dot);
    const num::AttrValue* a = n_.attrs.find(name);
    if (!a) return EVal::undef();
    std::string sub = dot == std::string::npos ? std::string() : rest.substr(dot + 1);
    if (sub.empty()) {
        if (auto* i = std::get_if<int64_t>(a)) return EVal::of(static_cast<double>(*i));
        if (auto* f = std::get_if<float>(a)) return EVal::of(static_cast<double>(*f));
        if (auto* s = std::get_if<std::string>(a)) return EVal::of(*s);
        return EVal::undef();
    }
    size_t len = 0;
    if (auto* iv = std::get_if<std::vector<int64_t>>(a)) len = iv->size();
    else if (auto* fv = std::get_if<std::vector<float>>(a)) len = fv->size();
    else if (auto* sv = std::get_if<std::vector<std::string>>(a)) len = sv->size();  // e.g. RNN activations
    else return EVal::undef();
    if (sub == "len") return EVal::of(static_cast<double>(len));
    long k = 0;
    if (!parse_index(sub, k)) return EVal::undef();
    if (k < 0) k += static_cast<long>(len);
    if (k < 0 || static_cast<size_t>(k) >= len) return EVal::undef();
    if (auto* iv = std::get_if<std::vector<int64_t>>(a)) return EVal::of(static_cast<double>((*iv)[static_cast<size_t>(k)]));
    if (auto* sv = std::get_if<std::vector<std::string>>(a)) return EVal::of((*sv)[static_cast<size_t>(k)]);
    return EVal::of(static_cast<double>(std::get<std::vector<float>>(*a)[static_cast<size_t>(k)]));
}

EVal NodeContext::data_field(const std::string& rest) const {
    // data.in1.0 -> element 0 of constant input 1
    std::string base, field;
    size_t idx = 0;
    if (!split_tensor_ref(rest, base, idx, field)) return EVal::undef();
    const ir::Value* v = tensor(base == "out", idx);
    if (!v || !v->is_constant()) return EVal::undef();
    long k = 0;
    if (field == "len") return EVal::of(static_cast<double>(v->data->numel()));
    if (!parse_index(field, k)) return EVal::undef();
    return tensor_element(*v->data, k);
}

EVal NodeContext::lookup(const std::string& id) const {
    std::string base, field;
    size_t idx = 0;
    if (split_tensor_ref(id, base, idx, field)) return tensor_field(tensor(base == "out", idx), field);
    if (id.compare(0, 5, "attr.") == 0) return attr_field(id.substr(5));
    if (id.compare(0, 5, "data.") == 0) return data_field(id.substr(5));
    if (id == "nin") {
        size_t k = 0;
        for (const auto& s : n_.inputs) k += s.empty() ? 0 : 1;
        return EVal::of(static_cast<double>(k));
    }
    if (id == "nout") return EVal::of(static_cast<double>(n_.outputs.size()));
    if (id == "opset") return EVal::of(static_cast<double>(g_.opset(n_.domain)));
    if (id == "op") return EVal::of(n_.op_type);
    if (id == "fused_act") {
        if (!fused_act_.empty()) return EVal::of(fused_act_);
        if (const auto* a = n_.attrs.find("fused_activation_function"))
            if (auto* s = std::get_if<std::string>(a)) return EVal::of(*s);
        return EVal::of(std::string("NONE"));
    }
    if (id == "bits") {
        const ir::Value* v = tensor(false, 0);
        return v ? EVal::of(static_cast<double>(bits_of(*v))) : EVal::undef();
    }
    if (depth_ > 16) return EVal::undef();
    for (const auto* m : binds_) {
        auto it = m->find(id);
        if (it == m->end()) continue;
        ++depth_;
        EVal r = it->second.eval(*this);
        --depth_;
        return r;
    }
    return EVal::undef();
}

}  // namespace drv::check
