package io.samstream.stream.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Decides when each stream of one GPU lane may hand its next frame to the batcher, so that at saturation every
 * active stream gets an equal share of model time (start-time fair queuing on measured cost), while a lane with
 * one busy stream stays work-conserving.
 *
 * <p>Each member has a virtual tag: the model time (nanoseconds) it has been charged. A frame sent is charged the
 * member's estimate of one step (a moving average of what its steps measured), corrected to the measured cost when
 * the step is done ({@link Member#done}). A member may send when no other <em>active</em> member (one waiting to
 * send or with frames in the model) has a smaller tag, so a stream whose steps cost ten times more sends a tenth as
 * often. A member that was idle comes back at the lane's virtual time (the start tag of the latest frame sent), so
 * idling earns no credit beyond about one step of the others. A member that leaves (stream removed, ended, failed)
 * stops counting at once. No clock is read here: the costs come from the caller, so this is testable exactly.
 */
final class FairShare {
    /** A member that is never held back, for lanes without fair sharing (kalman mode). */
    static final Member UNSHARED = new FairShare().new Member("unshared", true);

    private final List<Member> members = new ArrayList<>();
    /** The start tag of the latest frame sent: where an idle member comes back. */
    private long virtualTime;

    /** A new member (a stream's run on this lane), its tag at the lane's virtual time. */
    synchronized Member join(String id) {
        Member m = new Member(id, false);
        m.tag = virtualTime;
        members.add(m);
        return m;
    }

    synchronized int members() {
        return members.size();
    }

    /** The lane's virtual time, for tests and logs. */
    synchronized long virtualTime() {
        return virtualTime;
    }

    private boolean mayGo(Member m) {
        for (Member o : members) {
            if (o != m && o.active() && o.tag < m.tag) {
                return false;
            }
        }
        return true;
    }

    /** Wakes the waiting members that may go now; their callbacks run outside the lock. */
    private void wakeReady() {
        List<Runnable> wake = new ArrayList<>();
        synchronized (this) {
            for (Member m : members) {
                if (m.waiter != null && mayGo(m)) {
                    wake.add(m.waiter);
                    m.waiter = null;
                }
            }
        }
        wake.forEach(Runnable::run);
    }

    /** One stream's place in the share. */
    final class Member {
        private final String id;
        private final boolean unshared;
        private long tag;
        private int inFlight;
        /** Called once when it may go; null when not waiting. */
        private Runnable waiter;
        private boolean left;
        /** Nanoseconds of one step, averaged; 0 until the first is measured. */
        private long estimate;
        /** The estimates charged for the frames in flight, oldest first (a stream's frames finish in order). */
        private final ArrayDeque<Long> charged = new ArrayDeque<>();

        private Member(String id, boolean unshared) {
            this.id = id;
            this.unshared = unshared;
        }

        private boolean active() {
            return waiter != null || inFlight > 0;
        }

        /** An idle member comes back at the lane's virtual time: no credit for the time it was idle. */
        private void catchUp() {
            if (!active()) {
                tag = Math.max(tag, virtualTime);
            }
        }

        /**
         * True when it may send its next frame now; otherwise {@code wake} is called once when it may (then ask
         * again). A member that left is never held back.
         */
        boolean tryGo(Runnable wake) {
            if (unshared) {
                return true;
            }
            synchronized (FairShare.this) {
                if (left) {
                    return true;
                }
                catchUp();
                if (mayGo(this)) {
                    waiter = null;
                    return true;
                }
                waiter = wake;
            }
            // Its waiting may hold others' turn back no more: nothing changes for them, so no wake-up here.
            return false;
        }

        /** A frame left for the batcher: charged its estimated cost until {@link #done} measures it. */
        void sent() {
            if (unshared) {
                return;
            }
            synchronized (FairShare.this) {
                if (left) {
                    return;
                }
                catchUp();
                virtualTime = Math.max(virtualTime, tag);
                charged.add(estimate);
                tag += estimate;
                inFlight++;
            }
            wakeReady();
        }

        /** Its oldest frame in the model is done; it cost {@code nanos} of model time (0: it needed no step). */
        void done(long nanos) {
            if (unshared) {
                return;
            }
            synchronized (FairShare.this) {
                if (left || inFlight == 0) {
                    return;
                }
                long was = charged.isEmpty() ? 0 : charged.poll();
                tag += Math.max(0, nanos) - was;
                inFlight--;
                if (nanos > 0) {
                    estimate = estimate == 0 ? nanos : (3 * estimate + nanos) / 4;
                }
            }
            wakeReady();
        }

        /** It leaves the share at once (removed, ended, failed); the others are no longer held back by it. */
        void leave() {
            if (unshared) {
                return;
            }
            synchronized (FairShare.this) {
                if (left) {
                    return;
                }
                left = true;
                waiter = null;
                members.remove(this);
            }
            wakeReady();
        }

        /** Its tag: the model time charged to it, in the lane's virtual nanoseconds. */
        long tag() {
            synchronized (FairShare.this) {
                return tag;
            }
        }

        @Override
        public String toString() {
            return "FairShare.Member(" + id + ")";
        }
    }
}
