package io.samstream.gpu.checkpoint;

import static io.samstream.gpu.checkpoint.CheckpointAssertions.assertFails;
import static io.samstream.gpu.checkpoint.CheckpointAssertions.assertLoadFails;
import static io.samstream.gpu.checkpoint.CheckpointAssertions.assertTensor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.PickleWriter.Global;
import io.samstream.gpu.checkpoint.PickleWriter.Raw;
import io.samstream.gpu.checkpoint.PickleWriter.Reduce;
import io.samstream.gpu.checkpoint.PickleWriter.Tuple;
import io.samstream.gpu.checkpoint.TorchSaveWriter.Storage;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TorchZipCheckpointTest {
    @TempDir
    Path dir;

    private static Map<String, Object> items(Object... keyValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void fp32StateDictRoundTripsWithMetadata(int protocol) throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive").protocol(protocol);
        Map<String, Object> tensors = items(
                "encoder.weight", TorchSaveWriter.tensor(w.floatStorage(1.5f, -2f, 3.25f, 0f, 1e-30f, -7f), 2, 3),
                "encoder.bias", TorchSaveWriter.tensor(w.floatStorage(0.5f, Float.MAX_VALUE), 2),
                "scalar", TorchSaveWriter.tensor(w.floatStorage(42f)));
        Path file = dir.resolve("model.pth");
        w.write(file, TorchSaveWriter.stateDict(tensors));

        StateDict sd = CheckpointLoader.load(file);

        assertEquals(List.of("encoder.weight", "encoder.bias", "scalar"), new ArrayList<>(sd.keys()));
        assertTensor(sd.get("encoder.weight"), new int[] {2, 3}, 1.5f, -2f, 3.25f, 0f, 1e-30f, -7f);
        assertTensor(sd.get("encoder.bias"), new int[] {2}, 0.5f, Float.MAX_VALUE);
        assertTensor(sd.get("scalar"), new int[] {}, 42f);
        assertEquals(file, sd.source());
    }

    @Test
    void testPicklesUseTheOpcodesTorchSaveUses() {
        // Guards the test writer itself, so the round trips above exercise what real files contain.
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Object root = TorchSaveWriter.stateDict(items(
                "a.weight", TorchSaveWriter.tensor(w.floatStorage(1f, 2f, 3f, 4f, 5f, 6f), 2, 3),
                "a.bias", TorchSaveWriter.tensor(w.floatStorage(1f), 1)));
        PickleWriter.Pickle p2 = PickleWriter.dump(root, 2);
        for (int op : new int[] {0x80, '}', ')', 'R', 'q', '(', 'X', 'c', 'Q', 'K', 0x85, 0x86, 0x89, 'h', 'u', 's',
            'b', '.'}) {
            assertTrue(p2.count(op) > 0, "protocol 2 uses " + PickleOpcodes.name(op));
        }
        assertEquals(0, p2.count(0x93) + p2.count(0x94) + p2.count(0x8c), "no protocol 4 opcodes at protocol 2");
        PickleWriter.Pickle p4 = PickleWriter.dump(root, 4);
        assertEquals(0x95, p4.bytes()[2] & 0xff, "FRAME right after PROTO 4");
        for (int op : new int[] {0x93, 0x94, 0x8c}) {
            assertTrue(p4.count(op) > 0, "protocol 4 uses " + PickleOpcodes.name(op));
        }
        assertEquals(0, p4.count('c') + p4.count('q'), "no GLOBAL or BINPUT at protocol 4");
    }

    @Test
    void halfAndBfloat16WidenExactly() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        short[] half = {0x3C00, (short) 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, (short) 0x8000, 0x3555,
            0x7C00, (short) 0xFC00};
        short[] bf16 = {0x3F80, (short) 0xC040, 0x4049, 0x0001, 0x7F80, (short) 0x8000};
        Path file = dir.resolve("half.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "h", TorchSaveWriter.tensor(w.shortStorage("HalfStorage", half), 2, 5),
                "b", TorchSaveWriter.tensor(w.shortStorage("BFloat16Storage", bf16), 6),
                "nan", TorchSaveWriter.tensor(w.shortStorage("HalfStorage", (short) 0x7E00), 1),
                "d", TorchSaveWriter.tensor(w.doubleStorage(0.1, -1e300, 3.0), 3))));

        StateDict sd = CheckpointLoader.load(file);

        assertTensor(sd.get("h"), new int[] {2, 5}, 1f, -2f, 65504f, 0x1p-24f, 1023 * 0x1p-24f, 0x1p-14f, -0f,
                0.333251953125f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY);
        assertTensor(sd.get("b"), new int[] {6}, 1f, -3f, 3.140625f, 0x1p-133f, Float.POSITIVE_INFINITY, -0f);
        assertTrue(Float.isNaN(sd.get("nan").data()[0]));
        assertTensor(sd.get("d"), new int[] {3}, (float) 0.1, Float.NEGATIVE_INFINITY, 3f);
    }

    @Test
    void stridedViewsAndOffsetsAreGatheredAndSharedStoragesReadOnce() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        float[] values = new float[24];
        for (int i = 0; i < values.length; i++) {
            values[i] = i * 0.5f;
        }
        Storage shared = w.floatStorage(values);
        Storage own = w.floatStorage(7f, 8f);
        Path file = dir.resolve("views.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                // a transpose: [4, 3] over elements 0..11 with strides (1, 4)
                "transposed", TorchSaveWriter.tensor(shared, 0, new int[] {4, 3}, new long[] {1, 4}),
                // every other element from 12: 12, 14, 16
                "strided", TorchSaveWriter.tensor(shared, 12, new int[] {3}, new long[] {2}),
                // a contiguous block at an offset: elements 20..23
                "offset", TorchSaveWriter.tensor(shared, 20, new int[] {2, 2}, new long[] {2, 1}),
                // a dimension of size 1 may have any stride, 0 included: elements 5, 6
                "unsqueezed", TorchSaveWriter.tensor(shared, 5, new int[] {1, 2}, new long[] {0, 1}),
                "own", TorchSaveWriter.tensor(own, 2))));

        LoadedTensors loaded = TorchZipReader.read(file);

        Map<String, Tensor> t = loaded.tensors();
        assertTensor(t.get("transposed"), new int[] {4, 3}, 0f, 2f, 4f, 0.5f, 2.5f, 4.5f, 1f, 3f, 5f, 1.5f, 3.5f, 5.5f);
        assertTensor(t.get("strided"), new int[] {3}, 6f, 7f, 8f);
        assertTensor(t.get("offset"), new int[] {2, 2}, 10f, 10.5f, 11f, 11.5f);
        assertTensor(t.get("unsqueezed"), new int[] {1, 2}, 2.5f, 3f);
        assertTensor(t.get("own"), new int[] {2}, 7f, 8f);
        assertEquals(2, loaded.storagesRead(), "the shared storage is read once");
        assertEquals(5, loaded.sourceTypes().get(ElementType.FLOAT32));
    }

    @Test
    void tiedTensorsOverOneStorageGetTheirOwnArrays() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Storage s = w.floatStorage(1f, 2f, 3f, 4f);
        Path file = dir.resolve("tied.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "a", TorchSaveWriter.tensor(s, 2, 2), "b", TorchSaveWriter.tensor(s, 4))));

        LoadedTensors loaded = TorchZipReader.read(file);

        assertTensor(loaded.tensors().get("a"), new int[] {2, 2}, 1f, 2f, 3f, 4f);
        assertTensor(loaded.tensors().get("b"), new int[] {4}, 1f, 2f, 3f, 4f);
        assertNotSame(loaded.tensors().get("a").data(), loaded.tensors().get("b").data());
        assertEquals(1, loaded.storagesRead());
    }

    @Test
    void hundredsOfTensorsUseLongMemoIndexes() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Map<String, Object> tensors = new LinkedHashMap<>();
        for (int i = 0; i < 300; i++) {
            tensors.put("layers." + i + ".weight", TorchSaveWriter.tensor(w.floatStorage(i, -i), 2));
        }
        // a tied copy of the last storage re-pickles its key, memoized past index 255: LONG_BINGET
        tensors.put("tied", TorchSaveWriter.tensor(new Storage("FloatStorage", "299", 2), 2));
        PickleWriter.Pickle pickle = PickleWriter.dump(TorchSaveWriter.stateDict(tensors), 2);
        assertTrue(pickle.count('r') > 0, "LONG_BINPUT");
        assertTrue(pickle.count('j') > 0, "LONG_BINGET");
        Path file = dir.resolve("many.pth");
        w.writeRaw(file, pickle.bytes());

        StateDict sd = CheckpointLoader.load(file);

        assertEquals(301, sd.size());
        for (int i = 0; i < 300; i++) {
            assertTensor(sd.get("layers." + i + ".weight"), new int[] {2}, i, -i);
        }
        assertTensor(sd.get("tied"), new int[] {2}, 299f, -299f);
    }

    @Test
    void storagesLargerThan65535ElementsUseBinint() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        float[] big = new float[70_000];
        big[69_999] = 9f;
        Storage s = w.floatStorage(big);
        Path file = dir.resolve("big.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "tail", TorchSaveWriter.tensor(s, 69_998, new int[] {2}, new long[] {1}))));

        assertTensor(CheckpointLoader.load(file).get("tail"), new int[] {2}, 0f, 9f);
    }

    @Test
    void parametersAreUnwrapped() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Reduce data = TorchSaveWriter.tensor(w.floatStorage(1f, 2f), 2);
        Reduce parameter = new Reduce(TorchSaveWriter.REBUILD_PARAMETER,
                Tuple.of(data, true, new Reduce(PickleWriter.ORDERED_DICT, Tuple.of())));
        Path file = dir.resolve("param.pth");
        w.write(file, items("p", parameter));

        assertTensor(CheckpointLoader.load(file).get("p"), new int[] {2}, 1f, 2f);
    }

    @ParameterizedTest
    @ValueSource(strings = {"model", "state_dict"})
    void stateDictNestedInATrainingCheckpointIsFound(String wrapper) throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("checkpoint");
        Map<String, Object> optimizer = items("state", items(), "param_groups", List.of(items("lr", 1e-4)));
        Object root = items("epoch", 12, "optimizer", optimizer,
                wrapper, TorchSaveWriter.stateDict(items("w", TorchSaveWriter.tensor(w.floatStorage(5f), 1))));
        Path file = dir.resolve("checkpoint.pth");
        w.write(file, root);

        StateDict sd = CheckpointLoader.load(file);

        assertEquals(List.of("w"), new ArrayList<>(sd.keys()));
        assertTensor(sd.get("w"), new int[] {1}, 5f);
    }

    @Test
    void ambiguousWrappersAreReported() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Object root = items(
                "model", items("a", TorchSaveWriter.tensor(w.floatStorage(1f), 1)),
                "state_dict", items("a", TorchSaveWriter.tensor(w.floatStorage(2f), 1)));
        Path file = dir.resolve("both.pth");
        w.write(file, root);

        assertLoadFails(file, "both", "model", "state_dict");
    }

    @Test
    void checkpointWithoutTensorsNamesItsKeys() throws IOException {
        Path file = dir.resolve("notensors.pth");
        new TorchSaveWriter("archive").write(file, items("epoch", 3, "lr", 0.5));

        assertLoadFails(file, "holds no tensors", "[epoch, lr]");
    }

    @Test
    void dataParallelPrefixIsRemoved() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Path file = dir.resolve("dp.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "module.a", TorchSaveWriter.tensor(w.floatStorage(1f), 1),
                "module.b.c", TorchSaveWriter.tensor(w.floatStorage(2f), 1))));

        assertEquals(List.of("a", "b.c"), new ArrayList<>(CheckpointLoader.load(file).keys()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"archive", "sam_vit_b_finetuned"})
    void archivePrefixMayBeArchiveOrTheFileStem(String prefix) throws IOException {
        TorchSaveWriter w = new TorchSaveWriter(prefix);
        Path file = dir.resolve(prefix + ".pth");
        w.write(file, TorchSaveWriter.stateDict(items("x", TorchSaveWriter.tensor(w.floatStorage(3f, 4f), 2)))); 

        assertTensor(CheckpointLoader.load(file).get("x"), new int[] {2}, 3f, 4f);
    }

    @Test
    void bigEndianArchivesAreRead() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive").bigEndian();
        Path file = dir.resolve("be.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "f", TorchSaveWriter.tensor(w.floatStorage(1.25f, -8f), 2),
                "h", TorchSaveWriter.tensor(w.shortStorage("HalfStorage", (short) 0x3C00), 1))));

        StateDict sd = CheckpointLoader.load(file);

        assertTensor(sd.get("f"), new int[] {2}, 1.25f, -8f);
        assertTensor(sd.get("h"), new int[] {1}, 1f);
    }

    // ---- refusing hostile or broken files ------------------------------------------------------------

    @Test
    void foreignGlobalIsRefusedBeforeAnythingRuns() throws IOException {
        Path marker = dir.resolve("pwned");
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Reduce attack = new Reduce(new Global("posix", "system"), Tuple.of("touch " + marker));
        Path file = dir.resolve("evil.pth");
        w.write(file, items("w", TorchSaveWriter.tensor(w.floatStorage(1f), 1), "x", attack));

        assertLoadFails(file, "posix.system", "archive/data.pkl", "refused");
        assertFalse(Files.exists(marker), "nothing in the file may run");
    }

    @ParameterizedTest
    @ValueSource(strings = {"builtins.eval", "__builtin__.getattr", "torch.load", "numpy.core.multiarray._reconstruct",
        "torch._utils._rebuild_device_tensor_from_numpy"})
    void everyOtherGlobalIsRefusedByName(String global) throws IOException {
        int dot = global.lastIndexOf('.');
        Reduce call = new Reduce(new Global(global.substring(0, dot), global.substring(dot + 1)), Tuple.of("x"));
        for (int protocol : new int[] {2, 4}) { // GLOBAL and STACK_GLOBAL
            Path file = dir.resolve("evil" + protocol + ".pth");
            new TorchSaveWriter("archive").protocol(protocol).write(file, items("x", call));
            assertLoadFails(file, "Python global " + global + ",");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"i:the pickle opcode INST (0x69)", "o:the pickle opcode OBJ (0x6f)",
        "\u0082:the pickle opcode EXT1 (0x82)", "P:the pickle opcode PERSID (0x50)",
        "\u0097:the pickle opcode NEXT_BUFFER (0x97)", "\u00ff:an unknown pickle opcode (0xff)"})
    void unsupportedOpcodesAreRefusedByName(String spec) throws IOException {
        byte opcode = (byte) spec.charAt(0);
        Path file = dir.resolve("opcode.pth");
        new TorchSaveWriter("archive").write(file, items("x", new Raw(new byte[] {opcode})));

        assertLoadFails(file, "uses " + spec.substring(2) + ",", "refused");
    }

    @Test
    void reduceOfANonFunctionIsRefused() throws IOException {
        Path file = dir.resolve("reduce.pth");
        new TorchSaveWriter("archive").write(file, items("x", new Reduce(new Global("torch", "float32"), Tuple.of())));

        assertLoadFails(file, "REDUCE calls torch.float32");
    }

    @Test
    void truncatedArchiveIsReported() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Path file = dir.resolve("cut.pth");
        w.write(file, TorchSaveWriter.stateDict(items("w", TorchSaveWriter.tensor(w.floatStorage(new float[4096]), 4096))));
        byte[] whole = Files.readAllBytes(file);
        Files.write(file, java.util.Arrays.copyOf(whole, whole.length / 2));

        assertLoadFails(file, "zip", "truncated");
    }

    @Test
    void zipWithoutDataPklIsNotATorchCheckpoint() throws IOException {
        Path file = dir.resolve("other.zip");
        try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(file))) {
            zip.putNextEntry(new ZipEntry("readme.txt"));
            zip.write("hello".getBytes());
            zip.closeEntry();
        }

        assertLoadFails(file, "without a data.pkl", "readme.txt");
    }

    @Test
    void torchScriptArchivesGetAHint() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        w.putRecord("constants.pkl", new byte[] {(byte) 0x80, 2, ')', '.'});
        Path file = dir.resolve("scripted.pt");
        w.write(file, items());

        assertLoadFails(file, "TorchScript", "state_dict()");
    }

    @Test
    void missingStorageRecordNamesTheTensor() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Path file = dir.resolve("missing.pth");
        Object root = TorchSaveWriter.stateDict(items(
                "a", TorchSaveWriter.tensor(w.floatStorage(1f), 1),
                "b.weight", TorchSaveWriter.tensor(w.floatStorage(2f), 1)));
        w.removeRecord("data/1");
        w.write(file, root);

        assertLoadFails(file, "no record archive/data/1", "tensor b.weight");
    }

    @Test
    void truncatedStorageRecordNamesTheTensor() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Storage s = w.storage("FloatStorage", 6, new byte[10]);
        Path file = dir.resolve("short.pth");
        w.write(file, TorchSaveWriter.stateDict(items("mask_tokens.weight", TorchSaveWriter.tensor(s, 2, 3))));

        assertLoadFails(file, "storage archive/data/0", "mask_tokens.weight", "holds 10 bytes", "need 24", "truncated");
    }

    @Test
    void integerTensorsAreRefusedByName() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Path file = dir.resolve("ints.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "w", TorchSaveWriter.tensor(w.floatStorage(1f), 1),
                "bn.num_batches_tracked", TorchSaveWriter.tensor(w.longStorage(7)))));

        assertLoadFails(file, "tensor bn.num_batches_tracked holds int64 values");
    }

    @Test
    void integerTensorsOutsideTheStateDictDoNotMatter() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Path file = dir.resolve("training.pth");
        Object root = items(
                "model", TorchSaveWriter.stateDict(items("w", TorchSaveWriter.tensor(w.floatStorage(1f), 1))),
                "optimizer", items("state", items("step", TorchSaveWriter.tensor(w.longStorage(100)))));
        w.write(file, root);

        assertTensor(CheckpointLoader.load(file).get("w"), new int[] {1}, 1f);
    }

    @Test
    void viewBeyondItsStorageIsRefused() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Storage s = w.floatStorage(1f, 2f, 3f);
        Path file = dir.resolve("oob.pth");
        w.write(file, TorchSaveWriter.stateDict(items("w", TorchSaveWriter.tensor(s, 1, new int[] {2, 2},
                new long[] {2, 1}))));

        assertLoadFails(file, "tensor w", "reaches element 5 of storage data/0, which holds only 3");
    }

    @Test
    void truncatedPickleIsReported() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        byte[] pickle = PickleWriter.dumps(TorchSaveWriter.stateDict(
                items("w", TorchSaveWriter.tensor(w.floatStorage(1f), 1))), 2);
        Path file = dir.resolve("cutpickle.pth");
        w.writeRaw(file, java.util.Arrays.copyOf(pickle, pickle.length - 20));

        assertLoadFails(file, "archive/data.pkl", "truncated");
    }

    @Test
    void legacyTorchFormatGetsAReSaveHint() throws IOException {
        Path file = dir.resolve("old.pth");
        // torch < 1.6 files start with the pickled magic number 0x1950a86a20f9469cfc6c
        Files.write(file, new byte[] {(byte) 0x80, 0x02, (byte) 0x8a, 0x0a, 0x6c, (byte) 0xfc, (byte) 0x9c, 0x46,
            (byte) 0xf9, 0x20, 0x6a, (byte) 0xa8, 0x50, 0x19, 0x2e, (byte) 0x80, 0x02, 0x4d, (byte) 0xe9, 0x03});

        CheckpointException e = assertLoadFails(file, "legacy", "re-save", "weights_only=True",
                "_use_new_zipfile_serialization=True", "safetensors");
        assertFalse(e.getMessage().contains("torch.save(torch.load("), "never suggest an unsafe torch.load");
    }

    @Test
    void missingEmptyDirectoryAndForeignFilesAreReported() throws IOException {
        assertLoadFails(dir.resolve("nope.pth"), "no such file");

        Path empty = Files.createFile(dir.resolve("empty.pth"));
        assertLoadFails(empty, "empty file");

        Path folder = Files.createDirectory(dir.resolve("sam-vit-base"));
        Files.createFile(folder.resolve("model.safetensors"));
        assertLoadFails(folder, "is a directory", "model.safetensors");

        Path text = Files.writeString(dir.resolve("notes.txt"), "these are not weights");
        assertLoadFails(text, "not a checkpoint: neither a PyTorch zip archive nor a safetensors file");
    }

    @Test
    void exceptionsKeepTheirCause() throws IOException {
        Path file = dir.resolve("cut2.pth");
        Files.write(file, new byte[] {'P', 'K', 3, 4, 0, 0, 0});

        CheckpointException e = assertFails(file, () -> CheckpointLoader.load(file), "zip");
        assertTrue(e.getCause() instanceof IOException, "cause kept: " + e.getCause());
    }

    // ---- hostile files: refused with a one-line error, before their cost is paid ---------------------

    /** Runs {@code load} of {@code file} within a few seconds; it must fail as a CheckpointException. */
    private static CheckpointException assertRefusedQuickly(Path file, String... fragments) {
        return assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertLoadFails(file, fragments));
    }

    @Test
    void broadcastViewsAreRefusedBeforeAllocating() throws IOException {
        // Before: 1.6e9 values gathered from one element, an OutOfMemoryError.
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Storage one = w.floatStorage(1f);
        Path file = dir.resolve("stride0.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "w", TorchSaveWriter.tensor(one, 0, new int[] {40_000, 40_000}, new long[] {0, 0}))));

        CheckpointException e = assertRefusedQuickly(file, "tensor w", "stride 0 in dimension 0", "broadcast");
        assertFalse(e.getMessage().contains("\n"), "one line");
    }

    @Test
    void viewsThatOverlapThemselvesAreRefused() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Storage s = w.floatStorage(new float[16]);
        Path file = dir.resolve("overlap.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "w", TorchSaveWriter.tensor(s, 0, new int[] {8, 8}, new long[] {1, 1}))));

        assertRefusedQuickly(file, "tensor w", "strides [1, 1]", "overlap itself");
    }

    @Test
    void hugeStridesAndOffsetsAreOutOfRangeNotOverflows() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Storage s = w.floatStorage(1f, 2f);
        Path file = dir.resolve("overflow.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "w", TorchSaveWriter.tensor(s, Long.MAX_VALUE - 1, new int[] {2}, new long[] {Long.MAX_VALUE}))));

        assertRefusedQuickly(file, "tensor w", "of storage data/0, which holds only 2");
    }

    @Test
    void manyViewsOfOneStorageAreRefused() throws IOException {
        // 2000 names for one 1000-value storage: 2M values from 4 kB of data.
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Storage s = w.floatStorage(new float[1000]);
        Map<String, Object> tensors = new LinkedHashMap<>();
        for (int i = 0; i < 2000; i++) {
            tensors.put("t" + i, TorchSaveWriter.tensor(s, 1000));
        }
        Path file = dir.resolve("views.pth");
        w.write(file, TorchSaveWriter.stateDict(tensors));

        assertRefusedQuickly(file, "2000 tensors claim 2000000 values", "storages hold only 1000");
    }

    @Test
    void tiedWeightsStillLoad() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Storage s = w.floatStorage(new float[1 << 20]);
        Path file = dir.resolve("tied-big.pth");
        w.write(file, TorchSaveWriter.stateDict(items("a", TorchSaveWriter.tensor(s, 1 << 20),
                "b", TorchSaveWriter.tensor(s, 1 << 20))));

        assertEquals(2, CheckpointLoader.load(file).size());
    }

    @Test
    void zipBombStorageIsRefusedBeforeDecompressing() throws IOException {
        // 64 MiB of zeros deflate to 64 kB; a real bomb declares gigabytes the same way.
        TorchSaveWriter w = new TorchSaveWriter("archive").deflate("data/0");
        Storage zeros = w.storage("FloatStorage", 16 << 20, new byte[64 << 20]);
        Path file = dir.resolve("bomb.pth");
        w.write(file, TorchSaveWriter.stateDict(items("w", TorchSaveWriter.tensor(zeros, 16 << 20))));
        assertTrue(Files.size(file) < 1 << 20);

        assertRefusedQuickly(file, "storage records decompress to 67108864 bytes", "16 times the file's size",
                "zip bomb");
    }

    @Test
    void deflatedArchivesOfRealisticRatioStillLoad() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive").deflate("data/0").deflate("data.pkl");
        float[] values = new float[4096];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) Math.sin(i);
        }
        Path file = dir.resolve("deflated.pth");
        w.write(file, TorchSaveWriter.stateDict(items("w", TorchSaveWriter.tensor(w.floatStorage(values), 4096))));

        assertEquals((float) Math.sin(4095), CheckpointLoader.load(file).get("w").data()[4095]);
    }

    @Test
    void zipBombPickleIsRefused() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive").deflate("data.pkl");
        byte[] pickle = new byte[(int) TorchZipReader.MAX_PICKLE_BYTES + 8]; // zeros: deflates to ~65 kB
        Path file = dir.resolve("bigpickle.pth");
        w.writeRaw(file, pickle);

        assertRefusedQuickly(file, "record archive/data.pkl is 67108872 bytes", "pickle is far smaller");
    }

    @Test
    void storageRecordLargerThanDeclaredIsRefused() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Storage s = w.storage("FloatStorage", 2, new byte[4096]);
        Path file = dir.resolve("long.pth");
        w.write(file, TorchSaveWriter.stateDict(items("w", TorchSaveWriter.tensor(s, 2))));

        assertRefusedQuickly(file, "storage archive/data/0 (used by w) holds 4096 bytes but declares 2 float32"
                + " values, 8 bytes");
    }

    @ParameterizedTest
    @ValueSource(strings = {"data/0", "data.pkl"})
    void aFlippedByteFailsTheRecordsCrc(String record) throws IOException {
        // Before: a flipped weight byte loaded silently and changed the masks.
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Path file = dir.resolve("flipped.pth");
        w.write(file, TorchSaveWriter.stateDict(items(
                "mask_decoder.weight", TorchSaveWriter.tensor(w.floatStorage(1.5f, 2.5f, 3.5f, 4.5f), 4))));
        byte[] bytes = Files.readAllBytes(file);
        byte[] needle = record.equals("data.pkl")
                ? "mask_decoder.weight".getBytes(java.nio.charset.StandardCharsets.UTF_8)
                : java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putFloat(2.5f).array();
        int at = indexOf(bytes, needle);
        bytes[at + needle.length - 1] ^= 0x01;
        Files.write(file, bytes);

        assertRefusedQuickly(file, "record archive/" + record + " fails its CRC-32 check", "corrupt");
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("pattern not in file");
    }

    @Test
    void officialNamesMustMatchTheirSha256() throws Exception {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        Path written = dir.resolve("weights.pth");
        w.write(written, TorchSaveWriter.stateDict(items("w", TorchSaveWriter.tensor(w.floatStorage(1f), 1))));
        String sha = java.util.HexFormat.of().formatHex(
                java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(written)));

        Path matching = Files.copy(written, dir.resolve("sam_vit_h_" + sha.substring(0, 6) + ".pth"));
        assertTensor(CheckpointLoader.load(matching).get("w"), new int[] {1}, 1f);

        String wrong = sha.startsWith("01ec64") ? "0b3195" : "01ec64";
        Path impostor = Files.copy(written, dir.resolve("sam_vit_b_" + wrong + ".pth"));
        assertRefusedQuickly(impostor, "named like Meta's official checkpoint whose SHA-256 starts with " + wrong,
                "its SHA-256 is " + sha);
    }
}
