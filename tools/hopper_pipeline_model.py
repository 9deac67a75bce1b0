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

TMA GEMM (gemm_sm90_tma.cuh; the sparse one, gemm_sparse_sm90_tma.cuh, feeds its slots the same way): one producer
thread (for each k tile g: from the STAGES-th on, wait empty[s] for use u - 1; arrive.expect_tx(full[s], A + W
bytes); issue the copies of A and W, each landing later in any order and completing its bytes on full[s]); two
consumer warpgroups of W warps (wait full[s] for use u, issue the stage's MMAs (complete later), wgmma.wait_group 1,
lane 0 releases the previous slot on empty; after the tile's last k tile wait_group 0 and release it). Several
output tiles per CTA continue the same k-tile count g. (The two-CTA cluster variant lost its benchmark and was
removed, with its model: see bench/results.)

The v1 protocol (cp.async producers, gemm_sm90_mainloop.cuh; used by gemm_sm90.cuh, gemm_sparse_sm90.cuh,
attention_sm90.cuh and sdpa_sm90.cuh), modelled as attention (one CTA): `producers` producer threads (for tile
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


def run_tma_gemm(rng, stages, k_tiles, tiles, warps=2, bug=None):
    """One CTA walking `tiles` output tiles of `k_tiles` k tiles each."""
    total = k_tiles * tiles
    a_bytes, w_bytes = 2, 2
    stage_bytes = a_bytes + w_bytes - (1 if bug == "short_tx" else 0)
    full = [Barrier(1) for _ in range(stages)]
    empty = [Barrier(2 * warps) for _ in range(stages)]
    landed = [{"A": None, "W": None} for _ in range(stages)]
    reading = [0] * stages
    prod = {"g": 0, "copies": []}  # copies: (g, s, part, bytes)
    cons = [{"g": 0, "kt": 0, "mmas": [], "step": "wait", "prev": None} for _ in range(2 * warps)]

    def done():
        return prod["g"] == total and not prod["copies"] and all(
            st["g"] == total and st["step"] == "wait" and not st["mmas"] for st in cons)

    steps = 0
    while True:
        acts = []
        g = prod["g"]
        if g < total:
            s, u = g % stages, g // stages
            # Mutation "early": skip the wait for the second use (u == 1) of slot 0.
            if g < stages or (bug == "early" and s == 0 and u == 1) or empty[s].try_wait(u - 1):
                acts.append(("issue", None))
        for i in range(len(prod["copies"])):
            acts.append(("land", i))
        for w, cw in enumerate(cons):
            if cw["mmas"]:
                acts.append(("mma_done", w))
            g = cw["g"]
            # Only steps that can make progress (a wait that would fail is no action: deadlocks show).
            ready = {"wait": g < total and full[g % stages].try_wait(g // stages),
                     "wait_group1": len(cw["mmas"]) <= 1, "wait_group0": not cw["mmas"]}[cw["step"]]
            if ready:
                acts.append(("cons", w))
        if done():
            return steps
        if not acts:
            raise AssertionError(f"deadlock: stages={stages} k_tiles={k_tiles} tiles={tiles}")
        kind, i = rng.choice(acts)
        steps += 1
        if kind == "issue":
            g = prod["g"]
            s = g % stages
            full[s].arrive(stage_bytes)          # arrive.expect_tx, then the two copies
            prod["copies"].append((g, s, "A", a_bytes))
            prod["copies"].append((g, s, "W", w_bytes))
            prod["g"] += 1
        elif kind == "land":
            g, s, part, n = prod["copies"].pop(i)
            assert reading[s] == 0, f"copy of k tile {g} landed in slot {s} while an MMA reads it"
            landed[s][part] = g // stages
            full[s].complete_tx(n)
        elif kind == "mma_done":
            s = cons[i]["mmas"].pop(0)
            reading[s] -= 1
        else:
            st = cons[i]
            g = st["g"]
            s, u = g % stages, g // stages
            if st["step"] == "wait":
                if full[s].try_wait(u):
                    assert all(x == u for x in landed[s].values()), f"slot {s} holds {landed[s]}, the MMA expects use {u}"
                    st["mmas"].append(s)
                    reading[s] += 1
                    st["step"] = "wait_group1"
            elif st["step"] == "wait_group1":
                if len(st["mmas"]) <= 1:
                    if st["kt"] > 0:
                        empty[st["prev"]].arrive()   # the previous k tile's slot: its MMAs are done
                    st["prev"] = s
                    st["g"] += 1
                    st["kt"] += 1
                    st["step"] = "wait_group0" if st["kt"] == k_tiles else "wait"
            elif st["step"] == "wait_group0":
                if not st["mmas"]:
                    empty[st["prev"]].arrive()
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
    for bug in ["early", "short_tx"]:
        expect_caught(f"TMA GEMM {bug}", lambda r: run_tma_gemm(r, r.choice([2, 3, 4]), r.choice([3, 5, 9]),
                                                                r.choice([1, 2]), bug=bug), rng)
    for bug in ["no_wait_group", "count_all"]:
        expect_caught(bug, lambda r: run_attention(r, r.choice([3, 4, 5]), r.choice([4, 9, 13]), r.choice([1, 2]),
                                                   bug=bug), rng)
    print("mutants caught: TMA GEMM: early refill, short expect_tx; v1 (attention): full arrival before the copies "
          "landed, empty count over inactive warpgroups")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = random.Random(3)
    mutants(rng)
    steps = 0
    for _ in range(runs):
        stages = rng.choice([2, 3, 4, 6])
        k_tiles = max(1, rng.choice([1, 2, 3, stages - 1, stages, stages + 1, 2 * stages + 1, 12]))
        steps += run_tma_gemm(rng, stages, k_tiles, rng.choice([1, 2, 4]))
    for _ in range(runs):
        stages = rng.choice([2, 3, 4, 5])   # 2 (LAG 0): sdpa_sm90.cuh
        n_tiles = rng.choice([0, 1, 2, 3, stages - 2, stages, stages + 1, 2 * stages + 3, 33])   # 0: an empty key split
        steps += run_attention(rng, stages, n_tiles, rng.choice([1, 2, 3]))
    print(f"ok: {2 * runs} random interleavings ({steps} steps): TMA GEMM, v1 protocol (attention), "
          "no deadlock, no phase ambiguity, no slot overwritten while read, no stale slot read")


if __name__ == "__main__":
    main()
