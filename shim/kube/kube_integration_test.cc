// Against a real API server: KSCORE_TEST_KUBECONFIG names its kubeconfig
// (tests/e2e/kube_client.sh brings one up). Not registered with ctest.

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "model/scalar_resources.h"
#include "nlohmann/json.hpp"
#include "shim/kube/client.h"
#include "shim/kube/informer.h"
#include "shim/kube/leader_election.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/kube/write_bodies.h"
#include "shim/objects/informer_codecs.h"
#include "shim/objects/objects.h"
#include "shim/objects/testing/expect_same_pod.h"

namespace kscore::kube {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

// Polls `done` every 50ms until it holds or `timeout` passes.
bool Eventually(const std::function<bool()>& done,
                absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return done();
}

class KubeIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* path = std::getenv("KSCORE_TEST_KUBECONFIG");
    ASSERT_NE(path, nullptr) << "set KSCORE_TEST_KUBECONFIG to a kubeconfig "
                                "(tests/e2e/kube_client.sh does)";
    absl::StatusOr<RestConfig> config = LoadKubeconfig(path);
    ASSERT_TRUE(config.ok()) << config.status();
    absl::StatusOr<std::unique_ptr<Client>> client = NewClient(*config);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = client->release();
    namespace_ = absl::StrCat("kube-it-", std::random_device{}() % 100000);
    const nlohmann::json ns = {{"apiVersion", "v1"},
                               {"kind", "Namespace"},
                               {"metadata", {{"name", namespace_}}}};
    absl::StatusOr<Response> r =
        client_->Do("POST", "/api/v1/namespaces", ns.dump());
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->status, 201) << r->body;
  }
  static void TearDownTestSuite() {
    if (client_ != nullptr && !namespace_.empty()) {
      (void)client_->Do("DELETE", "/api/v1/namespaces/" + namespace_);
    }
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(client_, nullptr) << "suite setup failed"; }

  static std::string NsPath(absl::string_view rest) {
    return absl::StrCat("/api/v1/namespaces/", namespace_, "/", rest);
  }

  static Client* client_;
  static std::string namespace_;
};
Client* KubeIntegrationTest::client_ = nullptr;
std::string KubeIntegrationTest::namespace_;

TEST_F(KubeIntegrationTest, GetVersion) {
  absl::StatusOr<Response> r = client_->Do("GET", "/version");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  nlohmann::json v = nlohmann::json::parse(r->body);
  EXPECT_THAT(v.value("gitVersion", ""), HasSubstr("v1."));
}

TEST_F(KubeIntegrationTest, ConcurrentCallersReuseTheirConnections) {
  // 24 callers at once, three times over (as bind and event workers do): a
  // connection per concurrent caller, never one per call.
  absl::StatusOr<RestConfig> config =
      LoadKubeconfig(std::getenv("KSCORE_TEST_KUBECONFIG"));
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<Client>> client = NewClient(*config);
  ASSERT_TRUE(client.ok()) << client.status();
  constexpr int kCallers = 24;
  std::barrier sync(kCallers);
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&] {
      for (int round = 0; round < 3; ++round) {
        sync.arrive_and_wait();
        absl::StatusOr<Response> r = (*client)->Do("GET", "/version");
        if (r.ok() && r->status == 200) ++ok;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(ok.load(), 3 * kCallers);
  EXPECT_GT((*client)->ConnectionsOpened(), 0u);
  EXPECT_LE((*client)->ConnectionsOpened(), static_cast<uint64_t>(kCallers));
}

TEST_F(KubeIntegrationTest, AsyncRequestsShareOneConnection) {
  // 200 writes at once (bindings under load) are HTTP/2 streams on one or
  // two connections, each answered as a normal Do would be (an error status is
  // a Response, not an error), and every callback runs before the client goes.
  absl::StatusOr<RestConfig> config =
      LoadKubeconfig(std::getenv("KSCORE_TEST_KUBECONFIG"));
  ASSERT_TRUE(config.ok()) << config.status();
  config->qps = 0;  // unlimited
  absl::StatusOr<std::unique_ptr<Client>> client = NewClient(*config);
  ASSERT_TRUE(client.ok()) << client.status();
  constexpr int kWrites = 200;
  absl::Mutex mu;
  std::vector<long> statuses;
  std::vector<std::string> failures;
  const std::thread::id caller = std::this_thread::get_id();
  bool on_caller_thread = false;
  auto done = [&](absl::StatusOr<Response> r) {
    absl::MutexLock lock(&mu);
    if (std::this_thread::get_id() == caller) on_caller_thread = true;
    if (r.ok()) {
      statuses.push_back(r->status);
    } else {
      failures.push_back(std::string(r.status().message()));
    }
  };
  for (int i = 0; i < kWrites; ++i) {
    const nlohmann::json cm = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", absl::StrCat("async-", i)}}},
        {"data", {{"i", absl::StrCat(i)}}}};
    (*client)->DoAsync("POST", NsPath("configmaps"), cm.dump(),
                       "application/json", "application/json", done);
  }
  (*client)->DoAsync("GET", NsPath("configmaps/no-such-map"), "",
                     "application/json", "application/json", done);
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return statuses.size() + failures.size() == kWrites + 1;
  }));
  {
    absl::MutexLock lock(&mu);
    EXPECT_THAT(failures, ::testing::IsEmpty());
    EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 201), kWrites);
    EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 404), 1);
    EXPECT_FALSE(on_caller_thread);
  }
  EXPECT_GE((*client)->ConnectionsOpened(), 1u);
  EXPECT_LE((*client)->ConnectionsOpened(), 2u);
  absl::StatusOr<Response> got =
      client_->Do("GET", NsPath("configmaps/async-7"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(nlohmann::json::parse(got->body)["data"]["i"], "7");

  // Requests still queued or in flight when the client is destroyed finish
  // first, callbacks included.
  int finished = 0;
  for (int i = 0; i < 20; ++i) {
    (*client)->DoAsync("GET", "/version", "", "application/json",
                       "application/json", [&](absl::StatusOr<Response> r) {
                         absl::MutexLock lock(&mu);
                         if (r.ok() && r->status == 200) ++finished;
                       });
  }
  client->reset();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(finished, 20);
}

TEST_F(KubeIntegrationTest, AsyncRequestsRateLimitedWithoutBlockingTheCaller) {
  absl::StatusOr<RestConfig> config =
      LoadKubeconfig(std::getenv("KSCORE_TEST_KUBECONFIG"));
  ASSERT_TRUE(config.ok()) << config.status();
  config->qps = 20;
  config->burst = 1;
  absl::StatusOr<std::unique_ptr<Client>> client = NewClient(*config);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::Mutex mu;
  std::vector<absl::Time> answered;
  const absl::Time start = absl::Now();
  for (int i = 0; i < 11; ++i) {
    (*client)->DoAsync("GET", "/version", "", "application/json",
                       "application/json", [&](absl::StatusOr<Response> r) {
                         absl::MutexLock lock(&mu);
                         if (r.ok() && r->status == 200) {
                           answered.push_back(absl::Now());
                         }
                       });
  }
  // 11 requests at 20 qps with a burst of 1: the last may start only after
  // 10 refills (500ms); the caller never waited for any of them.
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(400));
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return answered.size() == 11;
  }));
  absl::MutexLock lock(&mu);
  EXPECT_GE(answered.back() - start, absl::Milliseconds(450));
}

