// SPDX-License-Identifier: MIT
// The spec-DB expression language: precedence, undefined propagation, defaults, strings, errors.
#include <gtest/gtest.h>

#include <map>

#include "checker/expr.h"

namespace drv::check {
namespace {

class MapResolver : public Resolver {
   public:
    std::map<std::string, EVal> m;
    EVal lookup(const std::string& id) const override {
        auto it = m.find(id);
        return it == m.end() ? EVal::undef() : it->second;
    }
};

EVal ev(const std::string& t, const MapResolver& r = {}) { return Expr::parse(t).eval(r); }

TEST(Expr, ArithmeticAndPrecedence) {
    EXPECT_EQ(ev("1 + 2 * 3").num, 7);
    EXPECT_EQ(ev("(1 + 2) * 3").num, 9);
    EXPECT_EQ(ev("7 % 4").num, 3);
    EXPECT_EQ(ev("-2 + 5").num, 3);
    EXPECT_EQ(ev("1 < 2 && 3 >= 3").num, 1);
    EXPECT_EQ(ev("!(1 == 1) || 0").num, 0);
    EXPECT_EQ(ev("min(3, 9) + max(3, 9) + ceil(0.2) + floor(1.8) + abs(-2)").num, 3 + 9 + 1 + 1 + 2);
}

TEST(Expr, IdentifiersDefaultsAndUndefined) {
    MapResolver r;
    r.m["attr.strides.0"] = EVal::of(2.0);
    r.m["attr.mode"] = EVal::of(std::string("nearest"));
    EXPECT_EQ(ev("attr.strides.0 ?? 1", r).num, 2);
    EXPECT_EQ(ev("attr.strides.1 ?? 1", r).num, 1);
    EXPECT_FALSE(ev("attr.strides.1 + 1", r).defined());
    EXPECT_EQ(ev("attr.mode == 'nearest'", r).num, 1);
    EXPECT_EQ(ev("defined(attr.strides.1)", r).num, 0);
    // an undefined side does not hide a decided conjunction/disjunction
    EXPECT_EQ(ev("attr.x > 1 && 0", r).num, 0);
    EXPECT_EQ(ev("attr.x > 1 || 1", r).num, 1);
    EXPECT_FALSE(ev("attr.x > 1 && 1", r).defined());
    EXPECT_FALSE(ev("1 / 0").defined());
}

TEST(Expr, IdentifierListAndErrors) {
    Expr e = Expr::parse("kernel_h*dilation_h - dilation_h - pads_top >= 0");
    EXPECT_EQ(e.identifiers(), (std::vector<std::string>{"kernel_h", "dilation_h", "pads_top"}));
    EXPECT_THROW(Expr::parse("1 +"), ExprError);
    EXPECT_THROW(Expr::parse("foo(1)"), ExprError);
    EXPECT_THROW(Expr::parse("'abc"), ExprError);
    EXPECT_THROW(Expr::parse("1 2"), ExprError);
}

}  // namespace
}  // namespace drv::check
