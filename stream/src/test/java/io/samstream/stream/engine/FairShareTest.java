package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link FairShare} with made-up costs: no clock, no threads, exact outcomes. */
class FairShareTest {

    /**
     * A model that takes one frame at a time (the CPU path): each backlogged member sends whenever the share lets
     * it, frames are served in the order sent, each costs its member's step cost.
     */
    private static Map<String, long[]> simulate(FairShare share, Map<String, Long> stepCost, long modelTime) {
        Map<String, FairShare.Member> members = new HashMap<>();
        Map<String, long[]> used = new HashMap<>(); // {model time, frames}
        for (String id : stepCost.keySet()) {
            members.put(id, share.join(id));
            used.put(id, new long[2]);
        }
        ArrayDeque<String> queue = new ArrayDeque<>();
        long now = 0;
        while (now < modelTime) {
            // Each member with room (at most 2 frames queued, as the hub's buffers) sends while it may.
            for (String id : stepCost.keySet()) {
                while (queue.stream().filter(id::equals).count() < 2 && members.get(id).tryGo(() -> {})) {
                    members.get(id).sent();
                    queue.add(id);
                }
            }
            String next = queue.poll();
            long c = stepCost.get(next);
            now += c;
            used.get(next)[0] += c;
            used.get(next)[1]++;
            members.get(next).done(c);
        }
        return used;
    }

    @Test
    void backloggedStreamsGetEqualModelTimeWhateverTheirStepCost() {
        Map<String, long[]> used = simulate(new FairShare(), Map.of("light", 1_000_000L, "heavy", 20_000_000L),
                4_000_000_000L);
        long light = used.get("light")[0], heavy = used.get("heavy")[0];
        double ratio = (double) light / heavy;
        assertTrue(ratio > 0.95 && ratio < 1.05, "equal model time: light " + light + " ns, heavy " + heavy + " ns");
        // So the light stream steps 20 times as often as the heavy one.
        assertTrue(used.get("light")[1] > 18 * used.get("heavy")[1], used.get("light")[1] + " light frames, "
                + used.get("heavy")[1] + " heavy");
    }

    @Test
    void theUnsharedMemberOfKalmanLanesIsNeverHeldBack() {
        for (int i = 0; i < 3; i++) {
            FairShare.UNSHARED.sent();
            FairShare.UNSHARED.done(1_000_000_000);
            assertTrue(FairShare.UNSHARED.tryGo(() -> {}));
        }
        assertEquals(0, FairShare.UNSHARED.tag(), "nothing counted");
    }

    @Test
    void aLoneHeavyStreamIsNeverHeldBack() {
        FairShare share = new FairShare();
        FairShare.Member heavy = share.join("heavy");
        for (int i = 0; i < 1000; i++) {
            assertTrue(heavy.tryGo(() -> {}), "step " + i);
            heavy.sent();
            heavy.sent();
            heavy.done(50_000_000);
            heavy.done(50_000_000);
        }
        assertEquals(100_000_000_000L, heavy.tag(), "charged what it used, exactly");
    }

    @Test
    void anIdleStreamDoesNotHoldABusyOneBack() {
        FairShare share = new FairShare();
        FairShare.Member light = share.join("light");
        FairShare.Member heavy = share.join("heavy");
        light.sent();
        light.done(1_000_000);
        // The light stream waits for its camera: neither waiting at the gate nor in the model.
        for (int i = 0; i < 10; i++) {
            assertTrue(heavy.tryGo(() -> {}), "work-conserving: step " + i);
            heavy.sent();
            heavy.done(30_000_000);
        }
    }

    @Test
    void aWaiterIsWokenExactlyWhenTheOthersCatchUp() {
        FairShare share = new FairShare();
        FairShare.Member light = share.join("light");
        FairShare.Member heavy = share.join("heavy");
        heavy.sent();
        heavy.done(10_000_000);
        light.sent();
        light.done(3_000_000); // its estimate: 3 ms a step
        light.sent(); // in the model, charged up to 6 ms
        AtomicInteger woken = new AtomicInteger();
        assertFalse(heavy.tryGo(woken::incrementAndGet), "10 ms used against 6: held back");
        assertTrue(light.tryGo(() -> {}), "the light stream may go on");
        light.sent(); // 9 ms
        light.done(3_000_000);
        assertEquals(0, woken.get(), "9 ms of 10: still behind");
        light.sent(); // 12 ms
        assertEquals(1, woken.get(), "woken by the charge that put the light stream ahead");
        assertTrue(heavy.tryGo(() -> {}));
    }

    @Test
    void aRemovedStreamFreesItsShareAtOnce() {
        FairShare share = new FairShare();
        FairShare.Member light = share.join("light");
        FairShare.Member heavy = share.join("heavy");
        heavy.sent();
        heavy.done(50_000_000);
        light.sent();
        AtomicInteger woken = new AtomicInteger();
        assertFalse(heavy.tryGo(woken::incrementAndGet));
        light.leave(); // its frame still in the model holds no one back any more
        assertEquals(1, woken.get());
        assertEquals(1, share.members());
        assertTrue(heavy.tryGo(() -> {}));
        light.done(1_000_000); // its frame finishing after it left changes nothing
        assertTrue(light.tryGo(() -> {}), "a member that left is never held back");
    }

    @Test
    void anIdleStreamComesBackWithoutHoardedCredit() {
        FairShare share = new FairShare();
        FairShare.Member light = share.join("light");
        FairShare.Member heavy = share.join("heavy");
        light.sent();
        light.done(1_000_000);
        for (int i = 0; i < 100; i++) { // the light stream idle for 100 heavy steps (2 s)
            heavy.sent();
            heavy.done(20_000_000);
        }
        heavy.sent(); // in the model: started at 2000 ms, charged to 2020 ms
        assertTrue(light.tryGo(() -> {}));
        assertEquals(2_000_000_000L, light.tag(), "back at the lane's virtual time, not 1999 ms behind");
        // So it goes ahead of the heavy stream for one heavy step (20 ms of 1 ms steps), not for 2 s.
        int lightSteps = 0;
        while (lightSteps < 5000 && light.tryGo(() -> {})) {
            light.sent();
            light.done(1_000_000);
            lightSteps++;
        }
        assertEquals(21, lightSteps, "from 2000 ms up to the heavy stream's 2020 ms");
    }
}