TEST_F(KubeIntegrationTest, AsyncRequestToNowhereIsUnavailable) {
  RestConfig config;
  config.server = "https://127.0.0.1:1";  // nothing listens on port 1
  config.insecure_skip_tls_verify = true;
  absl::StatusOr<std::unique_ptr<Client>> client = NewClient(config);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::Mutex mu;
  std::optional<absl::Status> got;
  (*client)->DoAsync("POST", "/api/v1/namespaces/x/pods/p/binding", "{}",
                     "application/json", "application/json",
                     [&](absl::StatusOr<Response> r) {
                       absl::MutexLock lock(&mu);
                       got = r.status();
                     });
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return got.has_value();
  }));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(got->code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(got->message(),
              HasSubstr("POST https://127.0.0.1:1/api/v1/namespaces/x/pods/"
                        "p/binding"));
}

TEST_F(KubeIntegrationTest, ConfigMapCreateGetPatchDelete) {
  const nlohmann::json cm = {{"apiVersion", "v1"},
                             {"kind", "ConfigMap"},
                             {"metadata", {{"name", "cm1"}}},
                             {"data", {{"k", "v"}}}};
  absl::StatusOr<Response> r =
      client_->Do("POST", NsPath("configmaps"), cm.dump());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 201) << r->body;

  r = client_->Do("GET", NsPath("configmaps/cm1"));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(nlohmann::json::parse(r->body)["data"]["k"], "v");

  r = client_->Do("PATCH", NsPath("configmaps/cm1"), R"({"data":{"k":"w"}})",
                  "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(nlohmann::json::parse(r->body)["data"]["k"], "w");

  r = client_->Do("POST", NsPath("configmaps"), cm.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 409);

  r = client_->Do("DELETE", NsPath("configmaps/cm1"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200) << r->body;
  r = client_->Do("GET", NsPath("configmaps/cm1"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 404);
}

std::string NameOf(const nlohmann::json& o) {
  return o["metadata"]["name"].get<std::string>();
}
std::string NameOf(const objects::PodInfo& p) { return p.name; }
std::string NameOf(const objects::NamespaceInfo& ns) { return ns.name; }
std::string NameOf(const objects::WorkloadInfo& w) { return w.name; }
std::string NameOf(const objects::PdbInfo& p) { return p.name; }

// Records what an informer delivers.
template <typename T>
struct Recorder {
  absl::Mutex mu;
  std::vector<std::string> events;  // "add p", "update p", "delete p"
  Ptr<T> last_update;
  bool synced = false;

  EventHandlers<T> Handlers() {
    EventHandlers<T> h;
    h.on_add = [this](const Ptr<T>& o) {
      absl::MutexLock l(&mu);
      events.push_back("add " + NameOf(*o));
    };
    h.on_update = [this](const Ptr<T>&, const Ptr<T>& o) {
      absl::MutexLock l(&mu);
      events.push_back("update " + NameOf(*o));
      last_update = o;
    };
    h.on_delete = [this](const Ptr<T>& o) {
      absl::MutexLock l(&mu);
      events.push_back("delete " + NameOf(*o));
    };
    h.on_synced = [this] {
      absl::MutexLock l(&mu);
      synced = true;
    };
    return h;
  }
  bool Saw(const std::string& e) {
    absl::MutexLock l(&mu);
    return std::find(events.begin(), events.end(), e) != events.end();
  }
};

nlohmann::json PodObject(const std::string& name,
                         const std::string& app = "it") {
  // Nobody schedules it: the test owns every change.
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
          {"spec",
           {{"schedulerName", "nobody"},
            {"containers", {{{"name", "c"}, {"image", "pause:3.9"}}}}}}};
}

// Lists and watches pods in JSON or in protobuf, decoded as the shim does.
void AddUpdateDelete(Client* client, const std::string& ns,
                     const std::string& prefix, bool protobuf) {
  auto path = [&](absl::string_view rest) {
    return absl::StrCat("/api/v1/namespaces/", ns, "/", rest);
  };
  const std::string app = prefix + "it";
  const std::string before = prefix + "before";
  const std::string p1 = prefix + "p1";
  // A pod that exists before the informer starts arrives through the list.
  absl::StatusOr<Response> r =
      client->Do("POST", path("pods"), PodObject(before, app).dump());
  ASSERT_TRUE(r.ok() && r->status == 201)
      << (r.ok() ? r->body : r.status().ToString());

  Recorder<objects::PodInfo> rec;
  InformerOptions<objects::PodInfo> options;
  options.path = path("pods");
  options.label_selector = "app=" + app;
  options.protobuf = protobuf;
  options.codec = objects::PodCodec();
  options.handlers = rec.Handlers();
  Informer<objects::PodInfo> informer(client, std::move(options));
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }));
  EXPECT_TRUE(rec.Saw("add " + before));
  EXPECT_TRUE(rec.synced);

  r = client->Do("POST", path("pods"), PodObject(p1, app).dump());
  ASSERT_TRUE(r.ok() && r->status == 201)
      << (r.ok() ? r->body : r.status().ToString());
  ASSERT_TRUE(Eventually([&] { return rec.Saw("add " + p1); }));

  r = client->Do("PATCH", path("pods/" + p1),
                 R"({"metadata":{"labels":{"x":"y"}}})",
                 "application/merge-patch+json");
  ASSERT_TRUE(r.ok() && r->status == 200)
      << (r.ok() ? r->body : r.status().ToString());
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock l(&rec.mu);
    if (rec.last_update == nullptr) return false;
    const auto& labels = rec.last_update->pod.labels();
    const auto x = labels.find("x");
    return x != labels.end() && x->second == "y";
  }));
  ASSERT_NE(informer.Get(ns + "/" + p1), nullptr);

  r = client->Do("DELETE", path("pods/" + p1), R"({"gracePeriodSeconds":0})");
  ASSERT_TRUE(r.ok() && r->status == 200)
      << (r.ok() ? r->body : r.status().ToString());
  ASSERT_TRUE(Eventually([&] { return rec.Saw("delete " + p1); }));
  EXPECT_EQ(informer.Get(ns + "/" + p1), nullptr);
  EXPECT_EQ(informer.List().size(), 1u);  // before

  const absl::Time t0 = absl::Now();
  informer.Stop();
  EXPECT_LT(absl::Now() - t0, absl::Seconds(2))
      << "Stop must not wait for the watch";
}

