#include "model/pod_resources.h"

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/scalar_resources.h"
#include "scorer/testing/wrappers.h"

namespace kscore::model {
namespace {

using ::kscore::testing::MakePod;

constexpr int64_t kMi = int64_t{1} << 20;

// A resource list with exactly the cpu and memory given (a zero included).
pb::Resources Res(std::optional<int64_t> milli_cpu,
                  std::optional<int64_t> memory) {
  pb::Resources r;
  if (milli_cpu.has_value()) r.set_milli_cpu(*milli_cpu);
  if (memory.has_value()) r.set_memory(*memory);
  return r;
}

pb::Resources WithScalar(pb::Resources r, const std::string& name, int64_t v) {
  MutableScalar(&r, name)->set_value(v);
  return r;
}

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
      // A request set to zero is not a missing one: no default for it.
      {"an explicit zero request stays zero",
       MakePod().ReqList(Res(0, 0)).Obj(),
       {},
       {}},
      {"explicit zero cpu, missing memory",
       MakePod().ReqList(Res(0, std::nullopt)).Req(200, 0).Obj(),
       {200, 0},
       {200, 2 * kDefaultMemoryRequest}},
      {"explicit zero in an init container and a sidecar",
       MakePod()
           .InitReqList(Res(0, 0), "Always")
           .InitReqList(Res(0, std::nullopt))
           .Obj(),
       {},
       // The init container's missing memory: 0 (sidecar) + 200Mi.
       {0, kDefaultMemoryRequest}},
      // Pod-level requests (spec.resources) replace the containers' sum
      // where they name cpu, memory or hugepages. PodNonZeroRequests (how
      // NodeResourcesFit scores the incoming pod) leaves them out, as
      // upstream does.
      {"pod-level requests replace the containers' sum",
       MakePod()
           .Req(100, 1 * kMi)
           .Req(200, 1 * kMi)
           .PodLevelReq(Res(1000, 8 * kMi))
           .Obj(),
       {1000, 8 * kMi},
       {300, 2 * kMi}},
      {"pod-level cpu only: memory comes from the containers",
       MakePod().Req(100, 3 * kMi).Req(0, 0).PodLevelReq(Res(500, {})).Obj(),
       {500, 3 * kMi},
       {200, 3 * kMi + kDefaultMemoryRequest}},
      {"pod-level requests with sidecars and init containers",
       MakePod()
           .InitReq(4000, 1 * kMi)
           .InitReq(200, 1 * kMi, "Always")
           .Req(100, 1 * kMi)
           .PodLevelReq(Res(1000, {}))
           .Obj(),
       {1000, 2 * kMi},
       {4000, 2 * kMi}},
      {"overhead adds to pod-level requests",
       MakePod()
           .Req(100, 1 * kMi)
           .PodLevelReq(Res(1000, 8 * kMi))
           .Overhead(50, 2 * kMi)
           .Obj(),
       {1050, 10 * kMi},
       {150, 3 * kMi}},
      {"pod-level zero cpu is set",
       MakePod().Req(0, 1 * kMi).PodLevelReq(Res(0, {})).Obj(),
       {0, 1 * kMi},
       {kDefaultMilliCpuRequest, 1 * kMi}},
      {"pod-level hugepages replace; extended resources stay the containers'",
       MakePod()
           .ReqList(
               WithScalar(WithScalar(Res(100, 1 * kMi), "example.com/gpu", 1),
                          "hugepages-2Mi", 2 * kMi))
           .PodLevelReq(WithScalar(Res({}, {}), "hugepages-2Mi", 8 * kMi))
           .Obj(),
       {100, 1 * kMi, 0, {{"example.com/gpu", 1}, {"hugepages-2Mi", 8 * kMi}}},
       {100, 1 * kMi, 0, {{"example.com/gpu", 1}, {"hugepages-2Mi", 2 * kMi}}}},
      {"pod-level requests of other resources only are not pod-level "
       "requests",
       MakePod()
           .Req(100, 1 * kMi)
           .PodLevelReq(WithScalar(Res({}, {}), "example.com/gpu", 3))
           .Obj(),
       {100, 1 * kMi},
       {100, 1 * kMi}},
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

// A pod on a node, with what its status reports.
struct AssignedCase {
  std::string name;
  pb::Pod pod;
  PodResourceStatus status;
  Want requests;
  Want non_zero;
};

PodResourceStatus::Container Status(std::optional<pb::Resources> allocated,
                                    std::optional<pb::Resources> actuated) {
  PodResourceStatus::Container c;
  c.allocated = std::move(allocated);
  c.actuated = std::move(actuated);
  return c;
}

PodResourceStatus Containers(
    std::vector<PodResourceStatus::Container> containers,
    std::vector<PodResourceStatus::Container> init = {}) {
  PodResourceStatus s;
  s.containers = std::move(containers);
  s.init_containers = std::move(init);
  return s;
}

PodResourceStatus Infeasible(PodResourceStatus s) {
  s.resize_infeasible = true;
  return s;
}

PodResourceStatus PodLevel(PodResourceStatus s,
                           std::optional<pb::Resources> allocated,
                           bool has_resources,
                           std::optional<pb::Resources> actuated) {
  s.allocated = std::move(allocated);
  s.has_resources = has_resources;
  s.actuated = std::move(actuated);
  return s;
}

std::vector<AssignedCase> AssignedCases() {
  return {
      {"no status: the spec",
       MakePod().Req(1000, 1 * kMi).Req(0, 0).Obj(),
       {},
       {1000, 1 * kMi},
       {1100, 1 * kMi + kDefaultMemoryRequest}},
      {"status equal to the spec",
       MakePod().Req(1000, 1 * kMi).Obj(),
       Containers({Status(Res(1000, 1 * kMi), Res(1000, 1 * kMi))}),
       {1000, 1 * kMi},
       {1000, 1 * kMi}},
      // Resized down from 3 cpus: until the kubelet actuates it, the pod
      // holds the larger amount.
      {"resize down under way: the allocated amount counts",
       MakePod().Req(1000, 1 * kMi).Obj(),
       Containers({Status(Res(3000, 1 * kMi), Res(3000, 1 * kMi))}),
       {3000, 1 * kMi},
       {3000, 1 * kMi}},
      {"resize up not yet allocated: the spec counts",
       MakePod().Req(3000, 1 * kMi).Obj(),
       Containers({Status(Res(1000, 1 * kMi), Res(1000, 1 * kMi))}),
       {3000, 1 * kMi},
       {3000, 1 * kMi}},
      {"actuated larger than allocated",
       MakePod().Req(1000, 1 * kMi).Obj(),
       Containers({Status(Res(1000, 1 * kMi), Res(2000, 4 * kMi))}),
       {2000, 4 * kMi},
       {2000, 4 * kMi}},
      {"no actuated list: the allocated one stands in",
       MakePod().Req(1000, 1 * kMi).Obj(),
       Containers({Status(Res(2500, {}), std::nullopt)}),
       {2500, 1 * kMi},
       // The status lists miss memory: they get the default as the spec's
       // would, and the larger one counts.
       {2500, kDefaultMemoryRequest}},
      {"infeasible resize: the spec is left out",
       MakePod().Req(3000, 1 * kMi).Obj(),
       Infeasible(Containers({Status(Res(1000, 1 * kMi), std::nullopt)})),
       {1000, 1 * kMi},
       {1000, 1 * kMi}},
      {"infeasible resize: a container without status counts nothing",
       MakePod().Req(3000, 1 * kMi).Req(500, 1 * kMi).Obj(),
       Infeasible(Containers({Status(Res(1000, 1 * kMi), std::nullopt)})),
       {1000, 1 * kMi},
       // The second container's nil lists get the defaults.
       {1100, 1 * kMi + kDefaultMemoryRequest}},
      {"init containers and sidecars are matched too",
       MakePod()
           .InitReq(500, 1 * kMi)
           .InitReq(100, 1 * kMi, "Always")
           .Req(100, 1 * kMi)
           .Obj(),
       // The sidecar was resized to 900m: 100m + 900m run together.
       Containers({Status(Res(100, 1 * kMi), {})},
                  {{}, Status(Res(900, 1 * kMi), {})}),
       {1000, 2 * kMi},
       {1000, 2 * kMi}},
      {"a status list missing a request gets the default for non-zero",
       MakePod().Req(0, 0).Obj(),
       Containers({Status(Res({}, 1 * kMi), {})}),
       {0, 1 * kMi},
       {kDefaultMilliCpuRequest, kDefaultMemoryRequest}},
      {"pod-level status lists stand in for the containers'",
       MakePod().Req(1000, 1 * kMi).Obj(),
       PodLevel(Containers({Status(Res(9000, 1 * kMi), {})}),
                Res(2000, 1 * kMi), true, Res(1500, 1 * kMi)),
       {2000, 1 * kMi},
       {2000, 1 * kMi}},
      {"pod-level requests during a resize: the larger of spec and status",
       MakePod().Req(100, 1 * kMi).PodLevelReq(Res(1000, {})).Obj(),
       PodLevel({}, Res(1000, 1 * kMi), true, Res(2000, 1 * kMi)),
       {2000, 1 * kMi},
       {2000, 1 * kMi}},
      {"pod-level requests, infeasible resize: the status alone",
       MakePod().Req(100, 1 * kMi).PodLevelReq(Res(3000, {})).Obj(),
       Infeasible(PodLevel({}, Res(1000, 1 * kMi), true, std::nullopt)),
       // Containers: no container status, spec left out: only the pod-level
       // allocated list (not all three pod-level lists are set).
       {1000, 1 * kMi},
       {1000, 1 * kMi}},
      {"pod-level requests without status.resources: the spec",
       MakePod().Req(100, 1 * kMi).PodLevelReq(Res(1000, {})).Obj(),
       PodLevel({}, Res(4000, {}), false, std::nullopt),
       {1000, 1 * kMi},
       {1000, 1 * kMi}},
      // With pod-level requests, a node's non-zero aggregate gives the
      // default only to a resource nobody names: a container naming memory
      // keeps the others at zero (the incoming pod's score differs).
      {"pod-level cpu; memory named by one container: no memory default",
       MakePod().Req(100, 3 * kMi).Req(0, 0).PodLevelReq(Res(500, {})).Obj(),
       {},
       {500, 3 * kMi},
       {500, 3 * kMi}},
      {"pod-level cpu; memory named by nobody: the default per container",
       MakePod().Req(100, 0).Req(0, 0).PodLevelReq(Res(500, {})).Obj(),
       {},
       {500, 0},
       {500, 2 * kDefaultMemoryRequest}},
      {"pod-level cpu; memory only in the overhead: no memory default",
       MakePod().Req(0, 0).PodLevelReq(Res(500, {})).Overhead(0, 2 * kMi).Obj(),
       {},
       {500, 2 * kMi},
       {500, 2 * kMi}},
      {"explicit zero on a node",
       MakePod().ReqList(Res(0, 0)).Obj(),
       Containers({Status(Res(0, 0), Res(0, 0))}),
       {},
       {}},
  };
}

TEST(PodResourcesTest, AssignedPodRequests) {
  for (const AssignedCase& c : AssignedCases()) {
    SCOPED_TRACE(c.name);
    AssignedPodResources got = AssignedPodRequests(c.pod, c.status);
    ExpectResources(got.requests, c.requests);
    ExpectResources(got.non_zero, c.non_zero);
  }
}

// Without status, what a pod holds on a node is what it asked for.
TEST(PodResourcesTest, AssignedWithoutStatusIsPodRequests) {
  for (const Case& c : Cases()) {
    if (c.pod.has_pod_level_requests()) continue;  // non-zero rule differs
    SCOPED_TRACE(c.name);
    AssignedPodResources got = AssignedPodRequests(c.pod, {});
    ExpectResources(got.requests, c.requests);
    ExpectResources(got.non_zero, c.non_zero);
  }
}

TEST(PodResourcesTest, IgnoresPodsInContainerRequests) {
  pb::Pod pod = MakePod().Req(100, 0).Obj();
  pod.mutable_containers(0)->mutable_requests()->set_pods(3);
  pod.mutable_overhead()->set_pods(1);
  EXPECT_EQ(PodRequests(pod).pods(), 0);
}

// Two containers near the int64 limit, or one and the overhead: the sum
// stays at the limit instead of wrapping into a negative request that every
// node would fit.
TEST(PodResourcesTest, SumsSaturateInsteadOfWrapping) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  pb::Pod pod = MakePod()
                    .Req(kMax - 1, kMax - 1)
                    .Req(kMax - 1, 1)
                    .ScalarReq("example.com/gpu", kMax)
                    .EphemeralReq(kMax)
                    .Obj();
  pod.mutable_containers(0)->mutable_requests()->set_ephemeral_storage(kMax);
  MutableScalar(pod.mutable_containers(0)->mutable_requests(),
                "example.com/gpu")
      ->set_value(kMax);
  pb::Resources r = PodRequests(pod);
  EXPECT_EQ(r.milli_cpu(), kMax);
  EXPECT_EQ(r.memory(), kMax);
  EXPECT_EQ(r.ephemeral_storage(), kMax);
  EXPECT_EQ(ScalarValue(r, "example.com/gpu"), kMax);

  pod = MakePod().Req(kMax, 0).Overhead(1, 0).Obj();
  EXPECT_EQ(PodRequests(pod).milli_cpu(), kMax);
  EXPECT_EQ(PodNonZeroRequests(pod).milli_cpu(), kMax);
  // A sidecar runs next to the containers and the init containers after it.
  pod = MakePod().Req(kMax, 0).InitReq(kMax, 0, "Always").InitReq(5, 0).Obj();
  EXPECT_EQ(PodRequests(pod).milli_cpu(), kMax);
}

}  // namespace
}  // namespace kscore::model
