#include "shim/cache/cache.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"

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

void Cache::Encode(NodeEntry* n) {
  pb::Node d;
  d.set_pod_count(n->pod_count);
  *d.mutable_requested() = n->requested;
  *d.mutable_non_zero_requested() = n->non_zero;
  for (const pb::HostPort& p : n->used_ports) *d.add_used_ports() = p;
  const std::string dynamic = d.SerializeAsString();
  n->wire[0] = n->static_unlabeled + dynamic;
  n->wire[1] = n->static_labeled + dynamic;
}

Cache::NodeEntry& Cache::EntryLocked(const std::string& name) {
  std::unique_ptr<NodeEntry>& slot = nodes_[name];
  if (slot == nullptr) {
    slot = std::make_unique<NodeEntry>();
    slot->name = name;
  }
  return *slot;
}

void Cache::UpsertNode(pb::Node node) {
  absl::MutexLock lock(&mu_);
  NodeEntry& e = EntryLocked(node.name());
  if (!e.present) order_.push_back(&e);
  e.present = true;
  e.static_labeled = node.SerializeAsString();
  node.clear_labels();
  e.static_unlabeled = node.SerializeAsString();
  Encode(&e);
}

void Cache::RemoveNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second->present) return;
  const NodeEntry* gone = it->second.get();
  order_.erase(std::remove(order_.begin(), order_.end(), gone), order_.end());
  if (it->second->pod_count == 0) {
    nodes_.erase(it);
  } else {
    // Pods still point at it; keep their aggregates until they go.
    it->second->present = false;
  }
}

void Cache::AddLocked(const std::string& key, PodEntry entry) {
  NodeEntry& n = EntryLocked(entry.node);
  n.pod_count++;
  Add(&n.requested, entry.requests, +1);
  Add(&n.non_zero, entry.non_zero, +1);
  for (const pb::HostPort& p : entry.host_ports) n.used_ports.push_back(p);
  if (entry.countable) {
    for (const auto& [k, v] : entry.labels)
      n.label_counts[CountKey(entry.namespace_, k, v)]++;
  }
  Encode(&n);
  pods_[key] = std::move(entry);
}

void Cache::SubtractLocked(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  const PodEntry& entry = it->second;
  auto nit = nodes_.find(entry.node);
  if (nit != nodes_.end()) {
    NodeEntry& n = *nit->second;
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
    if (!n.present && n.pod_count == 0) {
      nodes_.erase(nit);
    } else {
      Encode(&n);
    }
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

size_t Cache::AppendCandidates(const PodInfo& incoming,
                               const std::vector<std::string>& label_keys,
                               size_t start, size_t count, bool with_labels,
                               int field_number, std::string* out,
                               std::vector<std::string>* names) const {
  using google::protobuf::io::CodedOutputStream;
  absl::MutexLock lock(&mu_);
  const size_t n = order_.size();
  if (n == 0) return 0;
  count = std::min(count, n);
  // The incoming pod's own values for the keys the plugins count.
  struct Wanted {
    std::string count_key;
    pb::LabelCount label_count;  // key and value; count set per node
  };
  std::vector<Wanted> wanted;
  for (const std::string& k : label_keys) {
    auto it = incoming.pod.labels().find(k);
    if (it != incoming.pod.labels().end()) {
      Wanted w;
      w.count_key = CountKey(incoming.namespace_, k, it->second);
      w.label_count.set_key(k);
      w.label_count.set_value(it->second);
      wanted.push_back(std::move(w));
    }
  }
  const uint32_t tag =
      static_cast<uint32_t>(field_number) << 3 | 2;  // length-delimited
  uint8_t head[2 * 5];
  pb::Node counts;  // only label_counts set
  std::string counts_wire;
  const int variant = with_labels ? 1 : 0;
  // The nodes live all over the heap: fetch the entries a few nodes ahead,
  // and their encodings once the entries are in.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < std::min(count, kAhead); ++i) {
    __builtin_prefetch(order_[(start + i) % n]);
  }
  out->reserve(out->size() + count * 64);
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count)
      __builtin_prefetch(order_[(start + i + kAhead) % n]);
    if (i + kAhead / 2 < count) {
      __builtin_prefetch(
          order_[(start + i + kAhead / 2) % n]->wire[variant].data());
    }
    const NodeEntry& e = *order_[(start + i) % n];
    const std::string& fixed = e.wire[variant];
    counts.clear_label_counts();
    for (Wanted& w : wanted) {
      if (e.label_counts.empty()) break;
      auto it = e.label_counts.find(w.count_key);
      if (it == e.label_counts.end()) continue;
      w.label_count.set_count(it->second);
      *counts.add_label_counts() = w.label_count;
    }
    counts_wire.clear();
    if (counts.label_counts_size() > 0) counts.SerializeToString(&counts_wire);
    const size_t len = fixed.size() + counts_wire.size();
    uint8_t* p = CodedOutputStream::WriteVarint32ToArray(tag, head);
    p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(len), p);
    out->append(reinterpret_cast<const char*>(head),
                static_cast<size_t>(p - head));
    out->append(fixed);
    out->append(counts_wire);
    if (names != nullptr) names->push_back(e.name);
  }
  return count;
}

size_t Cache::FillCandidates(const PodInfo& incoming,
                             const std::vector<std::string>& label_keys,
                             size_t start, size_t count,
                             google::protobuf::RepeatedPtrField<pb::Node>* out,
                             bool with_labels) const {
  std::string wire;
  size_t appended =
      AppendCandidates(incoming, label_keys, start, count, with_labels,
                       pb::EvaluateRequest::kNodesFieldNumber, &wire);
  pb::EvaluateRequest parsed;
  if (!parsed.ParseFromString(wire)) return 0;
  for (pb::Node& node : *parsed.mutable_nodes()) out->Add(std::move(node));
  return appended;
}

}  // namespace kscore::cache