TEST_F(KubeIntegrationTest, InformerSeesAddUpdateDelete) {
  AddUpdateDelete(client_, namespace_, "", /*protobuf=*/false);
}

TEST_F(KubeIntegrationTest, InformerSeesAddUpdateDeleteInProtobuf) {
  AddUpdateDelete(client_, namespace_, "pb-", /*protobuf=*/true);
}

// Reads path in JSON and in protobuf (the object's bytes, out of the
// envelope). Reads again while the two differ in resourceVersion
// (controllers may change the object between the two reads).
std::pair<nlohmann::json, std::string> BothEncodings(Client* client,
                                                     const std::string& path) {
  std::pair<nlohmann::json, std::string> out;
  std::string json_rv;
  std::string proto_rv;
  const bool same = Eventually([&] {
    absl::StatusOr<Response> j = client->Do("GET", path);
    absl::StatusOr<Response> p = client->GetAs(path, kProtobufContentType);
    if (!j.ok() || j->status != 200 || !p.ok() || p->status != 200 ||
        !IsProtobufEnvelope(p->body)) {
      return false;
    }
    absl::StatusOr<std::string> raw = Unwrap(p->body);
    if (!raw.ok()) return false;
    absl::StatusOr<std::string> rv = ResourceVersionOf(*raw);
    if (!rv.ok()) return false;
    out = {nlohmann::json::parse(j->body), *std::move(raw)};
    json_rv = out.first["metadata"].value("resourceVersion", "");
    proto_rv = *rv;
    return !json_rv.empty() && json_rv == proto_rv;
  });
  EXPECT_TRUE(same) << path << ": no JSON and protobuf reads of the same "
                    << "resourceVersion (JSON " << json_rv << ", protobuf "
                    << proto_rv << ")";
  return out;
}

