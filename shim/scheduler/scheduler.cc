#include "shim/scheduler/scheduler.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/kube/write_bodies.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {

Scheduler::Scheduler(Options options, Profiles* profiles, cache::Cache* cache,
                     queue::SchedulingQueue* queue,
                     scorer_client::Scorer* scorer, Writer* writer,
                     Feedback* feedback, Metrics* metrics)
    : options_(options),
      profiles_(profiles),
      cache_(cache),
      queue_(queue),
      scorer_(scorer),
      writer_(writer),
      feedback_(feedback),
      metrics_(metrics),
      volume_binder_(writer, &cache->volumes()),
      preemption_(
          writer, feedback, cache,
          [profiles](const std::string& name) {
            return profiles->Serves(name);
          },
          [queue](const std::string& key) { queue->Activate(key); }),
      decisions_(static_cast<size_t>(std::max(0, options.explain_decisions))) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start() {
  for (int i = 0; i < options_.schedule_workers; ++i) {
    workers_.emplace_back([this] {
      std::mt19937_64 rng(std::random_device{}());  // this worker's
      while (!stop_) {
        std::optional<queue::SchedulingQueue::QueuedPod> qp =
            queue_->Pop(absl::Milliseconds(200));
        if (qp.has_value()) ScheduleOne(*std::move(qp), rng);
      }
    });
  }
}

void Scheduler::Stop() {
  stop_ = true;
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  volume_binder_.Stop();
  writer_->WaitIdle(Writer::Lane::kBindings);
}

void Scheduler::ScheduleOne(queue::SchedulingQueue::QueuedPod qp) {
  std::mt19937_64 rng(std::random_device{}());
  ScheduleOne(std::move(qp), rng);
}

void Scheduler::ScheduleOne(queue::SchedulingQueue::QueuedPod qp,
                            std::mt19937_64& rng) {
  const absl::Time start = absl::Now();
  const objects::PodInfo& pod = *qp.info;
  if (!cache_->NodeOf(pod.key).empty()) {  // already assumed or bound
    queue_->Done(pod.key);
    return;
  }
  // Its preemption is under way (upstream's PreEnqueue for
  // DefaultPreemption): back to wait, the attempt not counted, until a
  // victim's deletion moves it once the preemption is over.
  if (preemption_.Preempting(pod.key)) {
    --qp.attempts;
    queue_->RequeueGated(std::move(qp), preemption_.Gate(pod.key));
    return;
  }
  // What to send for the profile, from the scorer; or why its pods wait.
  absl::StatusOr<std::shared_ptr<const ProfileInfo>> profile =
      profiles_->Lookup(pod.scheduler_name);
  if (!profile.ok()) {
    if (decisions_.capacity() > 0) {
      std::shared_ptr<Explanation> e = PodExplanation(pod);
      e->message = std::string(profile.status().message());
      e->error = true;
      Record(std::move(e), qp);
    }
    // Refused because the scorer did not answer: the pod waits for it to
    // answer again, as after a cycle that could not reach it.
    Fail(std::move(qp), std::string(profile.status().message()),
         absl::IsUnavailable(profile.status()) ? Cause::kScorerUnreachable
                                               : Cause::kError,
         start, "error");
    return;
  }
  CycleInput in =
      CycleFor(pod, **profile, rng, ExplainTop(), options_.record_scores);
  in.batches = &batches_;
  if ((*profile)->batches) in.upcoming = [this, &pod] { return Upcoming(pod); };
  CycleResult r = RunCycle(in, *scorer_);
  if (r.next_start.has_value()) next_start_.store(*r.next_start);
  if (r.batched || r.reused_rejections)
    metrics_->batched->Add({{"profile", pod.scheduler_name}}).Increment();
  if (r.ahead)
    metrics_->answered_ahead->Add({{"profile", pod.scheduler_name}})
        .Increment();
  std::shared_ptr<const Explanation> record;
  if (r.explanation != nullptr) record = Record(std::move(r.explanation), qp);
  if (!r.ok()) {
    if (r.failure->stale_profiles) profiles_->Invalidate(r.failure->message);
    const bool unschedulable = r.failure->kind == Failure::Kind::kUnschedulable;
    qp.unschedulable_plugins = std::move(r.failure->plugins);
    qp.plugin_events = (*profile)->plugin_events;
    std::string nominated;
    if (r.preemption.has_value()) {
      nominated = r.preemption->node;
      preemption_.Preempt(qp.info, *r.preemption);
    }
    const Cause cause = unschedulable            ? Cause::kUnschedulable
                        : r.failure->unreachable ? Cause::kScorerUnreachable
                                                 : Cause::kError;
    Fail(std::move(qp), r.failure->message, cause, start,
         unschedulable ? "unschedulable" : "error", r.nominating, nominated);
    return;
  }
  std::optional<cache::Volumes::Reservation> reserved;
  if (!ReserveVolumes(qp, r, start, &reserved)) return;
  if (!cache_->AssumePod(pod, r.node)) {
    if (reserved.has_value()) cache_->volumes().Forget(*reserved);
    queue_->Done(pod.key);
    return;
  }
  if (!options_.record_scores) record = nullptr;
  if (reserved.has_value()) {
    PreBindThenBind(std::move(qp), std::move(r.node), start, std::move(record),
                    *std::move(reserved), (*profile)->volume_bind_timeout);
    return;
  }
  Bind(std::move(qp), std::move(r.node), start, std::move(record));
}

