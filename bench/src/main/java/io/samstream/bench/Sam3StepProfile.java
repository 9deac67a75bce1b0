package io.samstream.bench;

import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.LaunchTimer;
import io.samstream.gpu.cuda.sam3.CudaSam3;
import io.samstream.gpu.sam3.Sam3Backend;
import io.samstream.gpu.sam3.Sam3Decoder;
import io.samstream.gpu.sam3.Sam3Fusion;
import io.samstream.gpu.sam3.Sam3MaskHead;
import io.samstream.gpu.sam3.Sam3Neck;
import io.samstream.gpu.sam3.Sam3Trunk;
import io.samstream.gpu.sam3.video.TrackerPasses;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Where a SAM 3 video step's time goes ({@code Sam3VideoBench --profile N}): the model's parts (the detector
 * backend's trunk, necks, fusion encoder, decoder and mask head, and the tracker passes) wrapped so that each call is
 * timed on the host, with the GPU drained after it ({@link CudaContext#synchronize}) so that a part's asynchronous
 * work is counted in that part and not in whoever waits next. Until {@link #start} the parts run as they are (no
 * timing, no drain), so the benchmark's scenarios before the profile are not slowed; after it the drains serialize
 * what the engine overlaps, so a profile's frames/s is not the benchmark's. What no part covers (the CPU rules,
 * hand-overs between the parts) is the step's time less the parts'. The detector's kernels ({@link CudaSam3}: no CUDA
 * graphs) are timed one by one too ({@link LaunchTimer}).
 */
final class Sam3StepProfile implements AutoCloseable {
    private static final Set<String> UNTIMED = Set.of("close", "describe", "config", "toString", "hashCode", "equals");

    private final CudaContext gpu;
    private final Map<String, long[]> parts = new LinkedHashMap<>(); // name -> {nanos, calls}
    private volatile boolean on;
    /** The detector's GPU parts, when they are {@link CudaSam3}'s: their kernels timed during the profile. */
    private CudaSam3 detector;
    private LaunchTimer timer;

    /** A profile on GPU {@code ordinal} (its primary context, which the model's parts share); -1: on the CPU. */
    Sam3StepProfile(int ordinal) {
        this.gpu = ordinal < 0 ? null : CudaContext.open(ordinal);
    }

    @Override
    public void close() {
        if (gpu != null) {
            gpu.close();
        }
    }

    /** Times from now on (the warm-up is not counted). */
    synchronized void start() {
        parts.clear();
        if (detector != null) {
            timer = new LaunchTimer(gpu);
            detector.timeLaunches(timer);
        }
        on = true;
    }

    /** {@code factory}'s backend with each part timed. */
    Sam3Backend.Factory wrap(Sam3Backend.Factory factory) {
        return (sd, config, pool) -> {
            Sam3Backend b = factory.open(sd, config, pool);
            if (b instanceof CudaSam3 c && gpu != null) {
                detector = c;
            }
            Sam3Trunk trunk = timed(Sam3Trunk.class, b.trunk(), "trunk");
            Sam3Neck neck = timed(Sam3Neck.class, b.neck(), "neck");
            Sam3Neck trackerNeck = b.trackerNeck() == null ? null
                    : timed(Sam3Neck.class, b.trackerNeck(), "tracker neck");
            Sam3Fusion fusion = timed(Sam3Fusion.class, b.fusion(), "fusion encoder");
            Sam3Decoder decoder = timed(Sam3Decoder.class, b.decoder(), "decoder");
            Sam3MaskHead maskHead = timed(Sam3MaskHead.class, b.maskHead(), "mask head");
            return new Sam3Backend() { // closes b itself: its parts may share what b owns
                @Override
                public Sam3Trunk trunk() {
                    return trunk;
                }

                @Override
                public Sam3Neck neck() {
                    return neck;
                }

                @Override
                public Sam3Neck trackerNeck() {
                    return trackerNeck;
                }

                @Override
                public Sam3Fusion fusion() {
                    return fusion;
                }

                @Override
                public Sam3Decoder decoder() {
                    return decoder;
                }

                @Override
                public Sam3MaskHead maskHead() {
                    return maskHead;
                }

                @Override
                public String describe() {
                    return b.describe();
                }

                @Override
                public void close() {
                    b.close();
                }
            };
        };
    }

    /** {@code factory}'s tracker passes, each method timed. */
    TrackerPasses.Factory wrap(TrackerPasses.Factory factory) {
        return (checkpoint, config, cpu) -> timed(TrackerPasses.class, factory.open(checkpoint, config, cpu),
                "tracker");
    }

    /** Adds {@code nanos} to {@code name} (the bench's own spans: a step, a detection). */
    synchronized void add(String name, long nanos) {
        if (on) {
            long[] v = parts.computeIfAbsent(name, k -> new long[2]);
            v[0] += nanos;
            v[1]++;
        }
    }

    /** Drains the GPU (before a span starts, so that it holds only its own work). */
    void drain() {
        if (gpu != null) {
            gpu.synchronize();
        }
    }

    /**
     * "#profile" rows: each part's ms and calls per step, over {@code steps} steps; then "#kernels" rows: the
     * detector's kernels by GPU time per step, longest first. Stops the profile.
     */
    synchronized List<String> rows(long steps) {
        on = false;
        List<String> rows = new ArrayList<>();
        rows.add("#profile\tpart\tms_per_step\tcalls_per_step");
        parts.forEach((name, v) -> rows.add(String.format(Locale.ROOT, "#profile\t%s\t%.2f\t%.2f", name,
                v[0] / 1e6 / steps, (double) v[1] / steps)));
        if (timer != null) {
            detector.timeLaunches(null);
            Map<String, double[]> kernels = timer.drain();
            timer.close();
            timer = null;
            rows.add("#kernels\tdetector kernel\tms_per_step\tlaunches_per_step");
            kernels.entrySet().stream().sorted((a, b) -> Double.compare(b.getValue()[1], a.getValue()[1]))
                    .forEach(e -> rows.add(String.format(Locale.ROOT, "#kernels\t%s\t%.3f\t%.1f", e.getKey(),
                            e.getValue()[1] / steps, e.getValue()[0] / steps)));
        }
        return rows;
    }

    @SuppressWarnings("unchecked")
    private <T> T timed(Class<T> type, T target, String prefix) {
        InvocationHandler h = (proxy, method, args) -> {
            if (!on || UNTIMED.contains(method.getName())) {
                return invoke(method, target, args);
            }
            long t0 = System.nanoTime();
            Object r = invoke(method, target, args);
            drain();
            add(prefix + "." + method.getName(), System.nanoTime() - t0);
            return r;
        };
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h);
    }

    private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
