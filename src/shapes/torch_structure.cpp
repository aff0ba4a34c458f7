// The torch.export structure of the dynamic shapes (rule C4, docs/input_observer_rules.md): one node per top-level
// argument mirroring its value tree, arranged as a tuple of positional arguments or a dict by parameter name, with
// *args grouped and the extra keywords nested under the **kwargs name.
#include "engine_state.hpp"

#include <algorithm>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

using node = dynamic_shapes::node;

node build_node(const value& v, const std::vector<std::size_t>& tensor_of, std::size_t& next);

// build_node's cases: a leaf takes the next flattened leaf's tensor (if any); a container mirrors its children.
struct node_builder {
  const std::vector<std::size_t>& tensor_of;
  std::size_t& next;

  node leaf() const {
    node n;
    const std::size_t t = tensor_of[next++];
    if (t != no_tensor) n.type = node::kind::tensor, n.tensor = t;
    return n;
  }
  node items(node::kind type, const std::vector<value>& children) const {
    node n;
    n.type = type;
    for (const value& item : children) n.children.emplace_back(std::string(), build_node(item, tensor_of, next));
    return n;
  }
  node fields(node::kind type, const value_fields& children) const {
    node n;
    n.type = type;
    for (const auto& [name, field] : children) n.children.emplace_back(name, build_node(field, tensor_of, next));
    return n;
  }

  node operator()(value_node::none) const { return leaf(); }
  node operator()(value_node::tensor) const { return leaf(); }
  node operator()(value_node::integer) const { return leaf(); }
  node operator()(value_node::floating) const { return leaf(); }
  node operator()(value_node::boolean) const { return leaf(); }
  node operator()(value_node::string) const { return leaf(); }
  node operator()(value_node::bytes) const { return leaf(); }
  node operator()(value_node::opaque) const { return leaf(); }
  node operator()(value_node::tuple t) const { return items(node::kind::tuple, t.items); }
  node operator()(value_node::list l) const { return items(node::kind::list, l.items); }
  node operator()(value_node::dict d) const { return fields(node::kind::dict, d.entries); }
  // A custom class (a struct) is described by the list of its flattened children.
  node operator()(value_node::structure s) const {
    node n = fields(node::kind::list, s.fields);
    n.class_name = s.name, n.structure = true;
    return n;
  }
  // A variant is its alternative to torch: Python holds the one value.
  node operator()(value_node::variant x) const { return build_node(x.alternative, tensor_of, next); }
};

node build_node(const value& v, const std::vector<std::size_t>& tensor_of, std::size_t& next) {
  return visit(v, node_builder{tensor_of, next});
}

void nest_extra_keywords(const recorded_state& s, std::vector<std::pair<std::string, node>>& entries) {
  const parameter* var_kw = s.variadic(parameter_kind::var_keyword);
  if (!var_kw) return;
  const auto extra = [&](const auto& e) { return !s.signature_index(e.first); };
  if (std::none_of(entries.begin(), entries.end(), extra)) return;
  if (std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.first == var_kw->name; })) {
    // Facts: argument (the **kwargs parameter's name).
    throw inference_error(inference_error_kind::keyword_collision,
                          "keyword argument name collision: a keyword argument named '" + var_kw->name +
                              "' conflicts with the **" + var_kw->name +
                              " parameter collecting the extra keyword arguments; passing it is not supported",
                          {{"argument", var_kw->name}});
  }
  node nested;
  nested.type = node::kind::dict;
  std::vector<std::pair<std::string, node>> kept;
  for (auto& e : entries) {
    if (extra(e)) {
      nested.children.push_back(std::move(e));
    } else {
      kept.push_back(std::move(e));
    }
  }
  kept.emplace_back(var_kw->name, std::move(nested));
  entries = std::move(kept);
}

// A tuple when every argument is positional (and there is neither a constant nor a *args parameter); otherwise
// a dict: positional arguments named by the signature, *args grouped in a tuple under its name, constants null,
// extra keywords nested under the **kwargs name.
node arrange(const recorded_state& s, const std::vector<slot>& slots, std::vector<node> nodes) {
  const parameter* var_pos = s.variadic(parameter_kind::var_positional);
  const stored_call& best = *s.best;
  const std::size_t n_args = best.inputs.args.size();
  node root;
  if (best.inputs.kwargs.empty() && best.constants.empty() && !var_pos) {
    root.type = node::kind::tuple;
    for (node& n : nodes) root.children.emplace_back("", std::move(n));
    return root;
  }
  root.type = node::kind::dict;
  std::vector<std::pair<std::string, node>> entries;
  const std::size_t n_named_args = var_pos ? std::min(n_args, s.n_named) : n_args;
  for (std::size_t i = 0; i < n_named_args; ++i) entries.emplace_back(slots[i].name, std::move(nodes[i]));
  if (var_pos && n_args > 0) {
    node extra;
    extra.type = node::kind::tuple;
    for (std::size_t i = n_named_args; i < n_args; ++i) extra.children.emplace_back("", std::move(nodes[i]));
    entries.emplace_back(var_pos->name, std::move(extra));
  }
  for (std::size_t i = n_args; i < slots.size(); ++i) entries.emplace_back(slots[i].name, std::move(nodes[i]));
  for (const auto& c : best.constants) entries.emplace_back(c.first, node{});
  nest_extra_keywords(s, entries);
  root.children = std::move(entries);
  return root;
}

}  // namespace

node build_root(const recorded_state& s, const std::vector<slot>& slots, const std::vector<std::size_t>& tensor_of) {
  std::size_t next = 0;
  std::vector<node> nodes;
  for (const slot& sl : slots) nodes.push_back(build_node(*sl.best_value, tensor_of, next));
  return arrange(s, slots, std::move(nodes));
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