bool Scheduler::ReserveVolumes(
    queue::SchedulingQueue::QueuedPod& qp, const CycleResult& r,
    absl::Time start, std::optional<cache::Volumes::Reservation>* reserved) {
  if (!r.volumes.has_value()) return true;
  absl::StatusOr<cache::Volumes::Reservation> res =
      cache_->volumes().Assume(qp.info->pod, *r.volumes);
  if (!res.ok()) {
    metrics_->volume_stage_errors->Add({{"operation", "assume"}}).Increment();
    Fail(std::move(qp),
         absl::StrCat("running Reserve plugin \"VolumeBinding\": ",
                      res.status().message()),
         Cause::kError, start, "error");
    return false;
  }
  if (!res->empty()) *reserved = *std::move(res);
  return true;
}

void Scheduler::PreBindThenBind(queue::SchedulingQueue::QueuedPod qp,
                                std::string node, absl::Time start,
                                std::shared_ptr<const Explanation> record,
                                cache::Volumes::Reservation reserved,
                                absl::Duration timeout) {
  struct Held {
    queue::SchedulingQueue::QueuedPod qp;
    std::string node;
    std::shared_ptr<const Explanation> record;
    std::chrono::steady_clock::time_point begin;
  };
  auto held = std::make_shared<Held>(Held{std::move(qp), std::move(node),
                                          std::move(record),
                                          std::chrono::steady_clock::now()});
  const objects::PodInfo& pod = *held->qp.info;
  volume_binder_.PreBind(
      pod, std::move(reserved), timeout,
      [this, held, start](const absl::Status& s) {
        metrics_->ExtensionPoint(
            "PreBind", s.ok() ? "Success" : "Error",
            held->qp.info->scheduler_name,
            std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          held->begin)
                .count());
        if (s.ok()) {
          Bind(std::move(held->qp), std::move(held->node), start,
               std::move(held->record));
          return;
        }
        cache_->ForgetPod(held->qp.info->key);
        Fail(std::move(held->qp),
             absl::StrCat("running PreBind plugin \"VolumeBinding\": ",
                          s.message()),
             Cause::kError, start, "error");
      });
}

int32_t Scheduler::ExplainTop() const {
  if (options_.record_scores) return -1;  // every feasible node
  if (decisions_.capacity() == 0) return 0;
  return std::max(1, options_.explain_top);
}

namespace {

// How many of the next pods in activeQ a cycle looks at (CycleInput::
// upcoming).
constexpr size_t kLookAhead = 48;

bool SameLabels(const google::protobuf::Map<std::string, std::string>& a,
                const google::protobuf::Map<std::string, std::string>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) return false;
  }
  return true;
}

}  // namespace

std::vector<bool> Scheduler::Upcoming(const objects::PodInfo& pod) const {
  std::vector<bool> out;
  for (const std::shared_ptr<const objects::PodInfo>& next :
       queue_->PeekActive(kLookAhead)) {
    out.push_back(next->namespace_ == pod.namespace_ &&
                  next->scheduler_name == pod.scheduler_name &&
                  next->priority == pod.priority &&
                  SameLabels(next->pod.labels(), pod.pod.labels()));
  }
  return out;
}

