// SPDX-License-Identifier: MIT
// Graph IR bookkeeping: value table, topological order, structural validation, dead-node removal.
#include "compiler/ir/graph.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <sstream>
#include <string_view>

namespace drv::ir {

namespace {

/// Value name -> a number (node index, or a kind), for one pass over an unchanged graph: open
/// addressing over views of the graph's own strings, so no allocation per entry (10^6-node graphs
/// spent most of a pass in malloc with node-based maps, issue 23). The views must outlive the index.
class NameIndex {
public:
    static constexpr size_t kNone = SIZE_MAX;
    explicit NameIndex(size_t expected) {
        size_t cap = 16;
        while (cap < expected * 2) cap <<= 1;
        slots_.assign(cap, Slot{});
    }
    /// Adds `name` -> `v` unless `name` is there; returns the value it had (kNone when added).
    size_t insert(std::string_view name, size_t v) {
        if ((used_ + 1) * 2 > slots_.size()) grow();
        Slot& s = slot(name);
        if (s.value != kNone) return s.value;
        s = Slot{name, v};
        ++used_;
        return kNone;
    }
    size_t find(std::string_view name) const { return const_cast<NameIndex*>(this)->slot(name).value; }
    bool contains(std::string_view name) const { return find(name) != kNone; }

private:
    struct Slot {
        std::string_view name;
        size_t value = kNone;
    };
    Slot& slot(std::string_view name) {
        const size_t mask = slots_.size() - 1;
        for (size_t k = std::hash<std::string_view>()(name) & mask;; k = (k + 1) & mask)
            if (slots_[k].value == kNone || slots_[k].name == name) return slots_[k];
    }
    void grow() {
        std::vector<Slot> old(slots_.size() * 2);
        old.swap(slots_);
        for (const Slot& s : old)
            if (s.value != kNone) slot(s.name) = s;
    }
    std::vector<Slot> slots_;
    size_t used_ = 0;
};

/// The producer of every node output (the first one of a name, as emplace kept).
NameIndex producers(const std::vector<Node>& nodes) {
    NameIndex idx(nodes.size() * 2);
    for (size_t i = 0; i < nodes.size(); ++i)
        for (const std::string& o : nodes[i].outputs)
            if (!o.empty()) idx.insert(o, i);
    return idx;
}

}  // namespace

int64_t Value::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0 || (d && n > kMaxTensorElements / d)) return -1;
        n *= d;
    }
    return n;
}

std::string Value::shape_str() const { return shape_known ? shape_to_string(shape) : std::string("unknown"); }

std::string shape_to_string(const std::vector<int64_t>& shape) {
    if (shape.empty()) return "scalar";
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += 'x';
        s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
    }
    return s;
}

const std::string& Node::input(size_t i) const {
    static const std::string kEmpty;
    return i < inputs.size() ? inputs[i] : kEmpty;
}

std::string Node::label() const {
    std::string d = domain.empty() ? std::string() : domain + ".";
    return d + op_type + " '" + name + "'";
}

Value& Graph::add_value(Value v) {
    if (v.name.empty()) throw GraphError("value with an empty name");
    auto [it, inserted] = values_.emplace(v.name, std::move(v));
    if (!inserted) throw GraphError("value '" + it->first + "' defined twice");
    return it->second;
}

Value& Graph::get_or_add_value(const std::string& name) {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    Value v;
    v.name = name;
    return values_.emplace(name, std::move(v)).first->second;
}

Value* Graph::find_value(const std::string& name) {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
}

const Value* Graph::find_value(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
}

const Value& Graph::value(const std::string& name, const std::string& context) const {
    const Value* v = find_value(name);
    if (!v) throw GraphError((context.empty() ? std::string() : context + ": ") + "unknown value '" + name + "'");
    return *v;
}

Value& Graph::value(const std::string& name, const std::string& context) {
    return const_cast<Value&>(static_cast<const Graph*>(this)->value(name, context));
}

Node& Graph::add_node(Node n) {
    nodes_.push_back(std::move(n));
    return nodes_.back();
}

int64_t Graph::opset(const std::string& domain) const {
    auto it = opsets_.find(domain);
    return it == opsets_.end() ? 0 : it->second;
}

