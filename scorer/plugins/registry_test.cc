#include "scorer/plugins/registry.h"

#include <string>

#include "gtest/gtest.h"
#include "model/plugin_args/in_tree.h"

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

}  // namespace
}  // namespace kscore::plugins