CycleInput Scheduler::CycleFor(const objects::PodInfo& pod,
                               const ProfileInfo& profile, std::mt19937_64& rng,
                               int32_t explain_top, bool explain_rejections) {
  return {.pod = &pod,
          .profile = &profile,
          .cache = cache_,
          .batch_size = static_cast<size_t>(std::max(1, options_.batch_size)),
          .start = next_start_.load(),
          .rng = &rng,
          .plans = &plans_,
          .max_victim_pods = static_cast<size_t>(
              std::max(0, options_.preemption_max_victim_pods)),
          .explain_top = explain_top,
          .explain_rejections = explain_rejections};
}

std::shared_ptr<const Explanation> Scheduler::Record(
    std::shared_ptr<Explanation> e,
    const queue::SchedulingQueue::QueuedPod& qp) {
  e->attempts = qp.attempts;
  if (decisions_.capacity() > 0) {
    if (options_.record_scores) {
      decisions_.Add(std::make_shared<const Explanation>(
          Trimmed(*e, static_cast<size_t>(std::max(1, options_.explain_top)))));
    } else {
      decisions_.Add(e);
    }
  }
  return e;
}

absl::StatusOr<std::shared_ptr<const Explanation>> Scheduler::WhatIf(
    const objects::PodInfo& pod) {
  if (!profiles_->Serves(pod.scheduler_name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.schedulerName: \"", pod.scheduler_name,
                     "\" is not a profile of this scheduler (it serves: ",
                     absl::StrJoin(profiles_->served(), ", "), ")"));
  }
  KSCORE_ASSIGN_OR_RETURN(std::shared_ptr<const ProfileInfo> profile,
                          profiles_->Lookup(pod.scheduler_name));
  std::mt19937_64 rng(std::random_device{}());
  CycleResult r =
      RunCycle(CycleFor(pod, *profile, rng, std::max(1, options_.explain_top),
                        /*explain_rejections=*/false),
               *scorer_);
  if (r.failure.has_value() && r.failure->stale_profiles) {
    profiles_->Invalidate(r.failure->message);
  }
  r.explanation->what_if = true;
  return std::shared_ptr<const Explanation>(std::move(r.explanation));
}

void Scheduler::Bind(queue::SchedulingQueue::QueuedPod qp, std::string node,
                     absl::Time start,
                     std::shared_ptr<const Explanation> record) {
  Send(std::make_shared<PendingBind>(
      PendingBind{std::move(qp), std::move(node), start,
                  std::chrono::steady_clock::now(), std::move(record), false}));
}

void Scheduler::RetryBindings(bool all) {
  std::vector<std::shared_ptr<PendingBind>> due;
  {
    absl::MutexLock lock(&unanswered_mu_);
    const absl::Time now = absl::Now();
    auto keep = unanswered_.begin();
    for (auto& entry : unanswered_) {
      if (all || entry.first <= now) {
        due.push_back(std::move(entry.second));
      } else {
        *keep++ = std::move(entry);
      }
    }
    unanswered_.erase(keep, unanswered_.end());
  }
  for (auto& b : due) Send(std::move(b));
}

void Scheduler::Send(std::shared_ptr<PendingBind> b) {
  const objects::PodInfo& pod = *b->qp.info;
  Writer::Request req;
  req.method = "POST";
  req.path = absl::StrCat("/api/v1/namespaces/", pod.namespace_, "/pods/",
                          pod.name, "/binding");
  req.body = kube::BindingBody(options_.protobuf, pod.namespace_, pod.name,
                               pod.uid, b->node);
  writer_->Send(
      Writer::Lane::kBindings, std::move(req),
      [this, b](const absl::StatusOr<kube::Response>& r) { Bound(b, r); });
}

