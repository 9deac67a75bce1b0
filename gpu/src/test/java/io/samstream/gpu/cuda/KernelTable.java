package io.samstream.gpu.cuda;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Assumptions;

/**
 * The kernel table gpu/src/main/cuda/build-fatbin.sh writes next to the fatbin ({@value #RESOURCE}): the ABI version,
 * every entry point of the fatbin, and the dynamic shared memory each fixed-size one is built for, as the compiled
 * source computes it. {@link #bundled} skips the calling test (JUnit assumption) where the build had no nvcc, and
 * says why once on the console, as {@link GpuTests} does for the GPU.
 */
public final class KernelTable {
    public static final String RESOURCE = "io/samstream/gpu/cuda/samstream_kernels.tsv";
    private static final AtomicBoolean REASON_SHOWN = new AtomicBoolean();

    private final int abi;
    /** Entry point -> dynamic shared memory it is built for; -1 where it fixes none. */
    private final Map<String, Integer> entries;

    private KernelTable(int abi, Map<String, Integer> entries) {
        this.abi = abi;
        this.entries = entries;
    }

    /** The table this build bundles; skips the calling test when there is none. */
    public static KernelTable bundled() {
        InputStream in = KernelTable.class.getClassLoader().getResourceAsStream(RESOURCE);
        if (in == null) {
            String why = RESOURCE + " is not on the class path: the gpu module was built without nvcc (or with "
                    + "samstream.cuda.kernels=skip), so there is no fatbin to check the launchers against";
            if (REASON_SHOWN.compareAndSet(false, true)) {
                System.out.println("Kernel table tests skip on this machine: " + why);
            }
            Assumptions.abort(why);
        }
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            return parse(r);
        } catch (IOException e) {
            throw new IllegalStateException("reading " + RESOURCE, e);
        }
    }

    private static KernelTable parse(BufferedReader r) throws IOException {
        Integer abi = null;
        Map<String, Integer> entries = new LinkedHashMap<>();
        String line;
        int n = 0;
        while ((line = r.readLine()) != null) {
            n++;
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t");
            if (f.length == 2 && f[0].equals("abi")) {
                abi = Integer.parseInt(f[1]);
            } else if (f.length == 3 && f[0].equals("entry")) {
                entries.put(f[1], f[2].equals("-") ? -1 : Integer.parseInt(f[2]));
            } else {
                throw new IllegalStateException(RESOURCE + " line " + n + " is neither abi nor entry: " + line);
            }
        }
        if (abi == null || entries.isEmpty()) {
            throw new IllegalStateException(RESOURCE + " has no abi line or no entry points");
        }
        return new KernelTable(abi, entries);
    }

    /** The fatbin's {@code samstream_kernels_abi}. */
    public int abi() {
        return abi;
    }

    /** Whether the fatbin has an entry point of this name. */
    public boolean hasEntry(String name) {
        return entries.containsKey(name);
    }

    /** The dynamic shared memory entry point {@code name} is built for; an error when it is none or fixes none. */
    public int smem(String name) {
        Integer bytes = entries.get(name);
        if (bytes == null) {
            throw new AssertionError(name + " is not an entry point of the fatbin");
        }
        if (bytes < 0) {
            throw new AssertionError(name + " fixes no dynamic shared memory (no samstream_smem_" + name + ")");
        }
        return bytes;
    }
}
