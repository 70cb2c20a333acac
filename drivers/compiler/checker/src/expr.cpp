// SPDX-License-Identifier: MIT
// Recursive-descent parser and evaluator for the spec DB expression language (see expr.h).
#include "checker/expr.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace drv::check {

struct ExprNode {
    enum class Op { Num, Str, Ident, Neg, Not, Bin, Call } op = Op::Num;
    double num = 0;
    std::string name;  // identifier, string literal, binary operator or function name
    std::vector<std::shared_ptr<const ExprNode>> kids;
};

using NodeP = std::shared_ptr<const ExprNode>;

std::string EVal::text() const {
    if (kind == Kind::Undef) return "undefined";
    if (kind == Kind::Str) return "\"" + str + "\"";
    if (num == std::floor(num) && std::fabs(num) < 9e15) return std::to_string(static_cast<long long>(num));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", num);
    return buf;
}

namespace {

class Parser {
   public:
    explicit Parser(const std::string& t) : t_(t) {}
    NodeP parse_all() {
        NodeP n = parse_default();
        skip();
        if (p_ != t_.size()) fail("unexpected text");
        return n;
    }

   private:
    const std::string& t_;
    size_t p_ = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw ExprError("expression '" + t_ + "': " + what + " at offset " + std::to_string(p_));
    }
    void skip() {
        while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
    }
    bool eat(const char* s) {
        skip();
        size_t n = std::char_traits<char>::length(s);
        if (t_.compare(p_, n, s) == 0) {
            p_ += n;
            return true;
        }
        return false;
    }
    static NodeP bin(const std::string& op, NodeP a, NodeP b) {
        auto n = std::make_shared<ExprNode>();
        n->op = ExprNode::Op::Bin;
        n->name = op;
        n->kids = {std::move(a), std::move(b)};
        return n;
    }
    NodeP parse_default() {
        NodeP a = parse_or();
        while (eat("??")) a = bin("??", a, parse_or());
        return a;
    }
    NodeP parse_or() {
        NodeP a = parse_and();
        while (eat("||")) a = bin("||", a, parse_and());
        return a;
    }
    NodeP parse_and() {
        NodeP a = parse_cmp();
        while (eat("&&")) a = bin("&&", a, parse_cmp());
        return a;
    }
    NodeP parse_cmp() {
        NodeP a = parse_add();
        for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
            if (eat(op)) return bin(op, a, parse_add());
        }
        return a;
    }
    NodeP parse_add() {
        NodeP a = parse_mul();
        for (;;) {
            if (eat("+")) a = bin("+", a, parse_mul());
            else if (eat("-")) a = bin("-", a, parse_mul());
            else return a;
        }
    }
    NodeP parse_mul() {
        NodeP a = parse_unary();
        for (;;) {
            if (eat("*")) a = bin("*", a, parse_unary());
            else if (eat("/")) a = bin("/", a, parse_unary());
            else if (eat("%")) a = bin("%", a, parse_unary());
            else return a;
        }
    }
    NodeP parse_unary() {
        if (eat("-")) return unary(ExprNode::Op::Neg, parse_unary());
        skip();
        if (p_ < t_.size() && t_[p_] == '!' && (p_ + 1 >= t_.size() || t_[p_ + 1] != '=')) {
            ++p_;
            return unary(ExprNode::Op::Not, parse_unary());
        }
        return parse_primary();
    }
    static NodeP unary(ExprNode::Op op, NodeP a) {
        auto n = std::make_shared<ExprNode>();
        n->op = op;
        n->kids = {std::move(a)};
        return n;
    }
    NodeP parse_primary() {
        skip();
        if (p_ >= t_.size()) fail("unexpected end");
        char c = t_[p_];
        auto n = std::make_shared<ExprNode>();
        if (c == '(') {
            ++p_;
            NodeP inner = parse_default();
            if (!eat(")")) fail("expected ')'");
            return inner;
        }
        if (c == '\'') {
            size_t end = t_.find('\'', p_ + 1);
            if (end == std::string::npos) fail("unterminated string");
            n->op = ExprNode::Op::Str;
            n->name = t_.substr(p_ + 1, end - p_ - 1);
            p_ = end + 1;
            return n;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            size_t used = 0;
            try {
                n->num = std::stod(t_.substr(p_), &used);
            } catch (const std::exception&) {
                fail("bad number");
            }
            n->op = ExprNode::Op::Num;
            p_ += used;
            return n;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t s = p_;
            while (p_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[p_])) || t_[p_] == '_' ||
                                      t_[p_] == '.'))
                ++p_;
            n->name = t_.substr(s, p_ - s);
            if (eat("(")) {
                n->op = ExprNode::Op::Call;
                if (!eat(")")) {
                    do n->kids.push_back(parse_default());
                    while (eat(","));
                    if (!eat(")")) fail("expected ')'");
                }
                check_call(*n);
                return n;
            }
            n->op = ExprNode::Op::Ident;
            return n;
        }
        fail(std::string("unexpected character '") + c + "'");
    }
    void check_call(const ExprNode& n) const {
        size_t want = (n.name == "min" || n.name == "max") ? 2 : 1;
        if (n.name != "min" && n.name != "max" && n.name != "ceil" && n.name != "floor" && n.name != "abs" &&
            n.name != "defined")
            fail("unknown function '" + n.name + "'");
        if (n.kids.size() != want) fail("wrong argument count for '" + n.name + "'");
    }
};