void Scheduler::Bound(const std::shared_ptr<PendingBind>& pending,
                      const absl::StatusOr<kube::Response>& r) {
  PendingBind& b = *pending;
  queue::SchedulingQueue::QueuedPod& qp = b.qp;
  const std::string& node = b.node;
  const absl::Time start = b.start;
  const objects::PodInfo& pod = *qp.info;
  const bool bound = r.ok() && r->status >= 200 && r->status < 300;
  // As DefaultBinder's: any failure, a conflict included, is an Error.
  metrics_->ExtensionPoint("Bind", bound ? "Success" : "Error",
                           pod.scheduler_name,
                           std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - b.bind_start)
                               .count());
  if (bound) {
    metrics_->binds->Add({{"result", "bound"}}).Increment();
    metrics_->Attempt("scheduled", pod.scheduler_name,
                      absl::ToDoubleSeconds(absl::Now() - start));
    if (qp.initial_attempt != absl::Time()) {
      metrics_->Scheduled(
          qp.attempts, absl::ToDoubleSeconds(absl::Now() - qp.initial_attempt));
    }
    spdlog::info("bound pod {} to node {}", pod.key, node);
    feedback_->Scheduled(pod, node);
    if (b.record != nullptr) {
      feedback_->Annotate(pod, SimulatorAnnotations(*b.record));
      b.record.reset();
    }
    queue_->Done(pod.key, pod.uid);
    return;
  }
  if (!r.ok()) {
    // No answer (refused, reset, timed out): the binding may have been made.
    // Forgetting the pod now would free its room to the next cycles before
    // the informer shows where it is, and a node could be overcommitted. It
    // stays assumed, and the same binding is sent again: at once when the
    // API server answers again, else every kBindRetry.
    metrics_->binds->Add({{"result", "error"}}).Increment();
    spdlog::info("binding {} to {}: {}; sending it again", pod.key, node,
                 std::string(r.status().message()));
    b.unanswered = true;
    absl::MutexLock lock(&unanswered_mu_);
    unanswered_.emplace_back(absl::Now() + kBindRetry, pending);
    return;
  }
  if (r->status == 409 && b.unanswered) {
    // An earlier attempt was made after all (or another scheduler bound the
    // pod): it stays counted where assumed until the informer says where it
    // is (UpsertAssignedPod replaces the assumed copy).
    metrics_->binds->Add({{"result", "conflict"}}).Increment();
    spdlog::info(
        "binding {} to {}: HTTP 409 after an unanswered attempt; taken as "
        "bound",
        pod.key, node);
    queue_->Done(pod.key, pod.uid);
    return;
  }
  cache_->ForgetPod(pod.key);
  if (r->status == 404 || r->status == 409) {
    // Already bound (by us before a restart, or by someone else), or gone:
    // the informer brings the truth; retry only if the pod is still pending.
    metrics_->binds->Add({{"result", "conflict"}}).Increment();
    spdlog::info(
        "binding {} to {}: HTTP {} (already bound or gone); not retrying now",
        pod.key, node, r->status);
    queue_->Requeue(std::move(qp), false);
    return;
  }
  metrics_->binds->Add({{"result", "error"}}).Increment();
  std::string why = absl::StrCat("HTTP ", r->status, ": ",
                                 kube::ErrorBodyText(r->body).substr(0, 300));
  Fail(std::move(qp), absl::StrCat("Binding rejected: ", why), Cause::kError,
       start, "error");
}

void Scheduler::Fail(queue::SchedulingQueue::QueuedPod qp,
                     const std::string& message, Cause cause, absl::Time start,
                     const char* result, Nominating nominating,
                     const std::string& nominated_node) {
  auto info = qp.info;
  const bool unschedulable = cause == Cause::kUnschedulable;
  metrics_->Attempt(result, info->scheduler_name,
                    absl::ToDoubleSeconds(absl::Now() - start));
  spdlog::info("unable to schedule pod {}: {}", info->key, message);
  // The status to write: set or cleared; kKeep writes nothing.
  std::optional<std::string> nominated;
  if (nominating != Nominating::kKeep) {
    nominated = nominating == Nominating::kSet ? nominated_node : "";
    cache_->Nominate(*info, *nominated);
  }
  switch (cause) {
    case Cause::kScorerUnreachable:
      queue_->RequeueUnreachable(std::move(qp));
      break;
    default:
      queue_->Requeue(std::move(qp), unschedulable);
  }
  // Deleted or bound while in flight: no nomination may outlive it.
  if (nominating == Nominating::kSet && !queue_->Contains(info->key)) {
    cache_->Nominate(*info, "");
    nominated.reset();
  }
  if (nominated.has_value() && *nominated == info->nominated_node_name) {
    nominated.reset();  // the status says so already
  }
  const char* reason = unschedulable ? "Unschedulable" : "SchedulerError";
  feedback_->FailedScheduling(*info, message);
  // Written when the feedback lane gets to it, if the pod still waits.
  auto pending = [queue = queue_, key = info->key] {
    return queue->Contains(key);
  };
  if (info->unschedulable_message != message) {
    feedback_->MarkUnschedulable(*info, reason, message, nominated, pending);
  } else if (nominated.has_value()) {
    feedback_->SetNominatedNode(info->namespace_, info->name, *nominated,
                                pending);
  }
}

}  // namespace kscore::scheduler
