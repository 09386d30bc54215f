#!/usr/bin/env python3
"""The ledger of a fault case (tests/e2e/faults.sh): every pod of the case's
namespace, read back from the API server and the shims' logs, checked for
the scheduler's promises. Prints PASS:/FAIL: lines and one RESULT line
(case, pods, recovery seconds, bound once) for the results table; exits 0.

Usage: fault_ledger.py --first-after EPOCH REGEX LOG...  (epoch of a log line)
       fault_ledger.py --case NAME --ns NAMESPACE --dir DIR --fault-end EPOCH
         [--limit SECONDS] [--all-bound] [--one-attempt] [--some-pending]
         [--no-bind-after NODE=EPOCH]... LOG...
DIR holds pods.json (every namespace), nodes.json and events.json (the
namespace's events.k8s.io events), as kubectl get -o json writes them.
"""
import argparse
import collections
import datetime
import json
import re
import sys
import time

LINE = re.compile(r"^[A-Z](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+) \d+ [^\]]*\] (.*)$")
BOUND = re.compile(r"^bound pod (\S+)/(\S+) to node (\S+)$")
CHOSEN = re.compile(r"^pod (\S+)/(\S+) -> node (\S+) among")
CONFLICT = re.compile(r"^binding (\S+)/(\S+) to (\S+): HTTP (\d+)")


def log_time(m):
    """Seconds since the epoch of a log line's local time stamp."""
    now = datetime.datetime.now()
    mon, day, hh, mm, ss, frac = (int(m.group(i)) for i in range(1, 7))
    year = now.year - (1 if mon > now.month else 0)
    t = datetime.datetime(year, mon, day, hh, mm, ss)
    return time.mktime(t.timetuple()) + frac / 10 ** len(m.group(6))


def millicores(q):
    q = str(q)
    if q.endswith("m"):
        return int(q[:-1])
    return int(float(q) * 1000)


