#include "scorer/framework/pod_resources.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"

namespace kscore::framework {
namespace {

using ::kscore::testing::MakePod;

constexpr int64_t kMi = int64_t{1} << 20;

struct Want {
  Want(int64_t cpu = 0, int64_t mem = 0, int64_t eph = 0,
       std::map<std::string, int64_t> s = {})
      : milli_cpu(cpu),
        memory(mem),
        ephemeral_storage(eph),
        scalar(std::move(s)) {}
  int64_t milli_cpu;
  int64_t memory;
  int64_t ephemeral_storage;
  std::map<std::string, int64_t> scalar;
};

void ExpectResources(const pb::Resources& got, const Want& want) {
  EXPECT_EQ(got.milli_cpu(), want.milli_cpu);
  EXPECT_EQ(got.memory(), want.memory);
  EXPECT_EQ(got.ephemeral_storage(), want.ephemeral_storage);
  EXPECT_EQ(got.pods(), 0);
  std::map<std::string, int64_t> scalar;
  for (const pb::ScalarResource& s : got.scalar()) {
    EXPECT_TRUE(scalar.emplace(s.name(), s.value()).second)
        << "repeated " << s.name();
  }
  EXPECT_EQ(scalar, want.scalar);
}

struct Case {
  std::string name;
  pb::Pod pod;
  Want requests;
  Want non_zero;
};

std::vector<Case> Cases() {
  return {
      {"no containers", MakePod().Obj(), {}, {}},
      {"one container without requests",
       MakePod().Req(0, 0).Obj(),
       {},
       {kDefaultMilliCpuRequest, kDefaultMemoryRequest}},
      {"regular containers add up",
       MakePod().Req(100, 1 * kMi).Req(250, 3 * kMi).Obj(),
       {350, 4 * kMi},
       {350, 4 * kMi}},
      {"non-zero default only for the missing resource",
       MakePod().Req(300, 0).Req(0, 5 * kMi).Obj(),
       {300, 5 * kMi},
       {400, 205 * kMi}},
      // Upstream's example: IC1 2/1G, IC2 2/3G, C1 2/1G, C2 1/1G -> 3 / 3G.
      {"init containers take the max",
       MakePod()
           .InitReq(2000, 1000 * kMi)
           .InitReq(2000, 3000 * kMi)
           .Req(2000, 1000 * kMi)
           .Req(1000, 1000 * kMi)
           .Obj(),
       {3000, 3000 * kMi},
       {3000, 3000 * kMi}},
      {"init container larger than the containers",
       MakePod().InitReq(5000, 1 * kMi).Req(1000, 8 * kMi).Obj(),
       {5000, 8 * kMi},
       {5000, 8 * kMi}},
      {"sidecar adds to the regular containers",
       MakePod().InitReq(200, 10 * kMi, "Always").Req(1000, 100 * kMi).Obj(),
       {1200, 110 * kMi},
       {1200, 110 * kMi}},
      // Sidecar S1 (500) starts, then init I1 (1000) runs next to it: 1500;
      // then sidecar S2 (300); then init I2 (1100) next to S1+S2: 1900.
      // Regular C (100) + S1 + S2 = 900. Max is 1900.
      {"init containers run next to the sidecars started before them",
       MakePod()
           .InitReq(500, 1 * kMi, "Always")
           .InitReq(1000, 1 * kMi)
           .InitReq(300, 1 * kMi, "Always")
           .InitReq(1100, 1 * kMi)
           .Req(100, 1 * kMi)
           .Obj(),
       {1900, 3 * kMi},
       {1900, 3 * kMi}},
      {"sidecar after the init containers does not count for them",
       MakePod()
           .InitReq(1000, 1 * kMi)
           .InitReq(800, 1 * kMi, "Always")
           .Req(100, 1 * kMi)
           .Obj(),
       {1000, 2 * kMi},
       {1000, 2 * kMi}},
      {"restart policy other than Always is a plain init container",
       MakePod().InitReq(700, 0, "OnFailure").Req(100, 0).Obj(),
       {700, 0},
       {700, kDefaultMemoryRequest}},
      {"non-zero defaults apply to init containers and sidecars",
       MakePod().InitReq(0, 0, "Always").InitReq(0, 0).Obj(),
       {},
       // The sidecar counts once as running (100m) and the init container
       // runs next to it (100m + 100m).
       {200, 2 * kDefaultMemoryRequest}},
      {"overhead is added, never defaulted",
       MakePod().Req(100, 1 * kMi).Overhead(50, 2 * kMi).Obj(),
       {150, 3 * kMi},
       {150, 3 * kMi}},
      {"overhead on a pod without requests",
       MakePod().Req(0, 0).Overhead(50, 2 * kMi).Obj(),
       {50, 2 * kMi},
       {150, kDefaultMemoryRequest + 2 * kMi}},
      {"scalar and ephemeral storage follow the same rules",
       MakePod()
           .EphemeralReq(1000)
           .ScalarReq("example.com/gpu", 1)
           .Req(0, 0)
           .ScalarReq("example.com/gpu", 2)
           .InitScalarReq("example.com/gpu", 4)
           .InitScalarReq("hugepages-2Mi", 2 * kMi)
           .Obj(),
       {0, 0, 1000, {{"example.com/gpu", 4}, {"hugepages-2Mi", 2 * kMi}}},
       {2 * kDefaultMilliCpuRequest,
        2 * kDefaultMemoryRequest,
        1000,
        {{"example.com/gpu", 4}, {"hugepages-2Mi", 2 * kMi}}}},
  };
}

TEST(PodResourcesTest, PodRequests) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    ExpectResources(PodRequests(c.pod), c.requests);
  }
}

TEST(PodResourcesTest, PodNonZeroRequests) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    ExpectResources(PodNonZeroRequests(c.pod), c.non_zero);
  }
}

TEST(PodResourcesTest, IgnoresPodsInContainerRequests) {
  pb::Pod pod = MakePod().Req(100, 0).Obj();
  pod.mutable_containers(0)->mutable_requests()->set_pods(3);
  pod.mutable_overhead()->set_pods(1);
  EXPECT_EQ(PodRequests(pod).pods(), 0);
}

}  // namespace
}  // namespace kscore::framework
