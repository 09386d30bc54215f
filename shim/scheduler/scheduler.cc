#include "shim/scheduler/scheduler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/arena.h"
#include "scorer/framework/fit_error.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/kube/write_bodies.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {

namespace pb = ::kscore::scorer::v1;

WorkerPool::WorkerPool(int threads) {
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      while (true) {
        std::function<void()> task;
        {
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
          if (tasks_.empty()) return;  // stopping, and drained
          task = std::move(tasks_.front());
          tasks_.pop_front();
        }
        task();
      }
    });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

Scheduler::Scheduler(Options options, Profiles* profiles, cache::Cache* cache,
                     queue::SchedulingQueue* queue,
                     scorer_client::ScorerClient* scorer, kube::Client* client,
                     Feedback* feedback, Metrics* metrics)
    : options_(options),
      profiles_(profiles),
      cache_(cache),
      queue_(queue),
      scorer_(scorer),
      client_(client),
      feedback_(feedback),
      metrics_(metrics),
      binds_(options_.max_binds_in_flight) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start() {
  feedback_pool_ = std::make_unique<WorkerPool>(2);
  for (int i = 0; i < options_.schedule_workers; ++i) {
    workers_.emplace_back([this] {
      while (!stop_) {
        std::optional<queue::SchedulingQueue::QueuedPod> qp =
            queue_->Pop(absl::Milliseconds(200));
        if (qp.has_value()) ScheduleOne(*std::move(qp));
      }
    });
  }
}

void Scheduler::Stop() {
  stop_ = true;
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  binds_.WaitIdle();
  feedback_pool_.reset();
}

size_t Scheduler::NumFeasibleNodesToFind(int32_t percentage, size_t all_nodes) {
  constexpr size_t kMinFeasibleNodesToFind = 100;
  constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;
  if (all_nodes < kMinFeasibleNodesToFind) return all_nodes;
  int32_t pct = percentage;
  if (pct == 0) {
    pct = 50 - static_cast<int32_t>(all_nodes / 125);
    if (pct < kMinFeasibleNodesPercentageToFind)
      pct = kMinFeasibleNodesPercentageToFind;
  }
  size_t n = all_nodes * static_cast<size_t>(pct) / 100;
  if (n < kMinFeasibleNodesToFind) return kMinFeasibleNodesToFind;
  return n;
}

