"""Long leaf jobs split into their children, so that a batch does not wait on its longest job.

One lane of a GPU is a slow processor (docs/opencl.md): a batch of jobs ends when its largest
job ends, and on the H100 the largest job of the benchmark takes longer alone than all the
others together. So the search kernel is given a node budget: a job that would count more
nodes is given up (it comes back with 0 nodes) and is searched here the way the accelerator
would search it, one node at a time. The node is entered on the host from what the
``node_children`` kernel finds there (in check, the stand-pat value, the legal children in
generation order: captures only in quiescence), and its children go back to the device as jobs
of their own, starting at their ply (the MAX_PLY rule and mate scores count from the job's
root), with their own budget, so that a long child is split in turn.

The children are searched in generation order with the window the sequential search gives
each: the score, the best move and the node count of a split job are those of the job searched
whole. For speed, once a node's first child is known its other children are searched at once
with the current alpha (young brothers wait); a result counts only if alpha has not moved
before that child, otherwise the child is searched again with the new window, and work below a
node that has returned (a cutoff) is dropped.
"""

import numpy as np

from chessaccel.contract.defs import INF, MATE, MAX_PLY
from chessaccel.host.opencl.backend import SPLIT_BUDGET

__all__ = ["search_split", "SPLIT_BUDGET", "CHILD_BUDGET"]

#: Nodes a child of a split job may count before it is split in turn.
CHILD_BUDGET = 20_000


class _Node:
    """A given-up job, or a given-up child of one, being searched child by child."""

    __slots__ = ("position", "depth", "alpha", "beta", "ply", "parent", "index", "key_alpha",
                 "slot", "count", "in_check", "moves", "children", "captures_only", "best",
                 "best_move", "next", "nodes", "results", "running", "done")

    def __init__(self, position, depth, alpha, beta, ply, parent=None, index=None, slot=None):
        self.position, self.depth, self.alpha, self.beta, self.ply = position, depth, alpha, beta, ply
        self.parent, self.index, self.slot = parent, index, slot
        #: the parent's alpha this node's window was made from: it counts only while unchanged
        self.key_alpha = -beta if parent is not None else None
        self.results = {}    # child index -> (alpha it was searched with, value, nodes)
        self.running = {}    # child index -> alpha of the search under way (job or split node)
        self.done = False
        self.next = 0
        self.nodes = 1
        self.best_move = 0

    def live(self):
        node = self
        while node.parent is not None:
            if node.parent.done or node.key_alpha != node.parent.alpha:
                return False
            node = node.parent
        return not node.done


