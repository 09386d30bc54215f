#include "scorer/plugins/registry.h"

#include "scorer/plugins/concentrate.h"
#include "scorer/plugins/node_affinity.h"
#include "scorer/plugins/node_name.h"
#include "scorer/plugins/node_ports.h"
#include "scorer/plugins/node_resources_balanced_allocation.h"
#include "scorer/plugins/node_resources_fit.h"
#include "scorer/plugins/node_unschedulable.h"
#include "scorer/plugins/taint_toleration.h"
#include "scorer/plugins/unsupported.h"

namespace kscore::plugins {

framework::Registry DefaultRegistry() {
  framework::Registry r;
  r.Register(std::string(Concentrate::kName), &Concentrate::New);
  r.Register(std::string(NodeAffinity::kName), &NodeAffinity::New);
  r.Register(std::string(NodeName::kName), &NodeName::New);
  r.Register(std::string(NodePorts::kName), &NodePorts::New);
  r.Register(std::string(NodeResourcesBalancedAllocation::kName),
             &NodeResourcesBalancedAllocation::New);
  r.Register(std::string(NodeResourcesFit::kName), &NodeResourcesFit::New);
  r.Register(std::string(NodeUnschedulable::kName), &NodeUnschedulable::New);
  r.Register(std::string(TaintToleration::kName), &TaintToleration::New);
  for (const char* name :
       {"SchedulingGates", "PrioritySort", "DefaultBinder", "DefaultPreemption",
        "VolumeRestrictions", "NodeVolumeLimits", "VolumeZone", "ImageLocality",
        "NodeDeclaredFeatures", "GangScheduling", "DeferredPodScheduling",
        "TopologyPlacementGenerator", "PodGroupPodsCount"}) {
    r.RegisterKnown(name);
  }
  r.RegisterKnown("InterPodAffinity", &NeedsInterPodAffinity);
  r.RegisterKnown("PodTopologySpread", &NeedsPodTopologySpread);
  r.RegisterKnown("VolumeBinding", &NeedsVolumeBinding);
  r.RegisterKnown("DynamicResources", &NeedsDynamicResources);
  return r;
}

}  // namespace kscore::plugins
