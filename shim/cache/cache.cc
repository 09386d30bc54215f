#include "shim/cache/cache.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "model/node_key.h"

namespace kscore::cache {
namespace {

// The node name an encoded pb::Node starts with (field 1 is written first,
// and the cache's nodes all have one).
absl::string_view NameIn(absl::string_view wire) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(wire.data()),
      static_cast<int>(wire.size()));
  uint32_t len = 0;
  if (in.ReadTag() != (pb::Node::kNameFieldNumber << 3 | 2) ||
      !in.ReadVarint32(&len) ||
      len > wire.size() - static_cast<size_t>(in.CurrentPosition())) {
    return {};
  }
  return wire.substr(static_cast<size_t>(in.CurrentPosition()), len);
}

// The bit of a scorer replica in NodeEntry::sent (0: not tracked).
uint64_t ReplicaBit(int replica) {
  return replica >= 0 && replica < 64 ? uint64_t{1} << replica : 0;
}

std::string CountKey(const std::string& ns, const std::string& key,
                     const std::string& value) {
  return absl::StrCat(ns, std::string(1, '\0'), key, std::string(1, '\0'),
                      value);
}

bool SamePort(const pb::HostPort& a, const pb::HostPort& b) {
  return a.port() == b.port() && a.protocol() == b.protocol() &&
         a.host_ip() == b.host_ip();
}

}  // namespace

struct Cache::Yielded {
  int32_t pods = 0;
  std::vector<const pb::Resources*> requests;  // owned by nominations_
  std::vector<pb::HostPort> ports;
};

pb::Node Cache::Aggregates(const NodeEntry& n, const Yielded* nominated) {
  pb::Node d;
  d.set_pod_count(n.pod_count);
  *d.mutable_non_zero_requested() = n.non_zero.ToProto();
  for (const pb::HostPort& p : n.used_ports) *d.add_used_ports() = p;
  if (nominated == nullptr) {
    *d.mutable_requested() = n.requested.ToProto();
  } else {
    d.set_pod_count(n.pod_count + nominated->pods);
    ResourceSum requested = n.requested;
    for (const pb::Resources* r : nominated->requests) requested.Add(*r);
    *d.mutable_requested() = requested.ToProto();
    for (const pb::HostPort& p : nominated->ports) *d.add_used_ports() = p;
  }
  for (const objects::CsiNodeInfo::Driver& driver : n.csi_node) {
    pb::CsiDriverUse* u = d.add_csi_drivers();
    u->set_name(driver.name);
    if (driver.limit.has_value()) u->set_limit(*driver.limit);
    auto it = n.csi_attached.find(driver.name);
    if (it != n.csi_attached.end()) u->set_attached(it->second);
  }
  d.set_has_csi_node(n.has_csi_node);
  // Upstream's error is the first of its NodeInfo's pods that has one:
  // they are in the order added, as `pods` (an update re-adds here, where
  // upstream moves its last pod into the gap).
  for (size_t i = 0; i < n.pods.size() && !n.csi_errors.empty(); ++i) {
    if (auto it = n.csi_errors.find(n.pods[i]); it != n.csi_errors.end()) {
      d.set_volume_error(it->second);
      break;
    }
  }
  return d;
}

void Cache::Encode(NodeEntry* n) {
  // The aggregates in two, around declared_features: the content key is
  // then the hash of the node's key parts and these, no parse needed.
  std::string low, high;
  model::AppendAggregates(Aggregates(*n, nullptr), &low, &high);
  n->wire[0] = absl::StrCat(n->static_unlabeled, low, high);
  n->wire[1] = absl::StrCat(n->static_labeled, low, high);
  n->key[0] = model::NodeContentKey(n->key_parts[0], low, high);
  n->key[1] = model::NodeContentKey(n->key_parts[1], low, high);
  n->sent[0] = n->sent[1] = 0;  // new keys: no replica has them
  if (n->present && !order_stale_) WriteSlotLocked(*n);
  NodeChangedLocked(*n);
}

void Cache::NodeChangedLocked(const NodeEntry& n) {
  ++seq_;
  if (!n.present) return;  // it counts as changed when it comes
  changes_.emplace_back(seq_, std::string(NameIn(n.wire[0])));
  if (changes_.size() > kChangeLog) {
    forgotten_seq_ = changes_.front().first;
    changes_.pop_front();
  }
}

void Cache::NominationChangedLocked(const std::string& node) {
  // A nomination changes what its node offers the pods it counts for;
  // batching sends that node again (a node not in the snapshot, none).
  auto it = nodes_.find(node);
  if (it == nodes_.end()) {
    ++seq_;
    return;
  }
  NodeChangedLocked(*it->second);
}

uint64_t Cache::ChangeSeq() const {
  absl::MutexLock lock(&mu_);
  return seq_;
}

bool Cache::ChangedSince(uint64_t seq, std::vector<std::string>* names) const {
  absl::MutexLock lock(&mu_);
  if (structure_seq_ > seq || forgotten_seq_ > seq) return false;
  absl::flat_hash_set<absl::string_view> seen;
  for (auto it = changes_.rbegin(); it != changes_.rend() && it->first > seq;
       ++it) {
    if (!seen.insert(it->second).second) continue;
    auto n = nodes_.find(it->second);
    if (n != nodes_.end() && n->second->present) names->push_back(it->second);
  }
  return true;
}

size_t Cache::PositionsOf(const std::vector<std::string>& names,
                          std::vector<int32_t>* positions) const {
  absl::MutexLock lock(&mu_);
  RebuildOrderLocked();
  positions->clear();
  positions->reserve(names.size());
  for (const std::string& name : names) {
    auto it = nodes_.find(name);
    positions->push_back(it != nodes_.end() && it->second->present
                             ? static_cast<int32_t>(it->second->pos)
                             : -1);
  }
  return order_.size();
}

