#include "shim/app/shim.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/status_macros.h"
#include "prometheus/counter.h"
#include "prometheus/text_serializer.h"
#include "shim/app/cluster_events.h"
#include "shim/app/configz.h"
#include "shim/app/debug_handlers.h"
#include "shim/app/delegated_auth.h"
#include "shim/app/status_server.h"
#include "shim/cache/cache.h"
#include "shim/kube/client.h"
#include "shim/kube/informer.h"
#include "shim/kube/leader_election.h"
#include "shim/objects/informer_codecs.h"
#include "shim/queue/scheduling_queue.h"
#include "shim/scheduler/feedback.h"
#include "shim/scheduler/hints.h"
#include "shim/scheduler/metrics.h"
#include "shim/scheduler/profiles.h"
#include "shim/scheduler/scheduler.h"
#include "shim/scheduler/writer.h"
#include "shim/scorer_client/scorer_client.h"
#include "spdlog/spdlog.h"

namespace kscore::app {
namespace {

// The shim's threads, what each owns and what it may lock:
// - main (RunShim): builds everything, waits for SIGTERM/SIGINT (blocked in
//   every thread), then stops the others in order.
// - the informers of pods, nodes, namespaces, Services, ReplicaSets,
//   StatefulSets, ReplicationControllers and PodDisruptionBudgets, a
//   thread each: decode the watch, keep their store (store mutex), and call
//   ClusterEvents, which locks the cache, then the queue, never both at
//   once.
// - the scheduling worker (Scheduler): pops the queue, takes the profile's
//   facts (Profiles' mutex, held across a ListProfiles call), runs the
//   cycle against the scorer (gRPC, synchronous), assumes in the cache and
//   hands the binding to the Writer.
// - the API client's I/O thread: every binding, event, status patch and
//   preemption's deletion is an HTTP/2 stream on it (Writer); their
//   callbacks run there: Bound updates the cache and the queue and queues
//   the Scheduled event; a victim's patched condition sends its deletion,
//   the deletion its Preempted event (PreemptionExecutor).
// - the queue flusher: every 250 ms moves pods whose backoff is over (and
//   long-unschedulable ones) to the active queue (queue mutex), sends again
//   bindings that got no answer (Scheduler's mutex of them), and lets the
//   event recorder write ended series (its mutex).
// - the leader elector (with leader election): renews the Lease; its
//   callbacks open the start gate or signal the main thread.
// - the status server's I/O thread (HttpServer, Boost.Beast): accepts,
//   handshakes, reads and writes every connection of both listeners; no
//   lock. Complete requests run on its lanes: one probe thread for
//   /healthz, /livez, /readyz (informers' atomics), 4 worker threads for
//   the rest: /metrics (queue mutex,
//   ClusterEvents' gated set, the scorer client's atomic counters, the
//   Prometheus registry's own locks), /debug/kscore/explain (the
//   decision log's mutex) and /debug/kscore/what-if (a dry cycle: Profiles'
//   mutex, the cache's, and scorer calls, as the worker's cycle, nothing
//   written); on HTTPS each request first passes
//   DelegatedAuth (its caches' mutex; TokenReview and SubjectAccessReview
//   calls on the delegated-auth API client, synchronous).
// - gRPC's threads inside the scorer client (resolver, channel).
// The start gate's mutex is taken by the informers' and the elector's
// threads; it calls Scheduler::Start once, which starts the worker.

// Starts the scheduler once every informer has listed its objects and (with
// leader election) this process leads: a decision needs the whole picture.
class StartGate {
 public:
  StartGate(int informers, std::function<void()> start)
      : start_(std::move(start)), unsynced_(informers) {}
  // One informer's first list is in (each informer says so once).
  void Synced() {
    absl::MutexLock lock(&mu_);
    --unsynced_;
    MaybeStartLocked();
  }
  void Leading() {
    absl::MutexLock lock(&mu_);
    leading_ = true;
    MaybeStartLocked();
  }
  bool leading() const {
    absl::MutexLock lock(&mu_);
    return leading_;
  }
  // Never starts after this returns (shutting down).
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

 private:
  void MaybeStartLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (started_ || closed_ || unsynced_ > 0 || !leading_) return;
    started_ = true;
    start_();
  }