def cpu_request(pod):
    total = 0
    for c in pod["spec"].get("containers", []):
        req = c.get("resources", {}).get("requests", {})
        total += millicores(req.get("cpu", "0"))
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--ns", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--fault-end", type=float, required=True)
    ap.add_argument("--limit", type=float, default=5.0)
    ap.add_argument("--all-bound", action="store_true")
    ap.add_argument("--one-attempt", action="store_true")
    ap.add_argument("--some-pending", action="store_true",
                    help="pods are expected to stay pending (more than fit): at least one must")
    ap.add_argument("--no-bind-after", action="append", default=[])
    ap.add_argument("--recovery-skip", default=None,
                    help="pods with this name prefix (created after the fault) are not timed")
    ap.add_argument("logs", nargs="*")
    a = ap.parse_args()
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(("PASS: " if ok else "FAIL: ") + f"[{a.case}] {what}")
        failures += 0 if ok else 1

    pods = json.load(open(f"{a.dir}/pods.json"))["items"]
    nodes = json.load(open(f"{a.dir}/nodes.json"))["items"]
    events = json.load(open(f"{a.dir}/events.json"))["items"]
    mine = [p for p in pods if p["metadata"]["namespace"] == a.ns]

    # What the shims say they did: successful bindings, and bindings the
    # API server refused as already bound or gone.
    binds = collections.defaultdict(list)  # pod -> [(time, node)]
    refused = collections.defaultdict(list)
    chosen = collections.defaultdict(list)  # pod -> [(time, node)] decided (-v 4)
    for path in a.logs:
        for raw in open(path, errors="replace"):
            m = LINE.match(raw.rstrip("\n"))
            if not m:
                continue
            msg = m.group(7)
            b = BOUND.match(msg)
            if b and b.group(1) == a.ns:
                binds[b.group(2)].append((log_time(m), b.group(3)))
                continue
            d = CHOSEN.match(msg)
            if d and d.group(1) == a.ns:
                chosen[d.group(2)].append((log_time(m), d.group(3)))
                continue
            c = CONFLICT.match(msg)
            if c and c.group(1) == a.ns:
                refused[c.group(2)].append(int(c.group(4)))

    # Bound exactly once: one successful binding, at most one Scheduled.
    scheduled = collections.Counter(
        e["regarding"].get("uid") for e in events if e.get("reason") == "Scheduled")
    twice = [n for n, b in binds.items() if len(b) > 1]
    multi_events = [p["metadata"]["name"] for p in mine
                    if scheduled[p["metadata"]["uid"]] > 1]
    unlogged = [p["metadata"]["name"] for p in mine
                if p["spec"].get("nodeName") and p["metadata"]["name"] not in binds]
    check(not twice, f"no pod bound twice by the shims ({sum(len(b) for b in binds.values())} bindings"
          f"{': twice ' + ' '.join(sorted(twice)[:5]) if twice else ''})")
    check(not multi_events, "at most one Scheduled event per pod"
          + (f": {' '.join(sorted(multi_events)[:5])}" if multi_events else ""))
    if unlogged:  # a binding that went through, its answer lost (the shim died, the server went away)
        print(f"  .. [{a.case}] {len(unlogged)} pod(s) bound without a binding answer in the logs: "
              + " ".join(sorted(unlogged)[:5]))
    wrong_node = [p["metadata"]["name"] for p in mine
                  if p["spec"].get("nodeName") and p["metadata"]["name"] in binds
                  and binds[p["metadata"]["name"]][-1][1] != p["spec"]["nodeName"]]
    check(not wrong_node, "each pod is on the node its binding named"
          + (f": not {' '.join(wrong_node[:5])}" if wrong_node else ""))
    n_refused = sum(len(v) for v in refused.values())
    if a.one_attempt:
        check(n_refused == 0, f"one binding attempt per pod across the shims "
              f"({n_refused} refused as already bound or gone)")

    # No node's requests above its allocatable (every namespace counts).
    live = [p for p in pods if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
    used_cpu = collections.Counter()
    used_pods = collections.Counter()
    for p in live:
        n = p["spec"].get("nodeName")
        if n:
            used_cpu[n] += cpu_request(p)
            used_pods[n] += 1
    over = []
    free = {}
    for node in nodes:
        name = node["metadata"]["name"]
        alloc = node["status"]["allocatable"]
        cpu, npods = millicores(alloc["cpu"]), int(alloc["pods"])
        if used_cpu[name] > cpu or used_pods[name] > npods:
            over.append(f"{name} cpu {used_cpu[name]}m/{cpu}m pods {used_pods[name]}/{npods}")
        schedulable = not node["spec"].get("unschedulable") and not any(
            t.get("effect") in ("NoSchedule", "NoExecute") for t in node["spec"].get("taints", []))
        if schedulable:
            free[name] = (cpu - used_cpu[name], npods - used_pods[name])
    check(not over, "no node's requests above its allocatable"
          + (f": {'; '.join(over)}" if over else f" ({len(nodes)} nodes)"))

    # None left Pending that fits.
    node_names = {n["metadata"]["name"] for n in nodes}
    pending = [p for p in mine if not p["spec"].get("nodeName")
               and not p["metadata"].get("deletionTimestamp")]
    fits = [p["metadata"]["name"] for p in pending
            if any(c >= cpu_request(p) and k >= 1 for c, k in free.values())]
    check(not fits, f"no pending pod fits a node ({len(pending)} pending"
          + (f"; fitting: {' '.join(sorted(fits)[:5])}" if fits else "") + ")")
    if a.some_pending:  # else "no pending pod fits" checks nothing
        check(pending, f"some pods pending, more than fit ({len(pending)})")
    if a.all_bound:
        check(not pending, f"every pod bound ({len(mine) - len(pending)}/{len(mine)})")
    orphans = [p for p in mine if p["spec"].get("nodeName") and p["spec"]["nodeName"] not in node_names]

    for rule in a.no_bind_after:
        # A binding decided before may still be sent after (it waits for the
        # rate limiter): what must not happen is a pod placed there after.
        node, since = rule.split("=")
        late = [n for n, b in chosen.items() for t, nd in b if nd == node and t > float(since)]
        check(not late, f"no pod placed on {node} once the shim could know it was gone or cordoned"
              + (f": {' '.join(sorted(late)[:5])}" if late else ""))

    # Time to recover: fault end to the last binding.
    times = [t for n, b in binds.items() for t, _ in b
             if not (a.recovery_skip and n.startswith(a.recovery_skip))]
    last = max(times) if times else a.fault_end
    recovery = max(0.0, last - a.fault_end)
    check(recovery <= a.limit, f"recovered in {recovery:.1f}s (fault end to last pod bound; limit {a.limit:g}s)")
    once = not twice and not multi_events
    print(f"RESULT\t{a.case}\t{len(mine)}\t{len(mine) - len(pending)}\t{recovery:.1f}\t"
          f"{'yes' if once else 'no'}\t{'no' if over else 'yes'}\t{len(orphans)}\t{n_refused}")
    return 0


def first_after(after, pattern, paths):
    """Epoch of the first log line of `paths` after `after` whose message
    matches `pattern`, or None."""
    rx = re.compile(pattern)
    best = None
    for path in paths:
        for raw in open(path, errors="replace"):
            m = LINE.match(raw.rstrip("\n"))
            if m and rx.search(m.group(7)):
                t = log_time(m)
                if t > after and (best is None or t < best):
                    best = t
    return best


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--first-after":
        # fault_ledger.py --first-after EPOCH REGEX LOG...: that line's epoch
        t = first_after(float(sys.argv[2]), sys.argv[3], sys.argv[4:])
        print(f"{t:.3f}" if t is not None else "")
        sys.exit(0)
    sys.exit(main())
