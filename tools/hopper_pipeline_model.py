#!/usr/bin/env python3
"""Random-interleaving model check of the mbarrier protocols of the Hopper kernels that nobody can run without the GPU.

    python3 tools/hopper_pipeline_model.py [runs]

Each kernel's synchronisation is simulated step by step in random orders (only steps that can make progress are
chosen, so a state with none left before the end is a deadlock), and each model must also catch a set of broken
variants (mutants) of its protocol.

mbarrier: expected arrival count, pending arrivals, transaction count (may run negative: bytes can land before
the arrival that expects them), completed phases c. A phase completes when no arrival is pending and the
transaction count is zero. try_wait.parity(P) succeeds iff (c & 1) != P; the check fails on a success for any
phase but the one just completed (parity ambiguity) and on a wait for a phase already skipped.

GEMM v2 (gemm_sm90_v2.cuh): P producer threads (each: wait empty[s] for use u - 1 from the STAGES-th k tile on,
issue its copies of the stage, cp.async.mbarrier.arrive.noinc on full[s]; its copies land later, in any order,
and its asynchronous arrival fires once all of its earlier copies have landed); two consumer warpgroups of W
warps (wait full[s] for use u, issue the stage's MMAs (complete later), wgmma.wait_group 1, lane 0 releases the
previous slot on empty; after the tile's last k tile wait_group 0 and release it). Several output tiles per CTA
continue the same k-tile count g.

TMA GEMM (gemm_sm90_tma.cuh, cluster = 1 or 2 CTAs): per CTA one producer thread (for each k tile g: from the
STAGES-th on, wait empty[s] for use u - 1; arrive.expect_tx(full[s], A + W bytes); issue the copy of A into its
own slot and the copy of W (cluster 2: its half, multicast into both CTAs' slots), each landing later in any
order and completing its bytes on the destination CTA's full[s]); the consumers as in v2, a release arriving on
empty of every CTA of the cluster. At the end the CTAs of a cluster meet at a cluster barrier before exiting: a
remote arrival on an exited CTA fails.

Attention (attention_sm90.cuh, one CTA): `producers` producer threads with gemm_sm90.cuh's v1 protocol (for tile
t: from the STAGES-th on wait empty[s]; issue the thread's copies, which land later; from t >= LAG = STAGES - 2
wait until its copies of tile t - LAG have landed (cp.async.wait_group LAG) and arrive on full[(t - LAG) %
STAGES]; at the end wait for all and arrive for the last tiles); `active` consumer warpgroups (wait full[s]; both
products read the slot; after both, lane 0 of each warp arrives on empty[s], whose count is 4 warps x active).
"""
import random
import sys


class Barrier:
    def __init__(self, count):
        self.count, self.pending, self.tx, self.completed = count, count, 0, 0

    def _settle(self):
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.count

    def arrive(self, expect_tx=0):
        assert self.pending > 0, "more arrivals than expected"
        self.tx += expect_tx
        self.pending -= 1
        self._settle()

    def complete_tx(self, n):
        self.tx -= n
        if self.pending == 0:   # only the bytes were missing
            assert self.tx >= 0, "more bytes landed than the phase expected"
            self._settle()

    def try_wait(self, use):
        ok = (self.completed & 1) != (use & 1)
        if ok:
            assert self.completed == use + 1, f"wait for phase {use} succeeded at {self.completed} completed phases"
        else:
            assert self.completed == use, f"waiting for phase {use} with {self.completed} completed (skipped)"
        return ok