  std::function<void()> start_;
  mutable absl::Mutex mu_;
  int unsynced_ ABSL_GUARDED_BY(mu_);
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// The workload kinds default spreading reads, one informer each.
constexpr objects::WorkloadKind kWorkloadKinds[] = {
    objects::WorkloadKind::kService, objects::WorkloadKind::kReplicaSet,
    objects::WorkloadKind::kStatefulSet,
    objects::WorkloadKind::kReplicationController};
// Pods, nodes, namespaces, PodDisruptionBudgets, the workloads and the
// seven storage kinds.
constexpr int kInformers = 11 + static_cast<int>(std::size(kWorkloadKinds));

class Shim {
 public:
  // `authn` and `authz` post TokenReviews and SubjectAccessReviews for the
  // HTTPS listener (authz null: authn does both).
  Shim(const Options& o, std::unique_ptr<kube::Client> client,
       std::unique_ptr<scorer_client::ScorerClient> scorer,
       std::unique_ptr<kube::Client> authn,
       std::unique_ptr<kube::Client> authz);
  ~Shim();
  // kube-scheduler's Setup and Run: wires what the constructor could not,
  // serves the status endpoints, starts the threads and the informers,
  // then leads or waits to.
  absl::Status Start();
  // Until SIGTERM or SIGINT; then stops. The exit code.
  int Wait(sigset_t* signals);

 private:
  scheduler::Profiles::Options ProfileOptions();
  std::string MetricsText();
  absl::Status StartLeaderElection();
  void StartScheduling();
  // Start's parts. Setup: the scorer's and the API server's return retry
  // what waited for them. ServeStatus: the status server, behind
  // DelegatedAuth on HTTPS (DelegatedAccessCheck). Run: the hints' and the
  // flusher's threads, then the informers.
  void Setup();
  absl::Status ServeStatus();
  AccessCheck DelegatedAccessCheck();
  void Run();