std::vector<std::string> Cache::NamesAt(
    const std::vector<int32_t>& positions) const {
  absl::MutexLock lock(&mu_);
  RebuildOrderLocked();
  std::vector<std::string> names;
  names.reserve(positions.size());
  for (int32_t p : positions)
    names.emplace_back(NameIn(order_[static_cast<size_t>(p)]->wire[0]));
  return names;
}

bool Cache::DomainPeers(const ClusterIndex::Prepared& prepared,
                        std::vector<std::string>* names) const {
  absl::MutexLock lock(&mu_);
  const std::vector<std::string> changed = *names;
  return index_.DomainPeers(prepared, changed, names);
}

void Cache::NodesCounting(const std::string& ns, const std::string& key,
                          const std::string& value,
                          std::vector<std::string>* names) const {
  absl::MutexLock lock(&mu_);
  auto it = label_counts_.find(CountKey(ns, key, value));
  if (it == label_counts_.end()) return;
  for (const auto& [node, count] : it->second)
    if (node->present) names->emplace_back(NameIn(node->wire[0]));
}

namespace {
std::string ImagesKey(const std::vector<objects::NodeImage>& images) {
  std::string key;
  for (const objects::NodeImage& i : images) {
    absl::StrAppend(&key, i.size_bytes, "\n");
    for (const std::string& n : i.names) absl::StrAppend(&key, n, "\n");
  }
  return key;
}
}  // namespace

void Cache::WriteSlotLocked(const NodeEntry& n) const {
  char* slot = &slab_[n.pos * kSlot];
  const std::string& w = n.wire[0];
  const bool fits = w.size() <= kSlot - kSlotHead;
  slot[0] = static_cast<char>(fits ? w.size() : 0);
  if (!fits) return;
  std::memcpy(slot + 1, &n.sent[0], sizeof(uint64_t));
  std::memcpy(slot + 1 + sizeof(uint64_t), n.key[0].data(),
              model::kNodeKeyBytes);
  std::memcpy(slot + kSlotHead, w.data(), w.size());
}

char* Cache::SentLocked(const NodeEntry& n, int variant) const {
  if (variant == 0 && !order_stale_ && slab_[n.pos * kSlot] != 0) {
    return &slab_[n.pos * kSlot + 1];
  }
  return reinterpret_cast<char*>(&n.sent[variant]);
}

Cache::NodeEntry& Cache::EntryLocked(const std::string& name) {
  std::unique_ptr<NodeEntry>& slot = nodes_[name];
  if (slot == nullptr) slot = std::make_unique<NodeEntry>();
  return *slot;
}

void Cache::UpsertNode(pb::Node node, std::vector<objects::NodeImage> images) {
  absl::MutexLock lock(&mu_);
  model::ClearAggregates(node);  // the cache's own, from the pods
  std::string images_key = ImagesKey(images);
  index_.UpsertNode(node, std::move(images));
  NodeEntry& e = EntryLocked(node.name());
  std::string labeled = node.SerializeAsString();
  // The same Node again (a status update kscore does not read) leaves the
  // candidates as they were.
  if (e.present && labeled == e.static_labeled && images_key == e.images_key)
    return;
  StructureChangedLocked();
  e.images_key = std::move(images_key);
  const std::string zone = ZoneKey(node.labels());
  if (!e.present || e.zone != zone) {
    if (e.present) UnplaceLocked(&e);
    PlaceLocked(&e, zone);
  }
  e.present = true;
  e.static_labeled = std::move(labeled);
  e.key_parts[1] = model::NodeKeyPartsOf(node);
  node.clear_labels();
  e.static_unlabeled = node.SerializeAsString();
  e.key_parts[0] = model::NodeKeyPartsOf(node);
  Encode(&e);
}

void Cache::RemoveNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second->present) return;
  index_.RemoveNode(name);
  StructureChangedLocked();
  UnplaceLocked(it->second.get());
  it->second->present = false;
  // Pods, or its CSINode or attachments, may still point at it; keep their
  // aggregates until they go.
  if (it->second->Unused()) nodes_.erase(it);
}

std::string Cache::ZoneKey(
    const google::protobuf::Map<std::string, std::string>& labels) {
  auto get = [&](const char* ga, const char* beta) {
    auto it = labels.find(ga);
    if (it == labels.end()) it = labels.find(beta);
    return it == labels.end() ? std::string() : it->second;
  };
  const std::string zone = get("topology.kubernetes.io/zone",
                               "failure-domain.beta.kubernetes.io/zone");
  const std::string region = get("topology.kubernetes.io/region",
                                 "failure-domain.beta.kubernetes.io/region");
  if (zone.empty() && region.empty()) return "";
  std::string key = region;
  key.append(":\0:", 3);
  return key + zone;
}

void Cache::PlaceLocked(NodeEntry* n, const std::string& zone) {
  n->zone = zone;
  auto it = std::find_if(zones_.begin(), zones_.end(),
                         [&](const auto& z) { return z.first == zone; });
  if (it == zones_.end()) it = zones_.insert(zones_.end(), {zone, {}});
  it->second.push_back(n);
  order_stale_ = true;
}

void Cache::UnplaceLocked(NodeEntry* n) {
  auto it = std::find_if(zones_.begin(), zones_.end(),
                         [&](const auto& z) { return z.first == n->zone; });
  if (it == zones_.end()) return;
  std::erase(it->second, n);
  if (it->second.empty()) zones_.erase(it);
  order_stale_ = true;
}

