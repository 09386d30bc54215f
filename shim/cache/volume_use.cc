#include "shim/cache/volume_use.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"

namespace kscore::cache {

namespace {

std::string DiskKey(const pb::InlineDisk& d) {
  return absl::StrCat(static_cast<int>(d.kind()), "/", d.id());
}

std::string ClaimKey(const std::string& ns, const std::string& name) {
  return absl::StrCat(ns, "/", name);
}

bool SameDisk(const pb::InlineDisk& a, const pb::InlineDisk& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

bool Wanted(const pb::InlineDisk& d,
            const google::protobuf::RepeatedPtrField<pb::InlineDisk>& wanted) {
  return std::any_of(wanted.begin(), wanted.end(),
                     [&d](const pb::InlineDisk& w) {
                       return w.kind() == d.kind() && w.id() == d.id();
                     });
}

}  // namespace

VolumeUse::PodUse VolumeUse::Of(const pb::Pod& pod) {
  PodUse use;
  use.namespace_ = pod.namespace_();
  for (const pb::VolumeClaim& c : pod.volume_claims()) {
    if (!c.ephemeral()) use.claims.push_back(c.claim_name());
  }
  use.disks.assign(pod.inline_disks().begin(), pod.inline_disks().end());
  return use;
}

void VolumeUse::Add(const PodUse& use, const std::string& node) {
  for (const std::string& c : use.claims) {
    ++claims_[ClaimKey(use.namespace_, c)];
  }
  for (const pb::InlineDisk& d : use.disks) {
    disks_[DiskKey(d)][node].push_back(d);
  }
}

void VolumeUse::Remove(const PodUse& use, const std::string& node) {
  for (const std::string& c : use.claims) {
    auto it = claims_.find(ClaimKey(use.namespace_, c));
    if (it != claims_.end() && --it->second <= 0) claims_.erase(it);
  }
  for (const pb::InlineDisk& d : use.disks) {
    auto kit = disks_.find(DiskKey(d));
    if (kit == disks_.end()) continue;
    auto nit = kit->second.find(node);
    if (nit == kit->second.end()) continue;
    std::vector<pb::InlineDisk>& on = nit->second;
    auto it = std::find_if(on.begin(), on.end(), [&d](const pb::InlineDisk& x) {
      return SameDisk(x, d);
    });
    if (it != on.end()) on.erase(it);
    if (on.empty()) kit->second.erase(nit);
    if (kit->second.empty()) disks_.erase(kit);
  }
}

int64_t VolumeUse::ClaimRefs(const std::string& ns,
                             const std::string& name) const {
  auto it = claims_.find(ClaimKey(ns, name));
  return it == claims_.end() ? 0 : it->second;
}

void VolumeUse::DisksOn(
    const std::string& node,
    const google::protobuf::RepeatedPtrField<pb::InlineDisk>& wanted,
    google::protobuf::RepeatedPtrField<pb::InlineDisk>* out) const {
  std::vector<std::string> keys;
  for (const pb::InlineDisk& w : wanted) {
    std::string key = DiskKey(w);
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    auto kit = disks_.find(key);
    if (kit != disks_.end()) {
      auto nit = kit->second.find(node);
      if (nit != kit->second.end()) {
        for (const pb::InlineDisk& d : nit->second) *out->Add() = d;
      }
    }
    keys.push_back(std::move(key));
  }
}

void VolumeUse::Matching(
    const PodUse& use,
    const google::protobuf::RepeatedPtrField<pb::InlineDisk>& wanted,
    google::protobuf::RepeatedPtrField<pb::InlineDisk>* out) {
  for (const pb::InlineDisk& d : use.disks) {
    if (Wanted(d, wanted)) *out->Add() = d;
  }
}

void VolumeUse::ClaimRefsInto(const PodUse& use, const pb::Pod& pod,
                              google::protobuf::RepeatedField<int32_t>* out) {
  for (const std::string& c : use.claims) {
    for (int i = 0; i < pod.volume_claims_size(); ++i) {
      const pb::VolumeClaim& v = pod.volume_claims(i);
      if (!v.ephemeral() && v.claim_name() == c) {
        out->Add(i);
        break;
      }
    }
  }
}

}  // namespace kscore::cache