TEST_F(KubeIntegrationTest, ProtobufAndJsonGiveTheShimTheSamePod) {
  // Every field the shim reads, most of them set.
  nlohmann::json pod = nlohmann::json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "rich", "labels": {"app": "web", "tier": "x"},
                 "finalizers": ["kscore.io/test"]},
    "spec": {
      "schedulerName": "nobody",
      "nodeSelector": {"disk": "ssd"},
      "affinity": {
        "nodeAffinity": {
          "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}],
             "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]},
            {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]},
          "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 7, "preference": {"matchExpressions": [{"key": "fast", "operator": "DoesNotExist"}]}}]},
        "podAffinity": {
          "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "zone",
             "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["x", "y"]}]},
             "namespaces": ["other"], "namespaceSelector": {}}],
          "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": {"topologyKey": "rack",
             "namespaceSelector": {"matchLabels": {"team": "a"}}}}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}},
      "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                      {"operator": "Exists"}],
      "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                     "labelSelector": {"matchLabels": {"app": "web"}},
                                     "minDomains": 2, "nodeAffinityPolicy": "Ignore",
                                     "nodeTaintsPolicy": "Honor", "matchLabelKeys": ["tier"]},
                                    {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway"}],
      "schedulingGates": [{"name": "wait"}],
      "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "c"}},
                  {"name": "tmp", "emptyDir": {}},
                  {"name": "model", "image": {"reference": "registry.k8s.io/pause:3.10"}}],
      "initContainers": [
        {"name": "sidecar", "image": "pause:3.9", "restartPolicy": "Always",
         "ports": [{"containerPort": 9000, "hostPort": 9000, "protocol": "UDP", "hostIP": "127.0.0.1"}],
         "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}},
        {"name": "init", "image": "pause:3.9", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}],
      "containers": [
        {"name": "a", "image": "pause:3.9",
         "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81}],
         "resources": {"requests": {"cpu": "250m", "memory": "500Mi", "ephemeral-storage": "1Gi",
                                    "example.com/gpu": "1", "hugepages-2Mi": "4Mi"},
                       "limits": {"example.com/gpu": "1", "hugepages-2Mi": "4Mi"}}},
        {"name": "b", "image": "pause:3.9"}]}})");
  // A controlling owner that exists (the garbage collector deletes pods
  // whose owner does not).
  absl::StatusOr<Response> r = client_->Do(
      "POST", NsPath("configmaps"),
      R"({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rich-owner"}})");
  ASSERT_TRUE(r.ok() && r->status == 201)
      << (r.ok() ? r->body : r.status().ToString());
  pod["metadata"]["ownerReferences"] = {
      {{"apiVersion", "v1"},
       {"kind", "ConfigMap"},
       {"name", "rich-owner"},
       {"uid", nlohmann::json::parse(r->body)["metadata"]["uid"]},
       {"controller", true}}};
  r = client_->Do("POST", NsPath("pods"), pod.dump());
  ASSERT_TRUE(r.ok() && r->status == 201)
      << (r.ok() ? r->body : r.status().ToString());
  // A PodScheduled=False condition, as the shim writes it.
  r = client_->Do(
      "PATCH", NsPath("pods/rich/status"),
      R"({"status":{"conditions":[{"type":"PodScheduled","status":"False",
                      "reason":"Unschedulable","message":"0/3 nodes are available"}]}})",
      "application/strategic-merge-patch+json");
  ASSERT_TRUE(r.ok() && r->status == 200)
      << (r.ok() ? r->body : r.status().ToString());

  auto compare = [&](objects::PodInfo* out) {
    auto [j, p] = BothEncodings(client_, NsPath("pods/rich"));
    absl::StatusOr<objects::PodInfo> from_json = objects::PodFromJson(j);
    absl::StatusOr<objects::PodInfo> from_proto = objects::PodFromProto(p);
    ASSERT_TRUE(from_json.ok()) << from_json.status();
    ASSERT_TRUE(from_proto.ok()) << from_proto.status();
    objects::ExpectSamePod(*from_json, *from_proto);
    *out = *from_proto;
  };
  objects::PodInfo first;
  compare(&first);
  // The object really carries what was compared (not two empty pods).
  EXPECT_EQ(first.pod.node_affinity().required_size(), 2);
  EXPECT_EQ(first.host_ports.size(), 2u);
  EXPECT_EQ(model::ScalarValue(first.requests, "example.com/gpu"), 1);
  EXPECT_TRUE(first.gated);
  EXPECT_EQ(first.unschedulable_message, "0/3 nodes are available");
  EXPECT_EQ(first.pod.pod_anti_affinity().required_size(), 1);
  ASSERT_EQ(first.pod.pod_affinity().required_size(), 1);
  const scorer::v1::PodAffinityTerm& term =
      first.pod.pod_affinity().required(0);
  EXPECT_EQ(term.label_selector().match_expressions_size(), 1);
  EXPECT_EQ(term.namespaces_size(), 1);
  // Empty, not unset, after a round trip through the API server.
  EXPECT_TRUE(term.has_namespace_selector());
  EXPECT_EQ(term.namespace_selector().ByteSizeLong(), 0u);
  ASSERT_EQ(first.pod.pod_affinity().preferred_size(), 1);
  EXPECT_TRUE(
      first.pod.pod_affinity().preferred(0).term().has_namespace_selector());
  EXPECT_FALSE(
      first.pod.pod_affinity().preferred(0).term().has_label_selector());
  ASSERT_EQ(first.pod.topology_spread_constraints_size(), 2);
  const scorer::v1::TopologySpreadConstraint& spread =
      first.pod.topology_spread_constraints(0);
  EXPECT_EQ(spread.min_domains(), 2);
  EXPECT_EQ(spread.node_affinity_policy(), "Ignore");
  EXPECT_EQ(spread.node_taints_policy(), "Honor");
  EXPECT_EQ(spread.match_label_keys_size(), 1);
  EXPECT_FALSE(first.pod.topology_spread_constraints(1).has_min_domains());
  EXPECT_EQ(first.pod.topology_spread_constraints(1).node_taints_policy(), "");
  EXPECT_THAT(
      first.pod.images(),
      ::testing::ElementsAre("pause:3.9", "pause:3.9", "pause:3.9", "pause:3.9",
                             "registry.k8s.io/pause:3.10"));
  EXPECT_EQ(first.pod.image_volumes(), 1);
  EXPECT_EQ(first.controller_api_version, "v1");
  EXPECT_EQ(first.controller_kind, "ConfigMap");
  EXPECT_EQ(first.controller_name, "rich-owner");
  EXPECT_FALSE(first.controller_uid.empty());
  EXPECT_FALSE(first.deleting);
  EXPECT_GT(first.created, absl::Now() - absl::Minutes(5));

  // Deleting with a finalizer: deletionTimestamp is set, the pod stays.
  r = client_->Do("DELETE", NsPath("pods/rich"));
  ASSERT_TRUE(r.ok() && r->status == 200)
      << (r.ok() ? r->body : r.status().ToString());
  objects::PodInfo deleted;
  compare(&deleted);
  EXPECT_TRUE(deleted.deleting);
  r = client_->Do("PATCH", NsPath("pods/rich"),
                  R"({"metadata":{"finalizers":null}})",
                  "application/merge-patch+json");
  ASSERT_TRUE(r.ok() && r->status == 200)
      << (r.ok() ? r->body : r.status().ToString());
}