int Graph::producer(const std::string& value) const {
    for (size_t i = 0; i < nodes_.size(); ++i)
        for (const auto& o : nodes_[i].outputs)
            if (o == value) return static_cast<int>(i);
    return -1;
}

std::vector<size_t> Graph::consumers(const std::string& value) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < nodes_.size(); ++i)
        if (std::find(nodes_[i].inputs.begin(), nodes_[i].inputs.end(), value) != nodes_[i].inputs.end())
            out.push_back(i);
    return out;
}

std::vector<size_t> Graph::topological_order() const {
    // Hashed lookups and flat predecessor/user arrays instead of ordered maps/sets and a vector per
    // node: this runs several times per import and dominated 10^5-node graphs (issue 23). The order
    // is Kahn's with a min-heap on the original index (stable, deterministic); a graph already in
    // topological order (every producer ahead of its readers, the common case between passes) is
    // its own order under that rule, returned without the heap.
    const size_t n = nodes_.size();
    const NameIndex producer_of = producers(nodes_);
    std::vector<size_t> pred_begin(n + 1, 0), preds;  // CSR: the distinct predecessors of node i
    preds.reserve(n * 2);
    bool sorted = true;
    for (size_t i = 0; i < n; ++i) {
        const size_t first = preds.size();
        for (const auto& in : nodes_[i].inputs) {
            if (in.empty()) continue;
            const size_t p = producer_of.find(in);
            if (p == NameIndex::kNone) continue;
            preds.push_back(p);
            sorted &= p < i;
        }
        std::sort(preds.begin() + static_cast<std::ptrdiff_t>(first), preds.end());
        preds.erase(std::unique(preds.begin() + static_cast<std::ptrdiff_t>(first), preds.end()), preds.end());
        pred_begin[i + 1] = preds.size();
    }
    std::vector<size_t> order;
    order.reserve(n);
    if (sorted) {
        for (size_t i = 0; i < n; ++i) order.push_back(i);
        return order;
    }
    std::vector<size_t> indegree(n, 0), user_begin(n + 1, 0), users(preds.size());
    for (size_t i = 0; i < n; ++i) {
        indegree[i] = pred_begin[i + 1] - pred_begin[i];
        for (size_t k = pred_begin[i]; k < pred_begin[i + 1]; ++k) ++user_begin[preds[k] + 1];
    }
    for (size_t i = 0; i < n; ++i) user_begin[i + 1] += user_begin[i];
    std::vector<size_t> fill(user_begin.begin(), user_begin.end() - 1);
    for (size_t i = 0; i < n; ++i)
        for (size_t k = pred_begin[i]; k < pred_begin[i + 1]; ++k) users[fill[preds[k]]++] = i;
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
    for (size_t i = 0; i < n; ++i)
        if (indegree[i] == 0) ready.push(i);
    while (!ready.empty()) {
        size_t i = ready.top();
        ready.pop();
        order.push_back(i);
        for (size_t k = user_begin[i]; k < user_begin[i + 1]; ++k)
            if (--indegree[users[k]] == 0) ready.push(users[k]);
    }
    if (order.size() != n) {
        for (size_t i = 0; i < n; ++i)
            if (indegree[i] != 0)
                throw GraphError("graph has a cycle through node " + nodes_[i].label());
    }
    return order;
}

void Graph::sort_topologically() {
    std::vector<size_t> order = topological_order();
    bool identity = true;
    for (size_t i = 0; i < order.size() && identity; ++i) identity = order[i] == i;
    if (identity) return;
    std::vector<Node> sorted;
    sorted.reserve(nodes_.size());
    for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
    nodes_ = std::move(sorted);
}

