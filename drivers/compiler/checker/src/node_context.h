// SPDX-License-Identifier: MIT
// Resolves spec-DB identifiers against one graph node: tensor facts (in0.rank, in1.d2, out0.numel,
// in1.const, in0.per_channel, in0.bits, in0.dtype), attributes (attr.strides.0, attr.mode,
// attr.pads.len), constant data (data.in1.0), graph facts (nin, nout, opset, op, fused_act, bits)
// and the op/platform "bind" names (kernel_h, stride_w, ...).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "checker/checker.h"
#include "checker/expr.h"

namespace drv::check {

class NodeContext : public Resolver {
   public:
    NodeContext(const ir::Graph& g, const ir::Node& n, const PlatformSpec& p, const CheckOptions& o)
        : g_(g), n_(n), p_(p), o_(o) {}

    /// Bind maps searched in order (op, its bases, then the platform).
    void set_binds(std::vector<const std::map<std::string, Expr>*> binds) { binds_ = std::move(binds); }
    void set_fused_act(std::string act) { fused_act_ = std::move(act); }

    EVal lookup(const std::string& ident) const override;

    /// Input (is_out = false) or output tensor i; nullptr when absent.
    const ir::Value* tensor(bool is_out, size_t i) const;
    /// Quantization bit width of a tensor (options, dtype, platform default).
    int64_t bits_of(const ir::Value& v) const;
    const ir::Node& node() const { return n_; }
    const ir::Graph& graph() const { return g_; }

   private:
    EVal tensor_field(const ir::Value* v, const std::string& field) const;
    EVal attr_field(const std::string& rest) const;
    EVal data_field(const std::string& rest) const;

    const ir::Graph& g_;
    const ir::Node& n_;
    const PlatformSpec& p_;
    const CheckOptions& o_;
    std::vector<const std::map<std::string, Expr>*> binds_;
    std::string fused_act_;
    mutable int depth_ = 0;  // bind recursion guard
};

}  // namespace drv::check
