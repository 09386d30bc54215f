// shim: a named scheduler that watches pods and nodes, asks the scorer where
// each pending pod should go, and binds it. It holds no placement rule.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "CivetServer.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "google/protobuf/util/message_differencer.h"
#include "prometheus/text_serializer.h"
#include "scorer/framework/config.h"
#include "scorer/server/flags.h"
#include "scorer/server/logging.h"
#include "shim/cache/cache.h"
#include "shim/cache/informer_codecs.h"
#include "shim/kube/client.h"
#include "shim/kube/informer.h"
#include "shim/kube/leader_election.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/queue/scheduling_queue.h"
#include "shim/scheduler/feedback.h"
#include "shim/scheduler/metrics.h"
#include "shim/scheduler/scheduler.h"
#include "shim/scorer_client/scorer_client.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, config, "",
          "Path to a KubeSchedulerConfiguration file (required)");
ABSL_FLAG(
    std::string, kubeconfig, "",
    "Path to a kubeconfig; else clientConnection.kubeconfig, else in-cluster");
ABSL_FLAG(
    std::string, scorer, "",
    "gRPC target of the scorer, e.g. dns:///scorer.kscore-system.svc:50051 or "
    "127.0.0.1:50051,127.0.0.1:50052 (required)");
ABSL_FLAG(int, v, 0,
          "Log verbosity as kube-scheduler's -v (4: per-pod decisions)");
ABSL_FLAG(
    bool, leader_elect, true,
    "Elect a leader before scheduling (overrides leaderElection.leaderElect)");
ABSL_FLAG(std::string, leader_elect_lease_duration, "",
          "e.g. 15s (overrides the config)");
ABSL_FLAG(std::string, leader_elect_renew_deadline, "",
          "e.g. 10s (overrides the config)");
ABSL_FLAG(std::string, leader_elect_retry_period, "",
          "e.g. 2s (overrides the config)");
ABSL_FLAG(std::string, leader_elect_resource_name, "",
          "Lease name (default: the first profile's schedulerName)");
ABSL_FLAG(std::string, leader_elect_resource_namespace, "", "Lease namespace");
ABSL_FLAG(std::string, bind_address, "0.0.0.0:10259",
          "host:port serving /healthz, /readyz and /metrics (plain HTTP)");
ABSL_FLAG(int, scorer_batch_size, 500, "Candidate nodes per scorer call");
ABSL_FLAG(std::string, scorer_timeout, "5s", "Deadline of one scorer call");
ABSL_FLAG(int, bind_workers, 64,
          "Bindings in flight at once, more wait their turn (they are "
          "HTTP/2 streams on the API client's I/O thread, not threads; "
          "kube-scheduler binds each pod in a goroutine of its own)");

namespace {

using kscore::cache::PodInfo;

// /healthz, /readyz and /metrics.
class HttpHandler : public CivetHandler {
 public:
  explicit HttpHandler(std::function<std::pair<int, std::string>()> f)
      : f_(std::move(f)) {}
  bool handleGet(CivetServer*, struct mg_connection* conn) override {
    auto [code, body] = f_();
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: text/plain; version=0.0.4\r\n"
              "Content-Length: %zu\r\nConnection: close\r\n\r\n",
              code, code == 200 ? "OK" : "Service Unavailable", body.size());
    mg_write(conn, body.data(), body.size());
    return true;
  }

 private:
  std::function<std::pair<int, std::string>()> f_;
};

bool FlagGiven(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    for (char& c : a) c = c == '-' ? '_' : c;
    std::string n = absl::StrCat("__", name);
    if (a == n || a.rfind(n + "=", 0) == 0 || a == absl::StrCat("__no", name))
      return true;
  }
  return false;
}

