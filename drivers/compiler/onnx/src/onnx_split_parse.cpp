// SPDX-License-Identifier: MIT
// parse_model_split (onnx_internal.h): a ModelProto parse that leaves the initializers' raw_data
// in the caller's buffer. The wire format is walked down ModelProto.graph (field 7) ->
// GraphProto.initializer (field 5) -> TensorProto.raw_data (field 9); every other run of fields
// is handed to protobuf as a piece and merged into the same message, which is what parsing the
// concatenation does (protobuf merge semantics), so the result equals ParseFromArray minus
// raw_data.
#include <google/protobuf/io/coded_stream.h>

#include "onnx_internal.h"

namespace drv::importer {

namespace {

constexpr uint32_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
constexpr uint32_t kWireVarint = 0, kWireFixed64 = 1, kWireLen = 2, kWireFixed32 = 5;

/// Reads a base-128 varint at p (< end); false when truncated or longer than 10 bytes.
bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 70 && p < end; shift += 7) {
        const uint8_t b = *p++;
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

/// One field: its number, its whole extent [start, next) and for LEN fields the payload.
struct Field {
    uint32_t number = 0, wire = 0;
    const uint8_t* start = nullptr;
    const uint8_t* payload = nullptr;
    size_t len = 0;
    const uint8_t* next = nullptr;
};

bool read_field(const uint8_t* p, const uint8_t* end, Field& f) {
    f.start = p;
    uint64_t key = 0;
    if (!read_varint(p, end, key)) return false;
    f.number = static_cast<uint32_t>(key >> 3);
    f.wire = static_cast<uint32_t>(key & 7);
    if (f.number == 0 || (key >> 3) > 0x1fffffff) return false;
    uint64_t v = 0;
    switch (f.wire) {
        case kWireVarint:
            if (!read_varint(p, end, v)) return false;
            break;
        case kWireFixed64:
            if (end - p < 8) return false;
            p += 8;
            break;
        case kWireFixed32:
            if (end - p < 4) return false;
            p += 4;
            break;
        case kWireLen:
            if (!read_varint(p, end, v) || v > static_cast<uint64_t>(end - p)) return false;
            f.payload = p;
            f.len = static_cast<size_t>(v);
            p += v;
            break;
        default:
            return false;  // groups (deprecated) and invalid wire types: the ordinary parse decides
    }
    f.next = p;
    return true;
}

/// Merges the encoded fields [b, e) into msg.
bool merge_piece(const uint8_t* b, const uint8_t* e, google::protobuf::MessageLite& msg, int depth_left) {
    if (b == e) return true;
    google::protobuf::io::CodedInputStream cis(b, static_cast<int>(e - b));
    cis.SetRecursionLimit(depth_left);
    return msg.MergePartialFromCodedStream(&cis) && cis.ConsumedEntireMessage();
}

/// Walks the fields of a message in [p, end): the `special` field goes to `on_special`, every
/// run of other fields is merged into msg.
template <typename OnSpecial>
bool walk(const uint8_t* p, const uint8_t* end, uint32_t special, google::protobuf::MessageLite& msg, int depth_left,
          OnSpecial on_special) {
    const uint8_t* run = p;
    while (p < end) {
        Field f;
        if (!read_field(p, end, f)) return false;
        if (f.number == special && f.wire == kWireLen) {
            if (!merge_piece(run, f.start, msg, depth_left) || !on_special(f)) return false;
            run = f.next;
        }
        p = f.next;
    }
    return merge_piece(run, end, msg, depth_left);
}

}  // namespace

bool parse_model_split(const uint8_t* data, size_t size, ::onnx::ModelProto& m, std::vector<RawSpan>& spans) {
    constexpr int kDepth = 64;  // as the ordinary parse's recursion limit
    spans.clear();
    const uint8_t* end = data + size;
    const bool ok = walk(data, end, kModelGraph, m, kDepth, [&](const Field& gf) {
        ::onnx::GraphProto& g = *m.mutable_graph();
        return walk(gf.payload, gf.payload + gf.len, kGraphInitializer, g, kDepth - 1, [&](const Field& tf) {
            ::onnx::TensorProto& t = *g.add_initializer();
            RawSpan raw;
            const bool tok = walk(tf.payload, tf.payload + tf.len, kTensorRawData, t, kDepth - 2, [&](const Field& rf) {
                raw = {reinterpret_cast<const char*>(rf.payload), rf.len, true};  // the last one wins
                return true;
            });
            spans.resize(static_cast<size_t>(g.initializer_size()));
            spans.back() = raw;
            return tok;
        });
    });
    if (!ok) spans.clear();
    return ok;
}

}  // namespace drv::importer
