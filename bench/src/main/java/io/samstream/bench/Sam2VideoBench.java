package io.samstream.bench;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.sam2.CudaSam2Tracker;
import io.samstream.gpu.sam2.ObjectPrompt;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * SAM 2.1 video tracking end to end on the GPU ({@link CudaSam2Tracker}, the whole step on the device) at a release's
 * shapes (random weights, input 1024): frames/s per stream and in total for {@code streams x objects} scenarios, each
 * object given a box on frame 0 and tracked from then on. A step is the call a user makes: 8-bit RGB frames of every
 * stream in (already at 1024 x 1024), every object's low-resolution mask, score and pointer back on the host.
 * Wall time over {@code frames} frames of every stream after {@code warmup} (the bank full: every memory shape seen and
 * captured), the median of repeats. {@code --frames-per-step K} (default 1) hands each step K consecutive frames of
 * every stream (a video file or a backlog processed as fast as it goes: the image encoder batched over a stream's
 * frames, up to 8 frames a pass, the memory steps in frame order); the TSV's {@code frames_per_step} column says K,
 * {@code ms_per_step} is the time of one such step and {@code ms_per_frame} the time per frame of a stream. Device memory: the tracker's reservation, its bank bytes per object, and the GPU's memory
 * in use sampled over a long single-stream run ({@code --long-frames}; 18,000 = 10 minutes at 30 frames/s).
 *
 * <pre>java -cp ... io.samstream.bench.Sam2VideoBench OUT.tsv [--models hiera_tiny,hiera_base_plus]
 *      [--scenarios 1x1,1x8,8x1,32x1] [--frames 60] [--warmup 20] [--repeats 3] [--frames-per-step 1]
 *      [--long-frames 18000]</pre>
 * The long run steps one frame at a time whatever K.
 *
 * bench/sam2_torch.py measures Meta's SAM2VideoPredictor on the same GPU (the anchor).
 */
