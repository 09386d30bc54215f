package main

import (
	policyv1 "k8s.io/api/policy/v1"
)

// PreemptInput is a preemption case's snapshot: the scheduling input plus
// the PodDisruptionBudgets DefaultPreemption reads. Its JSON is Input's
// fields and "podDisruptionBudgets".
type PreemptInput struct {
	Input
	PodDisruptionBudgets []*policyv1.PodDisruptionBudget `json:"podDisruptionBudgets"`
}

// PostFilterStatus is RunPostFilterPlugins' status: its code, the plugin it
// names and its message (the reasons joined by ", ").
type PostFilterStatus struct {
	Code    string `json:"code"`
	Plugin  string `json:"plugin"`
	Message string `json:"message"`
}

// PreemptCandidate is one node where preemption would make the pod fit, its
// victims and the numbers pickOneNodeForPreemption compares, in its order.
type PreemptCandidate struct {
	Node string `json:"node"`
	// Victims: "namespace/name", sorted.
	Victims []string `json:"victims"`
	// PDBViolations: the victims that violate a PodDisruptionBudget
	// (fewer is better).
	PDBViolations int64 `json:"pdbViolations"`
	// HighestPriority: the highest victim priority (lower is better).
	HighestPriority int32 `json:"highestPriority"`
	// SumPriorities: the sum over the victims of priority + 2^31, as
	// upstream adds MaxInt32+1 to each (lower is better).
	SumPriorities int64 `json:"sumPriorities"`
	// NumVictims (fewer is better).
	NumVictims int `json:"numVictims"`
	// EarliestStartOfHighest: the earliest start time among the victims of
	// the highest priority, RFC 3339 (later is better).
	EarliestStartOfHighest string `json:"earliestStartOfHighest"`
}

// PreemptWant is what upstream decided for one preemption case.
type PreemptWant struct {
	// PreFilter and Nodes are as in Want (no scores): the Filter statuses
	// that make the NodeToStatus PostFilter reads.
	PreFilter Status       `json:"preFilter"`
	Nodes     []NodeResult `json:"nodes"`
	// PostFilter is DefaultPreemption's status through RunPostFilterPlugins.
	PostFilter PostFilterStatus `json:"postFilter"`
	// NominatedNode: the node preemption chose ("" when none). When several
	// candidates tie (see Tied), the first of them in input order.
	NominatedNode string `json:"nominatedNode"`
	// Victims of NominatedNode, "namespace/name", sorted.
	Victims []string `json:"victims"`
	// PotentialNodes: the nodes whose Filter status is Unschedulable (the
	// ones preemption dry-runs), in input order.
	PotentialNodes []string `json:"potentialNodes"`
	// NumCandidates: how many candidates upstream looks for
	// (calculateNumCandidates over len(PotentialNodes)); AllConsidered is
	// NumCandidates == len(PotentialNodes), when the random offset does not
	// matter.
	NumCandidates int32 `json:"numCandidates"`
	AllConsidered bool  `json:"allConsidered"`
	// Candidates: every potential node where preemption helps, in input
	// order ([] when preemption was not attempted or found none).
	Candidates []PreemptCandidate `json:"candidates"`
	// Tied: the candidates equal to the best on all five criteria, in input
	// order; upstream's real pick was checked to be one of them.
	Tied []string `json:"tied"`
}

// PreemptCase is one line of a preemption cases file.
type PreemptCase struct {
	Seed  uint64        `json:"seed"`
	Index int           `json:"index"`
	Input *PreemptInput `json:"input"`
	Want  *PreemptWant  `json:"want"`
}
