package io.samstream.gpu.checkpoint;

import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads a SAM checkpoint into a {@link StateDict} of fp32 tensors under Meta's key names.
 *
 * <p>Reads PyTorch zip archives (what {@code torch.save} writes: Meta's {@code sam_vit_*.pth}, Hugging
 * Face {@code pytorch_model.bin}) and safetensors files, told apart by content. fp16 and bf16 weights
 * widen to fp32 exactly, fp64 rounds. A state_dict nested under "model" or "state_dict" is found, a
 * DataParallel "module." prefix is removed, and Hugging Face transformers names are mapped to Meta's
 * ({@link HuggingFaceSamKeys}). Loading never executes code from the file.
 *
 * <p>A file named like Meta's releases ({@code sam_vit_b_01ec64.pth}) must have the SHA-256 its name
 * begins ({@link OfficialCheckpoints}); zip records are checked against their CRC-32; hostile files
 * (broadcast or overlapping views, zip bombs, pickles built to exhaust the stack, the heap or the CPU)
 * are refused before their cost is paid.
 *
 * <p>Every failure is a {@link CheckpointException} whose message names the file and the problem. The
 * result is not yet checked against a model layout: {@code SamConfigInference.infer} does that.
 */
public final class CheckpointLoader {
    private static final Logger log = LoggerFactory.getLogger(CheckpointLoader.class);
    private static final String DATA_PARALLEL_PREFIX = "module.";

    private CheckpointLoader() {}

    public static StateDict load(Path file) {
        long start = System.nanoTime();
        CheckpointFormat format = CheckpointFormat.detect(file);
        OfficialCheckpoints.verify(file);
        LoadedTensors loaded = switch (format) {
            case TORCH_ZIP -> TorchZipReader.read(file);
            case SAFETENSORS -> SafetensorsReader.read(file);
        };
        Map<String, Tensor> tensors = withoutDataParallelPrefix(loaded.tensors());
        boolean huggingFace = HuggingFaceSamKeys.usesHuggingFaceNames(tensors.keySet());
        if (huggingFace) {
            tensors = HuggingFaceSamKeys.toMetaNames(file, tensors);
        }
        long parameters = 0;
        for (Tensor t : tensors.values()) {
            parameters += t.size();
        }
        log.info("Loaded {} tensors ({} parameters, stored as {}) from {} ({}{}) in {} ms", tensors.size(),
                parameters, loaded.sourceTypes(), file, loaded.format(),
                huggingFace ? ", Hugging Face names mapped to Meta's" : "",
                (System.nanoTime() - start) / 1_000_000);
        log.debug("{}: {} storages read", file, loaded.storagesRead());
        return new StateDict(file, tensors);
    }

    /** Models saved while wrapped in (Distributed)DataParallel prefix every key with "module.". */
    private static Map<String, Tensor> withoutDataParallelPrefix(Map<String, Tensor> tensors) {
        if (tensors.isEmpty() || !tensors.keySet().stream().allMatch(k -> k.startsWith(DATA_PARALLEL_PREFIX))) {
            return tensors;
        }
        Map<String, Tensor> stripped = new LinkedHashMap<>();
        tensors.forEach((k, v) -> stripped.put(k.substring(DATA_PARALLEL_PREFIX.length()), v));
        return stripped;
    }
}