TEST_F(KubeIntegrationTest, ProtobufAndJsonGiveTheShimTheSameNode) {
  const std::string name = namespace_ + "-node";
  const nlohmann::json node = nlohmann::json::parse(
      absl::StrCat(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": ")",
                   name, R"(", "labels": {"zone": "a", "disk": "ssd"}},
    "spec": {"unschedulable": true,
             "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"},
                        {"key": "only-key", "effect": "PreferNoSchedule"}]}})"));
  absl::StatusOr<Response> r =
      client_->Do("POST", "/api/v1/nodes", node.dump());
  ASSERT_TRUE(r.ok() && r->status == 201)
      << (r.ok() ? r->body : r.status().ToString());
  r = client_->Do("PATCH", absl::StrCat("/api/v1/nodes/", name, "/status"),
                  R"({"status":{"allocatable":{"cpu":"3500m","memory":"15Gi",
                      "pods":"110","example.com/gpu":"2"},
                      "capacity":{"cpu":"4","memory":"16Gi","pods":"110","example.com/gpu":"2"},
                      "images":[{"names":["docker.io/library/nginx@sha256:0123","docker.io/library/nginx:1.27"],
                                 "sizeBytes":70000000},
                                {"names":["registry.k8s.io/pause:3.10"],"sizeBytes":300000}]}})",
                  "application/merge-patch+json");
  ASSERT_TRUE(r.ok() && r->status == 200)
      << (r.ok() ? r->body : r.status().ToString());
  auto [j, p] = BothEncodings(client_, absl::StrCat("/api/v1/nodes/", name));
  absl::StatusOr<objects::NodeInfo> json_info = objects::NodeFromJson(j);
  absl::StatusOr<objects::NodeInfo> proto_info = objects::NodeFromProto(p);
  ASSERT_TRUE(json_info.ok()) << json_info.status();
  ASSERT_TRUE(proto_info.ok()) << proto_info.status();
  EXPECT_EQ(json_info->uid, proto_info->uid);
  EXPECT_EQ(json_info->resource_version, proto_info->resource_version);
  const scorer::v1::Node* from_json = &json_info->node;
  const scorer::v1::Node* from_proto = &proto_info->node;
  EXPECT_TRUE(MessageDifferencer::Equals(*from_json, *from_proto))
      << "JSON: " << from_json->DebugString()
      << "\nprotobuf: " << from_proto->DebugString();
  ASSERT_EQ(json_info->images.size(), proto_info->images.size());
  for (size_t i = 0; i < json_info->images.size(); ++i) {
    EXPECT_EQ(json_info->images[i].names, proto_info->images[i].names);
    EXPECT_EQ(json_info->images[i].size_bytes,
              proto_info->images[i].size_bytes);
  }
  EXPECT_EQ(json_info->images_digest, proto_info->images_digest);
  EXPECT_GE(proto_info->images.size(), 1u);
  // Read, not defaulted (kwok, when it runs, rewrites a node's status).
  EXPECT_GT(from_proto->allocatable().milli_cpu(), 0);
  EXPECT_GT(from_proto->allocatable().memory(), 0);
  EXPECT_GE(from_proto->taints_size(), 2);
  EXPECT_TRUE(from_proto->unschedulable());
  EXPECT_EQ(proto_info->resource_version,
            j["metadata"].value("resourceVersion", ""));
  (void)client_->Do("DELETE", absl::StrCat("/api/v1/nodes/", name));
}

