// SPDX-License-Identifier: MIT
// Graph IR bookkeeping: value table, topological order, structural validation, dead-node removal.
#include "compiler/ir/graph.h"

#include <algorithm>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <sstream>

namespace drv::ir {

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
    // Hashed lookups and a per-node sorted vector instead of ordered maps/sets: this runs several
    // times per import and dominated 10^5-node graphs (issue 23). The order is unchanged.
    std::unordered_map<std::string, size_t> producer_of;
    producer_of.reserve(nodes_.size() * 2);
    for (size_t i = 0; i < nodes_.size(); ++i)
        for (const auto& o : nodes_[i].outputs)
            if (!o.empty()) producer_of.emplace(o, i);
    std::vector<size_t> indegree(nodes_.size(), 0);
    std::vector<std::vector<size_t>> users(nodes_.size());
    std::vector<size_t> preds;
    for (size_t i = 0; i < nodes_.size(); ++i) {
        preds.clear();
        for (const auto& in : nodes_[i].inputs) {
            if (in.empty()) continue;
            auto it = producer_of.find(in);
            if (it != producer_of.end()) preds.push_back(it->second);
        }
        std::sort(preds.begin(), preds.end());
        preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
        for (size_t p : preds) users[p].push_back(i);
        indegree[i] = preds.size();
    }
    // Min-heap on the original index: stable, deterministic order.
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
    for (size_t i = 0; i < nodes_.size(); ++i)
        if (indegree[i] == 0) ready.push(i);
    std::vector<size_t> order;
    order.reserve(nodes_.size());
    while (!ready.empty()) {
        size_t i = ready.top();
        ready.pop();
        order.push_back(i);
        for (size_t u : users[i])
            if (--indegree[u] == 0) ready.push(u);
    }
    if (order.size() != nodes_.size()) {
        for (size_t i = 0; i < nodes_.size(); ++i)
            if (indegree[i] != 0)
                throw GraphError("graph has a cycle through node " + nodes_[i].label());
    }
    return order;
}

void Graph::sort_topologically() {
    std::vector<size_t> order = topological_order();
    std::vector<Node> sorted;
    sorted.reserve(nodes_.size());
    for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
    nodes_ = std::move(sorted);
}

void Graph::validate() const {
    std::set<std::string> defined;
    for (const auto& in : inputs_) {
        if (!find_value(in)) throw GraphError("graph input '" + in + "' has no value entry");
        defined.insert(in);
    }
    for (const auto& [name, v] : values_)
        if (v.is_constant()) defined.insert(name);
    std::map<std::string, const Node*> produced;
    for (const auto& n : nodes_) {
        if (n.outputs.empty()) throw GraphError("node " + n.label() + " has no outputs");
        for (const auto& o : n.outputs) {
            if (o.empty()) continue;
            if (defined.count(o) && !produced.count(o))
                throw GraphError("node " + n.label() + " output '" + o +
                                 "' redefines a graph input or constant");
            auto [it, ok] = produced.emplace(o, &n);
            if (!ok)
                throw GraphError("value '" + o + "' is produced by both " + it->second->label() + " and " +
                                 n.label());
        }
    }
    for (const auto& [o, n] : produced) defined.insert(o);
    for (const auto& n : nodes_)
        for (size_t i = 0; i < n.inputs.size(); ++i)
            if (!n.inputs[i].empty() && !defined.count(n.inputs[i]))
                throw GraphError("node " + n.label() + " input " + std::to_string(i) + " '" + n.inputs[i] +
                                 "' is not a graph input, initializer or node output");
    for (const auto& o : outputs_)
        if (!defined.count(o)) throw GraphError("graph output '" + o + "' is never produced");
    (void)topological_order();  // throws on cycles
}

void Graph::remove_dead_nodes() {
    std::unordered_set<std::string> live(outputs_.begin(), outputs_.end());
    std::vector<bool> keep(nodes_.size(), false);
    const std::vector<size_t> order = topological_order();
    for (size_t j = order.size(); j-- > 0;) {
        const size_t k = order[j];
        const Node& n = nodes_[k];
        bool used = std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& o) { return live.count(o); });
        if (!used) continue;
        keep[k] = true;
        for (const auto& in : n.inputs)
            if (!in.empty()) live.insert(in);
    }
    std::vector<Node> kept;
    for (size_t k = 0; k < nodes_.size(); ++k)
        if (keep[k]) kept.push_back(std::move(nodes_[k]));
    nodes_ = std::move(kept);
    for (const auto& in : inputs_) live.insert(in);
    for (const auto& n : nodes_)
        for (const auto& o : n.outputs) live.insert(o);
    for (auto it = values_.begin(); it != values_.end();) it = live.count(it->first) ? std::next(it) : values_.erase(it);
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
