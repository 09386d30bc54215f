#include "shim/scheduler/preemption_executor.h"

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
  {
    Running running;
    for (const Preemption::Victim& v : p.victims) {
      if (v.terminating) continue;
      ++running.outstanding;
      running.victims.push_back(absl::StrCat(v.namespace_, "/", v.name));
    }
    absl::MutexLock lock(&mu_);
    if (running.outstanding > 0) {
      running_[preemptor->key] = std::move(running);
    } else {
      running_.erase(preemptor->key);
    }
  }
  for (const Preemption::Victim& v : p.victims) {
    if (v.terminating) {  // its deletion is under way: nothing to send
      spdlog::info("victim {}/{} of {} is already being deleted", v.namespace_,
                   v.name, preemptor->key);
      continue;
    }
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
    writer_->Send(Writer::Lane::kBindings, std::move(req),
                  [this, preemptor, node = p.node,
                   v](const absl::StatusOr<kube::Response>& r) {
                    const std::string what =
                        absl::StrCat("DisruptionTarget condition for victim ",
                                     v.namespace_, "/", v.name);
                    if (Gone(r)) {
                      spdlog::info("victim {}/{} of {} is already deleted",
                                   v.namespace_, v.name, preemptor->key);
                      Answered(preemptor->key, true);
                      return;
                    }
                    if (Writer::LogIfFailed(r, what)) {
                      Answered(preemptor->key, false);
                      return;
                    }
                    Delete(preemptor, node, v);
                  });
  }
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
          Answered(preemptor->key, true);
          return;
        }
        if (Writer::LogIfFailed(
                r, absl::StrCat("deleting victim ", v.namespace_, "/", v.name,
                                " of ", preemptor->key))) {
          Answered(preemptor->key, false);
          return;
        }
        Answered(preemptor->key, true);
        spdlog::info("pod {} preempted victim {}/{} on node {}", preemptor->key,
                     v.namespace_, v.name, node);
        feedback_->Preempted({"v1", "Pod", v.namespace_, v.name, v.uid, ""},
                             *preemptor, node);
      });
}

bool PreemptionExecutor::AnyVictimLive(const Running& r) const {
  for (const std::string& victim : r.victims) {
    if (cache_->HoldsLivePod(victim)) return true;
  }
  return false;
}

void PreemptionExecutor::Answered(const std::string& preemptor, bool ok) {
  {
    absl::MutexLock lock(&mu_);
    auto it = running_.find(preemptor);
    if (it == running_.end()) return;
    it->second.failed |= !ok;
    if (--it->second.outstanding > 0) return;
    // A failure leaves a victim in place, so no deletion event may come to
    // move the pod. Otherwise the victims' deletion events may have come
    // already, while the pod waited on these answers, and moved it to no
    // avail; unless the cache still holds a victim, whose event will come.
    if (!it->second.failed && AnyVictimLive(it->second)) return;
    running_.erase(it);
  }
  activate_(preemptor);
}

bool PreemptionExecutor::Preempting(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = running_.find(key);
  if (it == running_.end()) return false;
  if (it->second.outstanding > 0 || AnyVictimLive(it->second)) return true;
  running_.erase(it);
  return false;
}

}  // namespace kscore::scheduler
