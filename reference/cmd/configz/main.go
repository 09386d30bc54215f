// Command configz prints what kube-scheduler v1.37 serves on /configz for a
// KubeSchedulerConfiguration file: the file decoded with the scheduler's scheme
// (so v1 defaulting runs), converted back to kubescheduler.config.k8s.io/v1 and
// marshalled under "componentconfig", as cmd/kube-scheduler/app/server.go and
// component-base/configz do. kscore's shim /configz is compared with it.
//
//	go run ./cmd/configz FILE
package main

import (
	"encoding/json"
	"fmt"
	"os"

	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	conversionv1 "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: configz FILE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	internal, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		fmt.Fprintf(os.Stderr, "not a KubeSchedulerConfiguration: %T\n", obj)
		os.Exit(1)
	}
	external := &configv1.KubeSchedulerConfiguration{}
	if err := conversionv1.Convert_config_KubeSchedulerConfiguration_To_v1_KubeSchedulerConfiguration(internal, external, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	external.SetGroupVersionKind(configv1.SchemeGroupVersion.WithKind("KubeSchedulerConfiguration"))
	out, err := json.Marshal(map[string]any{"componentconfig": external})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
