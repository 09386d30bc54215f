package main

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Input is one cluster snapshot and the pod to place, as Kubernetes objects
// in their API JSON, so the C++ driver decodes them with its own decoders.
type Input struct {
	Nodes                  []*v1.Node                  `json:"nodes"`
	Pods                   []*v1.Pod                   `json:"pods"`
	Namespaces             []*v1.Namespace             `json:"namespaces"`
	Services               []*v1.Service               `json:"services"`
	ReplicaSets            []*appsv1.ReplicaSet        `json:"replicaSets"`
	StatefulSets           []*appsv1.StatefulSet       `json:"statefulSets"`
	ReplicationControllers []*v1.ReplicationController `json:"replicationControllers"`
	// The storage objects VolumeBinding reads, only in the cases of
	// `gen --volumes` (nil, and absent from the JSON, otherwise; [] when a
	// volumes case has none).
	StorageClasses         []*storagev1.StorageClass       `json:"storageClasses,omitzero"`
	CSIDrivers             []*storagev1.CSIDriver          `json:"csiDrivers,omitzero"`
	CSIStorageCapacities   []*storagev1.CSIStorageCapacity `json:"csiStorageCapacities,omitzero"`
	PersistentVolumes      []*v1.PersistentVolume          `json:"persistentVolumes,omitzero"`
	PersistentVolumeClaims []*v1.PersistentVolumeClaim     `json:"persistentVolumeClaims,omitzero"`
	// And those NodeVolumeLimits reads.
	CSINodes          []*storagev1.CSINode          `json:"csiNodes,omitzero"`
	VolumeAttachments []*storagev1.VolumeAttachment `json:"volumeAttachments,omitzero"`
	Pod               *v1.Pod                       `json:"pod"`
	// Profile is a KubeSchedulerConfiguration (YAML) with one profile.
	Profile string `json:"profile"`
}

// Status is a framework status: its code (as fwk.Code.String() spells it),
// the plugin it names and its reasons.
type Status struct {
	Code    string   `json:"code"`
	Plugin  string   `json:"plugin"`
	Reasons []string `json:"reasons"`
}

// Score is one plugin's score for one node: what Score returned, and what
// NormalizeScore made of it, before the plugin's weight.
type Score struct {
	Raw        int64 `json:"raw"`
	Normalized int64 `json:"normalized"`
}

// NodeResult is upstream's answer for one node.
type NodeResult struct {
	Name   string `json:"name"`
	Filter Status `json:"filter"`
	// Scores is present only for the nodes that passed Filter, with one
	// entry per score plugin that was not skipped.
	Scores map[string]Score `json:"scores,omitzero"`
	// VolumeDecisions: on a feasible node, how VolumeBinding would bind
	// the pod's unbound claims of delayed binding there (what Reserve
	// assumes), in the order upstream decides them; absent when the pod
	// has none.
	VolumeDecisions []VolumeDecision `json:"volumeDecisions,omitzero"`
}

// VolumeDecision is one unbound claim's fate on one node: the
// PersistentVolume it binds to, or "" when it is provisioned there.
type VolumeDecision struct {
	Claim  string `json:"claim"`
	Volume string `json:"volume"`
}

// Want is what upstream decided for one case.
type Want struct {
	PreFilter Status       `json:"preFilter"`
	Nodes     []NodeResult `json:"nodes"`
	// Skipped: the score plugins whose PreScore returned Skip, sorted.
	Skipped []string `json:"skipped"`
	// Weights: every score plugin of the profile and its weight.
	Weights map[string]int64 `json:"weights"`
}

// Case is one line of the cases file.
type Case struct {
	Seed  uint64 `json:"seed"`
	Index int    `json:"index"`
	Input *Input `json:"input"`
	Want  *Want  `json:"want"`
}