void Cache::RebuildOrderLocked() const {
  if (!order_stale_) return;
  order_.clear();
  for (size_t round = 0;; ++round) {
    const size_t before = order_.size();
    for (const auto& [zone, nodes] : zones_) {
      if (round < nodes.size()) order_.push_back(nodes[round]);
    }
    if (order_.size() == before) break;
  }
  slab_.assign(order_.size() * kSlot, 0);
  for (size_t i = 0; i < order_.size(); ++i) {
    order_[i]->pos = i;
    WriteSlotLocked(*order_[i]);
  }
  order_stale_ = false;
}

void Cache::AddLocked(const std::string& key, PodEntry entry) {
  NodeEntry& n = EntryLocked(entry.node);
  n.pod_count++;
  n.pods.push_back(key);
  n.requested.Add(entry.requests);
  n.non_zero.Add(entry.non_zero);
  for (const pb::HostPort& p : entry.host_ports) n.used_ports.push_back(p);
  volume_use_.Add(entry.volumes, entry.node);
  CountLabelsLocked(entry, &n, +1);
  CountCsiLocked(key, entry, &n, +1);
  Encode(&n);
  PodEntry& kept = pods_[key];
  kept = std::move(entry);
  n.entries.push_back(&kept);
}

void Cache::SubtractLocked(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  const PodEntry& entry = it->second;
  index_.RemovePod(entry.ref);
  volume_use_.Remove(entry.volumes, entry.node);
  auto nit = nodes_.find(entry.node);
  CountCsiLocked(key, entry, nit == nodes_.end() ? nullptr : nit->second.get(),
                 -1);
  if (nit != nodes_.end()) {
    NodeEntry& n = *nit->second;
    n.pod_count--;
    if (auto at = std::find(n.pods.begin(), n.pods.end(), key);
        at != n.pods.end()) {
      n.entries.erase(n.entries.begin() + (at - n.pods.begin()));
      n.pods.erase(at);
    }
    n.requested.Subtract(entry.requests);
    n.non_zero.Subtract(entry.non_zero);
    for (const pb::HostPort& p : entry.host_ports) {
      auto pit =
          std::find_if(n.used_ports.begin(), n.used_ports.end(),
                       [&](const pb::HostPort& u) { return SamePort(u, p); });
      if (pit != n.used_ports.end()) n.used_ports.erase(pit);
    }
    CountLabelsLocked(entry, &n, -1);
    SettleLocked(nit);
  }
  pods_.erase(it);
}

void Cache::CountLabelsLocked(const PodEntry& e, NodeEntry* n, int delta) {
  if (!e.countable) return;
  for (const auto& [k, v] : e.labels) {
    const std::string key = CountKey(e.namespace_, k, v);
    if (delta > 0) {
      label_counts_[key][n] += delta;
      continue;
    }
    auto kit = label_counts_.find(key);
    if (kit == label_counts_.end()) continue;
    auto cit = kit->second.find(n);
    if (cit != kit->second.end() && (cit->second += delta) <= 0) {
      kit->second.erase(cit);
      if (kit->second.empty()) label_counts_.erase(kit);
    }
  }
}

void Cache::RelabelLocked(
    PodEntry* kept, const objects::PodInfo& pod,
    std::vector<std::pair<std::string, std::string>> labels) {
  NodeEntry& n = EntryLocked(kept->node);
  CountLabelsLocked(*kept, &n, -1);
  index_.RemovePod(kept->ref);
  kept->ref = index_.AddPod(pod, kept->node);
  kept->labels = std::move(labels);
  CountLabelsLocked(*kept, &n, +1);
  // What the node offers is as it was; what a plan counts there may not be.
  NodeChangedLocked(n);
}

