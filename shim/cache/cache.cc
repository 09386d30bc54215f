#include "shim/cache/cache.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace kscore::cache {
namespace {

std::string CountKey(const std::string& ns, const std::string& key,
                     const std::string& value) {
  return absl::StrCat(ns, std::string(1, '\0'), key, std::string(1, '\0'),
                      value);
}

void Add(pb::Resources* into, const pb::Resources& r, int sign) {
  into->set_milli_cpu(into->milli_cpu() + sign * r.milli_cpu());
  into->set_memory(into->memory() + sign * r.memory());
  into->set_ephemeral_storage(into->ephemeral_storage() +
                              sign * r.ephemeral_storage());
  for (const auto& [name, v] : r.scalar()) {
    int64_t& slot = (*into->mutable_scalar())[name];
    slot += sign * v;
    if (slot == 0) into->mutable_scalar()->erase(name);
  }
}

bool SamePort(const pb::HostPort& a, const pb::HostPort& b) {
  return a.port() == b.port() && a.protocol() == b.protocol() &&
         a.host_ip() == b.host_ip();
}

}  // namespace

void Cache::UpsertNode(pb::Node node) {
  absl::MutexLock lock(&mu_);
  NodeEntry& e = nodes_[node.name()];
  if (!e.present) order_.push_back(node.name());
  e.present = true;
  e.node = std::move(node);
}

void Cache::RemoveNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.present) return;
  order_.erase(std::remove(order_.begin(), order_.end(), name), order_.end());
  if (it->second.pod_count == 0) {
    nodes_.erase(it);
  } else {
    // Pods still point at it; keep their aggregates until they go.
    it->second.present = false;
  }
}

void Cache::AddLocked(const std::string& key, PodEntry entry) {
  NodeEntry& n = nodes_[entry.node];
  n.pod_count++;
  Add(&n.requested, entry.requests, +1);
  Add(&n.non_zero, entry.non_zero, +1);
  for (const pb::HostPort& p : entry.host_ports) n.used_ports.push_back(p);
  if (entry.countable) {
    for (const auto& [k, v] : entry.labels)
      n.label_counts[CountKey(entry.namespace_, k, v)]++;
  }
  pods_[key] = std::move(entry);
}

void Cache::SubtractLocked(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  const PodEntry& entry = it->second;
  auto nit = nodes_.find(entry.node);
  if (nit != nodes_.end()) {
    NodeEntry& n = nit->second;
    n.pod_count--;
    Add(&n.requested, entry.requests, -1);
    Add(&n.non_zero, entry.non_zero, -1);
    for (const pb::HostPort& p : entry.host_ports) {
      auto pit =
          std::find_if(n.used_ports.begin(), n.used_ports.end(),
                       [&](const pb::HostPort& u) { return SamePort(u, p); });
      if (pit != n.used_ports.end()) n.used_ports.erase(pit);
    }
    if (entry.countable) {
      for (const auto& [k, v] : entry.labels) {
        auto cit = n.label_counts.find(CountKey(entry.namespace_, k, v));
        if (cit != n.label_counts.end() && --cit->second <= 0)
          n.label_counts.erase(cit);
      }
    }
    if (!n.present && n.pod_count == 0) nodes_.erase(nit);
  }
  pods_.erase(it);
}

namespace {
// The aggregates a pod adds to its node. Terminated pods free their
// resources; pods being deleted still hold them but no longer count as a
// workload's replica.
template <typename Entry>
Entry MakeEntry(const PodInfo& pod, const std::string& node, bool assumed) {
  Entry e;
  e.node = node;
  e.namespace_ = pod.namespace_;
  e.assumed = assumed;
  e.countable = !pod.terminated() && !pod.deleting;
  if (!pod.terminated()) {
    e.requests = pod.requests;
    e.non_zero = pod.non_zero;
    e.host_ports = pod.host_ports;
  }
  for (const auto& [k, v] : pod.pod.labels()) e.labels.emplace_back(k, v);
  return e;
}
}  // namespace

void Cache::UpsertAssignedPod(const PodInfo& pod) {
  absl::MutexLock lock(&mu_);
  SubtractLocked(pod.key);
  AddLocked(pod.key, MakeEntry<PodEntry>(pod, pod.node_name, false));
}

void Cache::RemovePod(const std::string& key) {
  absl::MutexLock lock(&mu_);
  SubtractLocked(key);
}

bool Cache::AssumePod(const PodInfo& pod, const std::string& node) {
  absl::MutexLock lock(&mu_);
  if (pods_.contains(pod.key)) return false;
  AddLocked(pod.key, MakeEntry<PodEntry>(pod, node, true));
  return true;
}

void Cache::ForgetPod(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(key);
  if (it != pods_.end() && it->second.assumed) SubtractLocked(key);
}

bool Cache::IsAssumed(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(key);
  return it != pods_.end() && it->second.assumed;
}

std::string Cache::NodeOf(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(key);
  return it == pods_.end() ? "" : it->second.node;
}

size_t Cache::NodeCount() const {
  absl::MutexLock lock(&mu_);
  return order_.size();
}

size_t Cache::PodCount() const {
  absl::MutexLock lock(&mu_);
  return pods_.size();
}

size_t Cache::FillCandidates(const PodInfo& incoming,
                             const std::vector<std::string>& label_keys,
                             size_t start, size_t count,
                             google::protobuf::RepeatedPtrField<pb::Node>* out,
                             bool with_labels) const {
  absl::MutexLock lock(&mu_);
  const size_t n = order_.size();
  if (n == 0) return 0;
  count = std::min(count, n);
  // The incoming pod's own values for the keys the plugins count.
  std::vector<std::pair<const std::string*, std::string>> wanted;
  for (const std::string& k : label_keys) {
    auto it = incoming.pod.labels().find(k);
    if (it != incoming.pod.labels().end()) {
      wanted.emplace_back(&k, CountKey(incoming.namespace_, k, it->second));
    }
  }
  out->Reserve(out->size() + static_cast<int>(count));
  for (size_t i = 0; i < count; ++i) {
    const NodeEntry& e = nodes_.at(order_[(start + i) % n]);
    pb::Node* node = out->Add();
    if (with_labels) {
      *node = e.node;
    } else {
      node->set_name(e.node.name());
      *node->mutable_taints() = e.node.taints();
      node->set_unschedulable(e.node.unschedulable());
      *node->mutable_allocatable() = e.node.allocatable();
    }
    node->set_pod_count(e.pod_count);
    *node->mutable_requested() = e.requested;
    *node->mutable_non_zero_requested() = e.non_zero;
    for (const pb::HostPort& p : e.used_ports) *node->add_used_ports() = p;
    for (const auto& [key, count_key] : wanted) {
      auto it = e.label_counts.find(count_key);
      if (it == e.label_counts.end()) continue;
      pb::LabelCount* lc = node->add_label_counts();
      lc->set_key(*key);
      lc->set_value(incoming.pod.labels().at(*key));
      lc->set_count(it->second);
    }
  }
  return count;
}

}  // namespace kscore::cache