void Scheduler::ScheduleOne(queue::SchedulingQueue::QueuedPod qp) {
  const absl::Time start = absl::Now();
  const cache::PodInfo& pod = *qp.info;
  if (!cache_->NodeOf(pod.key).empty()) {  // already assumed or bound
    queue_->Done(pod.key);
    return;
  }
  absl::StatusOr<std::shared_ptr<const ProfileInfo>> info =
      profiles_->Lookup(pod.scheduler_name);
  if (!info.ok()) {
    Fail(std::move(qp), std::string(info.status().message()), false, start,
         "error");
    return;
  }
  const ProfileInfo& profile = **info;
  const size_t all_nodes = cache_->NodeCount();
  if (all_nodes == 0) {
    Fail(std::move(qp),
         "0/0 nodes are available: no nodes available to schedule pods", true,
         start, "unschedulable");
    return;
  }
  const size_t to_find =
      NumFeasibleNodesToFind(profile.percentage_of_nodes_to_score, all_nodes);
  const size_t batch = static_cast<size_t>(std::max(1, options_.batch_size));
  const size_t first = next_start_.load() % all_nodes;
  // Each call is asked for totals only (DETAIL_TOTALS: rejected nodes by
  // index, raw scores and totals of the feasible ones, no names). A cycle
  // that fits in one call uses that call's totals; when it took several
  // (batches, or more rounds because nodes were rejected), one NormalizeScore
  // call normalises every call's raw scores together afterwards.
  size_t batches = 0;

  framework::FitErrorBuilder fit_error(static_cast<int>(all_nodes));
  std::vector<std::string> plugins;
  // Every candidate sent, in order (names from the cache); the feasible ones
  // (indices into `names`) with their raw scores (plugins per node) and, for
  // a one-call cycle, their totals.
  std::vector<std::string> names;
  std::vector<size_t> feasible;
  std::vector<int64_t> raw;
  std::vector<int64_t> totals;
  google::protobuf::Map<std::string, std::string> cycle_state;
  size_t processed = 0;
  const bool with_labels = profile.NeedsNodeLabels(pod.pod);
  // Every batch starts with the same profile and pod; the candidate nodes
  // are appended already encoded.
  std::string head;
  {
    pb::EvaluateRequest h;
    h.set_profile(pod.scheduler_name);
    *h.mutable_pod() = pod.pod;
    h.set_detail(pb::DETAIL_TOTALS);
    h.set_config_hash(profile.config_hash);
    h.SerializeToString(&head);
  }
  std::string skip_normalize;
  {
    pb::EvaluateRequest h;
    h.set_skip_normalize(true);
    h.SerializeToString(&skip_normalize);
  }
  while (processed < all_nodes && feasible.size() < to_find) {
    // As many nodes as feasible ones are still to find (kube-scheduler's
    // window), in batches of at most `batch`.
    size_t want = std::min(all_nodes - processed, to_find - feasible.size());
    // Normalised in the call only when it is the cycle's only call: the
    // first, one batch, and enough nodes that no second round is possible
    // unless some are rejected (then NormalizeScore runs over the raw).
    const bool single = batches == 0 && want <= batch;
    std::vector<std::string> requests;
    std::vector<size_t> bases;  // index in `names` of each request's first
    for (size_t off = 0; off < want; off += batch) {
      std::string& req = requests.emplace_back(head);
      if (!single) req.append(skip_normalize);
      ++batches;
      bases.push_back(names.size());
      cache_->AppendCandidates(
          pod, profile.label_count_keys, first + processed + off,
          std::min(batch, want - off), with_labels,
          pb::EvaluateRequest::kNodesFieldNumber, &req, &names);
    }
    processed += want;
    google::protobuf::Arena arena;
    std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
        scorer_->EvaluateAll(requests, &arena);
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i].ok()) {
        if (absl::IsFailedPrecondition(results[i].status())) {
          profiles_->Invalidate(std::string(results[i].status().message()));
        }
        Fail(
            std::move(qp),
            absl::StrCat("scorer unavailable: ", results[i].status().message()),
            false, start, "error");
        return;
      }
      const pb::EvaluateResponse& resp = **results[i];
      if (resp.status().code() != pb::CODE_SUCCESS) {
        fit_error.SetPreFilterMessage(
            absl::StrJoin(resp.status().reasons(), ", "));
        Fail(std::move(qp), fit_error.Message(), true, start, "unschedulable");
        return;
      }
      if (plugins.empty() && !resp.plugins().empty()) {
        plugins.assign(resp.plugins().begin(), resp.plugins().end());
      }
      if (cycle_state.empty()) cycle_state = resp.cycle_state();
      const size_t end = i + 1 < bases.size() ? bases[i + 1] : names.size();
      const size_t before = feasible.size();
      size_t next = bases[i];
      for (const pb::RejectedNode& r : resp.rejected()) {
        const size_t at = bases[i] + static_cast<size_t>(r.index());
        if (r.index() < 0 || at < next || at >= end) {
          Fail(std::move(qp),
               absl::StrCat("scorer error: rejected node index ", r.index(),
                            " out of order or range"),
               false, start, "error");
          return;
        }
        for (; next < at; ++next) feasible.push_back(next);
        next = at + 1;
        for (const std::string& why : r.status().reasons()) {
          fit_error.AddReason(why);
        }
      }
      for (; next < end; ++next) feasible.push_back(next);
      const size_t got = feasible.size() - before;
      if (static_cast<size_t>(resp.raw_size()) != got * plugins.size() ||
          (single && static_cast<size_t>(resp.totals_size()) != got)) {
        Fail(std::move(qp),
             absl::StrCat("scorer error: ", resp.raw_size(), " raw scores and ",
                          resp.totals_size(), " totals for ", got,
                          " feasible nodes and ", plugins.size(), " plugins"),
             false, start, "error");
        return;
      }
      raw.insert(raw.end(), resp.raw().begin(), resp.raw().end());
      if (single) totals.assign(resp.totals().begin(), resp.totals().end());
    }
  }
  next_start_.store((first + processed) % all_nodes);
  if (feasible.empty()) {
    Fail(std::move(qp), fit_error.Message(), true, start, "unschedulable");
    return;
  }
  if (totals.size() != feasible.size()) {
    if (plugins.empty()) {  // no score plugin ran: every node totals 0
      totals.assign(feasible.size(), 0);
    } else {
      pb::NormalizeScoreRequest req;
      req.set_profile(pod.scheduler_name);
      *req.mutable_pod() = pod.pod;
      *req.mutable_cycle_state() = cycle_state;
      req.set_config_hash(profile.config_hash);
      for (const std::string& p : plugins) req.add_plugins(p);
      req.mutable_raw()->Add(raw.begin(), raw.end());
      absl::StatusOr<pb::NormalizeScoreResponse> norm =
          scorer_->NormalizeScore(req);
      if (norm.ok() &&
          static_cast<size_t>(norm->totals_size()) != feasible.size()) {
        norm = absl::InternalError(
            absl::StrCat("NormalizeScore returned ", norm->totals_size(),
                         " totals for ", feasible.size(), " nodes"));
      }
      if (!norm.ok()) {
        if (absl::IsFailedPrecondition(norm.status())) {
          profiles_->Invalidate(std::string(norm.status().message()));
        }
        Fail(std::move(qp),
             absl::StrCat("scorer unavailable: ", norm.status().message()),
             false, start, "error");
        return;
      }
      totals.assign(norm->totals().begin(), norm->totals().end());
    }
  }

  // Highest total wins; ties broken uniformly at random (reservoir sampling).
  thread_local std::mt19937_64 rng(std::random_device{}());
  size_t best = 0, ties = 1;
  for (size_t i = 1; i < feasible.size(); ++i) {
    if (totals[i] > totals[best]) {
      best = i;
      ties = 1;
    } else if (totals[i] == totals[best] &&
               std::uniform_int_distribution<size_t>(0, ties++)(rng) == 0) {
      best = i;
    }
  }
  const std::string node = names[feasible[best]];
  if (spdlog::should_log(spdlog::level::debug)) {
    std::vector<size_t> order(feasible.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto top =
        static_cast<std::ptrdiff_t>(std::min<size_t>(3, order.size()));
    std::partial_sort(
        order.begin(), order.begin() + top, order.end(),
        [&](size_t a, size_t b) { return totals[a] > totals[b]; });
    std::string why;
    for (std::ptrdiff_t k = 0; k < top; ++k) {
      const size_t i = order[k];
      std::vector<std::string> parts;
      for (size_t p = 0; p < plugins.size(); ++p) {
        parts.push_back(
            absl::StrCat(plugins[p], "=", raw[i * plugins.size() + p]));
      }
      absl::StrAppend(&why, k ? "; " : "", names[feasible[i]],
                      " total=", totals[i], " (raw ", absl::StrJoin(parts, " "),
                      ")");
    }
    spdlog::debug("pod {} -> node {} among {} feasible of {} nodes; top: {}",
                  pod.key, node, feasible.size(), all_nodes, why);
  }
  if (!cache_->AssumePod(pod, node)) {
    queue_->Done(pod.key);
    return;
  }
  Bind(std::move(qp), node, start);
}