  const Options& o_;
  std::unique_ptr<kube::Client> client_;
  std::unique_ptr<scorer_client::ScorerClient> scorer_;
  scheduler::Metrics metrics_;
  cache::Cache cache_;
  queue::SchedulingQueue queue_;
  scheduler::Writer writer_;
  scheduler::Feedback feedback_;
  scheduler::Profiles profiles_;
  scheduler::Scheduler scheduler_;
  scheduler::HintAsker hints_;
  ClusterEvents events_;
  StartGate gate_;
  kube::Informer<objects::NodeInfo> nodes_;
  kube::Informer<objects::PodInfo> pods_;
  kube::Informer<objects::NamespaceInfo> namespaces_;
  std::vector<std::unique_ptr<kube::Informer<objects::WorkloadInfo>>>
      workloads_;
  kube::Informer<objects::PdbInfo> pdbs_;
  // What VolumeBinding reads (cache::Volumes).
  kube::Informer<objects::ClaimInfo> claims_;
  kube::Informer<objects::VolumeInfo> volumes_;
  kube::Informer<objects::StorageClassInfo> storage_classes_;
  kube::Informer<objects::CsiDriverInfo> csi_drivers_;
  kube::Informer<objects::CapacityInfo> capacities_;
  // What NodeVolumeLimits reads (kept in the cache's nodes).
  kube::Informer<objects::CsiNodeInfo> csi_nodes_;
  kube::Informer<objects::AttachmentInfo> attachments_;
  std::unique_ptr<kube::Client> authn_client_;
  std::unique_ptr<kube::Client> authz_client_;
  std::unique_ptr<DelegatedAuth> auth_;
  std::unique_ptr<StatusServer> status_;
  std::unique_ptr<kube::LeaderElector> elector_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> lost_lease_{false};
  absl::Notification stop_flusher_;
  std::thread flusher_;
};

std::string Hostname() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

scheduler::Writer::Options WriterOptions(const Options& o) {
  scheduler::Writer::Options w;
  w.max_bindings_in_flight = o.bind_workers;
  return w;
}

scheduler::Scheduler::Options SchedulerOptions(const Options& o) {
  scheduler::Scheduler::Options s;
  s.batch_size = o.scorer_batch_size;
  s.protobuf = o.protobuf;
  s.preemption_max_victim_pods = o.preemption_max_victim_pods;
  s.explain_decisions = o.explain_decisions;
  s.record_scores = o.record_scores;
  return s;
}

// The queue's options: the configured backoff, and every pod entering a
// queue counted in scheduler_queue_incoming_pods_total.
queue::SchedulingQueue::Options QueueOptions(
    const Options& o, scheduler::Metrics* metrics,
    std::function<void(queue::SchedulingQueue::HintJob)> ask_hints) {
  queue::SchedulingQueue::Options q;
  q.initial_backoff = absl::Seconds(o.config.pod_initial_backoff_seconds);
  q.max_backoff = absl::Seconds(o.config.pod_max_backoff_seconds);
  q.max_unschedulable = absl::Minutes(5);
  q.on_incoming = [metrics](absl::string_view queue, absl::string_view event) {
    metrics->Incoming(queue, event);
  };
  q.ask_hints = std::move(ask_hints);
  return q;
}

Shim::Shim(const Options& o, std::unique_ptr<kube::Client> client,
           std::unique_ptr<scorer_client::ScorerClient> scorer,
           std::unique_ptr<kube::Client> authn,
           std::unique_ptr<kube::Client> authz)
    : o_(o),
      client_(std::move(client)),
      scorer_(std::move(scorer)),
      queue_(QueueOptions(o, &metrics_,
                          [this](queue::SchedulingQueue::HintJob job) {
                            hints_.Ask(std::move(job));
                          })),
      writer_(client_.get(), WriterOptions(o)),
      feedback_(&writer_, Hostname(), o.protobuf),
      profiles_(ProfileOptions(), [this] { return scorer_->ListProfiles(); }),
      scheduler_(SchedulerOptions(o), &profiles_, &cache_, &queue_,
                 scorer_.get(), &writer_, &feedback_, &metrics_),
      hints_(&profiles_, scorer_.get(), &queue_),
      events_(
          &cache_, &queue_,
          [this](const std::string& name) { return profiles_.Serves(name); }),
      gate_(kInformers, [this] { StartScheduling(); }),
      nodes_(client_.get(),
             {"/api/v1/nodes", "", "",
              events_.NodeHandlers([this] { gate_.Synced(); }),
              // The store keeps the NodeInfo without its images (their
              // digest stays), compared on updates.
              objects::NodeCodec(), absl::ZeroDuration(), o.protobuf}),
      pods_(client_.get(),
            {"/api/v1/pods", "status.phase!=Succeeded,status.phase!=Failed", "",
             events_.PodHandlers([this] { gate_.Synced(); }),
             // Decoded once into PodInfo; the store keeps the identity.
             objects::PodCodec(), absl::ZeroDuration(), o.protobuf}),
      namespaces_(
          client_.get(),
          {"/api/v1/namespaces", "", "",
           events_.NamespaceHandlers([this] { gate_.Synced(); }),
           objects::NamespaceCodec(), absl::ZeroDuration(), o.protobuf}),
      // What preemption will read; the cache keeps each budget whole.
      pdbs_(client_.get(),
            {objects::kPdbPath, "", "",
             events_.PdbHandlers([this] { gate_.Synced(); }),
             objects::PdbCodec(), absl::ZeroDuration(), o.protobuf}),
      claims_(client_.get(), {objects::kClaimPath, "", "",
                              events_.ClaimHandlers([this] { gate_.Synced(); }),
                              objects::ClaimCodec()}),
      volumes_(client_.get(),
               {objects::kVolumePath, "", "",
                events_.VolumeHandlers([this] { gate_.Synced(); }),
                objects::VolumeCodec()}),
      storage_classes_(
          client_.get(),
          {objects::kStorageClassPath, "", "",
           events_.StorageClassHandlers([this] { gate_.Synced(); }),
           objects::StorageClassCodec()}),
      csi_drivers_(client_.get(),
                   {objects::kCsiDriverPath, "", "",
                    events_.CsiDriverHandlers([this] { gate_.Synced(); }),
                    objects::CsiDriverCodec()}),
      capacities_(client_.get(),
                  {objects::kCapacityPath, "", "",
                   events_.CapacityHandlers([this] { gate_.Synced(); }),
                   objects::CapacityCodec()}),
      csi_nodes_(client_.get(),
                 {objects::kCsiNodePath, "", "",
                  events_.CsiNodeHandlers([this] { gate_.Synced(); }),
                  objects::CsiNodeCodec()}),
      attachments_(client_.get(),
                   {objects::kAttachmentPath, "", "",
                    events_.AttachmentHandlers([this] { gate_.Synced(); }),
                    objects::AttachmentCodec()}),
      authn_client_(std::move(authn)),
      authz_client_(std::move(authz)) {
  for (objects::WorkloadKind kind : kWorkloadKinds) {
    workloads_.push_back(
        std::make_unique<kube::Informer<objects::WorkloadInfo>>(
            client_.get(),
            kube::InformerOptions<objects::WorkloadInfo>{
                objects::WorkloadPath(kind), "", "",
                events_.WorkloadHandlers([this] { gate_.Synced(); }),
                objects::WorkloadCodec(kind), absl::ZeroDuration(),
                o.protobuf}));
  }
}

Shim::~Shim() {
  stopping_ = true;
  gate_.Close();
  scheduler_.Stop();               // waits for the bindings sent
  if (elector_) elector_->Stop();  // hands the Lease over
  queue_.Close();
  stop_flusher_.Notify();
  if (flusher_.joinable()) flusher_.join();
  status_.reset();
  attachments_.Stop();
  csi_nodes_.Stop();
  capacities_.Stop();
  csi_drivers_.Stop();
  storage_classes_.Stop();
  volumes_.Stop();
  claims_.Stop();
  pdbs_.Stop();
  for (auto& w : workloads_) w->Stop();
  namespaces_.Stop();
  pods_.Stop();
  nodes_.Stop();
  hints_.Stop();
  scorer_->StopWatching();
}

scheduler::Profiles::Options Shim::ProfileOptions() {
  // What to send for each profile comes from the scorer; every replica
  // (each comma-separated address twice) is asked before it is trusted.
  scheduler::Profiles::Options p;
  p.served = o_.served;
  p.probes = std::max(3, 2 * scorer_->replicas());
  p.on_check = [this](const std::string& refusal) {
    metrics_.scorer->Add({{"counter", "profile_checks"}}).Increment();
    metrics_.scorer->Add({{"counter", "refused"}}).Set(refusal.empty() ? 0 : 1);
    if (!refusal.empty()) {
      metrics_.scorer->Add({{"counter", "refusals"}}).Increment();
    }
  };
  return p;
}

// Gauges that mirror other objects are read when Prometheus scrapes.
std::string Shim::MetricsText() {
  const auto sizes = queue_.sizes();
  auto gauge = [&](auto* family, const char* label, const char* value,
                   double v) {
    family->Add({{label, value}}).Set(v);
  };
  gauge(metrics_.pending, "queue", "active", static_cast<double>(sizes.active));
  gauge(metrics_.pending, "queue", "backoff",
        static_cast<double>(sizes.backoff));
  gauge(metrics_.pending, "queue", "unschedulable",
        static_cast<double>(sizes.unschedulable));
  gauge(metrics_.pending, "queue", "gated",
        static_cast<double>(events_.gated()));
  metrics_.SetUnschedulable(queue_.UnschedulableByPlugin());
  const auto& st = scorer_->stats();
  gauge(metrics_.scorer, "counter", "calls",
        static_cast<double>(st.calls.load()));
  gauge(metrics_.scorer, "counter", "failures",
        static_cast<double>(st.failures.load()));
  gauge(metrics_.scorer, "counter", "request_bytes",
        static_cast<double>(st.request_bytes.load()));
  gauge(metrics_.scorer, "counter", "response_bytes",
        static_cast<double>(st.response_bytes.load()));
  gauge(metrics_.scorer, "counter", "hint_calls",
        static_cast<double>(st.hint_calls.load()));
  return prometheus::TextSerializer().Serialize(metrics_.registry->Collect());
}

void Shim::StartScheduling() {
  spdlog::info(
      "caches synced ({} nodes, {} pods, {} PodDisruptionBudgets); "
      "scheduling for profiles [{}]",
      cache_.NodeCount(), cache_.PodCount(), cache_.PdbCount(),
      absl::StrJoin(o_.served, ", "));
  scheduler_.Start();
}

absl::Status Shim::StartLeaderElection() {
  kube::LeaderElectionConfig lc;
  lc.lease_namespace = o_.lease_namespace;
  lc.lease_name = o_.lease_name;
  lc.lease_duration = o_.leader_election.lease_duration;
  lc.renew_deadline = o_.leader_election.renew_deadline;
  lc.retry_period = o_.leader_election.retry_period;
  lc.release_on_cancel = true;
  lc.on_started_leading = [this] {
    spdlog::info("became leader of Lease {}/{}", o_.lease_namespace,
                 o_.lease_name);
    metrics_.leader->Set(1);
    gate_.Leading();
  };
  lc.on_stopped_leading = [this] {
    metrics_.leader->Set(0);
    if (stopping_ || !gate_.leading()) return;
    // As kube-scheduler: a leader that lost its lease exits, so a fresh
    // process rebuilds its state.
    spdlog::error("leader election lost (Lease {}/{})", o_.lease_namespace,
                  o_.lease_name);
    lost_lease_ = true;
    kill(getpid(), SIGTERM);
  };
  elector_ = std::make_unique<kube::LeaderElector>(client_.get(), lc);
  if (absl::Status s = elector_->Start(); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat("leader election: ", s.message()));
  }
  spdlog::info("waiting to become leader of Lease {}/{} as {}",
               o_.lease_namespace, o_.lease_name, elector_->identity());
  return absl::OkStatus();
}

void Shim::Setup() {
  // Pods that failed only because the scorer did not answer are tried
  // again as soon as it does (not after their backoff); bindings that got
  // no answer are sent again as soon as the API server answers.
  scorer_->WhenReachable([this] {
    spdlog::info("scorer reachable again; retrying the pods waiting for it");
    profiles_.ScorerAnswered();
    queue_.ScorerAnswered();
  });
  client_->SetOnReachable([this] {
    spdlog::info("API server reachable again; sending unanswered bindings");
    scheduler_.RetryBindings(/*all=*/true);
  });
}

AccessCheck Shim::DelegatedAccessCheck() {
  if (authn_client_ == nullptr) return nullptr;
  DelegatedAuth::Options a;
  a.always_allow_paths = o_.always_allow_paths;
  // kube-scheduler's names for the reviews it posts.
  auto* authn_total =
      &prometheus::BuildCounter()
           .Name("apiserver_delegated_authn_request_total")
           .Help("Number of HTTP requests partitioned by status code.")
           .Register(*metrics_.registry);
  auto* authz_total =
      &prometheus::BuildCounter()
           .Name("apiserver_delegated_authz_request_total")
           .Help("Number of HTTP requests partitioned by status code.")
           .Register(*metrics_.registry);
  a.on_review = [authn_total, authz_total](bool authn,
                                           const std::string& code) {
    (authn ? authn_total : authz_total)->Add({{"code", code}}).Increment();
  };
  kube::Client* authz =
      authz_client_ != nullptr ? authz_client_.get() : authn_client_.get();
  auth_ = std::make_unique<DelegatedAuth>(authn_client_.get(), authz, a);
  return [this](absl::string_view path, absl::string_view verb,
                absl::string_view authorization) {
    return auth_->Check(path, verb, authorization);
  };
}

absl::Status Shim::ServeStatus() {
  StatusServer::Handlers h;
  h.not_ready = [this]() -> std::string {
    bool synced = nodes_.HasSynced() && pods_.HasSynced() &&
                  namespaces_.HasSynced() && pdbs_.HasSynced() &&
                  claims_.HasSynced() && volumes_.HasSynced() &&
                  storage_classes_.HasSynced() && csi_drivers_.HasSynced() &&
                  capacities_.HasSynced() && csi_nodes_.HasSynced() &&
                  attachments_.HasSynced();
    for (const auto& w : workloads_) synced = synced && w->HasSynced();
    return synced ? "" : "informers not synced";
  };
  h.metrics = [this] { return MetricsText(); };
  h.configz = ConfigzJson(o_);
  h.routes = DebugRoutes(&scheduler_);
  KSCORE_ASSIGN_OR_RETURN(status_, StatusServer::Start(o_.serving, std::move(h),
                                                       DelegatedAccessCheck()));
  if (status_->secure_port() != 0) {
    spdlog::info("serving HTTPS on {}:{}", o_.serving.bind_address,
                 status_->secure_port());
  }
  if (status_->insecure_port() != 0) {
    spdlog::warn(
        "serving plain HTTP without authentication or authorization on {}",
        o_.serving.insecure_address);
  }
  return absl::OkStatus();
}

void Shim::Run() {
  hints_.Start();
  flusher_ = std::thread([this] {
    while (!stop_flusher_.WaitForNotificationWithTimeout(
        absl::Milliseconds(250))) {
      queue_.Flush();
      scheduler_.RetryBindings(/*all=*/false);
      feedback_.Tick();
    }
  });
  nodes_.Start();
  pods_.Start();
  namespaces_.Start();
  for (auto& w : workloads_) w->Start();
  pdbs_.Start();
  claims_.Start();
  volumes_.Start();
  storage_classes_.Start();
  csi_drivers_.Start();
  capacities_.Start();
  csi_nodes_.Start();
  attachments_.Start();
}

absl::Status Shim::Start() {
  Setup();
  KSCORE_RETURN_IF_ERROR(ServeStatus());
  Run();
  if (!o_.leader_election.leader_elect) {
    gate_.Leading();
    return absl::OkStatus();
  }
  return StartLeaderElection();
}

int Shim::Wait(sigset_t* signals) {
  int sig = 0;
  sigwait(signals, &sig);
  spdlog::info("received signal {}; stopping", sig);
  stopping_ = true;
  return lost_lease_ ? 1 : 0;
}

}  // namespace

