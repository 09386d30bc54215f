#include "scorer/plugins/registry.h"

#include <utility>

#include "model/plugin_args/in_tree.h"
#include "scorer/plugins/concentrate.h"
#include "scorer/plugins/default_preemption.h"
#include "scorer/plugins/image_locality.h"
#include "scorer/plugins/inter_pod_affinity.h"
#include "scorer/plugins/node_affinity.h"
#include "scorer/plugins/node_declared_features.h"
#include "scorer/plugins/node_name.h"
#include "scorer/plugins/node_ports.h"
#include "scorer/plugins/node_resources_balanced_allocation.h"
#include "scorer/plugins/node_resources_fit.h"
#include "scorer/plugins/node_unschedulable.h"
#include "scorer/plugins/node_volume_limits.h"
#include "scorer/plugins/pod_topology_spread.h"
#include "scorer/plugins/taint_toleration.h"
#include "scorer/plugins/unsupported.h"
#include "scorer/plugins/volume_binding.h"
#include "scorer/plugins/volume_restrictions.h"
#include "scorer/plugins/volume_zone.h"

namespace kscore::plugins {

using framework::PodGate;

framework::Registry DefaultRegistry() {
  framework::Registry r;
  r.Register(std::string(Concentrate::kName), &Concentrate::New);
  r.Register(std::string(DefaultPreemption::kName), &DefaultPreemption::New);
  r.Register(std::string(ImageLocality::kName), &ImageLocality::New);
  r.Register(std::string(InterPodAffinity::kName), &InterPodAffinity::New);
  r.Register(std::string(NodeAffinity::kName), &NodeAffinity::New);
  r.Register(std::string(NodeDeclaredFeatures::kName),
             &NodeDeclaredFeatures::New);
  r.Register(std::string(NodeName::kName), &NodeName::New);
  r.Register(std::string(NodePorts::kName), &NodePorts::New);
  r.Register(std::string(NodeResourcesBalancedAllocation::kName),
             &NodeResourcesBalancedAllocation::New);
  r.Register(std::string(NodeResourcesFit::kName), &NodeResourcesFit::New);
  r.Register(std::string(NodeUnschedulable::kName), &NodeUnschedulable::New);
  r.Register(std::string(NodeVolumeLimits::kName), &NodeVolumeLimits::New);
  r.Register(std::string(PodTopologySpread::kName), &PodTopologySpread::New);
  r.Register(std::string(TaintToleration::kName), &TaintToleration::New);
  r.Register(std::string(VolumeBinding::kName), &VolumeBinding::New);
  r.Register(std::string(VolumeRestrictions::kName), &VolumeRestrictions::New);
  r.Register(std::string(VolumeZone::kName), &VolumeZone::New);
  // kube-scheduler v1.37's plugins the scorer does not run, with their
  // default args (the only args accepted for them) and, for one, a gate.
  for (const model::PluginNotRun& p : model::InTreePluginsNotRun()) {
    PodGate gate = nullptr;
    if (p.name == "DynamicResources") gate = &NeedsDynamicResources;
    r.RegisterKnown(p.name, std::move(gate), p.default_args);
  }
  return r;
}

}  // namespace kscore::plugins