// Namespaces and the workloads default spreading reads: both encodings
// decode alike, and the shim's informers (protobuf, its paths and codecs)
// deliver them.
TEST_F(KubeIntegrationTest, NamespacesAndWorkloadsInBothEncodings) {
  Recorder<objects::NamespaceInfo> namespaces;
  InformerOptions<objects::NamespaceInfo> ns_options;
  ns_options.path = "/api/v1/namespaces";
  ns_options.protobuf = true;
  ns_options.codec = objects::NamespaceCodec();
  ns_options.handlers = namespaces.Handlers();
  Informer<objects::NamespaceInfo> ns_informer(client_, std::move(ns_options));
  ns_informer.Start();
  struct Workload {
    objects::WorkloadKind kind;
    std::string collection;  // in the test's namespace
    nlohmann::json object;
    bool has_selector;
  };
  const nlohmann::json pod_template = {
      {"metadata", {{"labels", {{"app", "web"}, {"tier", "x"}}}}},
      {"spec",
       {{"schedulerName", "nobody"},
        {"containers", {{{"name", "c"}, {"image", "pause:3.9"}}}}}}};
  const std::vector<Workload> workloads = {
      {objects::WorkloadKind::kService,
       NsPath("services"),
       {{"apiVersion", "v1"},
        {"kind", "Service"},
        {"metadata", {{"name", "web"}}},
        {"spec",
         {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}}}}}}},
       true},
      {objects::WorkloadKind::kService,
       NsPath("services"),
       {{"apiVersion", "v1"},
        {"kind", "Service"},
        {"metadata", {{"name", "bare"}}},
        {"spec", {{"ports", {{{"port", 80}}}}}}},
       false},
      {objects::WorkloadKind::kReplicationController,
       NsPath("replicationcontrollers"),
       {{"apiVersion", "v1"},
        {"kind", "ReplicationController"},
        {"metadata", {{"name", "rc"}}},
        {"spec",
         {{"replicas", 0},
          {"selector", {{"app", "web"}}},
          {"template", pod_template}}}},
       true},
      {objects::WorkloadKind::kReplicaSet,
       absl::StrCat("/apis/apps/v1/namespaces/", namespace_, "/replicasets"),
       {{"apiVersion", "apps/v1"},
        {"kind", "ReplicaSet"},
        {"metadata", {{"name", "rs"}}},
        {"spec",
         {{"replicas", 0},
          {"selector",
           {{"matchLabels", {{"app", "web"}}},
            {"matchExpressions",
             {{{"key", "tier"}, {"operator", "In"}, {"values", {"x"}}}}}}},
          {"template", pod_template}}}},
       true},
      {objects::WorkloadKind::kStatefulSet,
       absl::StrCat("/apis/apps/v1/namespaces/", namespace_, "/statefulsets"),
       {{"apiVersion", "apps/v1"},
        {"kind", "StatefulSet"},
        {"metadata", {{"name", "ss"}}},
        {"spec",
         {{"replicas", 0},
          {"serviceName", "web"},
          {"selector", {{"matchLabels", {{"tier", "x"}}}}},
          {"template", pod_template}}}},
       true},
  };
  std::vector<std::unique_ptr<Recorder<objects::WorkloadInfo>>> recorders;
  std::vector<std::unique_ptr<Informer<objects::WorkloadInfo>>> informers;
  for (objects::WorkloadKind kind :
       {objects::WorkloadKind::kService, objects::WorkloadKind::kReplicaSet,
        objects::WorkloadKind::kStatefulSet,
        objects::WorkloadKind::kReplicationController}) {
    recorders.push_back(std::make_unique<Recorder<objects::WorkloadInfo>>());
    InformerOptions<objects::WorkloadInfo> options;
    options.path = objects::WorkloadPath(kind);
    options.protobuf = true;
    options.codec = objects::WorkloadCodec(kind);
    options.handlers = recorders.back()->Handlers();
    informers.push_back(std::make_unique<Informer<objects::WorkloadInfo>>(
        client_, std::move(options)));
    informers.back()->Start();
  }

  const std::string labeled = namespace_ + "-labeled";
  absl::StatusOr<Response> r = client_->Do(
      "POST", "/api/v1/namespaces",
      nlohmann::json{
          {"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", labeled}, {"labels", {{"team", "a"}}}}}}
          .dump());
  ASSERT_TRUE(r.ok() && r->status == 201)
      << (r.ok() ? r->body : r.status().ToString());
  {
    auto [j, p] = BothEncodings(client_, "/api/v1/namespaces/" + labeled);
    absl::StatusOr<objects::NamespaceInfo> from_json =
        objects::NamespaceFromJson(j);
    absl::StatusOr<objects::NamespaceInfo> from_proto =
        objects::NamespaceFromProto(p);
    ASSERT_TRUE(from_json.ok()) << from_json.status();
    ASSERT_TRUE(from_proto.ok()) << from_proto.status();
    EXPECT_EQ(from_json->name, labeled);
    EXPECT_EQ(from_json->uid, from_proto->uid);
    EXPECT_EQ(from_json->resource_version, from_proto->resource_version);
    EXPECT_EQ(from_json->labels.size(), from_proto->labels.size());
    for (const auto& [k, v] : from_json->labels) {
      auto it = from_proto->labels.find(k);
      ASSERT_NE(it, from_proto->labels.end()) << k;
      EXPECT_EQ(it->second, v);
    }
    // Its own label, and the one the API server adds.
    EXPECT_EQ(from_proto->labels.count("team"), 1u);
    EXPECT_EQ(from_proto->labels.count("kubernetes.io/metadata.name"), 1u);
  }
  EXPECT_TRUE(Eventually([&] { return namespaces.Saw("add " + labeled); }));

  for (size_t i = 0; i < workloads.size(); ++i) {
    const Workload& w = workloads[i];
    const std::string name = w.object["metadata"]["name"];
    SCOPED_TRACE(name);
    r = client_->Do("POST", w.collection, w.object.dump());
    ASSERT_TRUE(r.ok() && r->status == 201)
        << (r.ok() ? r->body : r.status().ToString());
    auto [j, p] = BothEncodings(client_, absl::StrCat(w.collection, "/", name));
    absl::StatusOr<objects::WorkloadInfo> from_json =
        objects::WorkloadFromJson(w.kind, j);
    absl::StatusOr<objects::WorkloadInfo> from_proto =
        objects::WorkloadFromProto(w.kind, p);
    ASSERT_TRUE(from_json.ok()) << from_json.status();
    ASSERT_TRUE(from_proto.ok()) << from_proto.status();
    EXPECT_EQ(from_json->namespace_, namespace_);
    EXPECT_EQ(from_proto->namespace_, namespace_);
    EXPECT_EQ(from_json->name, from_proto->name);
    EXPECT_EQ(from_json->uid, from_proto->uid);
    EXPECT_EQ(from_json->resource_version, from_proto->resource_version);
    EXPECT_EQ(from_json->has_selector, w.has_selector);
    EXPECT_EQ(from_proto->has_selector, w.has_selector);
    EXPECT_TRUE(
        MessageDifferencer::Equals(from_json->selector, from_proto->selector))
        << "JSON: " << from_json->selector.DebugString()
        << "\nprotobuf: " << from_proto->selector.DebugString();
    if (w.has_selector) {
      EXPECT_GT(from_proto->selector.ByteSizeLong(), 0u);
    }
  }
  EXPECT_EQ(recorders.size(), 4u);
  for (const char* name : {"web", "bare"}) {
    EXPECT_TRUE(Eventually([&] {
      return recorders[0]->Saw(absl::StrCat("add ", name));
    })) << name;
  }
  EXPECT_TRUE(Eventually([&] { return recorders[1]->Saw("add rs"); }));
  EXPECT_TRUE(Eventually([&] { return recorders[2]->Saw("add ss"); }));
  EXPECT_TRUE(Eventually([&] { return recorders[3]->Saw("add rc"); }));
  for (auto& informer : informers) {
    EXPECT_TRUE(informer->HasSynced());
    informer->Stop();
  }
  (void)client_->Do("DELETE", "/api/v1/namespaces/" + labeled);
  EXPECT_TRUE(Eventually([&] { return namespaces.Saw("delete " + labeled); },
                         absl::Seconds(60)));
  ns_informer.Stop();
}