namespace {

bool SameResources(const pb::Resources& a, const pb::Resources& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

}  // namespace

bool Cache::SameAggregates(const PodEntry& kept, const PodEntry& e) {
  if (kept.node != e.node || kept.namespace_ != e.namespace_ ||
      kept.name != e.name || kept.uid != e.uid || kept.priority != e.priority ||
      kept.deleting != e.deleting ||
      kept.preempted_by_scheduler != e.preempted_by_scheduler ||
      kept.countable != e.countable ||
      !SameResources(kept.requests, e.requests) ||
      !SameResources(kept.non_zero, e.non_zero) ||
      kept.host_ports.size() != e.host_ports.size()) {
    return false;
  }
  for (size_t i = 0; i < e.host_ports.size(); ++i) {
    if (!SamePort(kept.host_ports[i], e.host_ports[i])) return false;
  }
  // Volumes resolve against storage objects that may have changed since.
  return kept.claims == nullptr && e.claims == nullptr &&
         kept.volumes.claims.empty() && e.volumes.claims.empty() &&
         kept.volumes.disks.empty() && e.volumes.disks.empty();
}

namespace {
// The aggregates a pod adds to its node. Terminated pods free their
// resources; pods being deleted still hold them but no longer count as a
// workload's replica.
template <typename Entry>
Entry MakeEntry(const objects::PodInfo& pod, const std::string& node,
                bool assumed) {
  Entry e;
  e.node = node;
  e.namespace_ = pod.namespace_;
  e.name = pod.name;
  e.uid = pod.uid;
  e.priority = pod.priority;
  e.start_time = pod.start_time;
  e.deleting = pod.deleting;
  e.preempted_by_scheduler = pod.preempted_by_scheduler;
  e.assumed = assumed;
  e.countable = !pod.terminated() && !pod.deleting;
  if (!pod.terminated()) {
    e.requests = pod.requests;
    e.non_zero = pod.non_zero;
    e.host_ports = pod.host_ports;
  }
  // Sorted: a protobuf map's order differs from one copy to the next, and
  // the watch's copy of a pod is compared with the kept one.
  for (const auto& [k, v] : pod.pod.labels()) e.labels.emplace_back(k, v);
  std::sort(e.labels.begin(), e.labels.end());
  e.volumes = VolumeUse::Of(pod.pod);
  if (!pod.terminated() && (!pod.pod.volume_claims().empty() ||
                            !pod.pod.in_tree_volumes().empty())) {
    auto claims = std::make_shared<pb::Pod>();
    claims->set_namespace_(pod.pod.namespace_());
    claims->set_name(pod.pod.name());
    claims->set_uid(pod.pod.uid());
    *claims->mutable_volume_claims() = pod.pod.volume_claims();
    *claims->mutable_in_tree_volumes() = pod.pod.in_tree_volumes();
    e.claims = std::move(claims);
  }
  return e;
}
}  // namespace

void Cache::UpsertAssignedPod(const objects::PodInfo& pod) {
  absl::MutexLock lock(&mu_);
  DropNominationLocked(pod.key);  // bound
  PodEntry e = MakeEntry<PodEntry>(pod, pod.node_name, false);
  if (auto it = pods_.find(pod.key);
      it != pods_.end() && SameAggregates(it->second, e)) {
    // The binding of an assumed pod, or a bound pod again: its node's
    // content stays as it is. The same labels, the index too and the node
    // does not count as changed; other labels (a binding adds the node's
    // topology labels, PodTopologyLabelsAdmission) are counted again.
    PodEntry& kept = it->second;
    kept.assumed = false;
    kept.start_time = e.start_time;
    if (kept.labels != e.labels) RelabelLocked(&kept, pod, std::move(e.labels));
    return;
  }
  SubtractLocked(pod.key);
  e.ref = index_.AddPod(pod, pod.node_name);
  ResolveCsiLocked(&e);
  AddLocked(pod.key, std::move(e));
}

void Cache::RemovePod(const std::string& key) {
  absl::MutexLock lock(&mu_);
  DropNominationLocked(key);
  SubtractLocked(key);
}

bool Cache::AssumePod(const objects::PodInfo& pod, const std::string& node) {
  absl::MutexLock lock(&mu_);
  if (pods_.contains(pod.key)) return false;
  // Upstream's assume drops the nomination: the pod now counts where it
  // goes.
  DropNominationLocked(pod.key);
  PodEntry e = MakeEntry<PodEntry>(pod, node, true);
  e.ref = index_.AddPod(pod, node);
  ResolveCsiLocked(&e);
  AddLocked(pod.key, std::move(e));
  return true;
}

void Cache::ForgetPod(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(key);
  if (it != pods_.end() && it->second.assumed) SubtractLocked(key);
}

std::string Cache::NodeOf(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(key);
  return it == pods_.end() ? "" : it->second.node;
}

bool Cache::HoldsLivePod(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(key);
  return it != pods_.end() && !it->second.deleting;
}

void Cache::NominateLocked(const objects::PodInfo& pod, const std::string& node,
                           const std::string* api_node) {
  std::string api = pod.nominated_node_name;
  if (api_node != nullptr) {
    api = *api_node;
  } else if (auto it = nominations_.find(pod.key); it != nominations_.end()) {
    api = it->second.api_node;
  }
  DropNominationLocked(pod.key);
  if (node.empty()) return;
  NominationChangedLocked(node);
  Nomination& n = nominations_[pod.key];
  n.pod = {pod.key, pod.namespace_, pod.name,
           pod.uid, pod.priority,   pod.scheduler_name};
  n.node = node;
  n.api_node = std::move(api);
  n.requests = pod.requests;
  n.host_ports = pod.host_ports;
  NominatedHere& here = nominated_on_[node];
  here.keys.push_back(pod.key);
  here.seq = ++nomination_changes_;
}

void Cache::DropNominationLocked(const std::string& key) {
  if (nominations_.empty()) return;
  auto it = nominations_.find(key);
  if (it == nominations_.end()) return;
  NominationChangedLocked(it->second.node);
  auto on = nominated_on_.find(it->second.node);
  if (on != nominated_on_.end()) {
    std::erase(on->second.keys, key);
    on->second.seq = ++nomination_changes_;
    if (on->second.keys.empty()) nominated_on_.erase(on);
  }
  nominations_.erase(it);
}

void Cache::Nominate(const objects::PodInfo& pod, const std::string& node) {
  absl::MutexLock lock(&mu_);
  NominateLocked(pod, node, nullptr);
}

void Cache::UpdatePendingPod(const objects::PodInfo& pod) {
  absl::MutexLock lock(&mu_);
  const std::string& api = pod.nominated_node_name;
  if (!api.empty()) {
    NominateLocked(pod, api, &api);
    return;
  }
  auto it = nominations_.find(pod.key);
  if (it == nominations_.end()) return;
  if (!it->second.api_node.empty()) {  // cleared in the API
    DropNominationLocked(pod.key);
    return;
  }
  // Made in memory, not in the API yet: kept, with the pod as it is now.
  const std::string node = it->second.node;
  NominateLocked(pod, node, &api);
}

void Cache::DropNomination(const std::string& key) {
  absl::MutexLock lock(&mu_);
  DropNominationLocked(key);
}

std::string Cache::NominatedNode(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = nominations_.find(key);
  return it == nominations_.end() ? "" : it->second.node;
}

size_t Cache::NominatedNodeCount() const {
  absl::MutexLock lock(&mu_);
  return nominated_on_.size();
}

std::vector<Cache::NominatedPod> Cache::NominatedPodsOn(
    const std::string& node) const {
  absl::MutexLock lock(&mu_);
  std::vector<NominatedPod> out;
  auto on = nominated_on_.find(node);
  if (on == nominated_on_.end()) return out;
  for (const std::string& key : on->second.keys) {
    out.push_back(nominations_.at(key).pod);
  }
  return out;
}

Cache::NodeEntry::Yielding& Cache::YieldingLocked(
    const NodeEntry& n, bool with_labels, std::string aggregates) const {
  const int variant = with_labels ? 1 : 0;
  NodeEntry::Yielding& v = n.yielding[variant];
  const std::string& fixed =
      with_labels ? n.static_labeled : n.static_unlabeled;
  // The node's own aggregates are in `aggregates`, and its static part is
  // compared: a change of either, or of what yields, is a new content.
  if (v.aggregates == aggregates && !v.wire.empty() &&
      absl::string_view(v.wire).substr(0, fixed.size()) == fixed &&
      v.wire.size() == fixed.size() + aggregates.size()) {
    return v;
  }
  v.aggregates = std::move(aggregates);
  v.wire = fixed + v.aggregates;
  pb::Node parsed;
  parsed.ParseFromString(v.wire);
  v.key = model::NodeContentKey(parsed);
  v.sent = 0;
  return v;
}

Cache::NodeEntry::Yielding* Cache::YieldingFor(const NodeEntry& n,
                                               const NominatedHere& here,
                                               const objects::PodInfo& incoming,
                                               bool with_labels) const {
  const int variant = with_labels ? 1 : 0;
  NodeEntry::Yielding& v = n.yielding[variant];
  const bool self = std::find(here.keys.begin(), here.keys.end(),
                              incoming.key) != here.keys.end();
  if (v.seq == here.seq && v.priority == incoming.priority && v.self == self &&
      v.own_key == n.key[variant]) {
    return v.yields ? &v : nullptr;
  }
  Yielded y;
  const bool yields = YieldedLocked(here, incoming, &y);
  if (yields) YieldingLocked(n, with_labels, EncodeAggregates(n, &y));
  v.seq = here.seq;
  v.priority = incoming.priority;
  v.self = self;
  v.own_key = n.key[variant];
  v.yields = yields;
  return yields ? &v : nullptr;
}

bool Cache::YieldedLocked(const NominatedHere& here,
                          const objects::PodInfo& incoming,
                          Yielded* out) const {
  for (const std::string& key : here.keys) {
    const Nomination& n = nominations_.at(key);
    if (key == incoming.key || n.pod.priority < incoming.priority) continue;
    ++out->pods;
    out->requests.push_back(&n.requests);
    out->ports.insert(out->ports.end(), n.host_ports.begin(),
                      n.host_ports.end());
  }
  return out->pods > 0;
}

size_t Cache::NodeCount() const {
  absl::MutexLock lock(&mu_);
  RebuildOrderLocked();
  return order_.size();
}

size_t Cache::PodCount() const {
  absl::MutexLock lock(&mu_);
  return pods_.size();
}

struct Cache::Wanted {
  const absl::flat_hash_map<const NodeEntry*, int64_t>* by_node;
  pb::LabelCount label_count;  // key and value; count set per node
};

std::vector<Cache::Wanted> Cache::WantedLocked(
    const objects::PodInfo& incoming,
    const std::vector<std::string>& label_keys) const {
  // The incoming pod's own values for the keys the plugins count. Only
  // values some node has a count for matter.
  std::vector<Wanted> wanted;
  for (const std::string& k : label_keys) {
    auto it = incoming.pod.labels().find(k);
    if (it == incoming.pod.labels().end()) continue;
    auto counts =
        label_counts_.find(CountKey(incoming.namespace_, k, it->second));
    if (counts == label_counts_.end()) continue;
    Wanted w{&counts->second, {}};
    w.label_count.set_key(k);
    w.label_count.set_value(it->second);
    wanted.push_back(std::move(w));
  }
  return wanted;
}

void Cache::AppendOneLocked(const NodeEntry* entry, absl::string_view fixed,
                            absl::string_view key, NodeForm form, char* sent,
                            uint64_t replica_bit,
                            const objects::PodInfo& incoming, bool with_labels,
                            const std::vector<Wanted>& wanted,
                            const ClusterIndex::Prepared* prepared,
                            const std::vector<std::string>& in_use,
                            uint32_t tag, std::string* out,
                            std::vector<std::string>* names) const {
  using google::protobuf::io::CodedOutputStream;
  const absl::string_view name = NameIn(fixed);  // every Node has one
  if (!nominated_on_.empty()) {  // else nothing to build, per candidate
    auto on = nominated_on_.find(name);
    if (NodeEntry::Yielding* v =
            on == nominated_on_.end()
                ? nullptr
                : YieldingFor(*entry, on->second, incoming, with_labels)) {
      fixed = v->wire;  // `name` still points into the entry's own bytes
      key = v->key;
      if (sent != nullptr) sent = reinterpret_cast<char*>(&v->sent);
    }
  }
  pb::Node extra;  // label counts and plan answers only
  for (const Wanted& w : wanted) {
    auto it = w.by_node->find(entry);  // the pointer, not the entry
    if (it == w.by_node->end()) continue;
    pb::LabelCount* lc = extra.add_label_counts();
    *lc = w.label_count;
    lc->set_count(it->second);
  }
  if (prepared != nullptr && !prepared->empty()) {
    index_.NodeParts(*prepared, name, &extra);
  }
  if (incoming.pod.inline_disks_size() > 0) {
    volume_use_.DisksOn(std::string(name), incoming.pod.inline_disks(),
                        extra.mutable_disks());
  }
  if (!in_use.empty()) AddInUse(*entry, in_use, &extra);
  // A key goes alone only to a replica it went to whole.
  if (sent != nullptr) {
    uint64_t mask = 0;
    std::memcpy(&mask, sent, sizeof(mask));  // may be in a slab slot
    if (form == NodeForm::kKey && (mask & replica_bit) == 0)
      form = NodeForm::kFullWithKey;
    if (form == NodeForm::kFullWithKey) {
      mask |= replica_bit;
      std::memcpy(sent, &mask, sizeof(mask));
    }
  }
  if (form != NodeForm::kFull) extra.set_content_key(std::string(key));
  if (form == NodeForm::kKey) fixed = {};
  std::string extra_wire;
  if (extra.ByteSizeLong() > 0) extra.SerializeToString(&extra_wire);
  const size_t len = fixed.size() + extra_wire.size();
  uint8_t head[2 * 5];
  uint8_t* p = CodedOutputStream::WriteVarint32ToArray(tag, head);
  p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(len), p);
  out->append(reinterpret_cast<const char*>(head),
              static_cast<size_t>(p - head));
  out->append(fixed.data(), fixed.size());
  out->append(extra_wire);
  if (names != nullptr) names->emplace_back(name.data(), name.size());
}

