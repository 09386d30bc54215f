#include "scorer/plugins/registry.h"

#include <string>

#include "gtest/gtest.h"
#include "model/plugin_args/in_tree.h"
#include "model/plugin_points.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"
#include "scorer/framework/preemption.h"

namespace kscore::plugins {
namespace {

// The shim checks in-tree plugins' args from model/plugin_args' list; that
// list and the scorer's registry name the same plugins, each the same way.
TEST(RegistryTest, MatchesTheInTreeListTheShimChecks) {
  framework::Registry r = DefaultRegistry();
  for (const auto& [name, factory] : r.factories()) {
    EXPECT_TRUE(model::IsInTreePluginRun(name)) << name;
  }
  for (const model::PluginNotRun& p : model::InTreePluginsNotRun()) {
    EXPECT_TRUE(r.IsKnown(p.name)) << p.name;
    EXPECT_EQ(r.Find(p.name), nullptr) << p.name;
    EXPECT_EQ(r.DefaultArgs(p.name), p.default_args) << p.name;
  }
  for (const std::string& name : model::InTreePluginsRun()) {
    EXPECT_NE(r.Find(name), nullptr) << name;
  }
  EXPECT_EQ(model::InTreePluginsRun().size(), r.factories().size());
}

template <typename T>
bool Is(const framework::Plugin* p) {
  return dynamic_cast<const T*>(p) != nullptr;
}

// The shim refuses an in-tree plugin enabled at a point it does not extend
// from model/plugin_points' table; the table says what each plugin's class
// implements.
TEST(RegistryTest, ExtensionPointTableMatchesThePluginsClasses) {
  using framework::Plugin;
  using P = model::ExtensionPoint;
  const std::pair<P, bool (*)(const Plugin*)> kChecks[] = {
      {P::kPreFilter, &Is<framework::PreFilterPlugin>},
      {P::kFilter, &Is<framework::FilterPlugin>},
      {P::kPreScore, &Is<framework::PreScorePlugin>},
      {P::kScore, &Is<framework::ScorePlugin>},
      {P::kPostFilter, &Is<framework::PostFilterPlugin>},
  };
  framework::Registry r = DefaultRegistry();
  for (const auto& [name, factory] : r.factories()) {
    model::YamlField no_args(YAML::Node(YAML::NodeType::Undefined), "args");
    auto plugin = factory(no_args);
    ASSERT_TRUE(plugin.ok()) << name << ": " << plugin.status();
    for (const auto& [point, implements] : kChecks) {
      EXPECT_EQ(model::InTreePluginExtends(name, point),
                implements(plugin->get()))
          << name << " at " << model::ExtensionPointName(point);
    }
    EXPECT_FALSE(model::InTreePluginExtends(name, P::kReserve)) << name;
  }
}

}  // namespace
}  // namespace kscore::plugins
