#include "scorer/plugins/image_locality.h"

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/selectors.h"
#include "scorer/testing/wrappers.h"
#include "yaml-cpp/yaml.h"

namespace kscore::plugins {
namespace {

using framework::Code;
using framework::CycleState;
using framework::PluginStatus;
using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
namespace pb = framework::pb;

constexpr int64_t kMB = 1024 * 1024;

// A node's status.images: every name an image goes by, and its size.
struct Image {
  std::vector<std::string> names;
  int64_t size_mb;
};

// What the shim sends for `pod`: each node's images among the pod's
// (normalised names), with how many nodes of the cluster have each name,
// and the cluster's node count.
struct ImageCluster {
  std::vector<std::pair<std::string, std::vector<Image>>> nodes;

  pb::ClusterData Cluster() const {
    pb::ClusterData c;
    c.set_node_count(static_cast<int32_t>(nodes.size()));
    return c;
  }
  std::vector<pb::Node> Nodes(const pb::Pod& pod) const {
    std::map<std::string, int32_t> spread;
    for (const auto& [_, images] : nodes) {
      std::map<std::string, bool> seen;
      for (const Image& i : images) {
        for (const std::string& n : i.names) seen[n] = true;
      }
      for (const auto& [n, __] : seen) ++spread[n];
    }
    std::vector<pb::Node> out;
    for (const auto& [name, images] : nodes) {
      pb::Node node = MakeNode().Name(name).Obj();
      std::map<std::string, bool> added;
      for (const std::string& raw : pod.images()) {
        const std::string want = model::NormalizedImageName(raw);
        if (added[want]) continue;
        for (const Image& i : images) {
          for (const std::string& n : i.names) {
            if (n != want || added[want]) continue;
            added[want] = true;
            pb::ImageState* s = node.add_images();
            s->set_name(want);
            s->set_size_bytes(i.size_mb * kMB);
            s->set_num_nodes(spread[want]);
          }
        }
      }
      out.push_back(std::move(node));
    }
    return out;
  }
};

pb::Pod PodWith(std::vector<std::string> init, std::vector<std::string> main,
                std::vector<std::string> volumes = {}) {
  pb::Pod pod = MakePod().Obj();
  for (const auto& i : init) pod.add_images(i);
  for (const auto& i : main) pod.add_images(i);
  for (const auto& i : volumes) pod.add_images(i);
  pod.set_image_volumes(static_cast<int32_t>(volumes.size()));
  return pod;
}

std::vector<int64_t> Scores(const ImageCluster& cluster, const pb::Pod& pod) {
  const pb::ClusterData data = cluster.Cluster();
  CycleState state;
  state.BindCluster(&data, {});
  std::vector<pb::Node> nodes = cluster.Nodes(pod);
  std::vector<const pb::Node*> ptrs;
  for (const pb::Node& n : nodes) ptrs.push_back(&n);
  std::vector<int64_t> scores(nodes.size());
  ImageLocality pl;
  PluginStatus s = pl.Score(state, pod, ptrs, absl::MakeSpan(scores));
  EXPECT_TRUE(s.ok()) << ::testing::PrintToString(s.reasons);
  return scores;
}

// kube-scheduler's TestImageLocalityPriority (image_locality_test.go).
TEST(ImageLocalityTest, ScoresAsUpstream) {
  const std::vector<Image> node403002000 = {
      {{"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40},
      {{"gcr.io/300:latest", "gcr.io/300:v1"}, 300},
      {{"gcr.io/2000:latest"}, 2000}};
  const std::vector<Image> node25010 = {
      {{"gcr.io/250:latest"}, 250}, {{"gcr.io/10:latest", "gcr.io/10:v1"}, 10}};
  const std::vector<Image> node60040900 = {{{"gcr.io/600:latest"}, 600},
                                           {{"gcr.io/40:latest"}, 40},
                                           {{"gcr.io/900:latest"}, 900}};
  const std::vector<Image> node300600900 = {{{"gcr.io/300:latest"}, 300},
                                            {{"gcr.io/600:latest"}, 600},
                                            {{"gcr.io/900:latest"}, 900}};
  const std::vector<Image> node400030 = {{{"gcr.io/4000:latest"}, 4000},
                                         {{"gcr.io/30:latest"}, 30}};
  const std::vector<Image> node203040 = {{{"gcr.io/20:latest"}, 20},
                                         {{"gcr.io/30:latest"}, 30},
                                         {{"gcr.io/40:latest"}, 40}};
  struct Case {
    std::string name;
    pb::Pod pod;
    ImageCluster cluster;
    std::vector<int64_t> want;
  };
  std::vector<Case> cases = {
      {"two images spread on two nodes, prefer the larger image one",
       PodWith({}, {"gcr.io/40", "gcr.io/250"}),
       {{{"node1", node403002000}, {"node2", node25010}}},
       {0, 5}},
      {"two images on one node, prefer this node",
       PodWith({}, {"gcr.io/40", "gcr.io/300"}),
       {{{"node1", node403002000}, {"node2", node25010}}},
       {7, 0}},
      {"if exceed limit, use limit",
       PodWith({}, {"gcr.io/10", "gcr.io/4000"}),
       {{{"node1", node400030}, {"node2", node25010}}},
       {100, 0}},
      {"if exceed limit, use limit (with node which has no images present)",
       PodWith({}, {"gcr.io/10", "gcr.io/4000"}),
       {{{"node1", node400030}, {"node2", node25010}, {"node3", {}}}},
       {66, 0, 0}},
      {"pod with multiple large images, node2 is preferred",
       PodWith({}, {"gcr.io/300", "gcr.io/600", "gcr.io/900"}),
       {{{"node1", node60040900}, {"node2", node300600900}, {"node3", {}}}},
       {32, 36, 0}},
      {"pod with multiple small images",
       PodWith({}, {"gcr.io/30", "gcr.io/40"}),
       {{{"node1", node203040}, {"node2", node400030}}},
       {1, 0}},
      {"pod with ImageVolume",
       PodWith({}, {"gcr.io/30"}, {"gcr.io/300"}),
       {{{"node1", node300600900}, {"node2", node400030}}},
       {6, 0}},
      {"same images as ImageVolume pod but as regular container images",
       PodWith({}, {"gcr.io/30", "gcr.io/300"}),
       {{{"node1", node300600900}, {"node2", node400030}}},
       {6, 0}},
      {"include InitContainers: two images spread on two nodes, prefer the "
       "larger image one",
       PodWith({"gcr.io/300"}, {"gcr.io/30"}),
       {{{"node1", node403002000}, {"node2", node203040}}},
       {6, 0}},
      // Every container counts, the same image twice included: (2 * 600 MB
      // * 1/1 - 23 MB) / (2000 MB - 23 MB).
      {"an image used twice counts twice",
       PodWith({}, {"a:1", "a:1"}),
       {{{"node1", {{{"a:1"}, 600}}}}},
       {59}},
      // A node's image listed only without a tag is not the pod's
      // "img:latest".
      {"names are compared once the pod's is normalised",
       PodWith({}, {"img"}),
       {{{"node1", {{{"img"}, 900}}}, {"node2", {{{"img:latest"}, 900}}}}},
       {0, 43}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(Scores(c.cluster, c.pod), ElementsAreArray(c.want));
  }
}

TEST(ImageLocalityTest, ImagesWithoutNodeCountAreAnError) {
  pb::Pod pod = PodWith({}, {"a:1"});
  pb::Node node = MakeNode().Name("n").Obj();
  pb::ImageState* s = node.add_images();
  s->set_name("a:1");
  s->set_size_bytes(100 * kMB);
  s->set_num_nodes(1);
  const pb::Node* nodes[] = {&node};
  int64_t score = -1;
  CycleState state;  // no cluster: node_count 0
  PluginStatus st =
      ImageLocality().Score(state, pod, nodes, absl::MakeSpan(&score, 1));
  EXPECT_EQ(st.code, Code::kError);
  EXPECT_THAT(st.reasons, ElementsAreArray({HasSubstr("node_count")}));
}

// Sizes near the int64 limit (and more nodes with an image than in the
// cluster): the scaled sizes saturate, where converting the float64 product
// to int64 was undefined (and on amd64 gave a negative sum, scoring 0).
TEST(ImageLocalityTest, HugeImagesSaturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  pb::Pod pod = PodWith({}, {"a:1", "b:1"});
  pb::Node node = MakeNode().Name("n").Obj();
  for (const char* name : {"a:1", "b:1"}) {
    pb::ImageState* s = node.add_images();
    s->set_name(name);
    s->set_size_bytes(kMax);
    s->set_num_nodes(2);
  }
  const pb::Node* nodes[] = {&node};
  pb::ClusterData cluster;
  cluster.set_node_count(1);
  CycleState state;
  state.BindCluster(&cluster, {});
  int64_t score = -1;
  ASSERT_TRUE(
      ImageLocality().Score(state, pod, nodes, absl::MakeSpan(&score, 1)).ok());
  EXPECT_EQ(score, 100);
}

TEST(ImageLocalityTest, TakesNoArgs) {
  EXPECT_TRUE(
      ImageLocality::New(
          model::YamlField(YAML::Load("{kind: ImageLocalityArgs}"), "args"))
          .ok());
  absl::StatusOr<std::unique_ptr<framework::Plugin>> p =
      ImageLocality::New(model::YamlField(YAML::Load("{size: 1}"), "args"));
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("args.size: unknown field \"size\""));
}

}  // namespace
}  // namespace kscore::plugins