size_t Cache::AppendCandidates(const objects::PodInfo& incoming,
                               const std::vector<std::string>& label_keys,
                               size_t start, size_t count, bool with_labels,
                               int field_number, std::string* out,
                               std::vector<std::string>* names,
                               const ClusterIndex::Prepared* prepared,
                               NodeForm form, int replica) const {
  absl::MutexLock lock(&mu_);
  RebuildOrderLocked();
  const size_t n = order_.size();
  if (n == 0) return 0;
  count = std::min(count, n);
  const std::vector<Wanted> wanted = WantedLocked(incoming, label_keys);
  const std::vector<std::string> in_use = InUseNamesLocked(incoming);
  const uint32_t tag =
      static_cast<uint32_t>(field_number) << 3 | 2;  // length-delimited
  constexpr size_t kAhead = 8;  // entries fetched ahead when they are read
  const int variant = with_labels ? 1 : 0;
  const uint64_t bit = ReplicaBit(replica);
  out->reserve(out->size() + count * 64);
  for (size_t i = 0; i < count; ++i) {
    const size_t at = (start + i) % n;
    // Without labels the slot has the whole encoding but the label counts
    // (those come from label_counts_); the entry, a cache miss away, is read
    // only when the encoding did not fit its slot.
    char* slot = &slab_[at * kSlot];
    absl::string_view fixed, key;
    char* sent = nullptr;
    if (!with_labels && slot[0] != 0) {
      sent = slot + 1;
      key =
          absl::string_view(slot + 1 + sizeof(uint64_t), model::kNodeKeyBytes);
      fixed =
          absl::string_view(slot + kSlotHead, static_cast<uint8_t>(slot[0]));
    } else {
      if (with_labels && i + kAhead < count) {
        __builtin_prefetch(order_[(at + kAhead) % n]);
      }
      fixed = order_[at]->wire[variant];
      key = order_[at]->key[variant];
      sent = reinterpret_cast<char*>(&order_[at]->sent[variant]);
    }
    AppendOneLocked(order_[at], fixed, key, form, bit != 0 ? sent : nullptr,
                    bit, incoming, with_labels, wanted, prepared, in_use, tag,
                    out, names);
  }
  return count;
}

