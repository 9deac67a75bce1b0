package io.samstream.stream.engine;

import io.samstream.gpu.SamModels;
import io.samstream.stream.track.Discovery;
import java.util.Optional;

/**
 * One GPU of the engine ({@code samstream.gpus}): its backend (encoder and mask decoder, with their memory and
 * embedding ring on that GPU) and automatic discovery on it. The engine gives each its own micro-batching,
 * encoder and decoder stages; a stream placed on it stays there while it runs.
 *
 * @param gpu       the GPU's ordinal, or {@link SamModels.DeviceBackend#CPU} for the CPU backend
 * @param segmenter the model work on its backend
 * @param discovery discovery of new objects on its backend (with tracking on); empty: none
 */
public record GpuLane(int gpu, Segmenter segmenter, Optional<Discovery> discovery) {
    /** On the GPU the segmenter's backend runs on (a CUDA backend's ordinal, else the CPU). */
    public static GpuLane of(Segmenter segmenter, Optional<Discovery> discovery) {
        return new GpuLane(SamModels.gpuOf(segmenter.backend()), segmenter, discovery);
    }

    /** The {@code gpu} metric tag: the ordinal, or "cpu". */
    public String label() {
        return SamModels.DeviceBackend.label(gpu);
    }
}
