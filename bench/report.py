#!/usr/bin/env python3
"""Tables (and the sweep plot) for hack/bench.sh.

  report.py micro BENCH.json...            Markdown table of Google Benchmark medians
  report.py table [opts] RUN.json...       the side-by-side table; last line is the
                                           `throughput ratio shim/kube-scheduler: X` line
"""
import argparse
import collections
import json
import os
import statistics
import sys

NAMES = {
    "a": "(a) kube-scheduler, default profile",
    "b": "(b) kube-scheduler, Concentrate",
    "c": "(c) shim + 1 scorer, Concentrate",
    "d": "(d) shim + {k} scorers, Concentrate",
    "e": "(e) floor: trivial binder",
    "f": "(f) floor + Scheduled events",
    "b100": "(b100) kube-scheduler, Concentrate, all nodes scored",
    "c100": "(c100) shim + 1 scorer, Concentrate, all nodes scored",
    "d100": "(d100) shim + {k} scorers, Concentrate, all nodes scored",
}
# The runs with the Concentrate profile, compared with (b) in their own section (basic shape).
CONCENTRATE = ("b", "c", "d", "b100", "c100", "d100")
# spread / antiaffinity: (c) and (d) run kube-scheduler's stock default profile too.
STOCK_NAMES = {
    "c": "(c) shim + 1 scorer, stock profile (kscore-default)",
    "d": "(d) shim + {k} scorers, stock profile (kscore-default)",
}

# hack/bench.sh --shape: what the shape is, and upstream's sizes and CI threshold for context
# (k8s.io/kubernetes v1.37.2 test/integration/scheduler_perf/*/performance-config.yaml; the
# threshold is the least average SchedulingThroughput its ci-benchmark-scheduler-perf job
# accepts, measured in-process against an integration API server on CI's machines: context, not
# a bar for this machine).
SHAPES = {
    "basic": ("basic (SchedulingBasic-like)",
              "pods in groups of 10 sharing an `app` label, 100m / 500Mi each, no init pods",
              "upstream SchedulingBasic 5000Nodes: 1000 init + 1000 measured pods, no threshold; "
              "5000Nodes_10000Pods (1000 init + 10000 measured): threshold 680 pods/s"),
    "spread": ("spread (upstream scheduler_perf TopologySpreading)",
               "nodes labelled topology.kubernetes.io/zone moon-1/2/3 round robin; init pods "
               "pod-default.yaml (namespace-1); measured pods `color: blue` with a "
               "topologySpreadConstraint maxSkew 5 over the zone, DoNotSchedule (namespace-2)",
               "upstream 5000Nodes: 5000 nodes, 5000 init + 2000 measured pods, no threshold; "
               "5000Nodes_5000Pods (5000 init + 5000 measured): threshold 460 pods/s"),
    "antiaffinity": ("antiaffinity (upstream scheduler_perf SchedulingPodAntiAffinity)",
                     "nodes without a zone label; init (sched-0) and measured (sched-1) pods all "
                     "`color: green` with required podAntiAffinity against `color: green` over "
                     "kubernetes.io/hostname in both namespaces: one per node",
                     "upstream 5000Nodes: 5000 nodes, 1000 init + 1000 measured pods, no threshold; "
                     "5000Nodes_2000Pods (1000 init + 2000 measured): threshold 180 pods/s"),
    "preemption": ("preemption (upstream scheduler_perf PreemptionBasic)",
                   "nodes of 4 CPU without a zone label; init pods pod-low-priority.yaml (900m / "
                   "500Mi, priority 0, namespace-1), four to a node; measured pods "
                   "pod-high-priority.yaml (3970m / 500Mi, priority 9999999 through the PriorityClass "
                   "kbench-high, namespace-2), each bound only once its scheduler has preempted the "
                   "four low-priority pods of a node (victims: init pods deleted during the run)",
                   "upstream PreemptionBasic 1000Nodes: 1000 nodes, 4000 init + 1000 measured pods, "
                   "no threshold (the 570 pods/s of PreemptionAsync 5000Nodes times plain pods "
                   "scheduled between preemptors, another workload)"),
    "hostport": ("hostport (upstream scheduler_perf batching/HostPortConflict)",
                 "nodes of 4 CPU without a zone label; pods pod-hostport-80.yaml (100m / 100Mi, "
                 "host port 80): one per node, so each pod makes its node infeasible for the next; "
                 "both schedulers run upstream's scheduler-config-no-topology.yaml (no default "
                 "spreading), with which kube-scheduler's opportunistic batching signs these pods",
                 "upstream HostPortConflict 20000Nodes_20000Pods (batch sizes 10 to 20000, and "
                 "batching disabled), no threshold"),
    "csipvs": ("csipvs (upstream scheduler_perf SchedulingCSIPVs)",
               "nodes of 4 CPU without a zone label, allocatable attachable-volumes-csi-ebs.csi.aws.com "
               "39 and a CSINode allowing 39 ebs.csi.aws.com volumes; init (namespace-1) and measured "
               "(namespace-2) pods pod-default.yaml, each with its own claim (pvc.yaml) pre-bound to "
               "its own CSI PV (pv-csi.yaml), the pairs created before the pods and not timed",
               "upstream 5000Nodes: 5000 nodes, 5000 init + 1000 measured pods, no threshold; "
               "5000Nodes_5000Pods (5000 init + 5000 measured): threshold 100 pods/s"),
    "intreepvs": ("intreepvs (upstream scheduler_perf SchedulingInTreePVs)",
                  "nodes of 4 CPU without a zone label; init (namespace-1) and measured (namespace-2) "
                  "pods pod-default.yaml, each with its own claim (pvc.yaml) pre-bound to its own "
                  "in-tree awsElasticBlockStore PV (pv-aws.yaml), the pairs created before the pods "
                  "and not timed",
                  "upstream 5000Nodes: 5000 nodes, 5000 init + 1000 measured pods, no threshold; "
                  "5000Nodes_2000Pods (1000 init + 2000 measured): threshold 290 pods/s"),
}


