#!/usr/bin/env python3
"""Tests of bench/report.py's concentration figures (run by ctest as report_test)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import report  # noqa: E402


def run_json(run, group_nodes, throughput=100.0, cpu_s=10.0):
    """A run as hack/bench.sh writes it (kbench's result plus the process figures)."""
    per_node = {}
    for g in group_nodes:
        for node, pods in g.items():
            per_node[node] = per_node.get(node, 0) + pods
    pods = sum(per_node.values())
    return {"run": run, "nodes": 50, "pods": pods, "bound": pods, "throughput": throughput,
            "latency_ms": {"p50": 10, "p90": 20, "p99": 30}, "per_node": per_node,
            "group_nodes": group_nodes, "sched_cpu_s": cpu_s, "sched_hwm_mib": 100,
            "apiserver_cpu_s": 5, "wire_bytes": 0, "wire_bytes_per_pod": 0, "shape": "basic",
            "load_before": "1 1 1", "load_after": "1 1 1"}


class ConcentrationTest(unittest.TestCase):
    def test_perfect_packing(self):
        c = report.concentration([{"n1": 10}, {"n2": 10}])
        self.assertEqual(c, {"nodes_per_group": 1, "max_on_one_node": 10, "groups_on_one_node": 1.0})

    def test_split_group(self):
        # One group whole, one split 6 + 3 + 1: (1 + 3) / 2 nodes, (10 + 6) / 2 on the fullest.
        c = report.concentration([{"n1": 10}, {"n2": 6, "n3": 3, "n4": 1}])
        self.assertEqual(c["nodes_per_group"], 2)
        self.assertEqual(c["max_on_one_node"], 8)
        self.assertEqual(c["groups_on_one_node"], 0.5)

    def test_spread_out(self):
        c = report.concentration([{f"n{i}": 1 for i in range(10)}])
        self.assertEqual((c["nodes_per_group"], c["max_on_one_node"], c["groups_on_one_node"]), (10, 1, 0))

    def test_no_groups(self):
        self.assertEqual(report.concentration([]), {})


class TableTest(unittest.TestCase):
    """The table's Concentrate section reads the placement of each run's groups."""

    def table(self, runs):
        with tempfile.TemporaryDirectory() as d:
            files = []
            for r in runs:
                files.append(os.path.join(d, f"{r['run']}-{r['nodes']}.json"))
                with open(files[-1], "w") as f:
                    json.dump(r, f)
            out = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), "table", *files],
                                 check=True, capture_output=True, text=True).stdout
        self.last_line = out.splitlines()[-1]
        return {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
                for line in out.splitlines() if line.startswith("| (") and line.count("|") == 10}

    def test_section_against_b(self):
        b = run_json("b", [{"n1": 5, "n2": 5}, {"n3": 4, "n4": 3, "n5": 3}], throughput=100, cpu_s=4)
        b100 = run_json("b100", [{"n1": 10}, {"n2": 10}], throughput=50, cpu_s=8)
        rows = self.table([b, b100])
        # columns: nodes, pods/s, x (b), p99, CPU ms/pod, nodes/group, fullest, on one node
        self.assertEqual(rows["(b) kube-scheduler, Concentrate"],
                         ["50", "100.0", "1.00", "30", "200.00", "2.50", "4.50", "0%"])
        self.assertEqual(rows["(b100) kube-scheduler, Concentrate, all nodes scored"],
                         ["50", "50.0", "0.50", "30", "400.00", "1.00", "10.00", "100%"])
        # One group split: the figures follow.
        b100["group_nodes"] = [{"n1": 10}, {"n2": 7, "n3": 3}]
        rows = self.table([b, b100])
        self.assertEqual(rows["(b100) kube-scheduler, Concentrate, all nodes scored"][5:],
                         ["1.50", "8.50", "50%"])

    def test_ratio_line_without_a(self):
        self.table([run_json("b", [{"n1": 10}]), run_json("c", [{"n1": 10}])])
        self.assertEqual(self.last_line, "throughput ratio shim/kube-scheduler: n/a (no run (a) in this command)")

    def test_no_section_without_b(self):
        rows = self.table([run_json("c100", [{"n1": 10}])])
        self.assertEqual(rows, {})


if __name__ == "__main__":
    unittest.main()
