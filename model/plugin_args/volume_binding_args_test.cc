#include "model/plugin_args/volume_binding_args.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace kscore::model {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<VolumeBindingArgs> Decode(const std::string& yaml) {
  return DecodeVolumeBindingArgs(YamlField(YAML::Load(yaml), "args"));
}

std::vector<std::pair<int64_t, int64_t>> Points(const VolumeBindingArgs& a) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const UtilizationShapePoint& p : a.shape) {
    out.emplace_back(p.utilization, p.score);
  }
  return out;
}

// SetDefaults_VolumeBindingArgs with StorageCapacityScoring on (beta,
// default in v1.37): 600 seconds and the shape 0 -> 10, 100 -> 0; an empty
// shape is defaulted too.
TEST(VolumeBindingArgsTest, Defaults) {
  using P = std::vector<std::pair<int64_t, int64_t>>;
  for (const char* yaml : {"", "{}", "{kind: VolumeBindingArgs}", "{shape: []}",
                           "{shape: null}"}) {
    absl::StatusOr<VolumeBindingArgs> a = Decode(yaml);
    ASSERT_TRUE(a.ok()) << yaml << a.status();
    EXPECT_EQ(a->bind_timeout_seconds, 600) << yaml;
    EXPECT_EQ(Points(*a), (P{{0, 10}, {100, 0}})) << yaml;
  }
  absl::StatusOr<VolumeBindingArgs> a = Decode(
      "{bindTimeoutSeconds: 0, shape: [{utilization: 0, score: 0}, "
      "{utilization: 50, score: 10}]}");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->bind_timeout_seconds, 0);
  EXPECT_EQ(Points(*a), (P{{0, 0}, {50, 10}}));
  // A point's missing field is 0, as the v1 type decodes it.
  a = Decode("{shape: [{score: 3}]}");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(Points(*a), (P{{0, 3}}));
}

// ValidateVolumeBindingArgs: upstream's words, the field by its path, in
// upstream's order (timeout, then sorting, then each point's ranges).
TEST(VolumeBindingArgsTest, Validation) {
  struct Case {
    std::string yaml;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {"{bindTimeoutSeconds: -1}",
            "args.bindTimeoutSeconds: Invalid value: -1: invalid "
            "BindTimeoutSeconds, should not be a negative value"},
           {"{bindTimeoutSeconds: -1, shape: [{utilization: 200}]}",
            "args.bindTimeoutSeconds: Invalid value: -1"},
           {"{shape: [{utilization: 10}, {utilization: 10}]}",
            "args.shape[1].utilization: Invalid value: 10: values must be "
            "sorted in increasing order"},
           {"{shape: [{utilization: 200}, {utilization: 100}]}",
            "args.shape[1].utilization: Invalid value: 100: values must be "
            "sorted in increasing order"},
           {"{shape: [{utilization: -1, score: 0}]}",
            "args.shape[0].utilization: Invalid value: -1: not in valid range "
            "[0, 100]"},
           {"{shape: [{utilization: 0, score: 11}]}",
            "args.shape[0].score: Invalid value: 11: not in valid range "
            "[0, 10]"},
           {"{shape: [{utilization: 0, score: 0}, {utilization: 101}]}",
            "args.shape[1].utilization: Invalid value: 101: not in valid "
            "range [0, 100]"},
           {"{shape: [{utilization: 0, weight: 1}]}", "weight"},
           {"{shape: {utilization: 0}}", "args.shape"},
           {"{timeout: 1}", "args.timeout: unknown field"},
           {"{kind: NodeResourcesFitArgs}",
            "args.kind: expected VolumeBindingArgs"},
           {"{shape: [{utilization: 3000000000}]}",
            "args.shape[0].utilization"},
       }) {
    absl::StatusOr<VolumeBindingArgs> a = Decode(c.yaml);
    if (a.ok()) {
      ADD_FAILURE() << "accepted: " << c.yaml;
      continue;
    }
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << c.yaml;
    EXPECT_THAT(std::string(a.status().message()), HasSubstr(c.want)) << c.yaml;
  }
}

}  // namespace
}  // namespace kscore::model
