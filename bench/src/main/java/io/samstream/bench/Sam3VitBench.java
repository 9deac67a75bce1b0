package io.samstream.bench;

import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.sam3.CudaSam3Vit;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Shapes;
import java.util.Arrays;
import java.util.Locale;

/**
 * SAM 3's ViT trunk on the GPU at the release's shapes (random weights, input 1008, 32 blocks): GPU ms per image
 * between CUDA events over back-to-back passes of one image, the median of repeats. Kernel by kernel from Java (no
 * graph).
 *
 * <pre>java -cp ... io.samstream.bench.Sam3VitBench [--repeats 7] [--passes 5]</pre>
 */
public final class Sam3VitBench {
    private Sam3VitBench() {}

    public static void main(String[] args) {
        int repeats = 7, passes = 5;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--repeats" -> repeats = Integer.parseInt(args[i + 1]);
                case "--passes" -> passes = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (usage: Sam3VitBench [--repeats 7] [--passes 5])");
            }
        }
        Sam3Config.Vision vision = Sam3ConfigInference.RELEASE_VIT;
        try (CudaContext ctx = CudaContext.open(0);
             DeviceMemoryPool pool = new DeviceMemoryPool(ctx, 8L << 30);
             CudaStream stream = new CudaStream(ctx);
             PinnedBuffer staging = new PinnedBuffer(ctx, 64L << 20, "staging")) {
            CudaKernels kernels = new CudaKernels(ctx);
            CudaSam3Vit vit = new CudaSam3Vit(Sam2Shapes.random(Sam3Shapes.trunkShapes(vision), 1), vision, 1, kernels,
                    stream, pool, staging);
            stream.fill16(vit.input(), (short) 0x3f00);
            vit.forward(1);
            stream.synchronize();
            double[] ms = new double[repeats];
            try (CudaEvent start = new CudaEvent(ctx, true); CudaEvent end = new CudaEvent(ctx, true)) {
                for (int r = 0; r < repeats; r++) {
                    stream.record(start);
                    for (int i = 0; i < passes; i++) {
                        vit.forward(1);
                    }
                    stream.record(end);
                    end.synchronize();
                    ms[r] = CudaEvent.elapsedMillis(start, end) / passes;
                }
            }
            Arrays.sort(ms);
            System.out.printf(Locale.ROOT, "gpu\t%s%nsam3 vit %s%nms_per_image_median\t%.2f\tmin\t%.2f\tmax\t%.2f%n"
                    + "device pool peak\t%.1f MB%n", ctx.info().describe(), vision, ms[ms.length / 2], ms[0],
                    ms[ms.length - 1], pool.peak() / 1e6);
            kernels.close();
        }
    }
}