class _Split:
    def __init__(self, backend, results, child_budget, eager):
        self.backend = backend
        self.eager = eager
        self.scores, self.best_moves, self.node_counts = results
        self.child_budget = child_budget
        self.active = []
        self.rounds = 0
        self.jobs = 0
        self.splits = 0

    # --- entering nodes ----------------------------------------------------------------------

    def enter(self, nodes):
        """ENTER (docs/semantics.md section 5) for new split nodes, from the device's view of
        them; their first children start on the next round."""
        if not nodes:
            return
        self.splits += len(nodes)
        params = np.array([(n.depth, 0, 0, n.ply) for n in nodes], dtype=np.int32)
        seen = self.backend.node_children(np.array([n.position for n in nodes]), params)
        for i, node in enumerate(nodes):
            node.count = int(seen["counts"][i])
            node.in_check = bool(seen["in_check"][i])
            node.moves = seen["moves"][i]
            node.children = seen["children"][i]
            stand_pat = int(seen["stand_pat"][i])
            if node.ply == MAX_PLY:
                self.finish(node, stand_pat)
                continue
            node.captures_only = node.depth == 0 and not node.in_check
            if node.captures_only:
                node.best = stand_pat
                if node.best >= node.beta:
                    self.finish(node, node.best)
                    continue
                node.alpha = max(node.alpha, node.best)
            else:
                node.best = -INF
            self.active.append(node)
            self.advance(node)

    # --- results -----------------------------------------------------------------------------

    def advance(self, node):
        """Take the children's results in generation order as far as they are known with the
        window the sequential search would have given them (RETURN)."""
        while not node.done:
            if node.next == node.count:
                if node.count == 0 and not node.captures_only:
                    self.finish(node, -(MATE - node.ply) if node.in_check else 0)
                else:
                    self.finish(node, node.best)
                return
            result = node.results.get(node.next)
            if result is None or result[0] != node.alpha:
                return
            _, value, nodes = result
            node.nodes += nodes
            score = -value
            if score > node.best:
                node.best = score
                node.best_move = int(node.moves[node.next])
                if score > node.alpha:
                    node.alpha = score
                    if score >= node.beta:
                        self.finish(node, node.best)
                        return
            node.next += 1

    def finish(self, node, value):
        node.done = True
        if node.parent is None:
            self.scores[node.slot] = value
            self.best_moves[node.slot] = node.best_move
            self.node_counts[node.slot] = node.nodes
            return
        self.deliver(node.parent, node.index, node.key_alpha, value, node.nodes)

    def deliver(self, node, index, alpha, value, nodes):
        if node.running.get(index) == alpha:
            del node.running[index]
        node.results[index] = (alpha, value, nodes)
        if node.live():
            self.advance(node)

    # --- rounds ------------------------------------------------------------------------------

    def wanted(self, node):
        """The children to start now: the next one alone until the first child is known
        (young brothers wait), then every remaining child not already known or under way
        with the current alpha."""
        last = node.next + 1 if node.next == 0 and not self.eager else node.count
        for index in range(node.next, last):
            known = node.results.get(index)
            if (known is None or known[0] != node.alpha) and node.running.get(index) != node.alpha:
                yield index

    def round(self):
        """One launch of every child job that can start; False when nothing is left to do."""
        self.active = [n for n in self.active if not n.done and n.live()]
        launches = [(node, index) for node in self.active for index in self.wanted(node)]
        if not launches:
            return False
        self.rounds += 1
        self.jobs += len(launches)
        positions = np.array([node.children[index] for node, index in launches])
        params = np.array([(max(node.depth - 1, 0), -node.beta, -node.alpha, node.ply + 1)
                           for node, _ in launches], dtype=np.int32)
        for node, index in launches:
            node.running[index] = node.alpha
        raw = self.backend.run_search(positions, params, node_budget=self.child_budget)
        given_up = []
        for k, (node, index) in enumerate(launches):
            nodes = int(raw["nodes"][k])
            if nodes == 0:
                given_up.append(_Node(positions[k], int(params[k, 0]), int(params[k, 1]),
                                      int(params[k, 2]), node.ply + 1, parent=node, index=index))
            else:
                self.deliver(node, index, int(-params[k, 2]), int(raw["scores"][k]), nodes)
        self.enter([n for n in given_up if n.live()])
        return True


def search_split(backend, positions, params, budget=SPLIT_BUDGET, child_budget=CHILD_BUDGET,
                 eager=False):
    """``backend.run_search`` with long jobs split (module docstring): the same scores, best
    moves and node counts, with ``last_run`` telling how much was split. ``eager`` starts all
    children of a split node at once instead of its first child alone: fewer rounds, but far
    more work thrown away (on the H100 benchmark nine times the child jobs: slower)."""
    if budget <= 0 or child_budget <= 0:
        raise ValueError("node budgets must be positive")
    raw = backend.run_search(positions, params, node_budget=budget)
    first = dict(backend.last_run)
    given_up = np.flatnonzero(raw["nodes"] == 0)
    out = {"scores": raw["scores"].copy(), "best_moves": raw["best_moves"].copy(),
           "nodes": raw["nodes"].copy()}
    split = _Split(backend, (out["scores"], out["best_moves"], out["nodes"]), child_budget, eager)
    split.enter([_Node(positions[j], int(params[j, 0]), int(params[j, 1]), int(params[j, 2]),
                       int(params[j, 3]), slot=int(j)) for j in given_up])
    while split.round():
        pass
    if (out["nodes"] == 0).any():
        raise AssertionError("a split job was left without a result")
    backend.last_run = dict(first, split_jobs=int(len(given_up)), split_nodes=split.splits,
                            split_rounds=split.rounds, split_child_jobs=split.jobs,
                            nodes=int(out["nodes"].sum()))
    return out