void Graph::validate() const {
    // One index of every defined name: graph inputs and constants (kDefined), node outputs (their
    // node); views of the graph's strings, which this const pass does not change.
    constexpr size_t kDefined = SIZE_MAX - 1;
    NameIndex defined(values_.size() + nodes_.size() * 2);
    for (const auto& in : inputs_) {
        if (!find_value(in)) throw GraphError("graph input '" + in + "' has no value entry");
        defined.insert(in, kDefined);
    }
    for (const auto& [name, v] : values_)
        if (v.is_constant()) defined.insert(name, kDefined);
    for (size_t k = 0; k < nodes_.size(); ++k) {
        const Node& n = nodes_[k];
        if (n.outputs.empty()) throw GraphError("node " + n.label() + " has no outputs");
        for (const auto& o : n.outputs) {
            if (o.empty()) continue;
            const size_t was = defined.insert(o, k);
            if (was == kDefined)
                throw GraphError("node " + n.label() + " output '" + o + "' redefines a graph input or constant");
            if (was != NameIndex::kNone)
                throw GraphError("value '" + o + "' is produced by both " + nodes_[was].label() + " and " + n.label());
        }
    }
    for (const auto& n : nodes_)
        for (size_t i = 0; i < n.inputs.size(); ++i)
            if (!n.inputs[i].empty() && !defined.contains(n.inputs[i]))
                throw GraphError("node " + n.label() + " input " + std::to_string(i) + " '" + n.inputs[i] +
                                 "' is not a graph input, initializer or node output");
    for (const auto& o : outputs_)
        if (!defined.contains(o)) throw GraphError("graph output '" + o + "' is never produced");
    (void)topological_order();  // throws on cycles
}

bool Graph::remove_dead_nodes() {
    // `live` holds views of this graph's strings: the value sweep runs before any node moves.
    NameIndex live(outputs_.size() + nodes_.size() * 4 + inputs_.size());
    for (const auto& o : outputs_) live.insert(o, 0);
    std::vector<bool> keep(nodes_.size(), false);
    const std::vector<size_t> order = topological_order();
    for (size_t j = order.size(); j-- > 0;) {
        const size_t k = order[j];
        const Node& n = nodes_[k];
        bool used = std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& o) { return live.contains(o); });
        if (!used) continue;
        keep[k] = true;
        for (const auto& in : n.inputs)
            if (!in.empty()) live.insert(in, 0);
    }
    for (const auto& in : inputs_) live.insert(in, 0);
    for (size_t k = 0; k < nodes_.size(); ++k)
        if (keep[k])
            for (const auto& o : nodes_[k].outputs) live.insert(o, 0);
    for (auto it = values_.begin(); it != values_.end();) it = live.contains(it->first) ? std::next(it) : values_.erase(it);
    const bool removed = std::find(keep.begin(), keep.end(), false) != keep.end();
    if (removed) {
        std::vector<Node> kept;
        kept.reserve(nodes_.size());
        for (size_t k = 0; k < nodes_.size(); ++k)
            if (keep[k]) kept.push_back(std::move(nodes_[k]));
        nodes_ = std::move(kept);
    }
    return removed;
}

std::string Graph::dump() const {
    std::ostringstream os;
    for (const auto& in : inputs_) {
        const Value& v = value(in);
        os << "input " << in << ": " << num::dtype_name(v.dtype) << " " << v.shape_str() << "\n";
    }
    for (const auto& n : nodes_) {
        os << n.label() << " (";
        for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << n.inputs[i];
        os << ") -> (";
        for (size_t i = 0; i < n.outputs.size(); ++i) {
            const Value* v = find_value(n.outputs[i]);
            os << (i ? ", " : "") << n.outputs[i];
            if (v) os << ": " << num::dtype_name(v->dtype) << " " << v->shape_str();
        }
        os << ")\n";
    }
    for (const auto& o : outputs_) os << "output " << o << "\n";
    return os.str();
}

namespace {
template <typename T>
const T* attr_get(const num::Attributes& a, const std::string& name) {
    auto it = a.all().find(name);
    return it == a.all().end() ? nullptr : std::get_if<T>(&it->second);
}
}  // namespace

int64_t attr_int(const num::Attributes& a, const std::string& name, int64_t dflt) {
    const int64_t* v = attr_get<int64_t>(a, name);
    return v ? *v : dflt;
}

float attr_float(const num::Attributes& a, const std::string& name, float dflt) {
    const float* v = attr_get<float>(a, name);
    return v ? *v : dflt;
}

std::string attr_string(const num::Attributes& a, const std::string& name, const std::string& dflt) {
    const std::string* v = attr_get<std::string>(a, name);
    return v ? *v : dflt;
}

std::vector<int64_t> attr_ints(const num::Attributes& a, const std::string& name, const std::vector<int64_t>& dflt) {
    const auto* v = attr_get<std::vector<int64_t>>(a, name);
    return v ? *v : dflt;
}

}  // namespace drv::ir
