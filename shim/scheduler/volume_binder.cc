#include "shim/scheduler/volume_binder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "shim/kube/protobuf_codec.h"
#include "shim/objects/storage.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {
namespace {

using nlohmann::json;

// PATCH of a volume's claimRef (upstream's GetBindVolumeToClaim).
Writer::Request ClaimRefPatch(const cache::Volumes::Binding& b) {
  json meta = {{"resourceVersion", b.volume_version}};
  if (b.bound_by_controller)
    meta["annotations"] = {{objects::kAnnBoundByController, "yes"}};
  json patch = {{"metadata", std::move(meta)},
                {"spec",
                 {{"claimRef",
                   {{"kind", "PersistentVolumeClaim"},
                    {"apiVersion", "v1"},
                    {"namespace", b.claim_namespace},
                    {"name", b.claim_name},
                    {"uid", b.claim_uid},
                    {"resourceVersion", b.claim_version}}}}}};
  Writer::Request req;
  req.method = "PATCH";
  req.path = absl::StrCat("/api/v1/persistentvolumes/", b.volume);
  req.body = {patch.dump(), "application/merge-patch+json"};
  req.accept = "application/json";
  return req;
}

// PATCH of a claim's selected node (dynamic provisioning).
Writer::Request SelectedNodePatch(const cache::Volumes::Provision& p,
                                  const std::string& node) {
  json patch = {{"metadata",
                 {{"resourceVersion", p.claim_version},
                  {"annotations", {{objects::kAnnSelectedNode, node}}}}}};
  Writer::Request req;
  req.method = "PATCH";
  req.path = absl::StrCat("/api/v1/namespaces/", p.claim_namespace,
                          "/persistentvolumeclaims/", p.claim_name);
  req.body = {patch.dump(), "application/merge-patch+json"};
  req.accept = "application/json";
  return req;
}

}  // namespace

VolumeBinder::VolumeBinder(Writer* writer, cache::Volumes* volumes,
                           Options options)
    : writer_(writer), volumes_(volumes), options_(options) {}

VolumeBinder::~VolumeBinder() { Stop(); }

void VolumeBinder::Stop() {
  {
    absl::MutexLock lock(&thread_mu_);
    if (!stop_.HasBeenNotified()) stop_.Notify();
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::shared_ptr<Pending>> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(waiting_);
  }
  for (const auto& p : left) Finish(p, absl::CancelledError("shutting down"));
}

size_t VolumeBinder::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_.size();
}

void VolumeBinder::PreBind(const objects::PodInfo& pod,
                           cache::Volumes::Reservation r,
                           absl::Duration timeout, Done done) {
  {
    absl::MutexLock lock(&thread_mu_);
    if (!thread_.joinable() && !stop_.HasBeenNotified())
      thread_ = std::thread([this] { Loop(); });
  }
  auto p = std::make_shared<Pending>();
  p->pod = pod.key;
  p->r = std::move(r);
  p->done = std::move(done);
  p->deadline = absl::Now() + timeout;
  Write(p);
}

void VolumeBinder::Write(const std::shared_ptr<Pending>& p) {
  std::vector<std::pair<Writer::Request, std::string>> writes;
  for (const cache::Volumes::Binding& b : p->r.bindings) {
    if (!b.write) continue;
    writes.emplace_back(ClaimRefPatch(b),
                        absl::StrCat("persistentvolume \"", b.volume, "\""));
  }
  for (const cache::Volumes::Provision& v : p->r.provisions) {
    writes.emplace_back(
        SelectedNodePatch(v, p->r.node),
        absl::StrCat("persistentvolumeclaim \"", v.claim_name, "\""));
  }
  p->writes_left = static_cast<int>(writes.size());
  if (writes.empty()) {
    absl::MutexLock lock(&mu_);
    waiting_.push_back(p);
    return;
  }
  for (auto& [req, what] : writes) {
    writer_->Send(
        Writer::Lane::kBindings, std::move(req),
        [this, p, what = what](const absl::StatusOr<kube::Response>& resp) {
          Written(p, what, resp);
        });
  }
}

// On the client's I/O thread: the last answer moves the pod to the wait,
// or ends it with the first error.
void VolumeBinder::Written(const std::shared_ptr<Pending>& p,
                           const std::string& what,
                           const absl::StatusOr<kube::Response>& resp) {
  absl::Status s;
  if (!resp.ok()) {
    s = absl::UnavailableError(
        absl::StrCat("updating ", what, ": ", resp.status().message()));
  } else if (resp->status < 200 || resp->status >= 300) {
    s = absl::AbortedError(kube::ErrorMessage(resp->body).substr(0, 300));
  }
  bool last = false;
  {
    absl::MutexLock lock(&mu_);
    if (!s.ok() && p->write_error.ok()) p->write_error = s;
    last = --p->writes_left == 0;
    if (last && p->write_error.ok()) waiting_.push_back(p);
  }
  if (last && !p->write_error.ok()) Finish(p, p->write_error);
}

void VolumeBinder::Finish(const std::shared_ptr<Pending>& p,
                          const absl::Status& s) {
  if (!s.ok()) volumes_->Forget(p->r);
  p->done(s);
}

std::vector<std::pair<std::shared_ptr<VolumeBinder::Pending>, absl::Status>>
VolumeBinder::Due() {
  std::vector<std::pair<std::shared_ptr<Pending>, absl::Status>> due;
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  auto keep = waiting_.begin();
  for (auto& p : waiting_) {
    absl::StatusOr<bool> bound = volumes_->Bound(p->r);
    if (!bound.ok()) {
      due.emplace_back(std::move(p),
                       absl::Status(bound.status().code(),
                                    absl::StrCat("binding volumes: ",
                                                 bound.status().message())));
    } else if (*bound) {
      due.emplace_back(std::move(p), absl::OkStatus());
    } else if (now >= p->deadline) {
      due.emplace_back(std::move(p),
                       absl::DeadlineExceededError(
                           "binding volumes: context deadline exceeded"));
    } else {
      *keep++ = std::move(p);
    }
  }
  waiting_.erase(keep, waiting_.end());
  return due;
}

void VolumeBinder::Loop() {
  while (!stop_.WaitForNotificationWithTimeout(options_.poll)) {
    for (auto& [p, s] : Due()) {
      if (!s.ok())
        spdlog::info("PreBind of pod {}: {}", p->pod, std::string(s.message()));
      Finish(p, s);
    }
  }
}

}  // namespace kscore::scheduler