def micro(files):
    rows = []
    for f in files:
        d = json.load(open(f))
        for b in d.get("benchmarks", []):
            if b.get("aggregate_name") != "median":
                continue
            unit = b.get("time_unit", "ns")
            extra = ""
            if "items_per_second" in b:
                extra = f"{b['items_per_second']:.3g} items/s"
            if "bytes_per_second" in b:
                extra += (", " if extra else "") + f"{b['bytes_per_second'] / 2**20:.1f} MiB/s"
            for k in ("request_bytes", "bytes_per_node", "per_node", "cpu_per_cycle", "wire_bytes"):
                if k in b:
                    v = b[k]
                    if k == "per_node":
                        text = f"{k} {v * 1e9:.0f} ns"
                    elif k == "cpu_per_cycle":
                        text = f"process CPU per cycle {v * 1e6:.0f} us"
                    else:
                        text = f"{k} {v:.0f}"
                    extra += (", " if extra else "") + text
            rows.append((os.path.basename(f).replace(".json", ""), b["run_name"],
                         f"{b['real_time']:.4g} {unit}", f"{b['cpu_time']:.4g} {unit}", extra))
    print("| binary | benchmark | median real time | median CPU time | rate |")
    print("|---|---|---:|---:|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


def histogram(per_node):
    """pods-per-node histogram: {pods on a node: number of nodes}."""
    return collections.Counter(per_node.values())


def concentration(group_nodes):
    """How tightly the app groups were packed, from kbench's `group_nodes` (per group, its
    pods per node): the mean number of distinct nodes a group landed on, the mean number of
    its pods on its fullest node, and the share of groups entirely on one node. A group of
    10 packed perfectly is 1 node, 10 on the fullest, on one node."""
    groups = [g for g in group_nodes if g]
    if not groups:
        return {}
    return {
        "nodes_per_group": statistics.mean(len(g) for g in groups),
        "max_on_one_node": statistics.mean(max(g.values()) for g in groups),
        "groups_on_one_node": sum(1 for g in groups if len(g) == 1) / len(groups),
    }


MEDIAN_FIELDS = ("throughput", "sched_cpu_s", "apiserver_cpu_s",
                 "etcd_cpu_s", "wire_bytes", "wire_bytes_per_pod", "nodes_per_group",
                 "groups_on_one_node", "max_on_one_node")


def merge(reps):
    """One row from the repetitions of a run: the median of every figure but peak memory,
    which is the highest. The placement and the load are those of the repetition with the
    median throughput."""
    if len(reps) == 1:
        return reps[0]
    ordered = sorted(reps, key=lambda r: r["throughput"])
    m = dict(ordered[len(ordered) // 2])
    for f in MEDIAN_FIELDS:
        vals = [r[f] for r in reps if f in r]
        if vals:
            m[f] = statistics.median(vals)
    m["latency_ms"] = {p: statistics.median(r.get("latency_ms", {}).get(p, 0) for r in reps)
                       for p in ("p50", "p90", "p99")}
    m["sched_hwm_mib"] = max(r["sched_hwm_mib"] for r in reps)
    m["bound"] = min(r["bound"] for r in reps)
    m["timed_out"] = any(r.get("timed_out") for r in reps)
    victims = [r["victims"] for r in reps if "victims" in r]
    if victims:  # preemption: as `bound`, the fewest
        m["victims"] = min(victims)
    m["repeats"] = [r["throughput"] for r in reps]
    broken = [r for r in reps if r.get("check_ok") is False]
    if broken:  # a constraint broken in any repetition is broken
        m["check_ok"], m["check"] = False, broken[0].get("check")
    return m


def table(args):
    groups = collections.defaultdict(list)
    for f in args.files:
        r = json.load(open(f))
        # kbench's own nodes_per_group and groups_on_one_node are the same figures; runs
        # recorded before group_nodes existed keep them, without max_on_one_node.
        r.update(concentration(r.get("group_nodes") or []))
        groups[(r["run"], r["nodes"])].append(r)
    runs = [merge(reps) for reps in groups.values()]
    by = {(r["run"], r["nodes"]): r for r in runs}
    shapes = {r.get("shape", "basic") for r in runs} | {args.shape}
    if len(shapes) > 1:
        sys.exit(f"report.py: runs of several shapes in one table: {sorted(shapes)}")
    shape = args.shape
    title, what, upstream = SHAPES.get(shape, (shape, "", ""))
    names = dict(NAMES, **(STOCK_NAMES if shape != "basic" else {}))
    out = []
    out.append(f"Machine: {args.host}. Load (1/5/15 min) before/after each run in the last column.")
    if args.others:
        out.append("")
        out.append("Busiest other processes when the benchmark started (pid %cpu elapsed command):")
        out.append("```")
        out.extend(args.others.splitlines())
        out.append("```")
    if args.micro and os.path.exists(args.micro) and os.path.getsize(args.micro) > 0:
        out.append("")
        out.append("Micro-benchmarks (medians):")
        out.append("")
        out.extend(open(args.micro).read().rstrip().splitlines())
    out.append("")
    out.append(f"### Shape: {title}")
    out.append("")
    out.append(f"{what}." + (f" Init pods per run (scheduled by the scheduler under test, not measured): "
                             f"{args.init_pods}." if shape != "basic" else ""))
    out.append(f"For context, {upstream}.")
    out.append("")
    # The column before the load: basic, the app groups' spread; preemption, the victims.
    extra = "victims" if shape == "preemption" else "nodes/group"
    out.append("| run | nodes | pods bound | throughput pods/s | p50 ms | p90 ms | p99 ms "
               f"| sched CPU s | sched peak RSS MiB | apiserver CPU s | wire B/pod | {extra} "
               "| load before → after |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    # Rows of repeated runs: medians over the repetitions (peak RSS: the highest).
    for r in sorted(runs, key=lambda r: (r["nodes"], r["run"])):
        lat = r.get("latency_ms", {})
        name = names.get(r["run"], r["run"]).format(k=args.scorers)
        if r.get("check_ok") is False:
            name += " CONSTRAINT BROKEN"
        if r.get("timed_out"):
            name += " TIMED OUT"
        if r.get("repeats"):
            name += f" (median of {len(r['repeats'])}: " + ", ".join(f"{t:.1f}" for t in r["repeats"]) + ")"
        wire = f"{r['wire_bytes_per_pod']:.0f}" if r.get("wire_bytes") else "–"
        npg = f"{r['nodes_per_group']:.2f}" if shape == "basic" else "–"
        if shape == "preemption":
            npg = str(r["victims"]) if "victims" in r else "–"
        # A run that timed out has no throughput (bound pods over the time to the last bind
        # would flatter it).
        tput = "–" if r.get("timed_out") else f"{r['throughput']:.1f}"
        out.append(
            f"| {name} | {r['nodes']} | {r['bound']}/{r['pods']} | {tput} "
            f"| {lat.get('p50', 0):.0f} | {lat.get('p90', 0):.0f} | {lat.get('p99', 0):.0f} "
            f"| {r['sched_cpu_s']:.1f} | {r['sched_hwm_mib']:.0f} | {r['apiserver_cpu_s']:.1f} "
            f"| {wire} | {npg} | {r['load_before']} → {r['load_after']} |")
    out.append("")
    # spread / antiaffinity: the init pods, and whether the placement honoured the constraint.
    for r in sorted(runs, key=lambda r: (r["nodes"], r["run"])):
        if shape == "basic":
            break
        init = r.get("init")
        text = (f"init {init['bound']}/{init['pods']} pods bound in {init['wall_seconds']:.1f} s; "
                if init else "")
        check = r.get("check") or "not checked (timed out?)"
        verdict = {True: "held", False: "BROKEN"}.get(r.get("check_ok"), "unknown")
        if r["run"] in ("e", "f"):
            verdict += " (the floor reads no constraint: only its round robin decides)"
        if r.get("timed_out"):
            text += f"TIMED OUT with {r['bound']}/{r['pods']} measured pods bound; "
        if shape == "preemption" and "victims" in r:
            text += (f"{r['victims']} of {r.get('init_pods_before', '?')} low-priority pods preempted "
                     f"(4 per bound high-priority pod when the init pods fill every node: {4 * r['bound']})"
                     + (" — this scheduler did not preempt" if r["victims"] == 0 and r["bound"] < r["pods"] else "")
                     + (f", {r['init_pods_terminating']} of them still terminating at the end"
                        if r.get("init_pods_terminating") else "") + "; ")
        name = names.get(r["run"], r["run"]).format(k=args.scorers)
        if r.get("timed_out") and r.get("check_ok") is None:
            out.append(f"- {name} at {r['nodes']} nodes: {text}constraint not checked.")
            continue
        out.append(f"- {name} at {r['nodes']} nodes: {text}constraint {verdict}: {check}.")
    # Placement agreement of (b) and (c), and of (b100) and (c100): pods-per-node histograms.
    for n in sorted({r["nodes"] for r in runs}):
        for kb, kc in (("b", "c"), ("b100", "c100")):
            b, c = by.get((kb, n)), by.get((kc, n))
            if not (b and c):
                continue
            hb, hc = histogram(b["per_node"]), histogram(c["per_node"])
            keys = sorted(set(hb) | set(hc))
            moved = sum(abs(hb.get(k, 0) - hc.get(k, 0)) for k in keys) // 2
            used = max(len(b["per_node"]), 1)
            verdict = "agree" if moved <= max(1, used // 20) else "DIFFER"
            out.append(f"Placements ({kb}) vs ({kc}) at {n} nodes: {verdict}. Pods-per-node histogram "
                       f"(pods on a node: nodes) ({kb}) {dict(sorted(hb.items()))} vs ({kc}) "
                       f"{dict(sorted(hc.items()))}; groups of 10 entirely on one node: "
                       f"({kb}) {b['groups_on_one_node']:.0%}, ({kc}) {c['groups_on_one_node']:.0%}.")
            out.append("")
    if shape == "basic":
        out.extend(concentrate_section(runs, by, names, args.scorers))
    sizes = sorted({r["nodes"] for r in runs})
    if args.png and len(sizes) > 1:
        plotted = plot(runs, sizes, args)
        out.append(f"Plot: {plotted}" if plotted else "Plot: skipped (no matplotlib)")
        out.append("")
    n = sizes[-1] if sizes else 0
    a, c = by.get(("a", n)), by.get(("c", n))
    ratio = c["throughput"] / a["throughput"] if a and c and a["throughput"] else float("nan")
    # A run that timed out has no throughput to compare (only that of the pods it bound).
    late = [f"({x['run']}) TIMED OUT, {x['bound']}/{x['pods']} bound" for x in (a, c) if x and x.get("timed_out")]
    e, d, f = by.get(("e", n)), by.get(("d", n)), by.get(("f", n))
    if c and e and e["throughput"]:
        out.append(f"At {n} nodes: (c)/(e) floor = {c['throughput'] / e['throughput']:.2f}"
                   + (f", (c)/(f) floor with events = {c['throughput'] / f['throughput']:.2f}"
                      if f and f["throughput"] else "")
                   + (f", (d)/(a) = {d['throughput'] / a['throughput']:.2f}" if d and a and a["throughput"] else "")
                   + (f", (e)/(a) = {e['throughput'] / a['throughput']:.2f} (the most any scheduler could gain here)"
                      if a and a["throughput"] else "") + ".")
        out.append("")
    if not (a and c):  # e.g. --runs b,c,d,b100,c100,d100: no (a) to compare (c) with
        late = [f"no run {x} in this command" for x, y in (("(a)", a), ("(c)", c)) if not y]
    out.append("throughput ratio shim/kube-scheduler: "
               + (f"n/a ({'; '.join(late)})" if late else f"{ratio:.2f}"))
    print("\n".join(out))


def concentrate_section(runs, by, names, scorers):
    """The Concentrate runs side by side with (b) at the same node count: speed, cost and how
    well each packed the app groups (hack/bench.sh's b100, c100, d100 score every node)."""
    rows = sorted((r for r in runs if r["run"] in CONCENTRATE),
                  key=lambda r: (r["nodes"], CONCENTRATE.index(r["run"])))
    if not any(r["run"] != "b" and by.get(("b", r["nodes"])) for r in rows):
        return []
    out = ["Concentrate against (b), same command: app groups of 10; a group packed perfectly is "
           "on 1 node with 10 pods on its fullest node. `x (b)` is throughput over (b)'s. Scheduler "
           "CPU per pod is the scheduler processes' CPU over the pods bound (shim and scorers summed).",
           "",
           "| run | nodes | pods/s | x (b) | p99 ms | sched CPU ms/pod | nodes/group "
           "| pods on fullest node/group | groups on one node |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        b = by.get(("b", r["nodes"]))
        timed_out = r.get("timed_out") or (b and b.get("timed_out"))
        name = names.get(r["run"], r["run"]).format(k=scorers) + (" TIMED OUT" if r.get("timed_out") else "")
        tput = "–" if r.get("timed_out") else f"{r['throughput']:.1f}"
        vs = "–" if timed_out or not (b and b["throughput"]) else f"{r['throughput'] / b['throughput']:.2f}"
        cpu = f"{1000 * r['sched_cpu_s'] / r['bound']:.2f}" if r.get("bound") else "–"
        npg = f"{r['nodes_per_group']:.2f}" if "nodes_per_group" in r else "–"
        top = f"{r['max_on_one_node']:.2f}" if "max_on_one_node" in r else "–"
        one = f"{r['groups_on_one_node']:.0%}" if "groups_on_one_node" in r else "–"
        out.append(f"| {name} | {r['nodes']} | {tput} | {vs} | {r.get('latency_ms', {}).get('p99', 0):.0f} "
                   f"| {cpu} | {npg} | {top} | {one} |")
    out.append("")
    return out


def plot(runs, sizes, args):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key in NAMES:
        pts = sorted((r["nodes"], r["throughput"]) for r in runs if r["run"] == key)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    label=NAMES[key].format(k=args.scorers))
    ax.set_xscale("log")
    ax.set_xlabel("nodes (pods = 2 x nodes)")
    ax.set_ylabel("throughput, pods/s")
    ax.set_title("SchedulingBasic-style throughput, local control plane")
    ax.grid(True, which="both", alpha=.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    return args.png


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "micro":
        micro(sys.argv[2:])
        return
    p = argparse.ArgumentParser()
    p.add_argument("cmd")
    p.add_argument("--scorers", default="3")
    p.add_argument("--shape", default="basic", choices=sorted(SHAPES))
    p.add_argument("--init-pods", default="0")
    p.add_argument("--host", default="")
    p.add_argument("--others", default="")
    p.add_argument("--micro", default="")
    p.add_argument("--png", default="")
    p.add_argument("files", nargs="*")
    table(p.parse_intermixed_args())


if __name__ == "__main__":
    main()
