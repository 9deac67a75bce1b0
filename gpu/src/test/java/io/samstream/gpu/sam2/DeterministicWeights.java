package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.testkit.FixtureWeights;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The fixtures' weights ({@link FixtureWeights}: {@code weight_values} in tools/sam2_fixtures/make_sam2_fixtures.py)
 * as state_dicts, regenerated from a fixture's key list {@code keys.txt}.
 */
public final class DeterministicWeights {
    private DeterministicWeights() {}

    /** The values of tensor {@code name} of {@code shape} ({@link FixtureWeights}). */
    public static float[] values(String name, int[] shape) {
        return FixtureWeights.values(name, shape);
    }

    /** A state_dict with every key of a fixture's keys.txt ("name d0,d1,..." per line). */
    public static StateDict fromKeyList(Path keys, Map<String, Float> overrides) throws IOException {
        Map<String, Tensor> map = new LinkedHashMap<>();
        for (String line : Files.readAllLines(keys)) {
            if (line.isBlank()) {
                continue;
            }
            String[] parts = line.trim().split(" ");
            String[] dims = parts.length > 1 ? parts[1].split(",") : new String[0];
            int[] shape = new int[dims.length];
            for (int i = 0; i < dims.length; i++) {
                shape[i] = Integer.parseInt(dims[i]);
            }
            float[] v = values(parts[0], shape);
            Float o = overrides.get(parts[0]);
            if (o != null) {
                java.util.Arrays.fill(v, o);
            }
            map.put(parts[0], new Tensor(v, shape));
        }
        return new StateDict(keys, map);
    }
}
