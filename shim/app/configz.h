#ifndef KSCORE_SHIM_APP_CONFIGZ_H_
#define KSCORE_SHIM_APP_CONFIGZ_H_

#include <string>

#include "shim/app/options.h"

namespace kscore::app {

// The body of /configz, as kube-scheduler serves it (component-base/configz):
// {"componentconfig": KubeSchedulerConfiguration} in kubescheduler.config.
// k8s.io/v1 after defaulting, with the flags applied. Profiles' plugins are
// v1 defaulting's merge of the defaults with the file (the framework's
// config code, no plugin), pluginConfig the file's entries with their args
// as written, then kube-scheduler's defaulted args for each enabled in-tree
// plugin the file gives none for. leaderElection names the Lease the shim
// really takes.
std::string ConfigzJson(const Options& o);

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_CONFIGZ_H_
