// SPDX-License-Identifier: MIT
// The operator-spec database: one JSON file per toolchain/platform in drivers/compiler/specs/,
// each rule citing its seed (file + section or operator heading). Loaded with a strict schema:
// unknown keys, wrong types and bad expressions are errors naming the file and the JSON path.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "checker/expr.h"

namespace drv::check {

/// A spec file that does not follow the schema; message "<file>: <json path>: <problem>".
class SpecError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// Where a rule comes from: seed file name and section/operator heading.
struct Source {
    std::string seed;
    std::string section;
    std::string text() const;  ///< "seed 001 §3.2.5 Convolution"
};

enum class RuleKind {
    Interval,   ///< value in [min, max] (bounds may be open)
    Set,        ///< value in an allowed set (numbers or strings)
    Rank,       ///< tensor rank in an allowed set
    Dtype,      ///< tensor dtype in an allowed set
    Quant,      ///< tensor quantization granularity (per-layer/per-channel) and bit width
    Broadcast,  ///< each input's broadcast pattern against the output in an allowed set
    Alignment,  ///< value is a multiple of N
    Constant,   ///< tensor must be an offline constant (initializer)
    Formula,    ///< boolean expression must hold
    Fused,      ///< fused activation in an allowed set
    Opset,      ///< graph opset of the node's domain within [min, max]
    Target,     ///< operator exists only on the listed targets
    Status,     ///< the operator itself is unsupported/restricted on this platform
    Note,       ///< documented constraint that cannot be checked on a graph (listed, not checked)
};
const char* rule_kind_name(RuleKind k);

/// One rule. Which fields are used depends on kind (see docs in drivers/compiler/specs/README.md).
struct Rule {
    RuleKind kind = RuleKind::Note;
    std::string param;           ///< name shown in messages ("kernel_w", "input rank")
    Expr value;                  ///< quantity checked (interval/set/alignment/fused)
    Expr when;                   ///< precondition; rule applies only when it evaluates true
    Expr expr;                   ///< formula that must hold
    std::string tensor;          ///< "in0", "out0", "in*" (all present inputs), "out*"
    double min = 0, max = 0;
    bool has_min = false, has_max = false, min_open = false, max_open = false;
    std::vector<EVal> values;    ///< set / fused
    std::vector<int64_t> ranks;
    std::vector<std::string> dtypes;
    std::vector<std::string> granularity;  ///< "per-layer", "per-channel"
    std::vector<int64_t> bits;             ///< allowed quantization bit widths
    std::vector<std::string> patterns;     ///< broadcast masks ("bc11", "scalar", ...)
    std::string dims;                      ///< broadcast dim letters, e.g. "bchw" or "nhwc"
    int64_t multiple = 0;
    std::vector<std::string> targets;
    std::string status;                    ///< for Status rules
    std::string message;                   ///< plain-words description of the rule
    Source source;
};

/// How an operator entry matches graph nodes.
struct Match {
    std::string op_type;           ///< IR op_type ("Conv", "Add")
    std::string domain;            ///< IR domain ("" = ai.onnx, "tflite")
    Expr when;                     ///< optional extra condition (e.g. depthwise)
    std::vector<std::string> then; ///< fused successor op types (ConvolutionRelu: {"Relu"})
};

struct OpSpec {
    std::string name;              ///< operator heading name ("Convolution")
    std::string heading;           ///< full heading ("3.2.5 Convolution")
    std::string seed;              ///< seed file
    std::string framework;         ///< "onnx"/"tflite" where the platform has several
    std::string inherits;          ///< base op whose rules apply too (fused ops, aliases)
    std::vector<Match> match;
    std::map<std::string, Expr> bind;  ///< named quantities for this op
    std::vector<Rule> rules;           ///< own rules (inherited ones are resolved by the DB)
    std::vector<Rule> training;        ///< on-device training table rows (informational)
};

struct Uncovered {
    std::string heading;
    std::string reason;
    Source source;
};

/// One toolchain/platform file.
struct PlatformSpec {
    std::string file;              ///< path it was loaded from
    std::string id;                ///< --platform value ("RK3588")
    std::vector<std::string> aliases;
    std::string toolchain;
    std::string seed;
    std::string section;
    std::string engine = "NPU";    ///< what a supported node runs on: "NPU" or "MCU"
    bool cpu_fallback = false;
    std::string cpu_fallback_note;
    bool static_shapes = true;
    bool tables_in_seed = true;
    /// Verdict for an operator the tables do not list: "cpu_fallback", "unsupported", or
    /// "not_in_seed" where the seed holds only part of the platform's table (RV1103/RV1106 cut off,
    /// RV1103B/RV1106B partial). Empty = cpu_fallback ? "cpu_fallback" : "unsupported".
    std::string unlisted;
    std::string note;
    std::vector<std::string> targets;  ///< code-generation targets of this platform
    int64_t quant_bits_default = 8;
    /// Graph dtype -> dtypes the toolchain converts it to at build time (e.g. a float32 ONNX
    /// model is built as float16 or quantized int8); a dtype rule passes if any of them is allowed.
    std::map<std::string, std::vector<std::string>> dtype_conversions;
    std::map<std::string, Expr> bind;  ///< platform-wide named quantities
    std::vector<OpSpec> ops;
    std::vector<Uncovered> uncovered;

    const OpSpec* find_op(const std::string& name) const;
    /// Own rules plus those inherited through `inherits` chains (cycle-safe).
    std::vector<const Rule*> effective_rules(const OpSpec& op) const;
    /// Same, each with the operator that owns the rule (for citations).
    std::vector<std::pair<const Rule*, const OpSpec*>> effective_rules_with_owner(const OpSpec& op) const;
};

/// All loaded platforms, sorted by id.
class SpecDb {
   public:
    /// Loads every *.json in `dir` (sorted by name). Throws SpecError.
    static SpecDb load_dir(const std::string& dir);
    /// Loads one file. Throws SpecError.
    static PlatformSpec load_file(const std::string& path);
    /// Parses spec JSON text; `file` names it in messages. Throws SpecError.
    static PlatformSpec parse(const std::string& text, const std::string& file);

    void add(PlatformSpec p);
    const std::vector<PlatformSpec>& platforms() const { return platforms_; }
    /// Case-insensitive match on id or alias; nullptr when unknown.
    const PlatformSpec* find(const std::string& name) const;
    std::vector<std::string> ids() const;

   private:
    std::vector<PlatformSpec> platforms_;
};

/// The title of the vendor document a spec cites ("001_....txt" -> "RKNN Compiler V2.3.2 operator spec").
std::string document_title(const std::string& seed);

/// Default DB directory: $NPUSIM_SPECS_DIR, else share/npusim/specs beside the binary (npusim/datadir.h).
std::string default_specs_dir();

}  // namespace drv::check