// PodDisruptionBudgets: both encodings decode alike (whatever status the
// disruption controller has written by then), and the shim's informer
// (protobuf, its path and codec) delivers them.
TEST_F(KubeIntegrationTest, PdbsInBothEncodings) {
  Recorder<objects::PdbInfo> pdbs;
  InformerOptions<objects::PdbInfo> options;
  options.path = objects::kPdbPath;
  options.protobuf = true;
  options.codec = objects::PdbCodec();
  options.handlers = pdbs.Handlers();
  Informer<objects::PdbInfo> informer(client_, std::move(options));
  informer.Start();
  const std::string collection = absl::StrCat(
      "/apis/policy/v1/namespaces/", namespace_, "/poddisruptionbudgets");
  auto pdb = [](const std::string& name, nlohmann::json spec) {
    return nlohmann::json{{"apiVersion", "policy/v1"},
                          {"kind", "PodDisruptionBudget"},
                          {"metadata", {{"name", name}}},
                          {"spec", std::move(spec)}};
  };
  const std::vector<nlohmann::json> objects = {
      pdb("web", {{"minAvailable", 1},
                  {"selector",
                   {{"matchLabels", {{"app", "web"}}},
                    {"matchExpressions",
                     {{{"key", "tier"},
                       {"operator", "NotIn"},
                       {"values", {"canary"}}}}}}}}),
      // {} in a braced list would be null: no selector at all.
      pdb("everything",
          {{"maxUnavailable", 1}, {"selector", nlohmann::json::object()}}),
      pdb("unselective", {{"maxUnavailable", 1}}),
  };
  for (const nlohmann::json& object : objects) {
    const std::string name = NameOf(object);
    SCOPED_TRACE(name);
    absl::StatusOr<Response> r = client_->Do("POST", collection, object.dump());
    ASSERT_TRUE(r.ok() && r->status == 201)
        << (r.ok() ? r->body : r.status().ToString());
    auto [j, p] = BothEncodings(client_, absl::StrCat(collection, "/", name));
    absl::StatusOr<objects::PdbInfo> from_json = objects::PdbFromJson(j);
    absl::StatusOr<objects::PdbInfo> from_proto = objects::PdbFromProto(p);
    ASSERT_TRUE(from_json.ok()) << from_json.status();
    ASSERT_TRUE(from_proto.ok()) << from_proto.status();
    EXPECT_EQ(from_proto->namespace_, namespace_);
    EXPECT_EQ(from_json->name, from_proto->name);
    EXPECT_EQ(from_json->uid, from_proto->uid);
    EXPECT_EQ(from_json->resource_version, from_proto->resource_version);
    EXPECT_EQ(from_json->has_selector, from_proto->has_selector);
    EXPECT_TRUE(
        MessageDifferencer::Equals(from_json->selector, from_proto->selector))
        << "JSON: " << from_json->selector.DebugString()
        << "\nprotobuf: " << from_proto->selector.DebugString();
    EXPECT_EQ(from_json->disruptions_allowed, from_proto->disruptions_allowed);
    EXPECT_EQ(from_json->disrupted_pods, from_proto->disrupted_pods);
    if (name == "web") {
      EXPECT_TRUE(from_proto->has_selector);
      EXPECT_EQ(from_proto->selector.match_expressions_size(), 1);
    }
    if (name == "everything") {
      EXPECT_TRUE(from_proto->has_selector);
    }
    EXPECT_TRUE(Eventually([&] { return pdbs.Saw("add " + name); }));
  }
  EXPECT_TRUE(informer.HasSynced());
  (void)client_->Do("DELETE", absl::StrCat(collection, "/web"));
  EXPECT_TRUE(Eventually([&] { return pdbs.Saw("delete web"); }));
  informer.Stop();
}

TEST_F(KubeIntegrationTest, BindingsAndEventsWrittenInProtobufOrJsonAgree) {
  const absl::Time when = absl::Now();
  nlohmann::json events[2];
  for (bool protobuf : {false, true}) {
    const std::string name = protobuf ? "bind-pb" : "bind-json";
    absl::StatusOr<Response> r =
        client_->Do("POST", NsPath("pods"), PodObject(name, "w").dump());
    ASSERT_TRUE(r.ok() && r->status == 201)
        << (r.ok() ? r->body : r.status().ToString());
    const nlohmann::json created = nlohmann::json::parse(r->body);
    const std::string uid = created["metadata"]["uid"];
    const std::string accept =
        protobuf ? kProtobufContentType : "application/json";

    WriteBody body = BindingBody(protobuf, namespace_, name, uid, "node-x");
    r = client_->DoAs("POST", NsPath("pods/" + name + "/binding"), body.data,
                      body.content_type, accept);
    ASSERT_TRUE(r.ok() && r->status == 201)
        << (r.ok() ? ErrorBodyText(r->body) : r.status().ToString());
    r = client_->Do("GET", NsPath("pods/" + name));
    ASSERT_TRUE(r.ok() && r->status == 200);
    EXPECT_EQ(nlohmann::json::parse(r->body)["spec"].value("nodeName", ""),
              "node-x")
        << "protobuf=" << protobuf;

    EventFields ev;
    ev.namespace_ = namespace_;
    ev.name = name + ".ev";
    ev.event_time = when;
    ev.reporting_controller = "kscore-it";
    ev.reporting_instance = "kscore-it-host";
    ev.action = "Scheduling";
    ev.reason = "Scheduled";
    ev.type = "Normal";
    ev.note = "Successfully assigned x to node-x";
    ev.regarding = {"v1", "Pod", namespace_, name, uid, "1"};
    body = EventBody(protobuf, ev);
    const std::string events_path = absl::StrCat(
        "/apis/events.k8s.io/v1/namespaces/", namespace_, "/events");
    r = client_->DoAs("POST", events_path, body.data, body.content_type,
                      accept);
    ASSERT_TRUE(r.ok() && r->status == 201)
        << (r.ok() ? ErrorBodyText(r->body) : r.status().ToString());
    r = client_->Do("GET", events_path + "/" + ev.name);
    ASSERT_TRUE(r.ok() && r->status == 200);
    events[protobuf] = nlohmann::json::parse(r->body);
  }
  for (const char* field : {"eventTime", "reportingController",
                            "reportingInstance", "action", "reason", "type"}) {
    EXPECT_EQ(events[0][field], events[1][field]) << field;
    EXPECT_FALSE(events[1][field].is_null()) << field;
  }
  EXPECT_EQ(events[1]["note"], "Successfully assigned x to node-x");
  for (const char* field :
       {"apiVersion", "kind", "namespace", "resourceVersion"}) {
    EXPECT_EQ(events[0]["regarding"][field], events[1]["regarding"][field])
        << field;
  }
  EXPECT_EQ(events[1]["regarding"]["name"], "bind-pb");

  // A binding refused, in protobuf: the reason comes back as text.
  WriteBody body = BindingBody(true, namespace_, "no-such-pod", "", "node-x");
  absl::StatusOr<Response> r =
      client_->DoAs("POST", NsPath("pods/no-such-pod/binding"), body.data,
                    body.content_type, kProtobufContentType);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 404);
  EXPECT_THAT(ErrorBodyText(r->body), HasSubstr("not found"));
}

TEST_F(KubeIntegrationTest, StreamStopsPromptlyAndReportsHttpErrors) {
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    absl::SleepFor(absl::Milliseconds(300));
    stop = true;
  });
  const absl::Time t0 = absl::Now();
  absl::Status st = client_->Stream(
      NsPath("configmaps?watch=true"), [](absl::string_view) { return true; },
      &stop);
  stopper.join();
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_LT(absl::Now() - t0, absl::Seconds(2));

  st = client_->Stream(
      "/api/v1/nosuchresource?watch=true",
      [](absl::string_view) { return true; }, nullptr);
  EXPECT_EQ(HttpStatusOf(st), 404) << st;

  // The same with frames: a protobuf error body is given as text.
  st = client_->StreamFrames(
      "/api/v1/nosuchresource?watch=true", kProtobufWatch,
      [](absl::string_view) { return true; }, nullptr);
  EXPECT_EQ(HttpStatusOf(st), 404) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("could not find")) << st;
}

