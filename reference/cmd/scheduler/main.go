// Command scheduler is kube-scheduler with the Concentrate plugin linked in. Without a
// profile naming Concentrate it behaves as the stock kube-scheduler (default profile).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // JSON logging format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"kscore.local/reference/pkg/concentrate"
)

func main() {
	command := app.NewSchedulerCommand(app.WithPlugin(concentrate.Name, concentrate.New))
	code := cli.Run(command)
	os.Exit(code)
}