EVal eval_node(const ExprNode& n, const Resolver& r);

EVal eval_bin(const ExprNode& n, const Resolver& r) {
    const std::string& op = n.name;
    EVal a = eval_node(*n.kids[0], r);
    if (op == "??") return a.defined() ? a : eval_node(*n.kids[1], r);
    if (op == "&&" || op == "||") {
        // Undefined operands make the whole condition undefined unless the other side decides.
        if (a.is_num() && op == "&&" && a.num == 0) return EVal::of(0.0);
        if (a.is_num() && op == "||" && a.num != 0) return EVal::of(1.0);
        EVal b = eval_node(*n.kids[1], r);
        if (b.is_num() && op == "&&" && b.num == 0) return EVal::of(0.0);
        if (b.is_num() && op == "||" && b.num != 0) return EVal::of(1.0);
        if (!a.is_num() || !b.is_num()) return EVal::undef();
        return EVal::of(op == "&&" ? 1.0 : 0.0);
    }
    EVal b = eval_node(*n.kids[1], r);
    if (!a.defined() || !b.defined()) return EVal::undef();
    if (a.kind == EVal::Kind::Str || b.kind == EVal::Kind::Str) {
        if (a.kind != b.kind) return EVal::of(op == "!=" ? 1.0 : 0.0);
        if (op == "==") return EVal::of(a.str == b.str ? 1.0 : 0.0);
        if (op == "!=") return EVal::of(a.str != b.str ? 1.0 : 0.0);
        return EVal::undef();
    }
    double x = a.num, y = b.num;
    if (op == "+") return EVal::of(x + y);
    if (op == "-") return EVal::of(x - y);
    if (op == "*") return EVal::of(x * y);
    if (op == "/") return y == 0 ? EVal::undef() : EVal::of(x / y);
    if (op == "%") return y == 0 ? EVal::undef() : EVal::of(std::fmod(x, y));
    if (op == "==") return EVal::of(x == y ? 1.0 : 0.0);
    if (op == "!=") return EVal::of(x != y ? 1.0 : 0.0);
    if (op == "<") return EVal::of(x < y ? 1.0 : 0.0);
    if (op == "<=") return EVal::of(x <= y ? 1.0 : 0.0);
    if (op == ">") return EVal::of(x > y ? 1.0 : 0.0);
    return EVal::of(x >= y ? 1.0 : 0.0);
}

EVal eval_call(const ExprNode& n, const Resolver& r) {
    EVal a = eval_node(*n.kids[0], r);
    if (n.name == "defined") return EVal::of(a.defined() ? 1.0 : 0.0);
    if (!a.is_num()) return EVal::undef();
    if (n.name == "ceil") return EVal::of(std::ceil(a.num));
    if (n.name == "floor") return EVal::of(std::floor(a.num));
    if (n.name == "abs") return EVal::of(std::fabs(a.num));
    EVal b = eval_node(*n.kids[1], r);
    if (!b.is_num()) return EVal::undef();
    return EVal::of(n.name == "min" ? std::min(a.num, b.num) : std::max(a.num, b.num));
}

EVal eval_node(const ExprNode& n, const Resolver& r) {
    switch (n.op) {
        case ExprNode::Op::Num: return EVal::of(n.num);
        case ExprNode::Op::Str: return EVal::of(n.name);
        case ExprNode::Op::Ident: return r.lookup(n.name);
        case ExprNode::Op::Neg: {
            EVal a = eval_node(*n.kids[0], r);
            return a.is_num() ? EVal::of(-a.num) : EVal::undef();
        }
        case ExprNode::Op::Not: {
            EVal a = eval_node(*n.kids[0], r);
            return a.is_num() ? EVal::of(a.num == 0 ? 1.0 : 0.0) : EVal::undef();
        }
        case ExprNode::Op::Bin: return eval_bin(n, r);
        case ExprNode::Op::Call: return eval_call(n, r);
    }
    return EVal::undef();
}

void collect(const ExprNode& n, std::vector<std::string>& out) {
    if (n.op == ExprNode::Op::Ident) {
        for (const auto& s : out)
            if (s == n.name) return;
        out.push_back(n.name);
    }
    for (const auto& k : n.kids) collect(*k, out);
}

}  // namespace

Expr Expr::parse(const std::string& text) {
    Expr e;
    e.text_ = text;
    Parser p(text);
    e.root_ = p.parse_all();
    return e;
}

EVal Expr::eval(const Resolver& r) const { return root_ ? eval_node(*root_, r) : EVal::undef(); }

std::vector<std::string> Expr::identifiers() const {
    std::vector<std::string> out;
    if (root_) collect(*root_, out);
    return out;
}

}  // namespace drv::check
