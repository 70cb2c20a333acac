// SPDX-License-Identifier: MIT
// .npy format: magic "\x93NUMPY", version, header length (u16 for 1.0, u32 for 2.0/3.0), a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), } padded to 64 bytes.
#include "compiler/ref/npy_io.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace drv::ref {

namespace {

const char kMagic[] = "\x93NUMPY";

struct Descr {
    const char* text;
    num::DType dtype;
};
constexpr Descr kDescrs[] = {{"<f4", num::DType::F32}, {"<f2", num::DType::F16}, {"|i1", num::DType::I8},
                             {"|u1", num::DType::U8},  {"<i2", num::DType::I16}, {"<u2", num::DType::U16},
                             {"<i4", num::DType::I32}, {"<i8", num::DType::I64}, {"|b1", num::DType::Bool}};

std::string dict_value(const std::string& header, const std::string& key, const std::string& src) {
    auto k = header.find("'" + key + "'");
    if (k == std::string::npos) throw NpyError(src + ": .npy header lacks '" + key + "'");
    auto colon = header.find(':', k);
    if (colon == std::string::npos) throw NpyError(src + ": malformed .npy header");
    size_t v = header.find_first_not_of(' ', colon + 1);
    if (v == std::string::npos) throw NpyError(src + ": malformed .npy header");
    size_t end;
    if (header[v] == '\'') {
        end = header.find('\'', v + 1);
        if (end == std::string::npos) throw NpyError(src + ": malformed .npy header");
        return header.substr(v + 1, end - v - 1);
    }
    if (header[v] == '(') {
        end = header.find(')', v);
        if (end == std::string::npos) throw NpyError(src + ": malformed .npy header");
        return header.substr(v + 1, end - v - 1);
    }
    end = header.find_first_of(",}", v);
    return header.substr(v, end == std::string::npos ? std::string::npos : end - v);
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& src) {
    std::vector<int64_t> shape;
    std::stringstream ss(text);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
        size_t a = tok.find_first_not_of(' ');
        if (a == std::string::npos) continue;
        tok = tok.substr(a, tok.find_last_not_of(' ') - a + 1);
        size_t pos = 0;
        long long v = -1;
        try {
            v = std::stoll(tok, &pos);
        } catch (const std::exception&) {
            pos = 0;
        }
        if (pos != tok.size() || v < 0 || v > (int64_t{1} << 31)) throw NpyError(src + ": bad .npy shape entry '" + tok + "'");
        shape.push_back(v);
    }
    return shape;
}

}  // namespace

num::Tensor parse_npy(const std::string& b, const std::string& src) {
    if (b.size() < 10 || b.compare(0, 6, kMagic) != 0) throw NpyError(src + ": not a .npy file (bad magic)");
    uint8_t major = static_cast<uint8_t>(b[6]);
    size_t hlen, hoff;
    if (major == 1) {
        hlen = static_cast<uint8_t>(b[8]) | (static_cast<size_t>(static_cast<uint8_t>(b[9])) << 8);
        hoff = 10;
    } else if (major == 2 || major == 3) {
        if (b.size() < 12) throw NpyError(src + ": truncated .npy header");
        hlen = 0;
        for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<uint8_t>(b[8 + i])) << (8 * i);
        hoff = 12;
    } else {
        throw NpyError(src + ": unsupported .npy version " + std::to_string(major));
    }
    if (hoff + hlen > b.size()) throw NpyError(src + ": truncated .npy header");
    std::string header = b.substr(hoff, hlen);
    std::string descr = dict_value(header, "descr", src);
    if (dict_value(header, "fortran_order", src).find("True") != std::string::npos)
        throw NpyError(src + ": Fortran-order .npy arrays are not supported (save with np.ascontiguousarray)");
    const Descr* d = nullptr;
    for (const auto& x : kDescrs)
        if (descr == x.text) d = &x;
    if (!d) throw NpyError(src + ": unsupported .npy dtype '" + descr + "' (use float32, int8, uint8, int32, int64, ...)");
    auto shape = parse_shape(dict_value(header, "shape", src), src);
    size_t n = 1;
    for (int64_t s : shape) {
        if (s && n > (size_t{1} << 33) / static_cast<size_t>(s)) throw NpyError(src + ": .npy array too large");
        n *= static_cast<size_t>(s);
    }
    size_t need = n * num::dtype_size(d->dtype);
    if (b.size() - hoff - hlen != need)
        throw NpyError(src + ": .npy data has " + std::to_string(b.size() - hoff - hlen) + " bytes, shape needs " + std::to_string(need));
    num::Tensor t(d->dtype, shape);
    if (need) std::memcpy(t.raw(), b.data() + hoff + hlen, need);
    return t;
}

num::Tensor read_npy(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw NpyError(path + ": cannot open");
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return parse_npy(bytes, path);
}

std::string encode_npy(const num::Tensor& t) {
    const char* descr = nullptr;
    for (const auto& x : kDescrs)
        if (x.dtype == t.dtype()) descr = x.text;
    std::string shape;
    for (int i = 0; i < t.rank(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape()[static_cast<size_t>(i)]);
    if (t.rank() == 1) shape += ",";  // Python 1-tuple "(3,)"
    std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (";
    header += shape + "), }";
    size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string out(kMagic, 6);
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>((header.size() >> 8) & 0xff);
    out += header;
    out.append(reinterpret_cast<const char*>(t.raw()), t.nbytes());
    return out;
}

void write_npy(const std::string& path, const num::Tensor& t) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw NpyError(path + ": cannot create");
    std::string b = encode_npy(t);
    f.write(b.data(), static_cast<std::streamsize>(b.size()));
    if (!f) throw NpyError(path + ": write failed");
}

}  // namespace drv::ref