bool DurationFlag(const std::string& value, const char* name,
                  absl::Duration* out) {
  if (value.empty()) return true;
  if (!absl::ParseDuration(value, out) || *out <= absl::ZeroDuration()) {
    spdlog::critical("--{}: invalid duration \"{}\"", name, value);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "shim --config FILE --scorer TARGET [--kubeconfig FILE] [-v N] "
      "[--leader-elect]");
  // Debian builds Abseil with Mutex deadlock detection on: a lock-order
  // graph updated on every Lock, about 1% of a scoring call. Our locks
  // are tested in CI builds; production does not pay for the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  kscore::server::KubeStyleArgs args(argc, argv);
  absl::ParseCommandLine(args.argc(), args.argv.data());
  kscore::server::SetUpLogging("shim", absl::GetFlag(FLAGS_v));

  const std::string config_path = absl::GetFlag(FLAGS_config);
  if (config_path.empty()) {
    spdlog::critical(
        "--config is required (a KubeSchedulerConfiguration file)");
    return 2;
  }
  if (absl::GetFlag(FLAGS_scorer).empty()) {
    spdlog::critical("--scorer is required (the scorer's gRPC target)");
    return 2;
  }
  // Strictly decoded as the scorer decodes it; the plugins and their args
  // are the scorer's to validate (the shim links none).
  auto config = kscore::framework::LoadSchedulerConfig(config_path);
  if (!config.ok()) {
    spdlog::critical(
        "invalid configuration: {}",
        config.status().ToString(absl::StatusToStringMode::kWithNoExtraData));
    return 1;
  }
  const kscore::framework::SchedulerConfig& cfg = *config;
  std::vector<std::string> served;
  for (const auto& p : cfg.profiles) served.push_back(p.scheduler_name);

  kscore::framework::LeaderElectionConfig le = cfg.leader_election;
  if (FlagGiven(argc, argv, "leader_elect"))
    le.leader_elect = absl::GetFlag(FLAGS_leader_elect);
  if (!DurationFlag(absl::GetFlag(FLAGS_leader_elect_lease_duration),
                    "leader-elect-lease-duration", &le.lease_duration) ||
      !DurationFlag(absl::GetFlag(FLAGS_leader_elect_renew_deadline),
                    "leader-elect-renew-deadline", &le.renew_deadline) ||
      !DurationFlag(absl::GetFlag(FLAGS_leader_elect_retry_period),
                    "leader-elect-retry-period", &le.retry_period)) {
    return 2;
  }
  std::string lease_name = absl::GetFlag(FLAGS_leader_elect_resource_name);
  if (lease_name.empty()) {
    // Named after the scheduler, never kube-scheduler's own lock.
    lease_name = le.resource_name_set ? le.resource_name
                                      : cfg.profiles.front().scheduler_name;
  }
  std::string lease_ns = absl::GetFlag(FLAGS_leader_elect_resource_namespace);
  if (lease_ns.empty()) lease_ns = le.resource_namespace;

  absl::Duration scorer_timeout;
  if (!DurationFlag(absl::GetFlag(FLAGS_scorer_timeout), "scorer-timeout",
                    &scorer_timeout))
    return 2;

  // KSCORE_SERVICEACCOUNT_DIR stands in for the pod's mounted service account
  // when the in-cluster path runs outside a pod (tests, debugging).
  const char* sa_dir = std::getenv("KSCORE_SERVICEACCOUNT_DIR");
  auto rest = kscore::kube::ResolveConfig(
      absl::GetFlag(FLAGS_kubeconfig), cfg.client_connection.kubeconfig,
      sa_dir != nullptr && *sa_dir != '\0' ? sa_dir
                                           : kscore::kube::kServiceAccountDir);
  if (!rest.ok()) {
    spdlog::critical("cannot configure the API client: {}",
                     std::string(rest.status().message()));
    return 1;
  }
  rest->qps = cfg.client_connection.qps;
  rest->burst = cfg.client_connection.burst;
  // kube-scheduler's clientConnection.contentType: protobuf by default (the
  // API server then encodes each pod once for all protobuf watchers), JSON on
  // request. The shim reads pods and nodes in either.
  const std::string& content_type = cfg.client_connection.content_type;
  if (content_type != kscore::kube::kProtobufContentType &&
      content_type != "application/json") {
    spdlog::critical(
        "clientConnection.contentType: \"{}\" is not supported (use {} or "
        "application/json)",
        content_type, kscore::kube::kProtobufContentType);
    return 1;
  }
  const bool use_protobuf = content_type == kscore::kube::kProtobufContentType;
  spdlog::info("reading pods and nodes as {}", content_type);
  auto client = kscore::kube::NewClient(*rest);
  if (!client.ok()) {
    spdlog::critical("cannot create the API client: {}",
                     std::string(client.status().message()));
    return 1;
  }
  auto scorer = kscore::scorer_client::ScorerClient::Create(
      {absl::GetFlag(FLAGS_scorer), scorer_timeout, 3});
  if (!scorer.ok()) {
    spdlog::critical("{}", std::string(scorer.status().message()));
    return 2;
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  kscore::scheduler::Metrics metrics;
  kscore::cache::Cache cache;
  kscore::queue::SchedulingQueue queue(
      {absl::Seconds(cfg.pod_initial_backoff_seconds),
       absl::Seconds(cfg.pod_max_backoff_seconds), absl::Minutes(5),
       [] { return absl::Now(); }});
  kscore::scheduler::Feedback feedback(client->get(), host, use_protobuf);
  // What to send for each profile comes from the scorer; every replica
  // (each comma-separated address twice) is asked before it is trusted.
  kscore::scheduler::Profiles::Options profile_options;
  profile_options.served = served;
  profile_options.probes = std::max(3, 2 * (*scorer)->replicas());
  profile_options.on_check = [&](const std::string& refusal) {
    metrics.scorer->Add({{"counter", "profile_checks"}}).Increment();
    metrics.scorer->Add({{"counter", "refused"}}).Set(refusal.empty() ? 0 : 1);
    if (!refusal.empty()) {
      metrics.scorer->Add({{"counter", "refusals"}}).Increment();
    }
  };
  kscore::scheduler::Profiles profiles(
      profile_options, [&] { return (*scorer)->ListProfiles(); });
  kscore::scheduler::Scheduler scheduler(
      {absl::GetFlag(FLAGS_scorer_batch_size),
       absl::GetFlag(FLAGS_bind_workers), 1, use_protobuf},
      &profiles, &cache, &queue, scorer->get(), client->get(), &feedback,
      &metrics);

  using PodPtr = kscore::kube::Ptr<PodInfo>;
  using NodePtr = kscore::kube::Ptr<kscore::cache::NodeInfo>;
  auto on_pod = [&](const PodPtr& pod) {
    if (!pod->node_name.empty()) {
      cache.UpsertAssignedPod(*pod);
      queue.Delete(pod->key);
      return;
    }
    if (!profiles.Serves(pod->scheduler_name))
      return;  // not ours: never touched
    if (pod->deleting || pod->gated) {
      queue.Delete(pod->key);
      return;
    }
    queue.AddOrUpdate(pod);
  };
  auto on_pod_delete = [&](const PodPtr& pod) {
    // `pod` may be only what the store keeps (a delete seen by a relist):
    // the key is all this needs.
    bool was_assigned = !cache.NodeOf(pod->key).empty();
    cache.RemovePod(pod->key);
    queue.Delete(pod->key);
    if (was_assigned) queue.MoveAllToActiveOrBackoff();  // room was freed
  };
  // Decoded once into PodInfo; the store keeps only the identity (PodCodec).
  kscore::kube::Informer<PodInfo> pods(
      client->get(),
      {"/api/v1/pods",
       "status.phase!=Succeeded,status.phase!=Failed",
       "",
       {on_pod, [&](const PodPtr&, const PodPtr& pod) { on_pod(pod); },
        on_pod_delete, nullptr},
       kscore::cache::PodCodec(),
       absl::ZeroDuration(),
       use_protobuf});
  auto on_node = [&](const NodePtr& node) {
    cache.UpsertNode(node->node);
    queue.MoveAllToActiveOrBackoff();
  };
  kscore::kube::Informer<kscore::cache::NodeInfo> nodes(
      client->get(),
      {"/api/v1/nodes",
       "",
       "",
       {on_node,
        [&](const NodePtr& before, const NodePtr& after) {
          // Status heartbeats change nothing the plugins read: skip them, so
          // thousands of nodes do not re-queue every unschedulable pod.
          if (google::protobuf::util::MessageDifferencer::Equals(before->node,
                                                                 after->node)) {
            return;
          }
          on_node(after);
        },
        [&](const NodePtr& node) { cache.RemoveNode(node->node.name()); },
        nullptr},
       // The store keeps the whole NodeInfo, the old state compared above.
       kscore::cache::NodeCodec(),
       absl::ZeroDuration(),
       use_protobuf});
  nodes.Start();
  pods.Start();

  std::atomic<bool> scheduling{false};
  std::atomic<bool> lost_lease{false};
  std::atomic<bool> shutting_down{false};
  auto start_scheduling = [&] {
    // Schedule from a complete picture: wait for both informers' first list.
    while (!(nodes.HasSynced() && pods.HasSynced())) {
      if (shutting_down) return;
      absl::SleepFor(absl::Milliseconds(20));
    }
    spdlog::info(
        "caches synced ({} nodes, {} pods); scheduling for profiles [{}]",
        cache.NodeCount(), cache.PodCount(), absl::StrJoin(served, ", "));
    scheduler.Start();
    scheduling = true;
  };

  // Health and metrics.
  std::vector<std::string> options = {
      "listening_ports", absl::GetFlag(FLAGS_bind_address), "num_threads", "4"};
  std::unique_ptr<CivetServer> http;
  try {
    http = std::make_unique<CivetServer>(options);
  } catch (const std::exception& e) {
    spdlog::critical("cannot serve on --bind-address {}: {}",
                     absl::GetFlag(FLAGS_bind_address), e.what());
    return 1;
  }
  HttpHandler healthz([] { return std::make_pair(200, std::string("ok")); });
  HttpHandler readyz([&] {
    bool ready = nodes.HasSynced() && pods.HasSynced();
    return std::make_pair(ready ? 200 : 503,
                          std::string(ready ? "ok" : "informers not synced"));
  });
  HttpHandler metrics_handler([&] {
    return std::make_pair(200, prometheus::TextSerializer().Serialize(
                                   metrics.registry->Collect()));
  });
  http->addHandler("/healthz", healthz);
  http->addHandler("/readyz", readyz);
  http->addHandler("/metrics", metrics_handler);

  std::unique_ptr<kscore::kube::LeaderElector> elector;
  std::thread starter;
  if (le.leader_elect) {
    kscore::kube::LeaderElectionConfig lc;
    lc.lease_namespace = lease_ns;
    lc.lease_name = lease_name;
    lc.lease_duration = le.lease_duration;
    lc.renew_deadline = le.renew_deadline;
    lc.retry_period = le.retry_period;
    lc.release_on_cancel = true;
    lc.on_started_leading = [&] {
      spdlog::info("became leader of Lease {}/{}", lease_ns, lease_name);
      metrics.leader->Set(1);
      starter = std::thread(start_scheduling);
    };
    lc.on_stopped_leading = [&] {
      metrics.leader->Set(0);
      if (shutting_down || (!scheduling && !starter.joinable())) return;
      // As kube-scheduler: a leader that lost its lease exits, so a fresh
      // process rebuilds its state.
      spdlog::error("leader election lost (Lease {}/{})", lease_ns, lease_name);
      lost_lease = true;
      kill(getpid(), SIGTERM);
    };
    elector = std::make_unique<kscore::kube::LeaderElector>(client->get(), lc);
    if (absl::Status s = elector->Start(); !s.ok()) {
      spdlog::critical("leader election: {}", std::string(s.message()));
      return 2;
    }
    spdlog::info("waiting to become leader of Lease {}/{} as {}", lease_ns,
                 lease_name, elector->identity());
  } else {
    starter = std::thread(start_scheduling);
  }

  std::atomic<bool> stop_flush{false};
  std::thread flusher([&] {
    while (!stop_flush) {
      queue.Flush();
      auto sizes = queue.sizes();
      metrics.pending->Add({{"queue", "active"}})
          .Set(static_cast<double>(sizes.active));
      metrics.pending->Add({{"queue", "backoff"}})
          .Set(static_cast<double>(sizes.backoff));
      metrics.pending->Add({{"queue", "unschedulable"}})
          .Set(static_cast<double>(sizes.unschedulable));
      const auto& st = (*scorer)->stats();
      metrics.scorer->Add({{"counter", "calls"}})
          .Set(static_cast<double>(st.calls.load()));
      metrics.scorer->Add({{"counter", "failures"}})
          .Set(static_cast<double>(st.failures.load()));
      metrics.scorer->Add({{"counter", "request_bytes"}})
          .Set(static_cast<double>(st.request_bytes.load()));
      metrics.scorer->Add({{"counter", "response_bytes"}})
          .Set(static_cast<double>(st.response_bytes.load()));
      absl::SleepFor(absl::Milliseconds(250));
    }
  });

  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("received signal {}; stopping", sig);
  shutting_down = true;
  if (starter.joinable()) starter.join();
  scheduler.Stop();              // waits for bindings in flight
  if (elector) elector->Stop();  // hands the Lease over
  queue.Close();
  stop_flush = true;
  flusher.join();
  pods.Stop();
  nodes.Stop();
  return lost_lease ? 1 : 0;
}
