// Against a real API server: KSCORE_TEST_KUBECONFIG names its kubeconfig
// (tests/e2e/kube_client.sh brings one up). Not registered with ctest.

#include <atomic>
#include <barrier>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shim/kube/client.h"
#include "shim/kube/informer.h"
#include "shim/kube/leader_election.h"

namespace kscore::kube {
namespace {

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

// Records what an informer delivers.
struct Recorder {
  absl::Mutex mu;
  std::vector<std::string> events;  // "add p", "update p", "delete p"
  nlohmann::json last_update;
  bool synced = false;

  EventHandlers Handlers() {
    auto name = [](const nlohmann::json& o) {
      return o["metadata"]["name"].get<std::string>();
    };
    EventHandlers h;
    h.on_add = [this, name](const nlohmann::json& o) {
      absl::MutexLock l(&mu);
      events.push_back("add " + name(o));
    };
    h.on_update = [this, name](const nlohmann::json&, const nlohmann::json& o) {
      absl::MutexLock l(&mu);
      events.push_back("update " + name(o));
      last_update = o;
    };
    h.on_delete = [this, name](const nlohmann::json& o) {
      absl::MutexLock l(&mu);
      events.push_back("delete " + name(o));
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

nlohmann::json PodObject(const std::string& name) {
  // Nobody schedules it: the test owns every change.
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", "it"}}}}},
          {"spec",
           {{"schedulerName", "nobody"},
            {"containers", {{{"name", "c"}, {"image", "pause:3.9"}}}}}}};
}

TEST_F(KubeIntegrationTest, InformerSeesAddUpdateDelete) {
  // A pod that exists before the informer starts arrives through the list.
  absl::StatusOr<Response> r =
      client_->Do("POST", NsPath("pods"), PodObject("before").dump());
  ASSERT_TRUE(r.ok() && r->status == 201)
      << (r.ok() ? r->body : r.status().ToString());

  Recorder rec;
  InformerOptions options;
  options.path = NsPath("pods");
  options.label_selector = "app=it";
  options.handlers = rec.Handlers();
  Informer informer(client_, std::move(options));
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }));
  EXPECT_TRUE(rec.Saw("add before"));
  EXPECT_TRUE(rec.synced);

  r = client_->Do("POST", NsPath("pods"), PodObject("p1").dump());
  ASSERT_TRUE(r.ok() && r->status == 201)
      << (r.ok() ? r->body : r.status().ToString());
  ASSERT_TRUE(Eventually([&] { return rec.Saw("add p1"); }));

  r = client_->Do("PATCH", NsPath("pods/p1"),
                  R"({"metadata":{"labels":{"x":"y"}}})",
                  "application/merge-patch+json");
  ASSERT_TRUE(r.ok() && r->status == 200)
      << (r.ok() ? r->body : r.status().ToString());
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock l(&rec.mu);
    return rec.last_update.is_object() &&
           rec.last_update["metadata"]["labels"].value("x", "") == "y";
  }));
  ASSERT_NE(informer.Get(namespace_ + "/p1"), nullptr);

  r = client_->Do("DELETE", NsPath("pods/p1"), R"({"gracePeriodSeconds":0})");
  ASSERT_TRUE(r.ok() && r->status == 200)
      << (r.ok() ? r->body : r.status().ToString());
  ASSERT_TRUE(Eventually([&] { return rec.Saw("delete p1"); }));
  EXPECT_EQ(informer.Get(namespace_ + "/p1"), nullptr);
  EXPECT_EQ(informer.List().size(), 1u);  // "before"

  const absl::Time t0 = absl::Now();
  informer.Stop();
  EXPECT_LT(absl::Now() - t0, absl::Seconds(2))
      << "Stop must not wait for the watch";
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
}

TEST_F(KubeIntegrationTest, InformerRewatchesWhenTheServerEndsTheWatch) {
  // With timeoutSeconds=1 the server ends each watch after a second; the
  // informer resumes from its resourceVersion without relisting and still
  // sees what happens later. (410 cannot be provoked reliably on a fresh
  // cluster, whose watch cache serves any old resourceVersion: AfterWatch's
  // unit test covers it.)
  Recorder rec;
  InformerOptions options;
  options.path = NsPath("configmaps");
  options.field_selector = "metadata.name=late";
  options.handlers = rec.Handlers();
  options.watch_timeout = absl::Seconds(1);
  Informer informer(client_, std::move(options));
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
