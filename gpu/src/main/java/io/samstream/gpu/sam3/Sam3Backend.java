package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What runs the heavy parts of SAM 3's image path for a {@link Sam3Model}: the ViT trunk ({@link Sam3Trunk}), its
 * necks ({@link Sam3Neck}: the detector's and, in the video model's checkpoint, the tracker's), the fusion encoder
 * ({@link Sam3Fusion}), the DETR decoder ({@link Sam3Decoder}) and the mask head ({@link Sam3MaskHead}); the text
 * encoder, geometry encoder and scoring stay on the CPU reference. One object so that parts on one GPU share one context: closing the backend closes every part and
 * whatever they share.
 */
public interface Sam3Backend extends AutoCloseable {
    Sam3Trunk trunk();

    /** The detector's neck. */
    Sam3Neck neck();

    /** The tracker's neck, or null when the checkpoint has none (an image model's). */
    Sam3Neck trackerNeck();

    Sam3Fusion fusion();

    Sam3Decoder decoder();

    Sam3MaskHead maskHead();

    /** Where the parts run, for logs and masks.json, e.g. "ViT trunk, necks, ... on GPU (bf16)"; null: the CPU. */
    default String describe() {
        return null;
    }

    @Override
    void close();

    /** Makes a model's backend from its detector weights (Meta's key names) and its configuration. */
    @FunctionalInterface
    interface Factory {
        Sam3Backend open(StateDict detectorWeights, Sam3Config config, CpuThreadPool pool);
    }

    /** Everything on the fp32 CPU reference. */
    static Factory cpu() {
        return of(Sam3Trunk.cpu(), Sam3Neck.cpu(), Sam3Fusion.cpu(), Sam3Decoder.cpu(), Sam3MaskHead.cpu());
    }

    /**
     * {@link #of(Sam3Trunk.Factory, Sam3Neck.Factory, Sam3Fusion.Factory, Sam3Decoder.Factory, Sam3MaskHead.Factory)}
     * with the necks, the decoder and the mask head on the CPU reference.
     */
    static Factory of(Sam3Trunk.Factory trunkFactory, Sam3Fusion.Factory fusionFactory) {
        return of(trunkFactory, Sam3Neck.cpu(), fusionFactory, Sam3Decoder.cpu(), Sam3MaskHead.cpu());
    }

    /**
     * Parts that share nothing, each from its own factory, opened in order (trunk, necks, fusion encoder, decoder,
     * mask head; the tracker's neck only when the weights have it); when one fails, those already open are closed
     * again. Describes itself by the parts that say where they run.
     */
    static Factory of(Sam3Trunk.Factory trunkFactory, Sam3Neck.Factory neckFactory, Sam3Fusion.Factory fusionFactory,
                      Sam3Decoder.Factory decoderFactory, Sam3MaskHead.Factory maskHeadFactory) {
        return (sd, config, pool) -> {
            List<AutoCloseable> opened = new ArrayList<>();
            try {
                Sam3Trunk trunk = add(opened, trunkFactory.open(sd, config.vision(), pool));
                Sam3Neck neck = add(opened, neckFactory.open(sd, Sam3Neck.DETECTOR, config, pool));
                Sam3Neck trackerNeck = sd.hasPrefix(Sam3Neck.TRACKER)
                        ? add(opened, neckFactory.open(sd, Sam3Neck.TRACKER, config, pool)) : null;
                Sam3Fusion fusion = add(opened, fusionFactory.open(sd, config.detector(), pool));
                Sam3Decoder decoder = add(opened, decoderFactory.open(sd, config.detector(), pool));
                Sam3MaskHead maskHead = add(opened, maskHeadFactory.open(sd, config.detector(), pool));
                return new Composite(trunk, neck, trackerNeck, fusion, decoder, maskHead);
            } catch (RuntimeException e) {
                Composite.closeAll(opened, e);
                throw e;
            }
        };
    }

    private static <T extends AutoCloseable> T add(List<AutoCloseable> opened, T part) {
        opened.add(part);
        return part;
    }

    /** The parts of {@link #of}, each from its own factory: closed in reverse order of opening. */
    record Composite(Sam3Trunk trunk, Sam3Neck neck, Sam3Neck trackerNeck, Sam3Fusion fusion, Sam3Decoder decoder,
                 Sam3MaskHead maskHead) implements Sam3Backend {
        @Override
        public String describe() {
            return Sam3Backend.describe(trunk.describe(), neck.describe(), fusion.describe(), decoder.describe(),
                    maskHead.describe());
        }

        @Override
        public void close() {
            List<AutoCloseable> parts = new ArrayList<>(List.of(trunk, neck));
            if (trackerNeck != null) {
                parts.add(trackerNeck);
            }
            parts.add(fusion);
            parts.add(decoder);
            parts.add(maskHead);
            closeAll(parts, null);
        }

        /** Closes {@code parts} last to first; the first failure is thrown (or added to {@code pending}'s). */
        static void closeAll(List<AutoCloseable> parts, RuntimeException pending) {
            RuntimeException failure = pending;
            for (int i = parts.size() - 1; i >= 0; i--) {
                try {
                    parts.get(i).close();
                } catch (Exception e) {
                    if (failure == null) {
                        failure = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
            if (failure != null && failure != pending) {
                throw failure;
            }
        }
    }

    /**
     * The parts' places in one line: null when every part is on the CPU reference (null); else the parts elsewhere
     * grouped by where they run, e.g. "ViT trunk, necks, fusion encoder, decoder and mask head on X", "ViT trunk and
     * fusion encoder on X".
     */
    static String describe(String trunk, String necks, String fusion, String decoder, String maskHead) {
        Map<String, List<String>> byDevice = new LinkedHashMap<>();
        String[][] parts = {{"ViT trunk", trunk}, {"necks", necks}, {"fusion encoder", fusion}, {"decoder", decoder},
                {"mask head", maskHead}};
        for (String[] p : parts) {
            if (p[1] != null) {
                byDevice.computeIfAbsent(p[1], k -> new ArrayList<>()).add(p[0]);
            }
        }
        if (byDevice.isEmpty()) {
            return null;
        }
        List<String> placed = new ArrayList<>();
        byDevice.forEach((device, names) -> {
            int last = names.size() - 1;
            String joined = last == 0 ? names.get(0)
                    : String.join(", ", names.subList(0, last)) + " and " + names.get(last);
            placed.add(joined + " on " + device);
        });
        return String.join(", ", placed);
    }
}