def run_v2_gemm(rng, stages, k_tiles, tiles, producers=3, warps=2, bug=None):
    total = k_tiles * tiles
    full = [Barrier(producers) for _ in range(stages)]
    empty = [Barrier(2 * warps) for _ in range(stages)]
    landed = [[None] * producers for _ in range(stages)]    # use whose copy of thread p is in slot s
    reading = [0] * stages                                  # MMAs in flight on slot s
    # producer thread: next g, copies in flight [(g, s)], asynchronous arrivals pending [(g, s)]
    prod = [{"g": 0, "copies": [], "arrivals": []} for _ in range(producers)]
    cons = [{"g": 0, "kt": 0, "mmas": [], "step": "wait", "prev": None} for _ in range(2 * warps)]

    steps = 0
    while True:
        acts = []
        for p, st in enumerate(prod):
            g = st["g"]
            if g < total:
                s, u = g % stages, g // stages
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
            g = st["g"]
            ready = {"wait": g < total and full[g % stages].try_wait(g // stages),
                     "wait_group1": len(st["mmas"]) <= 1 or bug == "nowait", "wait_group0": not st["mmas"]}[st["step"]]
            if ready:
                acts.append(("cons", w))
        done = all(st["g"] == total and not st["copies"] and not st["arrivals"] for st in prod) and all(
            st["g"] == total and st["step"] == "wait" and not st["mmas"] for st in cons)
        if done:
            return steps
        if not acts:
            raise AssertionError(f"deadlock: v2 stages={stages} k_tiles={k_tiles} tiles={tiles}")
        kind, i = rng.choice(acts)
        steps += 1
        if kind == "issue":
            st = prod[i]
            g = st["g"]
            st["copies"].append((g, g % stages))
            st["arrivals"].append((g, g % stages))
            st["g"] += 1
        elif kind == "land":
            st = prod[i]
            g, s = st["copies"].pop(rng.randrange(len(st["copies"])))   # copies land in any order
            assert reading[s] == 0, f"copy of k tile {g} landed in slot {s} while an MMA reads it"
            landed[s][i] = g // stages
        elif kind == "async_arrive":
            _, s = prod[i]["arrivals"].pop(0)
            full[s].arrive()
        elif kind == "mma_done":
            s = cons[i]["mmas"].pop(0)   # wgmma groups complete in order
            reading[s] -= 1
        else:
            st = cons[i]
            g = st["g"]
            s, u = g % stages, g // stages
            if st["step"] == "wait":
                assert all(x == u for x in landed[s]), f"slot {s} holds {landed[s]}, MMA expects use {u}"
                st["mmas"].append(s)
                reading[s] += 1
                st["step"] = "wait_group1"
            elif st["step"] == "wait_group1":
                if bug == "release_current":
                    empty[s].arrive()
                elif st["kt"] > 0:
                    empty[st["prev"]].arrive()
                st["prev"] = s
                st["g"] += 1
                st["kt"] += 1
                st["step"] = "wait_group0" if st["kt"] == k_tiles else "wait"
            else:
                if bug != "release_current":
                    empty[st["prev"]].arrive()
                st["kt"] = 0
                st["step"] = "wait"


def run_tma_gemm(rng, stages, k_tiles, tiles, cluster, warps=2, bug=None):
    """One cluster of `cluster` CTAs walking `tiles` output tiles of `k_tiles` k tiles each."""
    total = k_tiles * tiles
    a_bytes, w_bytes = 2, 2                                  # W in halves of 1 when shared by two CTAs
    stage_bytes = a_bytes + w_bytes - (1 if bug == "short_tx" else 0)
    full = [[Barrier(1) for _ in range(stages)] for _ in range(cluster)]
    empty_count = 2 * warps * (1 if bug == "local_release" else cluster)
    empty = [[Barrier(empty_count) for _ in range(stages)] for _ in range(cluster)]
    parts = ["A"] + (["W"] if cluster == 1 else ["W0", "W1"])
    landed = [[{p: None for p in parts} for _ in range(stages)] for _ in range(cluster)]
    reading = [[0] * stages for _ in range(cluster)]
    prod = [{"g": 0, "copies": []} for _ in range(cluster)]  # copies: (g, s, dest cta, part, bytes)
    cons = [[{"g": 0, "kt": 0, "mmas": [], "step": "wait", "prev": None} for _ in range(2 * warps)]
            for _ in range(cluster)]
    exited = [False] * cluster

    def release(c, s):
        targets = [c] if bug == "local_release" else range(cluster)
        for d in targets:
            assert not exited[d], f"CTA {c} arrived on the empty barrier of CTA {d}, which has exited"
            empty[d][s].arrive()

    def cta_done(c):
        return prod[c]["g"] == total and all(st["g"] == total and st["step"] == "wait" and not st["mmas"]
                                             for st in cons[c])

    steps = 0
    while True:
        acts = []
        for c in range(cluster):
            if exited[c]:
                continue
            st = prod[c]
            g = st["g"]
            if g < total:
                s, u = g % stages, g // stages
                if g < stages or (bug == "early" and s == 0 and u == 1) or empty[c][s].try_wait(u - 1):
                    acts.append(("issue", c, None))
            for i in range(len(st["copies"])):
                acts.append(("land", c, i))
            for w, cw in enumerate(cons[c]):
                if cw["mmas"]:
                    acts.append(("mma_done", c, w))
                g = cw["g"]
                # Only steps that can make progress (a wait that would fail is no action: deadlocks show).
                ready = {"wait": g < total and full[c][g % stages].try_wait(g // stages),
                         "wait_group1": len(cw["mmas"]) <= 1, "wait_group0": not cw["mmas"]}[cw["step"]]
                if ready:
                    acts.append(("cons", c, w))
            # Without the final cluster barrier a CTA leaves as soon as its own work is done.
            if bug == "no_cluster_sync" and cta_done(c) and not st["copies"]:
                acts.append(("exit", c, None))
        if all(cta_done(c) and not prod[c]["copies"] for c in range(cluster)):
            return steps   # every CTA at the cluster barrier: they leave together
        if not acts:
            raise AssertionError(f"deadlock: cluster={cluster} stages={stages} k_tiles={k_tiles} tiles={tiles}")
        kind, c, i = rng.choice(acts)
        steps += 1
        if kind == "exit":
            exited[c] = True
        elif kind == "issue":
            st = prod[c]
            g = st["g"]
            s = g % stages
            full[c][s].arrive(stage_bytes)
            st["copies"].append((g, s, c, "A", a_bytes))
            if cluster == 1:
                st["copies"].append((g, s, c, "W", w_bytes))
            else:
                for d in range(cluster):   # this CTA's half of W, multicast
                    st["copies"].append((g, s, d, f"W{c}", w_bytes // 2))
            st["g"] += 1
        elif kind == "land":
            g, s, d, part, n = prod[c]["copies"].pop(i)
            assert not exited[d], f"a copy landed in CTA {d}, which has exited"
            assert reading[d][s] == 0, f"copy of k tile {g} landed in CTA {d} slot {s} while an MMA reads it"
            landed[d][s][part] = g // stages
            full[d][s].complete_tx(n)
        elif kind == "mma_done":
            s = cons[c][i]["mmas"].pop(0)
            reading[c][s] -= 1
        else:
            st = cons[c][i]
            g = st["g"]
            s, u = g % stages, g // stages
            if st["step"] == "wait":
                if full[c][s].try_wait(u):
                    assert all(x == u for x in landed[c][s].values()), \
                        f"CTA {c} slot {s} holds {landed[c][s]}, the MMA expects use {u}"
                    st["mmas"].append(s)
                    reading[c][s] += 1
                    st["step"] = "wait_group1"
            elif st["step"] == "wait_group1":
                if len(st["mmas"]) <= 1:
                    if st["kt"] > 0:
                        release(c, st["prev"])
                    st["prev"] = s
                    st["g"] += 1
                    st["kt"] += 1
                    st["step"] = "wait_group0" if st["kt"] == k_tiles else "wait"
            elif st["step"] == "wait_group0":
                if not st["mmas"]:
                    release(c, st["prev"])
                    st["kt"] = 0
                    st["step"] = "wait"


def run_attention(rng, stages, n_tiles, active, producers=3, warps=4, bug=None):
    lag = stages - 2
    full = [Barrier(producers) for _ in range(stages)]
    empty = [Barrier(warps * (3 if bug == "count_all" else active)) for _ in range(stages)]
    landed = [[None] * producers for _ in range(stages)]
    reading = [0] * stages
    prod = [{"t": 0, "copies": [], "arrived": 0, "phase": "issue"} for _ in range(producers)]
    cons = [{"t": 0, "step": "wait"} for _ in range(warps * active)]

    def landed_up_to(st, t):   # cp.async.wait_group: every copy of tiles <= t has landed
        return all(tc > t for tc, _ in st["copies"])

    steps = 0
    while True:
        acts = []
        for p, st in enumerate(prod):
            t = st["t"]
            if st["phase"] == "issue" and t < n_tiles:
                s, u = t % stages, t // stages
                if t < stages or empty[s].try_wait(u - 1):
                    acts.append(("issue", p))
            elif st["phase"] == "arrive":
                j = st["arrived"]
                ready = bug == "no_wait_group" or landed_up_to(st, j)
                if ready:
                    acts.append(("arrive", p))
            if st["copies"]:
                acts.append(("land", p))
        for w, st in enumerate(cons):
            t = st["t"]
            if t < n_tiles and (st["step"] == "read" or full[t % stages].try_wait(t // stages)):
                acts.append(("cons", w))
        if all(st["t"] == n_tiles and st["arrived"] == n_tiles and not st["copies"] for st in prod) and all(
                st["t"] == n_tiles for st in cons):
            return steps
        if not acts:
            raise AssertionError(f"deadlock: stages={stages} tiles={n_tiles} active={active}")
        kind, i = rng.choice(acts)
        steps += 1
        if kind == "issue":
            st = prod[i]
            t = st["t"]
            st["copies"].append((t, t % stages))
            st["t"] += 1
            # From t >= LAG the thread then arrives for tile t - LAG (after its wait_group); after the last tile,
            # for every tile not yet arrived for.
            if st["t"] > lag or st["t"] == n_tiles:
                st["phase"] = "arrive"
        elif kind == "arrive":
            st = prod[i]
            j = st["arrived"]
            full[j % stages].arrive()
            st["arrived"] += 1
            behind = st["t"] - st["arrived"]
            if st["t"] < n_tiles and behind <= lag:
                st["phase"] = "issue"
            elif st["arrived"] == n_tiles:
                st["phase"] = "done"
        elif kind == "land":
            st = prod[i]
            t, s = st["copies"].pop(rng.randrange(len(st["copies"])))
            assert reading[s] == 0, f"copy of tile {t} landed in slot {s} while it is read"
            landed[s][i] = t // stages
        else:
            st = cons[i]
            t = st["t"]
            s, u = t % stages, t // stages
            if st["step"] == "wait":
                if full[s].try_wait(u):
                    assert all(x == u for x in landed[s]), f"slot {s} holds {landed[s]}, the warp expects use {u}"
                    reading[s] += 1
                    st["step"] = "read"
            else:   # both products done (wgmma.wait_group 0): release
                reading[s] -= 1
                empty[s].arrive()
                st["t"] += 1
                st["step"] = "wait"


def expect_caught(name, trial, rng, tries=500):
    for _ in range(tries):
        try:
            trial(rng)
        except AssertionError:
            return
    raise AssertionError(f"mutant {name} was not caught: the model checks too little")


def mutants(rng):
    for bug in ["early", "release_current", "nowait"]:
        expect_caught(f"v2 {bug}", lambda r: run_v2_gemm(r, r.choice([2, 3, 4]), r.choice([3, 5, 9]), r.choice([1, 2]),
                                                         bug=bug), rng)
    for bug in ["early", "short_tx"]:
        for cluster in (1, 2):
            expect_caught(f"{bug} (cluster {cluster})", lambda r: run_tma_gemm(
                r, r.choice([2, 3, 4]), r.choice([3, 5, 9]), r.choice([1, 2]), cluster, bug=bug), rng)
    for bug in ["local_release", "no_cluster_sync"]:
        expect_caught(bug, lambda r: run_tma_gemm(r, r.choice([2, 3, 4]), r.choice([3, 5, 9]), r.choice([1, 2]), 2,
                                                  bug=bug), rng)
    for bug in ["no_wait_group", "count_all"]:
        expect_caught(bug, lambda r: run_attention(r, r.choice([3, 4, 5]), r.choice([4, 9, 13]), r.choice([1, 2]),
                                                   bug=bug), rng)
    print("mutants caught: v2: early refill, release of the slot being read, release before wgmma.wait_group; TMA: "
          "early refill, short expect_tx (both cluster sizes), release only in the own CTA, no final cluster barrier; "
          "attention: full arrival before the copies landed, empty count over inactive warpgroups")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = random.Random(3)
    mutants(rng)
    steps = 0
    for _ in range(runs):
        stages = rng.choice([2, 3, 4, 7])
        k_tiles = max(1, rng.choice([1, 2, 3, stages - 1, stages, stages + 1, 2 * stages + 1, 15]))
        steps += run_v2_gemm(rng, stages, k_tiles, rng.choice([1, 2, 4]))
    for _ in range(runs):
        stages = rng.choice([2, 3, 4, 6])
        k_tiles = max(1, rng.choice([1, 2, 3, stages - 1, stages, stages + 1, 2 * stages + 1, 12]))
        steps += run_tma_gemm(rng, stages, k_tiles, rng.choice([1, 2, 4]), rng.choice([1, 2]))
    for _ in range(runs):
        stages = rng.choice([3, 4, 5])
        n_tiles = rng.choice([1, 2, 3, stages - 2, stages, stages + 1, 2 * stages + 3, 33])
        steps += run_attention(rng, stages, n_tiles, rng.choice([1, 2, 3]))
    print(f"ok: {3 * runs} random interleavings ({steps} steps): GEMM v2, TMA GEMM (1 and 2 CTAs), attention, "
          "no deadlock, no phase ambiguity, no slot overwritten while read, no stale slot read")


if __name__ == "__main__":
    main()
