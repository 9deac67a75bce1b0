package io.samstream.gpu.checkpoint;

import static io.samstream.gpu.checkpoint.CheckpointAssertions.assertFails;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.PickleWriter.Global;
import io.samstream.gpu.checkpoint.PickleWriter.Raw;
import io.samstream.gpu.checkpoint.PickleWriter.Reduce;
import io.samstream.gpu.checkpoint.PickleWriter.Tuple;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RestrictedUnpicklerTest {
    private static final Path FILE = Path.of("values.pth");

    @TempDir
    Path dir;

    private static Object load(byte[] pickle) {
        return RestrictedUnpickler.load(FILE, "archive/data.pkl", pickle);
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void plainValuesKeepTheirTypesAndValues(int protocol) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("small", 200);
        root.put("medium", 60_000);
        root.put("negative", -5);
        root.put("int32", 2_000_000_000);
        root.put("int64", 1L << 40);
        root.put("negative64", -(1L << 50));
        root.put("huge", BigInteger.ONE.shiftLeft(70));
        root.put("float", 0.1);
        root.put("yes", true);
        root.put("no", false);
        root.put("none", null);
        root.put("text", "héllo ✓");
        root.put("list", new ArrayList<>(List.of(1, 2, 3)));
        root.put("tuple", Tuple.of(1, "a", null, 2.5));
        root.put("bytes", new Reduce(new Global("_codecs", "encode"), Tuple.of("ab\u00ff", "latin1")));
        root.put("set", new Raw(new byte[] {(byte) 0x8f, '(', 'K', 1, 'K', 2, (byte) 0x90}));

        @SuppressWarnings("unchecked")
        Map<Object, Object> m = (Map<Object, Object>) load(PickleWriter.dumps(root, protocol));

        assertEquals(200L, m.get("small"));
        assertEquals(60_000L, m.get("medium"));
        assertEquals(-5L, m.get("negative"));
        assertEquals(2_000_000_000L, m.get("int32"));
        assertEquals(1L << 40, m.get("int64"));
        assertEquals(-(1L << 50), m.get("negative64"));
        assertEquals(BigInteger.ONE.shiftLeft(70), m.get("huge"));
        assertEquals(0.1, m.get("float"));
        assertEquals(Boolean.TRUE, m.get("yes"));
        assertEquals(Boolean.FALSE, m.get("no"));
        assertTrue(m.containsKey("none"));
        assertNull(m.get("none"));
        assertEquals("héllo ✓", m.get("text"));
        assertEquals(List.of(1L, 2L, 3L), m.get("list"));
        assertEquals(java.util.Arrays.asList(1L, "a", null, 2.5), m.get("tuple"));
        assertArrayEquals("ab\u00ff".getBytes(StandardCharsets.ISO_8859_1), (byte[]) m.get("bytes"));
        assertEquals(Set.of(1L, 2L), m.get("set"));
    }

    @Test
    void stackAndMemoOpcodesWork() {
        // PROTO 2, MARK, BININT1 1, POP, BININT1 2, DUP, TUPLE, BINPUT 0, POP, BINGET 0, STOP
        byte[] pickle = {(byte) 0x80, 2, '(', 'K', 1, '0', 'K', 2, '2', 't', 'q', 0, '0', 'h', 0, '.'};
        assertEquals(List.of(2L, 2L), load(pickle));
    }

    @Test
    void namesFromTheFileCannotBreakTheMessagesLine() {
        // PROTO 4, SHORT_BINUNICODE "o\ns", SHORT_BINUNICODE "sys\u0007tem", STACK_GLOBAL, STOP (found by fuzzing)
        byte[] pickle = {(byte) 0x80, 4, (byte) 0x8c, 3, 'o', '\n', 's', (byte) 0x8c, 7, 's', 'y', 's', 7, 't', 'e', 'm',
            (byte) 0x93, '.'};
        CheckpointException e = org.junit.jupiter.api.Assertions.assertThrows(CheckpointException.class,
                () -> load(pickle));
        assertTrue(e.getMessage().contains("names the Python global o\\ns.sys\\u0007tem, which is not"), e.getMessage());
        assertTrue(e.getMessage().chars().noneMatch(Character::isISOControl), e.getMessage());
    }

    @Test
    void corruptStreamsAreReportedNotThrownRaw() {
        assertFails(FILE, () -> load(new byte[] {(byte) 0x80, 2, 'h', 9, '.'}), "memo entry 9, which was never stored");
        assertFails(FILE, () -> load(new byte[] {(byte) 0x80, 2, 't', '.'}), "MARK that was never opened");
        assertFails(FILE, () -> load(new byte[] {(byte) 0x80, 2, '.'}), "empty stack");
        assertFails(FILE, () -> load(new byte[] {(byte) 0x80, 2, 'X', 100, 0, 0, 0, 'a', '.'}),
                "BINUNICODE of 100 bytes but only 2 remain");
        assertFails(FILE, () -> load(new byte[] {(byte) 0x80, 9, '.'}), "pickle protocol 9");
        assertFails(FILE, () -> load(new byte[] {(byte) 0x80, 2, 'X', 2, 0, 0, 0, (byte) 0xff, (byte) 0xfe, '.'}),
                "not valid UTF-8");
        assertFails(FILE, () -> load(new byte[] {(byte) 0x80, 2, 'K', 1, 'K', 2, 'K', 3, 's', '.'}),
                "SETITEM stores into an int instead of a dict");
        assertFails(FILE, () -> load(new byte[] {(byte) 0x80, 2, '}', '}', 'b', '.'}),
                "BUILD sets the state of a dict");
    }

    @Test
    void persistentIdsMustBeTorchStorages() {
        byte[] pickle = PickleWriter.dumps(new PickleWriter.Persistent(Tuple.of("module", "x")), 2);
        assertFails(FILE, () -> load(pickle), "not a torch storage reference");
    }

    @Test
    void rebuildArgumentsAreChecked() {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        TorchSaveWriter.Storage s = w.floatStorage(1f, 2f);
        Reduce badStride = new Reduce(TorchSaveWriter.REBUILD_TENSOR_V2, Tuple.of(TorchSaveWriter.persistentId(s), 0,
                Tuple.of(2), Tuple.of(1, 1), false, new Reduce(PickleWriter.ORDERED_DICT, Tuple.of())));
        assertFails(FILE, () -> load(PickleWriter.dumps(badStride, 2)), "1 sizes but 2 strides");

        Reduce negativeOffset = new Reduce(TorchSaveWriter.REBUILD_TENSOR_V2, Tuple.of(TorchSaveWriter.persistentId(s),
                -1, Tuple.of(2), Tuple.of(1), false, new Reduce(PickleWriter.ORDERED_DICT, Tuple.of())));
        assertFails(FILE, () -> load(PickleWriter.dumps(negativeOffset, 2)), "storage offset should be a non-negative int");

        Reduce fewArgs = new Reduce(TorchSaveWriter.REBUILD_TENSOR_V2, Tuple.of(TorchSaveWriter.persistentId(s), 0));
        assertFails(FILE, () -> load(PickleWriter.dumps(fewArgs, 2)),
                "torch._utils._rebuild_tensor_v2 is called with 2 arguments instead of 6 or 7");
    }

    @Test
    void newerRebuildFunctionsAreUnderstood() {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        // _rebuild_tensor_v3 over an untyped storage of 8 bytes viewed as 2 float32 values, with metadata
        PickleWriter.Persistent untyped = new PickleWriter.Persistent(
                Tuple.of("storage", new Global("torch", "UntypedStorage"), "untyped", "cuda:0", 8));
        Reduce v3 = new Reduce(new Global("torch._utils", "_rebuild_tensor_v3"), Tuple.of(untyped, 1, Tuple.of(1),
                Tuple.of(1), false, new Reduce(PickleWriter.ORDERED_DICT, Tuple.of()), new Global("torch", "float32"),
                new LinkedHashMap<>()));
        // a tensor subclass path: _rebuild_from_type_v2(_rebuild_tensor_v2, torch.Tensor, args, state)
        TorchSaveWriter.Storage half = w.shortStorage("HalfStorage", (short) 0x3C00);
        Reduce inner = TorchSaveWriter.tensor(half, 1);
        Reduce fromType = new Reduce(new Global("torch._tensor", "_rebuild_from_type_v2"), Tuple.of(
                TorchSaveWriter.REBUILD_TENSOR_V2, new Global("torch", "Tensor"), inner.args(), new LinkedHashMap<>()));
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("v3", v3);
        root.put("sub", fromType);

        @SuppressWarnings("unchecked")
        Map<Object, Object> m = (Map<Object, Object>) load(PickleWriter.dumps(root, 2));

        TensorRef a = (TensorRef) m.get("v3");
        assertEquals(ElementType.FLOAT32, a.dtype());
        assertTrue(a.storage().untyped());
        assertEquals(1, a.offset());
        TensorRef b = (TensorRef) m.get("sub");
        assertEquals(ElementType.FLOAT16, b.dtype());
        assertArrayEquals(new int[] {1}, b.size());
    }

    // ---- hostile pickles: a clear error in bounded time, never a StackOverflowError or a hang ---------

    private static final byte[] HEAD = {(byte) 0x80, 2};

    /** A pickle of {@code HEAD}, {@code body} and STOP. */
    private static byte[] pickle(ByteArrayOutputStream body) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(HEAD);
        all.writeBytes(body.toByteArray());
        all.write('.');
        return all.toByteArray();
    }

    private static void assertRefusedQuickly(byte[] pickle, String... fragments) {
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertFails(FILE, () -> load(pickle), fragments));
    }

    @Test
    void selfReferentialKeyIsRefused() {
        // Before: hashing a list that holds itself, a StackOverflowError.
        // EMPTY_DICT, EMPTY_LIST, BINPUT 0, BINGET 0, APPEND (the list holds itself), NONE, SETITEM
        byte[] pickle = {(byte) 0x80, 2, '}', ']', 'q', 0, 'h', 0, 'a', 'N', 's', '.'};
        assertRefusedQuickly(pickle, "SETITEM uses a list as a dict key", "a state_dict's keys are strings");
    }

    @Test
    void selfReferentialValuesLoadWithoutRecursion() {
        // A dict holding itself as a value is legal Python; nothing walks it.
        byte[] pickle = {(byte) 0x80, 2, '}', 'q', 0, 'X', 4, 0, 0, 0, 's', 'e', 'l', 'f', 'h', 0, 's', '.'};
        Map<?, ?> m = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> (Map<?, ?>) load(pickle));
        assertTrue(m.get("self") == m);
    }

    @Test
    void hashBombKeyIsRefused() {
        // Before: t = (); 100 times t = (t, t); {t: None} hashed 2^100 tuples, 100% CPU forever.
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write('}');
        body.writeBytes(tupleBomb(100));
        body.writeBytes(new byte[] {'N', 's'});
        assertRefusedQuickly(pickle(body), "SETITEM uses a tuple of 2 as a dict key");
    }

    @Test
    void hashBombSetItemIsRefused() {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {(byte) 0x8f, '('});
        body.writeBytes(tupleBomb(100));
        body.write(0x90); // ADDITEMS
        assertRefusedQuickly(pickle(body), "ADDITEMS uses a tuple of 2 as a dict key or set item");
    }

    /** Opcodes leaving t on the stack, where t = (); n times t = (t, t): 2^n tuples to hash, 11n bytes. */
    private static byte[] tupleBomb(int n) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(new byte[] {')', 'r', 0, 0, 0, 0, '0'}); // EMPTY_TUPLE, LONG_BINPUT 0, POP
        for (int i = 0; i < n; i++) {
            // LONG_BINGET i twice, TUPLE2, LONG_BINPUT i + 1, POP
            b.writeBytes(new byte[] {'j', (byte) i, 0, 0, 0, 'j', (byte) i, 0, 0, 0, (byte) 0x86,
                'r', (byte) (i + 1), 0, 0, 0, '0'});
        }
        b.writeBytes(new byte[] {'j', (byte) n, 0, 0, 0});
        return b.toByteArray();
    }

    @Test
    void hashBombFrozensetIsRefused() {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write('(');
        body.writeBytes(tupleBomb(100));
        body.write(0x91); // FROZENSET
        assertRefusedQuickly(pickle(body), "FROZENSET uses a tuple of 2 as a dict key or set item");
    }


    @Test
    void flatTupleKeysAreAccepted() {
        // ("a", 1): None - a flat tuple of scalars hashes in linear time
        byte[] pickle = {(byte) 0x80, 2, '}', 'X', 1, 0, 0, 0, 'a', 'K', 1, (byte) 0x86, 'N', 's', '.'};
        Map<?, ?> m = (Map<?, ?>) load(pickle);
        assertTrue(m.containsKey(java.util.Arrays.asList("a", 1L)));
    }

    @Test
    void deeplyNestedTuplesAreRefused() {
        // Before: 100000 nested tuples as a key, a StackOverflowError.
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write('N');
        for (int i = 0; i < 100_000; i++) {
            body.write(0x85); // TUPLE1
        }
        assertRefusedQuickly(pickle(body), "nests tuples more than 1000 deep");
    }

    @Test
    void deeplyNestedMarksAreRefused() {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (int i = 0; i < 100_000; i++) {
            body.write('(');
        }
        assertRefusedQuickly(pickle(body), "opens more than 1000 nested MARKs");
    }

    @Test
    void deeplyNestedListsNeverRecurse() throws IOException {
        // 100000 lists, each appended into the one below it on the stack: a list nested 100000 deep.
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (int i = 0; i < 100_000; i++) {
            body.write(']');
        }
        for (int i = 1; i < 100_000; i++) {
            body.write('a');
        }
        byte[] deep = pickle(body);
        Object root = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> load(deep));
        assertTrue(root instanceof List);
        // ... and a checkpoint made of it is refused by type, not by a StackOverflowError.
        Path file = dir.resolve("deep.pth");
        new TorchSaveWriter("archive").writeRaw(file, deep);
        assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> CheckpointAssertions.assertLoadFails(file, "holds a list instead of a dict of tensors"));
    }

    @Test
    void memoIsBounded() {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write('N');
        for (int i = 0; i <= RestrictedUnpickler.MAX_MEMO; i++) {
            body.writeBytes(new byte[] {'r', (byte) i, (byte) (i >>> 8), (byte) (i >>> 16), (byte) (i >>> 24)});
        }
        assertRefusedQuickly(pickle(body), "stores more than 1048576 memo entries");
    }

    @Test
    void valuesHeldAreBounded() {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write('(');
        body.writeBytes(new byte[(int) RestrictedUnpickler.MAX_ITEMS + 1]); // zero bytes: no opcode
        byte[] nones = pickle(body);
        java.util.Arrays.fill(nones, 3, nones.length - 1, (byte) 'N');
        assertRefusedQuickly(nones, "holds more than 16777216 values");
    }
}