size_t Cache::AppendNamed(const objects::PodInfo& incoming,
                          const std::vector<std::string>& label_keys,
                          const std::vector<std::string>& nodes,
                          bool with_labels, int field_number, std::string* out,
                          std::vector<std::string>* names,
                          const ClusterIndex::Prepared* prepared, NodeForm form,
                          const std::vector<bool>* whole, int replica) const {
  absl::MutexLock lock(&mu_);
  RebuildOrderLocked();
  const uint64_t bit = ReplicaBit(replica);
  const std::vector<Wanted> wanted = WantedLocked(incoming, label_keys);
  const std::vector<std::string> in_use = InUseNamesLocked(incoming);
  const uint32_t tag = static_cast<uint32_t>(field_number) << 3 | 2;
  size_t appended = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string& name = nodes[i];
    const NodeForm f = whole != nullptr && i < whole->size() && (*whole)[i]
                           ? NodeForm::kFullWithKey
                           : form;
    auto it = nodes_.find(name);
    if (it == nodes_.end() || !it->second->present) continue;
    const int variant = with_labels ? 1 : 0;
    const NodeEntry& e = *it->second;
    AppendOneLocked(&e, e.wire[variant], e.key[variant], f,
                    bit != 0 ? SentLocked(e, variant) : nullptr, bit, incoming,
                    with_labels, wanted, prepared, in_use, tag, out, names);
    ++appended;
  }
  return appended;
}

