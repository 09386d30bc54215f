#include "shim/scheduler/preemption_executor.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {
namespace {

std::string PodPath(const std::string& namespace_, const std::string& name) {
  return absl::StrCat("/api/v1/namespaces/", namespace_, "/pods/", name);
}

bool Gone(const absl::StatusOr<kube::Response>& r) {
  return r.ok() && r->status == 404;
}

}  // namespace

void PreemptionExecutor::Preempt(PodPtr preemptor, const Preemption& p) {
  // Upstream's getLowerPriorityNominatedPods, then clearNominatedNodeName.
  for (const cache::Cache::NominatedPod& n : cache_->NominatedPodsOn(p.node)) {
    if (n.priority >= preemptor->priority || !ours_(n.scheduler_name)) {
      continue;
    }
    cache_->DropNomination(n.key);
    feedback_->SetNominatedNode(n.namespace_, n.name, "");
  }
  std::vector<Preemption::Victim> victims;
  for (const Preemption::Victim& v : p.victims) {
    if (v.terminating) {  // its deletion is under way: nothing to send
      spdlog::info("victim {}/{} of {} is already being deleted", v.namespace_,
                   v.name, preemptor->key);
      continue;
    }
    victims.push_back(v);
  }
  if (victims.empty()) {
    absl::MutexLock lock(&mu_);
    EraseLocked(preemptor->key);
    return;
  }
  // As upstream: every victim but the last at once; the last once they are
  // all answered, so that its deletion event, the one the pod waits for,
  // comes after theirs.
  Running running;
  running.last = victims.back();
  running.last_round = victims.size() == 1;  // the last is the only one
  if (!running.last_round) victims.pop_back();
  running.outstanding = static_cast<int>(victims.size());
  {
    absl::MutexLock lock(&mu_);
    EraseLocked(preemptor->key);
    running_.emplace(preemptor->key, running);
  }
  for (const Preemption::Victim& v : victims) Evict(preemptor, p.node, v);
}

void PreemptionExecutor::Evict(const PodPtr& preemptor, const std::string& node,
                               const Preemption::Victim& v) {
  const std::string scheduler = preemptor->scheduler_name;
  nlohmann::json patch = {
      {"status",
       {{"conditions",
         {{{"type", "DisruptionTarget"},
           {"status", "True"},
           {"reason", "PreemptionByScheduler"},
           {"message",
            absl::StrCat(scheduler,
                         ": preempting to accommodate a higher priority "
                         "pod")},
           {"lastTransitionTime",
            absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(),
                             absl::UTCTimeZone())}}}}}}};
  Writer::Request req;
  req.method = "PATCH";
  req.path = PodPath(v.namespace_, v.name) + "/status";
  req.body = {patch.dump(), "application/strategic-merge-patch+json"};
  req.accept = "application/json";
  writer_->Send(
      Writer::Lane::kBindings, std::move(req),
      [this, preemptor, node, v](const absl::StatusOr<kube::Response>& r) {
        const std::string what =
            absl::StrCat("DisruptionTarget condition for victim ", v.namespace_,
                         "/", v.name);
        if (Gone(r)) {
          spdlog::info("victim {}/{} of {} is already deleted", v.namespace_,
                       v.name, preemptor->key);
          Answered(preemptor, node, true);
          return;
        }
        if (Writer::LogIfFailed(r, what)) {
          Answered(preemptor, node, false);
          return;
        }
        Delete(preemptor, node, v);
      });
}

void PreemptionExecutor::Delete(const PodPtr& preemptor,
                                const std::string& node,
                                const Preemption::Victim& v) {
  // The uid as precondition: never a pod re-created under the same name.
  nlohmann::json options = {{"apiVersion", "v1"},
                            {"kind", "DeleteOptions"},
                            {"preconditions", {{"uid", v.uid}}}};
  Writer::Request req;
  req.method = "DELETE";
  req.path = PodPath(v.namespace_, v.name);
  req.body = {options.dump(), "application/json"};
  writer_->Send(
      Writer::Lane::kBindings, std::move(req),
      [this, preemptor, node, v](const absl::StatusOr<kube::Response>& r) {
        if (Gone(r) || (r.ok() && r->status == 409)) {
          spdlog::info("victim {}/{} of {} is already deleted", v.namespace_,
                       v.name, preemptor->key);
          Answered(preemptor, node, true);
          return;
        }
        if (Writer::LogIfFailed(
                r, absl::StrCat("deleting victim ", v.namespace_, "/", v.name,
                                " of ", preemptor->key))) {
          Answered(preemptor, node, false);
          return;
        }
        Answered(preemptor, node, true);
        spdlog::info("pod {} preempted victim {}/{} on node {}", preemptor->key,
                     v.namespace_, v.name, node);
        feedback_->Preempted({"v1", "Pod", v.namespace_, v.name, v.uid, ""},
                             *preemptor, node);
      });
}

void PreemptionExecutor::Answered(const PodPtr& preemptor,
                                  const std::string& node, bool ok) {
  std::optional<Preemption::Victim> next;
  {
    absl::MutexLock lock(&mu_);
    auto it = running_.find(preemptor->key);
    if (it == running_.end()) return;
    Running& r = it->second;
    r.failed |= !ok;
    if (--r.outstanding > 0) return;
    if (!r.last_round && !r.failed) {
      // The others are answered: now the last victim.
      r.last_round = true;
      r.outstanding = 1;
      next = r.last;
    } else {
      // A failure leaves a victim in place (upstream then skips the last
      // one), so no deletion event may come to move the pod. Otherwise the
      // last victim's deletion event may have come already, while the pod
      // waited on this answer, and moved it to no avail; unless the cache
      // still holds that victim, whose event will come.
      r.calls_pending->store(false);
      if (!r.failed && LastVictimLive(r)) return;
      EraseLocked(it);
    }
  }
  if (next.has_value()) {
    Evict(preemptor, node, *next);
    return;
  }
  activate_(preemptor->key);
}

bool PreemptionExecutor::LastVictimLive(const Running& r) const {
  return cache_->HoldsLivePod(
      absl::StrCat(r.last.namespace_, "/", r.last.name));
}

bool PreemptionExecutor::Preempting(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = running_.find(key);
  if (it == running_.end()) return false;
  const Running& r = it->second;
  if (!r.last_round || r.outstanding > 0 || LastVictimLive(r)) return true;
  EraseLocked(it);
  return false;
}

std::function<bool()> PreemptionExecutor::Gate(const std::string& key) const {
  std::shared_ptr<const std::atomic<bool>> pending;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = running_.find(key); it != running_.end()) {
      pending = it->second.calls_pending;
    }
  }
  return [this, key, pending] {
    if (pending != nullptr && pending->load()) return true;
    return Preempting(key);
  };
}

void PreemptionExecutor::EraseLocked(
    absl::flat_hash_map<std::string, Running>::iterator it) const {
  it->second.calls_pending->store(false);
  running_.erase(it);
}

void PreemptionExecutor::EraseLocked(const std::string& key) const {
  if (auto it = running_.find(key); it != running_.end()) EraseLocked(it);
}

}  // namespace kscore::scheduler
