// SPDX-License-Identifier: MIT
// Encoding and decoding of tnpuv2 commands through the generated tables (hw/tnpuv2_cmds.h, from
// cmdstream.json): what the driver's encoder, the core's fetch unit, the decoder and the linter
// share. A stream is little-endian 32-bit words: the 4-word header, then commands (header word:
// opcode [7:0], payload length [31:16]; the payload).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/tnpuv2_cmds.h"

namespace hw::tnpuv2 {

/// Fixed record layouts of the format (docs/tnpuv2-command-stream.md): CONV QTABLE and ELTWISE
/// AFFINE records (int64 bias, int32 multiplier, int32 shift), POOL count records (int32
/// multiplier, int32 shift), GENBOX parameter block words per head.
constexpr uint64_t kQRecordBytes = 16;
constexpr uint64_t kPoolRecordBytes = 8;
constexpr uint32_t kGenboxHeadWords = 24;

/// One command: where it starts, its definition and payload.
struct Command {
    uint32_t pc = 0;  ///< word offset of the header word in the stream
    uint8_t opcode = 0;
    uint32_t header = 0;
    const CmdDef* def = nullptr;
    std::vector<uint32_t> payload;
};

uint32_t header_word(uint8_t opcode, uint16_t payload_words);

/// Raw bits of a field / its value (sign-extended when signed) / its float value.
uint32_t field_bits(const Command& c, const Field& f);
int64_t field(const Command& c, const Field& f);
float field_f32(const Command& c, const Field& f);
int64_t field_value(const Command& c, const FieldDef& f);
uint64_t field_addr(const Command& c, const Field& lo, const Field& hi);
/// The field definition behind a handle.
const FieldDef& field_def(const Command& c, const Field& f);

/// "" when the field's value is inside its range / enum, else the reason ("7 not in {0..5}").
std::string check_field(const Command& c, const FieldDef& f);
/// Per payload word, the set bits no field covers (reserved bits).
std::vector<uint32_t> reserved_bits(const Command& c);

/// A command of `opcode` with a zeroed payload of its defined length (invalid_argument if unknown).
Command make_command(uint8_t opcode);
/// Sets a field; std::invalid_argument naming command, field and range when the value does not fit.
void set_field(Command& c, const Field& f, int64_t value);
void set_field_f32(Command& c, const Field& f, float value);
void set_addr(Command& c, const Field& lo, const Field& hi, uint64_t addr);
/// Appends the command's words.
void append(std::vector<uint32_t>& words, const Command& c);
/// The 4-word stream header for a stream of `total_words` (header included).
std::vector<uint32_t> stream_header(uint32_t total_words);

/// Result of decoding one command or a stream: fault code (hw::tnpuv2::fault) and message.
struct DecodeError {
    uint32_t code = fault::NONE;
    std::string message;
    explicit operator bool() const { return code != fault::NONE; }
};
/// The command at word `pc` (its header and payload must lie inside `words`).
Command decode_command(const std::vector<uint32_t>& words, uint32_t pc, DecodeError& err);
/// Header check (magic, version, length) of a stream; returns the declared length in words.
uint32_t check_header(const std::vector<uint32_t>& words, DecodeError& err);

/// A stream split into commands, up to and including END, or up to the first malformed command.
struct DecodedStream {
    uint32_t version = 0, declared_words = 0;
    std::vector<Command> commands;
    bool ended = false;  ///< END seen
    DecodeError error;   ///< first problem (decode stops there)
    uint32_t error_pc = 0;
};
DecodedStream decode_stream(const std::vector<uint32_t>& words);

/// One line of disassembly: "[  12] CONV  MODE=CONV KERNEL_H=3 ..." (values as enum names).
std::string disasm_command(const Command& c);

}  // namespace hw::tnpuv2
