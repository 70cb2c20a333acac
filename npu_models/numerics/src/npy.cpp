// SPDX-License-Identifier: MIT
// .npy format: magic "\x93NUMPY", version, header length, a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded to 64 bytes, then the data.
#include "numerics/npy.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

#include "numerics/limits.h"

namespace num {
namespace {

struct DescrMap {
    const char* descr;
    DType dtype;
};
constexpr DescrMap kDescr[] = {{"<f4", DType::F32}, {"|i1", DType::I8}, {"|u1", DType::U8}, {"<i4", DType::I32},
                               {"<i8", DType::I64}, {"|b1", DType::Bool}, {"<f2", DType::F16}, {"<i2", DType::I16},
                               {"<u2", DType::U16}};

[[noreturn]] void bad(const std::string& path, const std::string& msg) { throw std::runtime_error(path + ": " + msg); }

std::string dict_value(const std::string& hdr, const std::string& key, const std::string& path) {
    const size_t k = hdr.find("'" + key + "'");
    if (k == std::string::npos) bad(path, "npy header lacks '" + key + "'");
    size_t p = hdr.find(':', k);
    if (p == std::string::npos) bad(path, "malformed npy header");
    ++p;
    while (p < hdr.size() && hdr[p] == ' ') ++p;
    if (p < hdr.size() && hdr[p] == '(') return hdr.substr(p, hdr.find(')', p) - p + 1);
    if (p < hdr.size() && hdr[p] == '\'') return hdr.substr(p + 1, hdr.find('\'', p + 1) - p - 1);
    return hdr.substr(p, hdr.find_first_of(",}", p) - p);
}

std::vector<int64_t> parse_shape(const std::string& tuple, const std::string& path) {
    std::vector<int64_t> s;
    std::string cur;
    for (char ch : tuple) {
        if (ch >= '0' && ch <= '9') cur += ch;
        else if (!cur.empty()) {
            if (cur.size() > 18) bad(path, "npy shape dimension " + cur + " is too large");
            s.push_back(std::stoll(cur));
            cur.clear();
        } else if (ch != '(' && ch != ')' && ch != ',' && ch != ' ' && ch != 'L') {
            bad(path, "bad shape in npy header");
        }
    }
    return s;
}

}  // namespace

Tensor read_npy(const std::string& path) {
    const uint64_t file_size = check_input_file(path);  // regular file within the budget
    std::ifstream f(path, std::ios::binary);
    if (!f) bad(path, "cannot open");
    char magic[8];
    if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) bad(path, "not a .npy file");
    uint32_t hlen = 0;
    if (magic[6] == 1) {
        unsigned char b[2];
        f.read(reinterpret_cast<char*>(b), 2);
        hlen = static_cast<uint32_t>(b[0] | (b[1] << 8));
    } else {
        unsigned char b[4];
        f.read(reinterpret_cast<char*>(b), 4);
        hlen = static_cast<uint32_t>(b[0] | (b[1] << 8) | (b[2] << 16)) | (static_cast<uint32_t>(b[3]) << 24);
    }
    const uint64_t data_at = (magic[6] == 1 ? 10u : 12u) + uint64_t{hlen};
    if (!f || data_at > file_size)
        bad(path, "npy header length " + std::to_string(hlen) + " runs past the end of the " + std::to_string(file_size) + "-byte file");
    std::string hdr(hlen, '\0');
    if (!f.read(&hdr[0], hlen)) bad(path, "truncated header");
    if (dict_value(hdr, "fortran_order", path).find("True") != std::string::npos) bad(path, "fortran_order arrays are not supported");
    const std::string descr = dict_value(hdr, "descr", path);
    const DescrMap* m = nullptr;
    for (const DescrMap& d : kDescr)
        if (descr == d.descr || (descr.size() == 3 && descr.substr(1) == std::string(d.descr).substr(1) && descr[0] == '=')) m = &d;
    if (!m) bad(path, "unsupported dtype '" + descr + "'");
    const std::vector<int64_t> shape = parse_shape(dict_value(hdr, "shape", path), path);
    // The data the header claims must be in the file before anything is allocated for it.
    const uint64_t need = checked_bytes(m->dtype, shape, path);
    if (need > file_size - data_at)
        bad(path, "npy header claims " + std::to_string(need) + " bytes of data (shape " +
                      dict_value(hdr, "shape", path) + "), the file holds " + std::to_string(file_size - data_at));
    Tensor t(m->dtype, shape);
    if (t.nbytes() && !f.read(reinterpret_cast<char*>(t.raw()), static_cast<std::streamsize>(t.nbytes()))) bad(path, "truncated data");
    return t;
}

void write_npy(const std::string& path, const Tensor& t) {
    const char* descr = nullptr;
    for (const DescrMap& d : kDescr)
        if (d.dtype == t.dtype()) descr = d.descr;
    if (!descr) throw std::runtime_error(path + ": cannot write dtype " + dtype_name(t.dtype()));
    std::string shape = "(";
    for (int64_t d : t.shape()) shape += std::to_string(d) + ", ";
    if (t.rank() > 1) shape.erase(shape.size() - 2);
    else if (t.rank() == 1) shape.erase(shape.size() - 1);
    shape += ")";
    std::string hdr = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    const size_t total = 10 + hdr.size() + 1;
    hdr.append((64 - total % 64) % 64, ' ');
    hdr += '\n';
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(path + ": cannot create");
    const char pre[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
    f.write(pre, 8);
    const unsigned char hl[2] = {static_cast<unsigned char>(hdr.size() & 0xff), static_cast<unsigned char>(hdr.size() >> 8)};
    f.write(reinterpret_cast<const char*>(hl), 2);
    f.write(hdr.data(), static_cast<std::streamsize>(hdr.size()));
    f.write(reinterpret_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.nbytes()));
    if (!f) throw std::runtime_error(path + ": write failed");
}

}  // namespace num