TEST_F(KubeIntegrationTest, InformerRewatchesWhenTheServerEndsTheWatch) {
  // With timeoutSeconds=1 the server ends each watch after a second; the
  // informer resumes from its resourceVersion without relisting and still
  // sees what happens later. (410 cannot be provoked reliably on a fresh
  // cluster, whose watch cache serves any old resourceVersion: AfterWatch's
  // unit test covers it.)
  Recorder<nlohmann::json> rec;
  InformerOptions<nlohmann::json> options;
  options.path = NsPath("configmaps");
  options.field_selector = "metadata.name=late";
  options.handlers = rec.Handlers();
  options.codec = JsonCodec();
  options.watch_timeout = absl::Seconds(1);
  Informer<nlohmann::json> informer(client_, std::move(options));
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.watches() >= 3; }));
  EXPECT_EQ(informer.lists(), 1);
  const nlohmann::json cm = {{"apiVersion", "v1"},
                             {"kind", "ConfigMap"},
                             {"metadata", {{"name", "late"}}}};
  absl::StatusOr<Response> r =
      client_->Do("POST", NsPath("configmaps"), cm.dump());
  ASSERT_TRUE(r.ok() && r->status == 201);
  ASSERT_TRUE(Eventually([&] { return rec.Saw("add late"); }));
  EXPECT_EQ(informer.lists(), 1);
  informer.Stop();
}

TEST_F(KubeIntegrationTest, BearerTokenFromTokenFile) {
  const nlohmann::json sa = {{"apiVersion", "v1"},
                             {"kind", "ServiceAccount"},
                             {"metadata", {{"name", "tok"}}}};
  absl::StatusOr<Response> r =
      client_->Do("POST", NsPath("serviceaccounts"), sa.dump());
  ASSERT_TRUE(r.ok() && r->status == 201);
  r = client_->Do(
      "POST", NsPath("serviceaccounts/tok/token"),
      R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}})");
  ASSERT_TRUE(r.ok() && r->status == 201)
      << (r.ok() ? r->body : r.status().ToString());
  const std::string token = nlohmann::json::parse(r->body)["status"]["token"];
  const std::string file = absl::StrCat(::testing::TempDir(), "/kube_it_token");
  std::ofstream(file) << token << "\n";

  absl::StatusOr<RestConfig> config =
      LoadKubeconfig(std::getenv("KSCORE_TEST_KUBECONFIG"));
  ASSERT_TRUE(config.ok());
  config->client_cert_pem.clear();
  config->client_key_pem.clear();
  config->token_file = file;
  absl::StatusOr<std::unique_ptr<Client>> as_sa = NewClient(*config);
  ASSERT_TRUE(as_sa.ok());
  // Authenticated (not 401) as the service account, which RBAC does not let
  // list secrets (403).
  r = (*as_sa)->Do("GET", NsPath("secrets"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_THAT(r->body,
              HasSubstr("system:serviceaccount:" + namespace_ + ":tok"));
}

LeaderElectionConfig ElectionConfig(const std::string& ns,
                                    const std::string& id,
                                    std::atomic<int>* started,
                                    std::atomic<int>* stopped) {
  LeaderElectionConfig c;
  c.lease_namespace = ns;
  c.lease_name = "kscore-it";
  c.identity = id;
  c.lease_duration = absl::Seconds(4);
  c.renew_deadline = absl::Seconds(3);
  c.retry_period = absl::Milliseconds(500);
  c.release_on_cancel = true;
  c.on_started_leading = [started] { ++*started; };
  c.on_stopped_leading = [stopped] { ++*stopped; };
  return c;
}

TEST_F(KubeIntegrationTest, LeaderElectionOneLeaderAndHandover) {
  std::atomic<int> a_started{0}, a_stopped{0}, b_started{0}, b_stopped{0};
  LeaderElector a(client_,
                  ElectionConfig(namespace_, "a", &a_started, &a_stopped));
  LeaderElector b(client_,
                  ElectionConfig(namespace_, "b", &b_started, &b_stopped));
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(b.Start().ok());
  ASSERT_TRUE(Eventually([&] { return a.IsLeader() || b.IsLeader(); }));
  // For a couple of renew periods, never both, and the leader stays put.
  LeaderElector* leader = a.IsLeader() ? &a : &b;
  LeaderElector* other = leader == &a ? &b : &a;
  const absl::Time until = absl::Now() + absl::Seconds(2);
  while (absl::Now() < until) {
    ASSERT_FALSE(a.IsLeader() && b.IsLeader());
    ASSERT_TRUE(leader->IsLeader());
    absl::SleepFor(absl::Milliseconds(50));
  }
  absl::StatusOr<Response> r = client_->Do(
      "GET", absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                          namespace_, "/leases/kscore-it"));
  ASSERT_TRUE(r.ok() && r->status == 200);
  const nlohmann::json lease = nlohmann::json::parse(r->body);
  EXPECT_EQ(lease["spec"]["holderIdentity"], leader->identity());
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 4);

  // Released on Stop: the other takes over well before the 4s lease would
  // have expired.
  const absl::Time stopped_at = absl::Now();
  leader->Stop();
  EXPECT_FALSE(leader->IsLeader());
  ASSERT_TRUE(Eventually([&] { return other->IsLeader(); }, absl::Seconds(4)));
  EXPECT_LT(absl::Now() - stopped_at, absl::Seconds(3));
  EXPECT_EQ(a_started + b_started, 2);
  EXPECT_EQ((leader == &a ? a_stopped : b_stopped).load(), 1);
  other->Stop();
}

}  // namespace
}  // namespace kscore::kube