int RunShim(const Options& o) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // KSCORE_SERVICEACCOUNT_DIR stands in for the pod's mounted service
  // account when the in-cluster path runs outside a pod (tests, debugging).
  const char* sa_dir = std::getenv("KSCORE_SERVICEACCOUNT_DIR");
  auto rest = kube::ResolveConfig(
      o.kubeconfig, o.config.client_connection.kubeconfig,
      sa_dir != nullptr && *sa_dir != '\0' ? sa_dir : kube::kServiceAccountDir);
  if (!rest.ok()) {
    spdlog::critical("cannot configure the API client: {}",
                     std::string(rest.status().message()));
    return 1;
  }
  rest->qps = o.config.client_connection.qps;
  rest->burst = o.config.client_connection.burst;
  spdlog::info("reading the cluster as {}",
               o.config.client_connection.content_type);
  auto client = kube::NewClient(*rest);
  if (!client.ok()) {
    spdlog::critical("cannot create the API client: {}",
                     std::string(client.status().message()));
    return 1;
  }
  auto scorer = scorer_client::ScorerClient::Create(
      {o.scorer_target, o.scorer_timeout, 3, o.scorer_tls,
       o.scorer_tls_server_name});
  if (!scorer.ok()) {
    spdlog::critical("{}", std::string(scorer.status().message()));
    return 2;
  }
  // The HTTPS listener's TokenReviews and SubjectAccessReviews, on clients
  // of their own (kube-scheduler's delegated clients' 200 qps, burst 400)
  // so that scrapes never wait behind bindings.
  std::unique_ptr<kube::Client> authn, authz;
  if (o.serving.secure_port != 0) {
    auto delegated =
        [&](const std::string& kubeconfig,
            const char* flag) -> absl::StatusOr<std::unique_ptr<kube::Client>> {
      absl::StatusOr<kube::RestConfig> c =
          kubeconfig.empty() ? *rest : kube::LoadKubeconfig(kubeconfig);
      if (!c.ok()) {
        return absl::Status(
            c.status().code(),
            absl::StrCat("--", flag, ": ", c.status().message()));
      }
      c->qps = 200;
      c->burst = 400;
      return kube::NewClient(*c);
    };
    auto n =
        delegated(o.authentication_kubeconfig, "authentication-kubeconfig");
    if (!n.ok()) {
      spdlog::critical("{}", std::string(n.status().message()));
      return 1;
    }
    authn = *std::move(n);
    if (o.authorization_kubeconfig != o.authentication_kubeconfig) {
      auto z =
          delegated(o.authorization_kubeconfig, "authorization-kubeconfig");
      if (!z.ok()) {
        spdlog::critical("{}", std::string(z.status().message()));
        return 1;
      }
      authz = *std::move(z);
    }
  }
  Shim shim(o, *std::move(client), *std::move(scorer), std::move(authn),
            std::move(authz));
  if (absl::Status s = shim.Start(); !s.ok()) {
    spdlog::critical("{}", std::string(s.message()));
    return 1;
  }
  return shim.Wait(&signals);
}

}  // namespace kscore::app