void Cache::VictimLocked(const PodEntry& e, const pb::Pod* pod,
                         const pb::PlanResponse* plan,
                         const ClusterIndex::Prepared* prepared,
                         pb::VictimPod* v) const {
  v->set_namespace_(e.namespace_);
  v->set_name(e.name);
  v->set_uid(e.uid);
  v->set_priority(e.priority);
  *v->mutable_requests() = e.requests;
  *v->mutable_non_zero_requests() = e.non_zero;
  for (const pb::HostPort& p : e.host_ports) *v->add_ports() = p;
  // The scorer reads a victim's labels only against the budgets of its
  // namespace (DisruptionBudgetsIn sends those that select).
  if (BudgetsSelectLocked(e.namespace_)) {
    for (const auto& [k, value] : e.labels) (*v->mutable_labels())[k] = value;
  }
  if (e.start_time.has_value()) {
    v->set_start_time_unix_nanos(absl::ToUnixNanos(*e.start_time));
  }
  v->set_terminating(e.deleting);
  if (prepared != nullptr && pod != nullptr && plan != nullptr) {
    index_.PodParts(*pod, *plan, *prepared, e.ref, v);
  }
  if (pod != nullptr) {
    VolumeUse::ClaimRefsInto(e.volumes, *pod, v->mutable_claim_refs());
    VolumeUse::Matching(e.volumes, pod->inline_disks(), v->mutable_disks());
  }
}

bool Cache::BudgetsSelectLocked(const std::string& ns) const {
  auto it = pdbs_.find(ns);
  if (it == pdbs_.end()) return false;
  for (const auto& [name, entry] : it->second) {
    if (entry.selects) return true;
  }
  return false;
}

namespace {

// A length-delimited field `field` holding `bytes`, appended to `out`.
void AppendField(uint32_t field, absl::string_view bytes, std::string* out) {
  using google::protobuf::io::CodedOutputStream;
  uint8_t head[2 * 5];
  uint8_t* p = CodedOutputStream::WriteVarint32ToArray(field << 3 | 2, head);
  p = CodedOutputStream::WriteVarint32ToArray(
      static_cast<uint32_t>(bytes.size()), p);
  out->append(reinterpret_cast<const char*>(head),
              static_cast<size_t>(p - head));
  out->append(bytes.data(), bytes.size());
}

// What reading Preempt's answer needs of a victim.
void Identify(const pb::VictimPod& v, pb::VictimPod* out) {
  out->set_namespace_(v.namespace_());
  out->set_name(v.name());
  out->set_uid(v.uid());
  out->set_terminating(v.terminating());
}

}  // namespace

size_t Cache::EncodePreemptionNodes(
    const objects::PodInfo& preemptor, const pb::Pod& pod,
    const std::vector<std::string>& label_keys,
    const std::vector<std::string>& nodes, bool with_labels,
    const pb::PlanResponse& plan, const ClusterIndex::Prepared* prepared,
    size_t max_victims, std::string* out,
    google::protobuf::RepeatedPtrField<pb::PreemptionNode>* sent) const {
  absl::MutexLock lock(&mu_);
  const std::vector<Wanted> wanted = WantedLocked(preemptor, label_keys);
  const std::vector<std::string> in_use = InUseNamesLocked(preemptor);
  const uint32_t tag = pb::PreemptionNode::kNodeFieldNumber << 3 | 2;
  size_t added = 0, victims = 0;
  std::vector<const PodEntry*> lower;
  pb::VictimPod victim;
  std::string bytes;
  for (const std::string& name : nodes) {
    auto it = nodes_.find(name);
    if (it == nodes_.end() || !it->second->present) continue;
    const NodeEntry& n = *it->second;
    lower.clear();
    for (const PodEntry* e : n.entries) {
      if (e->priority < preemptor.priority) lower.push_back(e);
    }
    if (added > 0 && victims + lower.size() > max_victims) break;
    victims += lower.size();
    bytes.clear();
    AppendOneLocked(&n, n.wire[with_labels ? 1 : 0], {}, NodeForm::kFull,
                    nullptr, 0, preemptor, with_labels, wanted, prepared,
                    in_use, tag, &bytes, nullptr);
    pb::PreemptionNode* seen = sent->Add();
    seen->mutable_node()->set_name(name);
    if (n.csi_volumes.empty()) {
      for (const PodEntry* e : lower) {
        victim.Clear();
        VictimLocked(*e, &pod, &plan, prepared, &victim);
        AppendField(pb::PreemptionNode::kPodsFieldNumber,
                    victim.SerializeAsString(), &bytes);
        Identify(victim, seen->add_pods());
      }
    } else {  // the victims refer to the node's CSI volumes
      pb::PreemptionNode pn;
      pn.MergeFromString(bytes);
      for (const PodEntry* e : lower) {
        VictimLocked(*e, &pod, &plan, prepared, pn.add_pods());
        Identify(pn.pods(pn.pods_size() - 1), seen->add_pods());
      }
      CandidateCsiVolumesLocked(n, lower, in_use, &pn);
      pn.SerializeToString(&bytes);
    }
    AppendField(pb::PreemptRequest::kNodesFieldNumber, bytes, out);
    ++added;
  }
  return added;
}

std::vector<pb::VictimPod> Cache::LowerPriorityPods(const std::string& node,
                                                    int32_t priority) const {
  absl::MutexLock lock(&mu_);
  std::vector<pb::VictimPod> out;
  auto it = nodes_.find(node);
  if (it == nodes_.end() || !it->second->present) return out;
  for (const PodEntry* entry : it->second->entries) {
    const PodEntry& e = *entry;
    if (e.priority >= priority) continue;
    pb::VictimPod& v = out.emplace_back();
    v.set_namespace_(e.namespace_);
    v.set_name(e.name);
    v.set_uid(e.uid);
    v.set_priority(e.priority);
    v.set_terminating(e.deleting && e.preempted_by_scheduler);
  }
  return out;
}