void Scheduler::Bind(queue::SchedulingQueue::QueuedPod qp, std::string node,
                     absl::Time start) {
  auto b = std::make_shared<PendingBind>(
      PendingBind{std::move(qp), std::move(node), start});
  binds_.Run([this, b](std::function<void()> done) {
    const cache::PodInfo& pod = *b->qp.info;
    kube::WriteBody body = kube::BindingBody(options_.protobuf, pod.namespace_,
                                             pod.name, pod.uid, b->node);
    client_->DoAsync("POST",
                     absl::StrCat("/api/v1/namespaces/", pod.namespace_,
                                  "/pods/", pod.name, "/binding"),
                     std::move(body.data), body.content_type, body.content_type,
                     [this, b, done = std::move(done)](
                         const absl::StatusOr<kube::Response>& r) {
                       Bound(*b, r);
                       done();
                     });
  });
}

void Scheduler::Bound(PendingBind& b, const absl::StatusOr<kube::Response>& r) {
  queue::SchedulingQueue::QueuedPod& qp = b.qp;
  const std::string& node = b.node;
  const absl::Time start = b.start;
  const cache::PodInfo& pod = *qp.info;
  if (r.ok() && r->status >= 200 && r->status < 300) {
    metrics_->binds->Add({{"result", "bound"}}).Increment();
    metrics_->Attempt("scheduled", pod.scheduler_name,
                      absl::ToDoubleSeconds(absl::Now() - start));
    spdlog::info("bound pod {} to node {}", pod.key, node);
    feedback_->Scheduled(pod, node);
    queue_->Done(pod.key, pod.uid);
    return;
  }
  cache_->ForgetPod(pod.key);
  if (r.ok() && (r->status == 404 || r->status == 409)) {
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
  std::string why =
      r.ok() ? absl::StrCat("HTTP ", r->status, ": ",
                            kube::ErrorBodyText(r->body).substr(0, 300))
             : std::string(r.status().message());
  Fail(std::move(qp), absl::StrCat("Binding rejected: ", why), false, start,
       "error");
}

void Scheduler::Fail(queue::SchedulingQueue::QueuedPod qp,
                     const std::string& message, bool unschedulable,
                     absl::Time start, const char* result) {
  auto info = qp.info;
  metrics_->Attempt(result, info->scheduler_name,
                    absl::ToDoubleSeconds(absl::Now() - start));
  spdlog::info("unable to schedule pod {}: {}", info->key, message);
  queue_->Requeue(std::move(qp), unschedulable);
  const char* reason = unschedulable ? "Unschedulable" : "SchedulerError";
  feedback_pool_->Submit([this, info, message, reason] {
    if (absl::Status s = feedback_->FailedScheduling(*info, message); !s.ok()) {
      spdlog::warn("event for {}: {}", info->key, std::string(s.message()));
    }
    if (info->unschedulable_message != message) {
      if (absl::Status s = feedback_->MarkUnschedulable(*info, reason, message);
          !s.ok()) {
        spdlog::warn("condition for {}: {}", info->key,
                     std::string(s.message()));
      }
    }
  });
}

}  // namespace kscore::scheduler
