#include "shim/scheduler/hints.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "model/cluster_event.h"
#include "shim/scheduler/cycle.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {

void HintAsker::Start() {
  worker_ = std::thread([this] {
    while (true) {
      queue::SchedulingQueue::HintJob job;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !jobs_.empty();
        };
        mu_.Await(absl::Condition(&ready));
        if (stopping_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      Answer(job);
    }
  });
}

void HintAsker::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (worker_.joinable()) worker_.join();
}

void HintAsker::Ask(queue::SchedulingQueue::HintJob job) {
  absl::MutexLock lock(&mu_);
  jobs_.push_back(std::move(job));
}

void HintAsker::Answer(const queue::SchedulingQueue::HintJob& job) {
  std::vector<bool> queue(job.pods.size(), true);
  // The pods by profile; within one, a query per template and plugins.
  std::map<std::string, std::vector<size_t>> by_profile;
  for (size_t i = 0; i < job.pods.size(); ++i) {
    by_profile[job.pods[i].info->scheduler_name].push_back(i);
  }
  for (const auto& [name, pods] : by_profile) {
    absl::StatusOr<std::shared_ptr<const ProfileInfo>> profile =
        profiles_->Lookup(name);
    if (!profile.ok()) continue;  // every pod moves
    pb::QueueingHintRequest req;
    req.set_profile(name);
    req.set_config_hash((*profile)->config_hash);
    *req.mutable_event() = job.event;
    const queue::EventObjects& o = job.objects;
    if (o.old_node) *req.mutable_old_node() = o.old_node->node;
    if (o.new_node) *req.mutable_new_node() = o.new_node->node;
    if (o.old_pod) *req.mutable_old_pod() = o.old_pod->pod;
    if (o.new_pod) *req.mutable_new_pod() = o.new_pod->pod;
    std::map<std::string, int> queries;  // template and plugins -> query
    std::vector<int> query_of(job.pods.size(), -1);
    for (size_t i : pods) {
      const queue::SchedulingQueue::QueuedPod& p = job.pods[i];
      std::string key =
          absl::StrCat(absl::StrJoin(p.unschedulable_plugins, ","), "\n",
                       TemplateKey(**profile, p.info->pod));
      auto [it, added] = queries.emplace(std::move(key), req.queries_size());
      if (added) {
        pb::HintQuery* q = req.add_queries();
        *q->mutable_pod() = p.info->pod;
        for (const std::string& plugin : p.unschedulable_plugins) {
          q->add_plugins(plugin);
        }
      }
      query_of[i] = it->second;
    }
    absl::StatusOr<pb::QueueingHintResponse> resp = scorer_->QueueingHint(req);
    if (!resp.ok() || resp->queue_size() != req.queries_size()) {
      spdlog::warn("queueing hints for {} ({} pods): {}; moving them all",
                   model::EventLabel(job.event), pods.size(),
                   resp.ok() ? "answer of the wrong size"
                             : std::string(resp.status().message()));
      continue;
    }
    for (size_t i : pods) queue[i] = resp->queue(query_of[i]);
  }
  queue_->ApplyHints(job, queue);
}

}  // namespace kscore::scheduler
