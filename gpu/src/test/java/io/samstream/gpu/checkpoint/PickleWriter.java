package io.samstream.gpu.checkpoint;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Test-only pickler that writes the opcodes CPython's {@code _pickle} writes for the values torch.save
 * pickles, at protocol 2 (torch's default) or 4:
 * <ul>
 *   <li>ints: BININT1 / BININT2 / BININT / LONG1 by size; floats: BINFLOAT; bools: NEWTRUE / NEWFALSE</li>
 *   <li>str: BINUNICODE (protocol 4: SHORT_BINUNICODE below 256 bytes), memoized, repeats as BINGET</li>
 *   <li>tuples: EMPTY_TUPLE, TUPLE1-3, or MARK ... TUPLE, then memoized (not the empty one)</li>
 *   <li>dict / list: EMPTY_DICT / EMPTY_LIST, memoized, then SETITEM / APPEND for one item or
 *       MARK ... SETITEMS / APPENDS in batches of 1000</li>
 *   <li>globals: GLOBAL "module\nname\n" (protocol 4: two strings and STACK_GLOBAL), memoized</li>
 *   <li>reduce: callable, args tuple, REDUCE, memoized; OrderedDict = REDUCE of () then SETITEMS,
 *       then its __dict__ state and BUILD; persistent ids: the id tuple then BINPERSID</li>
 *   <li>memo: BINPUT below index 256, LONG_BINPUT above (protocol 4: MEMOIZE); protocol 4 adds a FRAME</li>
 * </ul>
 * Values: null, Boolean, Integer/Long/BigInteger, Double, String, byte[] as raw opcodes ({@link Raw}),
 * {@link List} (a Python list), {@link Map} (a dict), and the records below.
 */
final class PickleWriter {

    /** A Python tuple. */
    record Tuple(List<Object> items) {
        static Tuple of(Object... items) {
            return new Tuple(Arrays.asList(items));
        }
    }

    /** A reference to module.name, e.g. torch._utils._rebuild_tensor_v2. */
    record Global(String module, String name) {}

    /** callable(*args). */
    record Reduce(Object callable, Tuple args) {}

    /** An object saved through persistent_id: the id is pickled, then BINPERSID. */
    record Persistent(Object id) {}

    /** collections.OrderedDict(items) whose __dict__ is {@code state} (null: none), as state_dict() returns. */
    record OrderedDict(Map<String, Object> items, Map<String, Object> state) {}

    /** Bytes spliced into the stream as they are, for hand-made pickles. */
    record Raw(byte[] bytes) {}

    static final Global ORDERED_DICT = new Global("collections", "OrderedDict");

    private final int protocol;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final Map<Object, Integer> memoByValue = new HashMap<>();
    private final Map<Object, Integer> memoByIdentity = new IdentityHashMap<>();
    private int memoSize;
    private final int[] opcodeCounts = new int[256];

    PickleWriter(int protocol) {
        if (protocol != 2 && protocol != 4) {
            throw new IllegalArgumentException("protocol 2 or 4");
        }
        this.protocol = protocol;
    }

    /** A pickle and how many times each opcode occurs in it (to check what a test exercises). */
    record Pickle(byte[] bytes, int[] opcodeCounts) {
        int count(int opcode) {
            return opcodeCounts[opcode];
        }
    }

    /** The complete pickle of {@code root}: PROTO, (FRAME,) the value, STOP. */
    static byte[] dumps(Object root, int protocol) {
        return dump(root, protocol).bytes();
    }

    static Pickle dump(Object root, int protocol) {
        PickleWriter w = new PickleWriter(protocol);
        w.save(root);
        w.op('.');
        byte[] body = w.out.toByteArray();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.write(0x80);
        all.write(protocol);
        if (protocol >= 4) {
            all.write(0x95);
            all.writeBytes(ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(body.length).array());
        }
        all.writeBytes(body);
        w.opcodeCounts[0x80]++;
        if (protocol >= 4) {
            w.opcodeCounts[0x95]++;
        }
        return new Pickle(all.toByteArray(), w.opcodeCounts);
    }

    private void op(int opcode) {
        opcodeCounts[opcode]++;
        out.write(opcode);
    }

    void save(Object obj) {
        if (obj == null) {
            op('N');
        } else if (obj instanceof Boolean b) {
            op(b ? 0x88 : 0x89);
        } else if (obj instanceof Integer i) {
            saveInt(BigInteger.valueOf(i));
        } else if (obj instanceof Long l) {
            saveInt(BigInteger.valueOf(l));
        } else if (obj instanceof BigInteger b) {
            saveInt(b);
        } else if (obj instanceof Double d) {
            op('G');
            out.writeBytes(ByteBuffer.allocate(8).putDouble(d).array());
        } else if (obj instanceof String s) {
            saveString(s);
        } else if (obj instanceof Raw r) {
            out.writeBytes(r.bytes());
        } else if (obj instanceof Tuple t) {
            saveTuple(t);
        } else if (obj instanceof List<?> l) {
            saveList(l);
        } else if (obj instanceof Map<?, ?> m) {
            saveDict(m);
        } else if (obj instanceof Global g) {
            saveGlobal(g);
        } else if (obj instanceof Reduce r) {
            if (getIfMemoized(r, true)) {
                return;
            }
            save(r.callable());
            save(r.args());
            op('R');
            memoize(r, true);
        } else if (obj instanceof Persistent p) {
            save(p.id());
            op('Q');
        } else if (obj instanceof OrderedDict od) {
            if (getIfMemoized(od, true)) {
                return;
            }
            save(ORDERED_DICT);
            op(')');
            op('R');
            memoize(od, true);
            setItems(od.items());
            if (od.state() != null) {
                save(od.state());
                op('b');
            }
        } else {
            throw new IllegalArgumentException("cannot pickle " + obj.getClass());
        }
    }

    private void saveInt(BigInteger v) {
        if (v.signum() >= 0 && v.compareTo(BigInteger.valueOf(0xff)) <= 0) {
            op('K');
            out.write(v.intValue());
        } else if (v.signum() >= 0 && v.compareTo(BigInteger.valueOf(0xffff)) <= 0) {
            op('M');
            out.write(v.intValue() & 0xff);
            out.write(v.intValue() >>> 8);
        } else if (v.bitLength() < 32) {
            op('J');
            writeInt32(v.intValue());
        } else {
            // LONG1: minimal little-endian two's complement
            byte[] big = v.toByteArray();
            op(0x8a);
            out.write(big.length);
            for (int i = big.length - 1; i >= 0; i--) {
                out.write(big[i]);
            }
        }
    }

    private void saveString(String s) {
        if (getIfMemoized(s, false)) {
            return;
        }
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        if (protocol >= 4 && utf8.length < 256) {
            op(0x8c);
            out.write(utf8.length);
        } else {
            op('X');
            writeInt32(utf8.length);
        }
        out.writeBytes(utf8);
        memoize(s, false);
    }

    private void saveTuple(Tuple t) {
        int n = t.items().size();
        if (n == 0) {
            op(')');
            return;
        }
        if (getIfMemoized(t, true)) {
            return;
        }
        if (n <= 3) {
            for (Object o : t.items()) {
                save(o);
            }
            op(0x84 + n); // TUPLE1 0x85, TUPLE2 0x86, TUPLE3 0x87
        } else {
            op('(');
            for (Object o : t.items()) {
                save(o);
            }
            op('t');
        }
        memoize(t, true);
    }

    private void saveList(List<?> l) {
        if (getIfMemoized(l, true)) {
            return;
        }
        op(']');
        memoize(l, true);
        List<?> items = l;
        for (int start = 0; start < items.size(); start += 1000) {
            List<?> batch = items.subList(start, Math.min(items.size(), start + 1000));
            if (batch.size() == 1) {
                save(batch.get(0));
                op('a');
            } else {
                op('(');
                batch.forEach(this::save);
                op('e');
            }
        }
    }

    private void saveDict(Map<?, ?> m) {
        if (getIfMemoized(m, true)) {
            return;
        }
        op('}');
        memoize(m, true);
        setItems(m);
    }

    private void setItems(Map<?, ?> m) {
        List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
        for (int start = 0; start < entries.size(); start += 1000) {
            List<Map.Entry<?, ?>> batch = entries.subList(start, Math.min(entries.size(), start + 1000));
            if (batch.size() == 1) {
                save(batch.get(0).getKey());
                save(batch.get(0).getValue());
                op('s');
            } else {
                op('(');
                for (Map.Entry<?, ?> e : batch) {
                    save(e.getKey());
                    save(e.getValue());
                }
                op('u');
            }
        }
    }

    private void saveGlobal(Global g) {
        if (getIfMemoized(g, false)) {
            return;
        }
        if (protocol >= 4) {
            save(g.module());
            save(g.name());
            op(0x93);
        } else {
            op('c');
            out.writeBytes((g.module() + "\n" + g.name() + "\n").getBytes(StandardCharsets.UTF_8));
        }
        memoize(g, false);
    }

    private boolean getIfMemoized(Object o, boolean byIdentity) {
        Integer index = byIdentity ? memoByIdentity.get(o) : memoByValue.get(o);
        if (index == null) {
            return false;
        }
        if (index < 256) {
            op('h');
            out.write(index);
        } else {
            op('j');
            writeInt32(index);
        }
        return true;
    }

    private void memoize(Object o, boolean byIdentity) {
        int index = memoSize++;
        (byIdentity ? memoByIdentity : memoByValue).put(o, index);
        if (protocol >= 4) {
            op(0x94);
        } else if (index < 256) {
            op('q');
            out.write(index);
        } else {
            op('r');
            writeInt32(index);
        }
    }

    private void writeInt32(int v) {
        out.write(v & 0xff);
        out.write((v >>> 8) & 0xff);
        out.write((v >>> 16) & 0xff);
        out.write((v >>> 24) & 0xff);
    }
}
