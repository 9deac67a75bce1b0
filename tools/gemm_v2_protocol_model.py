#!/usr/bin/env python3
"""Random-interleaving model check of the mbarrier protocol of gpu/src/main/cuda/gemm_sm90_v2.cuh.

    python3 tools/gemm_v2_protocol_model.py [runs]

Nobody can run the v2 kernel without the GPU, so this simulates its synchronisation, step by step, in random
orders: P producer threads (each: wait empty[s] with parity phase ^ 1 from the STAGES-th k tile on, issue its
copies of the stage, cp.async.mbarrier.arrive.noinc on full[s]; its copies land later, in any order, and its
asynchronous arrival fires once all of its earlier copies have landed), and two consumer warpgroups of W warps
(each warp: wait full[s] parity phase, issue the stage's MMAs (asynchronous: they complete later),
wgmma.wait_group 1, lane 0 arrives on empty[prev] from the second k tile on; after the tile's last k tile
wait_group 0 and arrive on empty[prev]). Several output tiles per CTA (persistent) continue the same g.

mbarrier: expected count, pending count, completed phases c. try_wait.parity(P) succeeds iff (c & 1) != P. The
check fails on: a deadlock (nothing can move before the end), a successful wait that is not for the phase
just completed (c != u + 1: the parity would be ambiguous), an arrival beyond a phase's expected count, a copy
landing in a slot while an MMA reading it is in flight, an MMA issued on a slot whose landed data is not of
the use it waited for.
"""
import random
import sys


class Barrier:
    def __init__(self, count):
        self.count, self.pending, self.completed = count, count, 0

    def arrive(self):
        self.pending -= 1
        assert self.pending >= 0, "more arrivals than expected"
        if self.pending == 0:
            self.completed += 1
            self.pending = self.count

    def try_wait(self, use):
        ok = (self.completed & 1) != (use & 1)
        if ok:
            assert self.completed == use + 1, f"wait for phase {use} succeeded at {self.completed} completed phases"
        else:
            assert self.completed == use, f"waiting for phase {use} with {self.completed} completed (skipped)"
        return ok


def run(rng, stages, k_tiles, tiles, producers=3, warps=2, bug=None):
    total = k_tiles * tiles
    full = [Barrier(producers) for _ in range(stages)]
    empty = [Barrier(2 * warps) for _ in range(stages)]
    landed = [[None] * producers for _ in range(stages)]    # use whose copy of thread p is in slot s
    reading = [0] * stages                                  # MMAs in flight on slot s

    # producer thread state: next g, copies in flight [(g, s)], asynchronous arrivals pending [(g, s)]
    prod = [{"g": 0, "copies": [], "arrivals": []} for _ in range(producers)]
    # consumer warp state: g, k index in tile, MMA groups in flight [slot], phase of the warp's step
    cons = [{"g": 0, "kt": 0, "mmas": [], "step": "wait", "prev": None} for _ in range(2 * warps)]

    def actions():
        acts = []
        for p, st in enumerate(prod):
            g = st["g"]
            if g < total:
                s, u = g % stages, g // stages
                # The kernel: if (g >= STAGES) mbar_wait(empty(s), phase ^ 1), phase ^ 1 = (u - 1) & 1.
                # Mutation "early": skip the wait for the second use (u == 1) of slot 0.
                if g < stages or (bug == "early" and s == 0 and u == 1) or empty[s].try_wait(u - 1):
                    acts.append(("issue", p))
            if st["copies"]:
                acts.append(("land", p))
            if st["arrivals"]:
                ga, _ = st["arrivals"][0]
                if all(gc > ga for gc, _ in st["copies"]):   # all copies issued before the arrive have landed
                    acts.append(("async_arrive", p))
        for w, st in enumerate(cons):
            if st["mmas"]:
                acts.append(("mma_done", w))
            if st["g"] < total or st["step"] != "wait":
                acts.append(("cons", w))
        return acts

    steps = 0
    while True:
        acts = actions()
        done = all(st["g"] == total and not st["copies"] and not st["arrivals"] for st in prod) and all(
            st["g"] == total and st["step"] == "wait" and not st["mmas"] for st in cons)
        if done:
            return steps
        if not acts:
            raise AssertionError(f"deadlock: stages={stages} k_tiles={k_tiles} tiles={tiles} prod={prod} cons={cons}")
        kind, i = rng.choice(acts)
        steps += 1
        if kind == "issue":
            st = prod[i]
            g = st["g"]
            s = g % stages
            st["copies"].append((g, s))
            st["arrivals"].append((g, s))
            st["g"] += 1
        elif kind == "land":
            st = prod[i]
            g, s = st["copies"].pop(rng.randrange(len(st["copies"])))   # copies land in any order
            assert reading[s] == 0, f"copy of k tile {g} landed in slot {s} while an MMA reads it"
            landed[s][i] = g // stages
        elif kind == "async_arrive":
            g, s = prod[i]["arrivals"].pop(0)
            full[s].arrive()
        elif kind == "mma_done":
            s = cons[i]["mmas"].pop(0)   # wgmma groups complete in order
            reading[s] -= 1
        else:
            st = cons[i]
            g = st["g"]
            s, u = g % stages, g // stages
            if st["step"] == "wait":
                if full[s].try_wait(u):
                    assert all(x == u for x in landed[s]), f"slot {s} holds {landed[s]}, MMA expects use {u}"
                    st["mmas"].append(s)
                    reading[s] += 1
                    st["step"] = "wait_group1"
            elif st["step"] == "wait_group1":
                if len(st["mmas"]) <= 1 or bug == "nowait":
                    if bug == "release_current":
                        empty[s].arrive()
                    elif st["kt"] > 0:
                        empty[st["prev"]].arrive()
                    st["prev"] = s
                    st["g"] += 1
                    st["kt"] += 1
                    st["step"] = "wait_group0" if st["kt"] == k_tiles else "wait"
            elif st["step"] == "wait_group0":
                if not st["mmas"]:
                    if bug != "release_current":
                        empty[st["prev"]].arrive()
                    st["kt"] = 0
                    st["step"] = "wait"


def mutants_fail(rng):
    """The check must catch protocol bugs: each mutant has to fail within a few hundred interleavings."""
    for bug in ["early", "release_current", "nowait"]:
        caught = False
        for _ in range(500):
            stages = rng.choice([2, 3, 4])
            try:
                run(rng, stages, rng.choice([stages + 1, 2 * stages + 1, 9]), rng.choice([1, 2]), bug=bug)
            except AssertionError:
                caught = True
                break
        assert caught, f"mutant {bug} was not caught: the model checks too little"
    print("mutants caught: early refill, release of the slot being read, release before wgmma.wait_group")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rng = random.Random(1)
    mutants_fail(rng)
    n = 0
    for r in range(runs):
        stages = rng.choice([2, 3, 4, 7])
        k_tiles = rng.choice([1, 2, 3, stages - 1, stages, stages + 1, 2 * stages + 1, 15])
        k_tiles = max(1, k_tiles)
        tiles = rng.choice([1, 2, 4])
        n += run(rng, stages, k_tiles, tiles)
    print(f"ok: {runs} random interleavings ({n} steps), no deadlock, no phase ambiguity, no slot overwritten while read")


if __name__ == "__main__":
    main()
