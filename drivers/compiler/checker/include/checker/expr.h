// SPDX-License-Identifier: MIT
// Tiny expression language of the operator-spec DB (drivers/compiler/specs/*.json): rule values,
// preconditions and formula rules ("kernel_h*dilation_h - dilation_h - pads_top >= 0") are data,
// parsed once at load time and evaluated per node against a NodeView. Undefined values (missing
// attribute, absent input, unknown dim) propagate, so a rule that cannot be evaluated is skipped
// rather than guessed.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace drv::check {

/// A value in an expression: undefined, a number or a string (string attributes such as
/// auto_pad or mode).
struct EVal {
    enum class Kind { Undef, Num, Str } kind = Kind::Undef;
    double num = 0;
    std::string str;

    static EVal undef() { return {}; }
    static EVal of(double v) {
        EVal e;
        e.kind = Kind::Num;
        e.num = v;
        return e;
    }
    static EVal of(std::string s) {
        EVal e;
        e.kind = Kind::Str;
        e.str = std::move(s);
        return e;
    }
    bool defined() const { return kind != Kind::Undef; }
    bool is_num() const { return kind == Kind::Num; }
    /// "33", "0.5", "\"NOTSET\"" style text for messages.
    std::string text() const;
};

/// Resolves identifiers ("in0.d3", "attr.strides.0", "kernel_h") during evaluation. Implemented
/// by the checker's node context and by tests.
class Resolver {
   public:
    virtual ~Resolver() = default;
    virtual EVal lookup(const std::string& ident) const = 0;
};

/// Bad expression text: the message names the expression and the offending position.
class ExprError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

struct ExprNode;

/// A parsed expression. Grammar (C precedence): `a ?? b` (b when a is undefined), `||`, `&&`,
/// `== != < <= > >=`, `+ -`, `* / %`, unary `- !`, numbers, 'strings', identifiers with dots,
/// `min(a,b)`, `max(a,b)`, `ceil(a)`, `floor(a)`, `abs(a)`, `defined(a)`, parentheses.
class Expr {
   public:
    Expr() = default;
    /// Parses `text`; throws ExprError.
    static Expr parse(const std::string& text);
    EVal eval(const Resolver& r) const;
    const std::string& text() const { return text_; }
    bool empty() const { return !root_; }
    /// Identifiers used, in first-use order (for load-time validation).
    std::vector<std::string> identifiers() const;

   private:
    std::string text_;
    std::shared_ptr<const ExprNode> root_;
};

}  // namespace drv::check
