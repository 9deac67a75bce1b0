package io.samstream.gpu.cuda.sam2;

import static io.samstream.gpu.cuda.sam2.PassInputs.slice;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.GraphCache;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.sam2.Sam2Config;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The image encoder of {@link CudaSam2Tracker} on a CUDA stream of its own, writing into one of two sets (sides) of
 * buffers: an encoder pass's frames (8-bit RGB) and its outputs (the stride-16 features the memory attention reads,
 * conv_s0 and conv_s1 the mask decoder reads). While the objects' passes read one side, the next encoder pass fills
 * the other. Events order the two streams: the objects' stream waits until its side {@link #awaitEncoded is
 * encoded}; the encoder overwrites a side once the objects' passes that read it before are {@link #markConsumed
 * queued} ahead of that point; the host refills a side's pinned frames once their upload is done.
 */
final class EncoderSides implements AutoCloseable {
    private final CudaSam2ImageEncoder encoder;
    private final CudaStream stream;
    private final Sam2Kernels ops;
    private final GraphCache graphs;
    private final PinnedBuffer framesHost;
    private final int s, maxFrames;
    private final long framesBytes, topFrameBytes, s0FrameBytes, s1FrameBytes;
    private final DeviceBuffer[] frames = new DeviceBuffer[2], top = new DeviceBuffer[2], s0 = new DeviceBuffer[2],
            s1 = new DeviceBuffer[2];
    /** Per side: its frames left the pinned buffer; its features are encoded; the passes reading them are queued. */
    private final CudaEvent[] framesCopied = new CudaEvent[2], encoded = new CudaEvent[2], consumed = new CudaEvent[2];
    private final List<AutoCloseable> owned = new ArrayList<>();
    private int nextSide;

    /**
     * Device bytes the two sides take per encoder slot, beside the encoder's own activations: the frames and the
     * three outputs, twice.
     */
    static long sideBytesPerFrame(Sam2Config config) {
        long s = config.imageSize();
        long[] out = outputBytesPerFrame(config);
        return 2 * (s * s * 3 + out[0] + out[1] + out[2]);
    }

    /** Bytes per frame of the three outputs (bf16): stride-16 features, conv_s0 (at S/4), conv_s1 (at S/8). */
    private static long[] outputBytesPerFrame(Sam2Config config) {
        long c = config.hidden(), q = config.imageSize() / 4;
        long t = (long) config.featureSize() * config.featureSize();
        return new long[] {t * c * 2, q * q * (c / 8) * 2, (q / 2) * (q / 2) * (c / 4) * 2};
    }

    /** Uploads the encoder's weights and allocates both sides for {@code maxFrames} frames a pass. */
    EncoderSides(StateDict sd, Sam2Config config, int maxFrames, CudaContext context, CudaKernels kernels,
                 DeviceMemoryPool pool, PinnedBuffer staging, GraphCache graphs) {
        this.s = config.imageSize();
        this.maxFrames = maxFrames;
        this.graphs = graphs;
        this.ops = Sam2Kernels.of(kernels);
        long[] out = outputBytesPerFrame(config);
        this.framesBytes = (long) maxFrames * s * s * 3;
        this.topFrameBytes = out[0];
        this.s0FrameBytes = out[1];
        this.s1FrameBytes = out[2];
        try {
            this.stream = own(new CudaStream(context));
            this.framesHost = own(new PinnedBuffer(context, 2 * framesBytes, "SAM 2 step frames"));
            for (int side = 0; side < 2; side++) {
                framesCopied[side] = own(new CudaEvent(context, false));
                encoded[side] = own(new CudaEvent(context, false));
                consumed[side] = own(new CudaEvent(context, false));
            }
            this.encoder = new CudaSam2ImageEncoder(sd, config, maxFrames, kernels, stream, pool, staging);
            for (int side = 0; side < 2; side++) {
                frames[side] = pool.allocate(framesBytes, "frames (rgb), side " + side);
                top[side] = pool.allocate(maxFrames * topFrameBytes, "stride-16 features, side " + side);
                s0[side] = pool.allocate(maxFrames * s0FrameBytes, "conv_s0 features, side " + side);
                s1[side] = pool.allocate(maxFrames * s1FrameBytes, "conv_s1 features, side " + side);
            }
            stream.synchronize();    // the weights left the staging buffer
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private <T extends AutoCloseable> T own(T r) {
        owned.add(r);
        return r;
    }

    /** The side the next encoder pass takes (they alternate). */
    int nextSide() {
        int side = nextSide;
        nextSide ^= 1;
        return side;
    }

    /**
     * Queues one pass over {@code rgb} (1 to maxFrames frames, 8-bit RGB at the model's size; slot j holds the j-th)
     * into {@code side}: the frames copied up, normalized, encoded and the outputs written to the side once the
     * passes that read it before are done. Waits only for the side's previous frames to leave the pinned buffer.
     */
    void encode(List<byte[]> rgb, int side) {
        int b = rgb.size();
        if (b < 1 || b > maxFrames) {
            throw new IllegalArgumentException(b + " frames for an encoder pass of at most " + maxFrames);
        }
        framesCopied[side].synchronize();
        ByteBuffer host = slice(framesHost.buffer(), side * framesBytes);
        for (byte[] frame : rgb) {
            host.put(frame);
        }
        stream.upload(framesHost, side * framesBytes, frames[side], 0, (long) b * s * s * 3);
        stream.record(framesCopied[side]);
        stream.waitFor(consumed[side]);
        graphs.run(stream, List.of("encoder", b, side), () -> {
            ops.normalizeRgb8(stream, frames[side], encoder.input(), b, s);
            encoder.forward(b);
            stream.copy(encoder.top(), top[side], b * topFrameBytes);
            stream.copy(encoder.s0(), s0[side], b * s0FrameBytes);
            stream.copy(encoder.s1(), s1[side], b * s1FrameBytes);
        });
        stream.record(encoded[side]);
    }

    /** Makes later work on {@code objects} wait until {@code side}'s last pass is encoded. */
    void awaitEncoded(CudaStream objects, int side) {
        objects.waitFor(encoded[side]);
    }

    /** Marks the point of {@code objects} after which {@code side} may be overwritten. */
    void markConsumed(CudaStream objects, int side) {
        objects.record(consumed[side]);
    }

    /** The device address of frame {@code frame}'s stride-16 features on {@code side}. */
    long top(int side, int frame) {
        return top[side].address() + frame * topFrameBytes;
    }

    DeviceBuffer s0(int side) {
        return s0[side];
    }

    DeviceBuffer s1(int side) {
        return s1[side];
    }

    /** Blocks until the encoder's queued work has finished. */
    void synchronize() {
        stream.synchronize();
    }

    @Override
    public void close() {
        for (int i = owned.size() - 1; i >= 0; i--) {
            try {
                owned.get(i).close();
            } catch (Exception ignored) {
                // closing what was opened; a failure here leaves nothing else to release
            }
        }
        owned.clear();
    }
}
