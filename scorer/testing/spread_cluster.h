#ifndef KSCORE_SCORER_TESTING_SPREAD_CLUSTER_H_
#define KSCORE_SCORER_TESTING_SPREAD_CLUSTER_H_

// A small cluster (nodes and the pods on them) that answers a pod's plan
// (pb::PlanResponse) the way the shim's ClusterIndex does, so plugin tests
// can run kube-scheduler's own cases through the plan's queries:
//
//   SpreadCluster c;
//   c.AddNode(MakeNode().Name("a").Label("zone", "z1").Obj());
//   c.AddPod(Existing("p1").On("a").Label("foo", ""));
//   SpreadCluster::Answered answered = c.Answer(pod, plan);

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kscore/scorer/v1/scorer.pb.h"
#include "model/selectors.h"

namespace kscore::testing {

namespace pb = ::kscore::scorer::v1;

// A pod already on a node (bound), as st.MakePod()...Node(n).
class ExistingPod {
 public:
  explicit ExistingPod(std::string name) : name_(std::move(name)) {}
  ExistingPod& On(std::string node) {
    node_ = std::move(node);
    return *this;
  }
  ExistingPod& Namespace(std::string ns) {
    ns_ = std::move(ns);
    return *this;
  }
  ExistingPod& Label(const std::string& k, const std::string& v) {
    labels_[k] = v;
    return *this;
  }
  // metadata.deletionTimestamp set.
  ExistingPod& Terminating() {
    terminating_ = true;
    return *this;
  }

  const std::string& name() const { return name_; }
  const std::string& node() const { return node_; }
  const std::string& ns() const { return ns_; }
  const model::LabelMap& labels() const { return labels_; }
  bool terminating() const { return terminating_; }

 private:
  std::string name_;
  std::string node_;
  std::string ns_ = "default";
  model::LabelMap labels_;
  bool terminating_ = false;
};

inline ExistingPod Existing(std::string name) {
  return ExistingPod(std::move(name));
}

class SpreadCluster {
 public:
  SpreadCluster& AddNode(pb::Node node) {
    nodes_.push_back(std::move(node));
    return *this;
  }
  SpreadCluster& AddPod(ExistingPod pod) {
    pods_.push_back(std::move(pod));
    return *this;
  }
  const std::vector<pb::Node>& nodes() const { return nodes_; }

  struct Answered {
    pb::ClusterData cluster;
    // Every node of the cluster with its query_counts, in AddNode order.
    std::vector<pb::Node> nodes;
    // The nodes named, in the order named.
    std::vector<const pb::Node*> Only(
        const std::vector<std::string>& names) const {
      std::vector<const pb::Node*> out;
      for (const std::string& n : names) {
        for (const pb::Node& node : nodes) {
          if (node.name() == n) out.push_back(&node);
        }
      }
      return out;
    }
    std::vector<const pb::Node*> All() const {
      std::vector<const pb::Node*> out;
      for (const pb::Node& node : nodes) out.push_back(&node);
      return out;
    }
  };

  // The shim's answers to `plan` for `pod`: per query, the matching pods
  // (every matcher, not terminated unless asked) on the nodes passing the
  // filter, by the node's value of the topology key (by node with no key);
  // with want_domains, the domains of the passing nodes and their least
  // count.
  Answered Answer(const pb::Pod& pod, const pb::PlanResponse& plan) const {
    Answered out;
    out.cluster.set_node_count(static_cast<int32_t>(nodes_.size()));
    out.nodes = nodes_;
    for (pb::Node& n : out.nodes) n.clear_query_counts();
    for (const pb::PodQuery& q : plan.queries()) {
      const std::string& key = q.topology_key();
      auto counted = [&](const pb::Node& n) {
        if (!key.empty() && !n.labels().contains(key)) return false;
        for (const std::string& k : q.nodes().required_keys()) {
          if (!n.labels().contains(k)) return false;
        }
        if (q.nodes().pod_node_affinity() &&
            !model::MatchesRequiredNodeAffinity(pod, n)) {
          return false;
        }
        return !q.nodes().pod_taints() ||
               model::ToleratesNoScheduleTaints(pod, n);
      };
      std::map<std::string, int64_t> counts;  // by domain, or by node
      int64_t total = 0;
      for (const ExistingPod& p : pods_) {
        if (!Matches(q, p) || (p.terminating() && !q.include_terminating())) {
          continue;
        }
        const pb::Node* node = Find(p.node());
        if (node == nullptr) continue;
        if (key.empty()) {
          ++counts[node->name()];
        } else if (counted(*node)) {
          ++counts[node->labels().at(key)];
        } else {
          continue;
        }
        ++total;
      }
      pb::QueryAnswer* a = out.cluster.add_answers();
      a->set_total(total);
      if (q.want_domains() && !key.empty()) {
        std::map<std::string, int64_t> domains;
        for (const pb::Node& n : nodes_) {
          if (!counted(n)) continue;
          const std::string& v = n.labels().at(key);
          domains[v] = counts.contains(v) ? counts.at(v) : 0;
        }
        int64_t min = std::numeric_limits<int64_t>::max();
        for (const auto& [_, c] : domains) min = std::min(min, c);
        a->set_domains(static_cast<int32_t>(domains.size()));
        a->set_min_count(domains.empty() ? 0 : min);
      }
      for (pb::Node& n : out.nodes) {
        std::string at = n.name();
        if (!key.empty()) {
          auto it = n.labels().find(key);
          at = it == n.labels().end() ? std::string() : it->second;
        }
        auto c = counts.find(at);
        const bool has = key.empty() || n.labels().contains(key);
        n.add_query_counts(has && c != counts.end() ? c->second : 0);
      }
    }
    return out;
  }

 private:
  static bool Matches(const pb::PodQuery& q, const ExistingPod& p) {
    if (q.all_of().empty()) return false;
    for (const pb::PodMatcher& m : q.all_of()) {
      if (!m.has_selector()) return false;
      // Namespaces by name only: the fixture knows no namespace labels.
      const bool in_namespace =
          std::find(m.namespaces().begin(), m.namespaces().end(), p.ns()) !=
          m.namespaces().end();
      if (!in_namespace ||
          !model::LabelSelectorMatches(m.selector(), p.labels())) {
        return false;
      }
    }
    return true;
  }
  const pb::Node* Find(const std::string& name) const {
    for (const pb::Node& n : nodes_) {
      if (n.name() == name) return &n;
    }
    return nullptr;
  }

  std::vector<pb::Node> nodes_;
  std::vector<ExistingPod> pods_;
};

// st.MakeLabelSelector().Exists(key).Obj().
inline pb::LabelSelector ExistsSelector(const std::string& key) {
  pb::LabelSelector s;
  pb::LabelSelectorRequirement* r = s.add_match_expressions();
  r->set_key(key);
  r->set_operator_("Exists");
  return s;
}

// A topologySpreadConstraint; `selector` nullptr leaves labelSelector
// unset.
inline pb::TopologySpreadConstraint Spread(int32_t max_skew, std::string key,
                                           std::string when,
                                           const pb::LabelSelector* selector) {
  pb::TopologySpreadConstraint c;
  c.set_max_skew(max_skew);
  c.set_topology_key(std::move(key));
  c.set_when_unsatisfiable(std::move(when));
  if (selector != nullptr) *c.mutable_label_selector() = *selector;
  return c;
}

}  // namespace kscore::testing

#endif  // KSCORE_SCORER_TESTING_SPREAD_CLUSTER_H_