std::vector<pb::DisruptionBudget> Cache::DisruptionBudgetsIn(
    const std::vector<std::string>& namespaces) const {
  absl::MutexLock lock(&mu_);
  std::vector<pb::DisruptionBudget> out;
  for (const std::string& ns : namespaces) {
    auto it = pdbs_.find(ns);
    if (it == pdbs_.end()) continue;
    for (const auto& [name, entry] : it->second) {
      // A budget whose selector protects no pod changes no verdict.
      if (!entry.selects) continue;
      const objects::PdbInfo& info = *entry.info;
      pb::DisruptionBudget& b = out.emplace_back();
      b.set_namespace_(info.namespace_);
      b.set_name(info.name);
      *b.mutable_selector() = info.selector;
      b.set_disruptions_allowed(info.disruptions_allowed);
      std::vector<std::string> disrupted(info.disrupted_pods.begin(),
                                         info.disrupted_pods.end());
      std::sort(disrupted.begin(), disrupted.end());
      for (std::string& pod : disrupted) b.add_disrupted_pods(std::move(pod));
    }
  }
  return out;
}

std::vector<std::string> Cache::NodeNames() const {
  absl::MutexLock lock(&mu_);
  RebuildOrderLocked();
  std::vector<std::string> names;
  names.reserve(order_.size());
  for (const NodeEntry* n : order_) {
    names.emplace_back(NameIn(n->wire[0]));
  }
  return names;
}

void Cache::UpsertNamespace(const std::string& name,
                            const model::LabelMap& labels) {
  absl::MutexLock lock(&mu_);
  // What a query's namespace selector matches may change.
  if (index_.UpsertNamespace(name, labels)) StructureChangedLocked();
}

void Cache::RemoveNamespace(const std::string& name) {
  absl::MutexLock lock(&mu_);
  index_.RemoveNamespace(name);
  StructureChangedLocked();  // what a query's namespace selector matches
}

void Cache::UpsertWorkload(objects::WorkloadKind kind, const std::string& ns,
                           const std::string& name, bool has_selector,
                           const pb::LabelSelector& selector) {
  absl::MutexLock lock(&mu_);
  index_.UpsertWorkload(kind, ns, name, has_selector, selector);
}

void Cache::RemoveWorkload(objects::WorkloadKind kind, const std::string& ns,
                           const std::string& name) {
  absl::MutexLock lock(&mu_);
  index_.RemoveWorkload(kind, ns, name);
}

void Cache::UpsertPdb(std::shared_ptr<const objects::PdbInfo> pdb) {
  // LabelSelectorAsSelector makes Nothing of an unset selector, Everything
  // of an empty one (which preemption skips) and an error of a malformed
  // one: none of them protects a pod.
  const bool selects = pdb->has_selector &&
                       !model::IsEmptySelector(pdb->selector) &&
                       model::CheckLabelSelector(pdb->selector).empty();
  absl::MutexLock lock(&mu_);
  std::map<std::string, PdbEntry>& in_ns = pdbs_[pdb->namespace_];
  const std::string name = pdb->name;
  in_ns[name] = PdbEntry{std::move(pdb), selects};
}

void Cache::RemovePdb(const std::string& ns, const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = pdbs_.find(ns);
  if (it == pdbs_.end()) return;
  it->second.erase(name);
  if (it->second.empty()) pdbs_.erase(it);
}

size_t Cache::PdbCount() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [ns, in_ns] : pdbs_) n += in_ns.size();
  return n;
}

std::vector<std::shared_ptr<const objects::PdbInfo>> Cache::PdbsCovering(
    const objects::PodInfo& pod) const {
  std::vector<std::shared_ptr<const objects::PdbInfo>> out;
  const model::LabelMap& labels = pod.pod.labels();
  if (labels.empty()) return out;
  absl::MutexLock lock(&mu_);
  auto it = pdbs_.find(pod.namespace_);
  if (it == pdbs_.end()) return out;
  for (const auto& [name, entry] : it->second) {
    if (entry.selects &&
        model::LabelSelectorMatches(entry.info->selector, labels)) {
      out.push_back(entry.info);
    }
  }
  return out;
}

pb::Pod Cache::PodFor(const objects::PodInfo& pod,
                      const std::vector<pb::PodData>& pod_data) const {
  pb::Pod out = pod.pod;
  const auto wants = [&](pb::PodData d) {
    return std::find(pod_data.begin(), pod_data.end(), d) != pod_data.end();
  };
  if (!wants(pb::POD_DATA_IMAGES)) {
    out.clear_images();
    out.clear_image_volumes();
  }
  if (wants(pb::POD_DATA_VOLUMES) &&
      (out.volume_claims_size() > 0 || out.in_tree_volumes_size() > 0)) {
    *out.mutable_volumes() = volumes_.For(out);
  }
  const bool refs = out.volumes().claims_size() > 0;
  if (!refs && !wants(pb::POD_DATA_NAMESPACE_LABELS) &&
      !wants(pb::POD_DATA_WORKLOAD_SELECTORS)) {
    return out;
  }
  absl::MutexLock lock(&mu_);
  for (pb::ClaimState& c : *out.mutable_volumes()->mutable_claims()) {
    if (c.found())
      c.set_pod_refs(volume_use_.ClaimRefs(pod.namespace_, c.name()));
  }
  if (wants(pb::POD_DATA_NAMESPACE_LABELS)) {
    *out.mutable_namespace_labels() = index_.NamespaceLabels(pod.namespace_);
  }
  if (wants(pb::POD_DATA_WORKLOAD_SELECTORS)) {
    *out.mutable_workload_selectors() = index_.WorkloadSelectorsFor(pod);
  }
  return out;
}

std::shared_ptr<const ClusterIndex::Prepared> Cache::Prepare(
    const pb::Pod& pod, const pb::PlanResponse& plan) const {
  absl::MutexLock lock(&mu_);
  return std::make_shared<const ClusterIndex::Prepared>(
      index_.Prepare(pod, plan));
}

}  // namespace kscore::cache