public final class Sam2VideoBench {
    private Sam2VideoBench() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: Sam2VideoBench OUT.tsv [--models a,b] [--scenarios 1x1,1x8,8x1,32x1] "
                    + "[--frames 60] [--warmup 20] [--repeats 3] [--frames-per-step 1] [--long-frames 18000]");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        List<String> models = List.of("hiera_tiny", "hiera_base_plus");
        List<String> scenarios = List.of("1x1", "1x8", "8x1", "32x1");
        int frames = 60, warmup = 20, repeats = 3, longFrames = 0, perStep = 1;
        for (int i = 1; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--models" -> models = List.of(args[i + 1].split(","));
                case "--scenarios" -> scenarios = List.of(args[i + 1].split(","));
                case "--frames" -> frames = Integer.parseInt(args[i + 1]);
                case "--warmup" -> warmup = Integer.parseInt(args[i + 1]);
                case "--repeats" -> repeats = Integer.parseInt(args[i + 1]);
                case "--long-frames" -> longFrames = Integer.parseInt(args[i + 1]);
                case "--frames-per-step" -> perStep = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (perStep < 1) {
            throw new IllegalArgumentException("--frames-per-step must be at least 1, got " + perStep);
        }
        List<String> rows = new ArrayList<>();
        rows.add("model\tstreams\tobjects_per_stream\tframes_per_step\tframes_per_s_per_stream\tframes_per_s_total\t"
                + "ms_per_step\tms_per_frame\tfps_per_stream_all\tdevice");
        for (String name : models) {
            Sam2Config config = Sam2Shapes.release(name);
            StateDict sd = Sam2Shapes.random(Sam2Shapes.model(config), 5);
            for (String sc : scenarios) {
                String[] p = sc.split("x");
                rows.add(measure(name, sd, config, Integer.parseInt(p[0]), Integer.parseInt(p[1]), perStep, frames,
                        warmup, repeats));
                System.out.println(rows.get(rows.size() - 1));
                Files.write(out, rows);
            }
            if (longFrames > 0 && name.equals(models.get(0))) {
                rows.addAll(longRun(name, sd, config, longFrames));
                Files.write(out, rows);
            }
        }
        Files.write(out, rows);
        System.out.println(String.join("\n", rows));
    }

    private static String measure(String name, StateDict sd, Sam2Config config, int streams, int objects, int perStep,
                                  int frames, int warmup, int repeats) {
        int s = config.imageSize();
        CudaSam2Tracker.Limits limits = new CudaSam2Tracker.Limits(Math.min(streams * perStep, 8),
                Math.min(streams * objects, 64), streams * objects);
        double[] fps = new double[repeats];
        String device;
        try (CudaSam2Tracker tracker = CudaSam2Tracker.open(sd, config, 0, limits)) {
            device = String.format(Locale.ROOT, "%s; reserved %.2f GB, bank %.2f MB per object",
                    tracker.context().info().describe(), tracker.deviceBytes() / 1e9,
                    tracker.bankBytesPerObject() / 1e6);
            byte[][] clip = clip(s, 8);
            for (int r = 0; r < repeats; r++) {
                List<CudaSam2Tracker.Stream> st = new ArrayList<>();
                for (int i = 0; i < streams; i++) {
                    st.add(tracker.openStream());
                }
                step(tracker, st, clip, 0, 1, prompts(objects, s));
                int f = 1;
                while (f <= warmup) {
                    step(tracker, st, clip, f, perStep, List.of());
                    f += perStep;
                }
                int done = 0;
                long t0 = System.nanoTime();
                while (done < frames) {
                    step(tracker, st, clip, f + done, perStep, List.of());
                    done += perStep;
                }
                fps[r] = done / ((System.nanoTime() - t0) / 1e9);
                st.forEach(CudaSam2Tracker.Stream::close);
            }
        }
        double[] sorted = fps.clone();
        Arrays.sort(sorted);
        double median = sorted[sorted.length / 2];
        StringBuilder all = new StringBuilder();
        for (double v : fps) {
            all.append(all.length() == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.2f", v));
        }
        return String.format(Locale.ROOT, "%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.3f\t%.3f\t%s\t%s", name, streams, objects,
                perStep, median, median * streams, perStep * 1000 / median, 1000 / median, all, device);
    }

    /** One stream, one object, {@code frames} frames: the GPU's memory in use every 10 % of the run. */
    private static List<String> longRun(String name, StateDict sd, Sam2Config config, int frames) {
        List<String> rows = new ArrayList<>();
        rows.add("#long\tmodel\tframe\tgpu_memory_used_mb\tms_per_step_since_last");
        int s = config.imageSize();
        try (CudaSam2Tracker tracker = CudaSam2Tracker.open(sd, config, 0, new CudaSam2Tracker.Limits(1, 1, 1))) {
            byte[][] clip = clip(s, 8);
            List<CudaSam2Tracker.Stream> st = List.of(tracker.openStream());
            step(tracker, st, clip, 0, 1, prompts(1, s));
            long last = System.nanoTime();
            int every = Math.max(1, frames / 10);
            for (int f = 1; f <= frames; f++) {
                List<List<ObjectResult>> r = step(tracker, st, clip, f, 1, List.of());
                if (r.get(0).size() != 1) {
                    throw new IllegalStateException("the object was lost from the tracker on frame " + f);
                }
                if (f % every == 0 || f == 1) {
                    long now = System.nanoTime();
                    rows.add(String.format(Locale.ROOT, "#long\t%s\t%d\t%.1f\t%.3f", name, f,
                            tracker.context().deviceMemoryUsed() / 1e6, (now - last) / 1e6 / (f == 1 ? 1 : every)));
                    System.out.println(rows.get(rows.size() - 1));
                    last = now;
                }
            }
        }
        return rows;
    }

    /** One step: frames {@code frame .. frame + k - 1} of every stream (each stream's in order), prompts on the first. */
    private static List<List<ObjectResult>> step(CudaSam2Tracker tracker, List<CudaSam2Tracker.Stream> streams,
                                                 byte[][] clip, int frame, int k, List<ObjectPrompt> prompts) {
        List<CudaSam2Tracker.Request> requests = new ArrayList<>();
        for (CudaSam2Tracker.Stream st : streams) {
            for (int j = 0; j < k; j++) {
                requests.add(new CudaSam2Tracker.Request(st, clip[(frame + j) % clip.length],
                        j == 0 ? prompts : List.of()));
            }
        }
        return tracker.step(requests);
    }

    /** Boxes of {@code objects} objects across the frame. */
    private static List<ObjectPrompt> prompts(int objects, int s) {
        List<ObjectPrompt> out = new ArrayList<>();
        for (int o = 0; o < objects; o++) {
            float x0 = (o % 4) * s / 4f + 20, y0 = (o / 4) * s / 3f + 40;
            out.add(ObjectPrompt.box(o + 1, x0, y0, x0 + s / 6f, y0 + s / 5f));
        }
        return out;
    }

    /** A few random frames, replayed in a loop (the content does not change the work). */
    private static byte[][] clip(int s, int n) {
        Random rnd = new Random(3);
        byte[][] out = new byte[n][3 * s * s];
        for (byte[] f : out) {
            rnd.nextBytes(f);
        }
        return out;
    }
}
