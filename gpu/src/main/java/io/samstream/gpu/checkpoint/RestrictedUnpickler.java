package io.samstream.gpu.checkpoint;

import static io.samstream.gpu.checkpoint.PickleOpcodes.*;

import io.samstream.gpu.checkpoint.TorchGlobals.DType;
import io.samstream.gpu.checkpoint.TorchGlobals.Function;
import io.samstream.gpu.checkpoint.TorchGlobals.Global;
import io.samstream.gpu.checkpoint.TorchGlobals.StorageType;
import io.samstream.gpu.checkpoint.TorchGlobals.TensorClass;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the {@code data.pkl} of a torch.save archive into plain Java values without running anything.
 *
 * <p>Python's pickle is a small stack machine whose GLOBAL and REDUCE opcodes import and call arbitrary
 * functions; that is how a malicious checkpoint runs code. This interpreter implements the data
 * opcodes of protocols 2-5 and emulates, by itself, only the few torch functions a state_dict uses
 * ({@link TorchGlobals}). Any other global, and any opcode outside that set, is refused at the byte
 * where it appears, before a single storage is read.
 *
 * <p>Hostile pickles are bounded: the interpreter never recurses, and never hashes, compares or prints
 * a container it built (only scalars and flat tuples of scalars may be dict keys or set items, so a
 * self-referential, deeply nested or exponentially shared "hash bomb" key is refused). Nesting
 * ({@link #MAX_DEPTH}), the memo ({@link #MAX_MEMO}) and the values held in containers and on the stack
 * ({@link #MAX_ITEMS}) have limits far above what any state_dict needs.
 *
 * <p>Python values become: dict and OrderedDict - {@link LinkedHashMap}; list - {@link ArrayList};
 * tuple - an unmodifiable {@link List}; int - {@link Long} (or {@link BigInteger} beyond 64 bits);
 * float - {@link Double}; str - {@link String}; bytes - {@code byte[]}; bool - {@link Boolean};
 * None - null; set - {@link Set}; a tensor - {@link TensorRef}, whose data stays in the archive.
 */
final class RestrictedUnpickler {

    /** An OrderedDict: a map that, unlike a plain dict, may receive BUILD (its {@code _metadata}). */
    static final class OrderedDictValue extends LinkedHashMap<Object, Object> {}

    /** Open MARKs and nested tuples; Python's own pickler stops near 1000 (its recursion limit). */
    static final int MAX_DEPTH = 1000;
    /** Memo entries; a SAM state_dict uses a few thousand. */
    static final int MAX_MEMO = 1 << 20;
    /** Values held in containers and on the stack together; a SAM state_dict holds a few ten thousand. */
    static final long MAX_ITEMS = 1L << 24;

    private final Path file;
    private final String entry;
    private final byte[] in;
    private int pos;
    private int opcodeStart;
    private List<Object> stack = new ArrayList<>();
    private final Deque<List<Object>> marks = new ArrayDeque<>();
    private final Map<Long, Object> memo = new HashMap<>();
    /** Nesting depth of the tuples built so far (tuples are immutable, so this is exact). */
    private final Map<Object, Integer> tupleDepth = new IdentityHashMap<>();
    /** Values now on the stack or in containers, against {@link #MAX_ITEMS}. */
    private long held;
    /** One StorageRef per storage key: the first declaration wins, as in torch.load. */
    private final Map<String, StorageRef> storages = new HashMap<>();
    /** Keys of the complex64 storages, which are read as float32 pairs. */
    private final Set<String> complexStorages = new HashSet<>();

    private RestrictedUnpickler(Path file, String entry, byte[] pickle) {
        this.file = file;
        this.entry = entry;
        this.in = pickle;
    }

    /**
     * Unpickles {@code pickle}, the content of the archive record {@code entry} of {@code file} (both
     * named in errors).
     */
    static Object load(Path file, String entry, byte[] pickle) {
        return new RestrictedUnpickler(file, entry, pickle).run();
    }

    private Object run() {
        while (true) {
            if (pos >= in.length) {
                throw fail("ends without a STOP opcode: the pickle is truncated");
            }
            opcodeStart = pos;
            int op = in[pos++] & 0xff;
            switch (op) {
                case PROTO -> {
                    int version = u8();
                    if (version < 2 || version > 5) {
                        throw fail("uses pickle protocol " + version + "; only protocols 2 to 5 are read");
                    }
                }
                case FRAME -> s64(); // a frame only groups opcodes for buffered readers: skip its length
                case STOP -> {
                    return pop();
                }
                case MARK -> {
                    if (marks.size() >= MAX_DEPTH) {
                        throw fail("opens more than " + MAX_DEPTH + " nested MARKs; a state_dict is a few levels"
                                + " deep, so the file is refused");
                    }
                    marks.push(stack);
                    stack = new ArrayList<>();
                }
                case POP -> {
                    if (stack.isEmpty()) {
                        popMark();
                    } else {
                        pop();
                    }
                }
                case POP_MARK -> popMark();
                case DUP -> push(peek());

                case NONE -> push(null);
                case NEWTRUE -> push(Boolean.TRUE);
                case NEWFALSE -> push(Boolean.FALSE);
                case BININT -> push((long) s32());
                case BININT1 -> push((long) u8());
                case BININT2 -> push((long) u16());
                case LONG1 -> push(littleEndianSigned(u8()));
                case LONG4 -> push(littleEndianSigned(length(s32())));
                case BINFLOAT -> {
                    need(8);
                    push(ByteBuffer.wrap(in, pos, 8).getDouble());
                    pos += 8;
                }
                case BINUNICODE -> push(utf8(length(u32())));
                case SHORT_BINUNICODE -> push(utf8(u8()));
                case BINUNICODE8 -> push(utf8(length(s64())));
                case SHORT_BINSTRING -> push(utf8(u8()));
                case BINSTRING -> push(utf8(length(s32())));
                case SHORT_BINBYTES -> push(bytes(u8()));
                case BINBYTES -> push(bytes(length(u32())));
                case BINBYTES8, BYTEARRAY8 -> push(bytes(length(s64())));

                case EMPTY_TUPLE -> push(tuple(List.of()));
                case TUPLE -> push(tuple(holdAll(popMark())));
                case TUPLE1 -> push(tuple(holdAll(popN(1))));
                case TUPLE2 -> push(tuple(holdAll(popN(2))));
                case TUPLE3 -> push(tuple(holdAll(popN(3))));
                case EMPTY_LIST -> push(new ArrayList<>());
                case LIST -> push(new ArrayList<>(holdAll(popMark())));
                case APPEND -> {
                    Object item = pop();
                    list(peek(), "APPEND").add(hold(item));
                }
                case APPENDS -> {
                    List<Object> items = popMark();
                    list(peek(), "APPENDS").addAll(holdAll(items));
                }
                case EMPTY_DICT -> push(new LinkedHashMap<>());
                case DICT -> {
                    Map<Object, Object> dict = new LinkedHashMap<>();
                    putPairs(dict, popMark());
                    push(dict);
                }
                case SETITEM -> {
                    Object value = pop();
                    Object key = pop();
                    map(peek(), "SETITEM").put(key(key, "SETITEM"), hold(value));
                }
                case SETITEMS -> {
                    List<Object> items = popMark();
                    putPairs(map(peek(), "SETITEMS"), items);
                }
                case EMPTY_SET -> push(new LinkedHashSet<>());
                case ADDITEMS -> {
                    List<Object> items = popMark();
                    set(peek()).addAll(keys(items, "ADDITEMS"));
                }
                case FROZENSET -> push(Collections.unmodifiableSet(new LinkedHashSet<>(keys(popMark(), "FROZENSET"))));

                case BINPUT -> memoPut(u8());
                case LONG_BINPUT -> memoPut(u32());
                case MEMOIZE -> memoPut(memo.size());
                case BINGET -> push(memoGet(u8()));
                case LONG_BINGET -> push(memoGet(u32()));

                case GLOBAL -> {
                    String module = line();
                    String name = line();
                    push(global(module, name));
                }
                case STACK_GLOBAL -> {
                    Object name = pop();
                    Object module = pop();
                    if (!(module instanceof String m) || !(name instanceof String n)) {
                        throw fail("STACK_GLOBAL needs two strings, got " + describe(module) + " and "
                                + describe(name));
                    }
                    push(global(m, n));
                }
                case BINPERSID -> push(persistentLoad(pop()));
                case REDUCE -> {
                    Object args = pop();
                    Object function = pop();
                    push(reduce(function, args));
                }
                case NEWOBJ -> {
                    Object args = pop();
                    push(newObject(pop(), args, Map.of()));
                }
                case NEWOBJ_EX -> {
                    Object kwargs = pop();
                    Object args = pop();
                    push(newObject(pop(), args, kwargs));
                }
                case BUILD -> {
                    Object state = pop();
                    build(peek(), state);
                }
                default -> throw fail("uses " + opcodeName(op)
                        + ", which a state_dict never needs; the file is refused");
            }
        }
    }

    // ---- the emulated torch functions -------------------------------------------------------------

    private Global global(String module, String name) {
        Global g = TorchGlobals.resolve(module, name);
        if (g == null) {
            throw fail("names the Python global " + shorten(module + "." + name)
                    + ", which is not one of the torch types and functions a state_dict uses; the file is"
                    + " refused before anything in it is used (loading never runs code). If it holds a whole"
                    + " pickled model or other Python objects, save model.state_dict() with torch.save instead");
        }
        return g;
    }

    private Object reduce(Object function, Object argsObject) {
        if (!(function instanceof Function f)) {
            throw fail("REDUCE calls " + describe(function) + ", which is not a function the loader emulates");
        }
        List<Object> args = tuple(argsObject, f.qualifiedName());
        return switch (f) {
            case ORDERED_DICT -> orderedDict(args);
            case TORCH_SIZE -> {
                arity(f, args, 1, 1);
                yield tuple(args.get(0), "torch.Size");
            }
            case REBUILD_TENSOR -> {
                arity(f, args, 4, 4);
                yield typedTensor(args);
            }
            case REBUILD_TENSOR_V2 -> {
                // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
                arity(f, args, 6, 7);
                yield typedTensor(args);
            }
            case REBUILD_TENSOR_V3 -> {
                // (storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype[, metadata])
                arity(f, args, 7, 8);
                if (!(args.get(6) instanceof DType dtype)) {
                    throw fail(f.qualifiedName() + " needs a dtype as 7th argument, got " + describe(args.get(6)));
                }
                if (dtype.type() == ElementType.COMPLEX64) {
                    yield args.get(0) instanceof StorageRef s && !s.untyped() ? typedTensor(args)
                            : asRealPairs(tensor(args, ElementType.FLOAT32));
                }
                yield tensor(args, dtype.type());
            }
            case REBUILD_PARAMETER, REBUILD_PARAMETER_WITH_STATE -> {
                // (data, requires_grad, backward_hooks[, state]): a Parameter is its data for us.
                arity(f, args, f == Function.REBUILD_PARAMETER ? 3 : 4, f == Function.REBUILD_PARAMETER ? 3 : 4);
                if (!(args.get(0) instanceof TensorRef t)) {
                    throw fail(f.qualifiedName() + " wraps " + describe(args.get(0)) + " instead of a tensor");
                }
                yield t;
            }
            case REBUILD_FROM_TYPE_V2 -> {
                // (rebuild function, tensor type, its args, python state): a Tensor or Parameter subclass
                // path; the python-side attributes in state do not matter to the weights.
                arity(f, args, 4, 4);
                if (!(args.get(0) instanceof Function inner) || !inner.rebuildsTensor()) {
                    throw fail(f.qualifiedName() + " calls " + describe(args.get(0))
                            + ", which is not a tensor rebuild function");
                }
                if (!(args.get(1) instanceof TensorClass)) {
                    throw fail(f.qualifiedName() + " builds " + describe(args.get(1))
                            + ", which is not torch.Tensor or torch.nn.Parameter");
                }
                yield reduce(inner, args.get(2));
            }
            case CODECS_ENCODE -> {
                // protocol 2 pickles Python 3 bytes as _codecs.encode(text, 'latin1').
                arity(f, args, 2, 2);
                if (!(args.get(0) instanceof String text) || !isLatin1(args.get(1))) {
                    throw fail("_codecs.encode is only accepted as encode(str, 'latin1'), got "
                            + describe(args.get(0)) + ", " + describe(args.get(1)));
                }
                yield text.getBytes(StandardCharsets.ISO_8859_1);
            }
        };
    }

    private Object newObject(Object cls, Object args, Object kwargs) {
        if (cls == Function.ORDERED_DICT && tuple(args, "NEWOBJ").isEmpty()
                && kwargs instanceof Map<?, ?> m && m.isEmpty()) {
            return new OrderedDictValue();
        }
        throw fail("NEWOBJ creates " + describe(cls) + "; only an empty collections.OrderedDict is accepted");
    }

    private void build(Object instance, Object state) {
        // OrderedDict.__reduce__ passes the instance __dict__ (a state_dict's _metadata) as BUILD state.
        // It only records module versions, which do not change the weights: ignored.
        if (!(instance instanceof OrderedDictValue)) {
            throw fail("BUILD sets the state of " + describe(instance)
                    + "; only an OrderedDict's attributes (a state_dict's _metadata) are accepted");
        }
    }

    private OrderedDictValue orderedDict(List<Object> args) {
        OrderedDictValue dict = new OrderedDictValue();
        if (args.isEmpty()) {
            return dict;
        }
        if (args.size() != 1 || !(args.get(0) instanceof List<?> pairs)) {
            throw fail("collections.OrderedDict is only accepted with no arguments or a list of pairs");
        }
        for (Object pair : pairs) {
            List<Object> kv = tuple(pair, "an OrderedDict item");
            if (kv.size() != 2) {
                throw fail("an OrderedDict item has " + kv.size() + " elements instead of 2");
            }
            dict.put(key(kv.get(0), "collections.OrderedDict"), hold(kv.get(1)));
        }
        return dict;
    }

    private StorageRef persistentLoad(Object pid) {
        // ('storage', storage_type, key, location, numel), as torch.serialization's persistent_id writes it
        if (!(pid instanceof List<?> t) || t.size() != 5 || !"storage".equals(text(t.get(0)))) {
            throw fail("has a persistent id " + describe(pid)
                    + " that is not a torch storage reference ('storage', type, key, location, numel)");
        }
        if (!(t.get(1) instanceof StorageType type)) {
            throw fail("declares a storage of type " + describe(t.get(1)) + ", which is not a torch storage class");
        }
        String key = text(t.get(2));
        String location = text(t.get(3));
        if (key == null || location == null) {
            throw fail("declares a storage whose key or location is not a string: " + describe(pid));
        }
        long numel = nonNegative(t.get(4), "the element count of storage " + key);
        if (type.type() == ElementType.COMPLEX64 && !type.untyped()) {
            // a complex storage is read as its float32 (real, imaginary) pairs
            complexStorages.add(key);
            return storages.computeIfAbsent(key, k -> new StorageRef(k, ElementType.FLOAT32, false, location,
                    Math.multiplyExact(numel, 2)));
        }
        return storages.computeIfAbsent(key, k -> new StorageRef(k, type.type(), type.untyped(), location, numel));
    }

    /** _rebuild_tensor(_v2): the element type is the storage's. */
    private TensorRef typedTensor(List<Object> args) {
        if (args.get(0) instanceof StorageRef s && s.untyped()) {
            throw fail("rebuilds a tensor over the untyped storage " + s.key() + " without naming its dtype");
        }
        if (args.get(0) instanceof StorageRef s && complexStorages.contains(s.key())) {
            return asRealPairs(tensor(args, null));
        }
        return tensor(args, null);
    }

    /** A complex64 view as torch's view_as_real: float32, a trailing dimension of 2, strides and offset doubled. */
    private static TensorRef asRealPairs(TensorRef t) {
        int[] size = Arrays.copyOf(t.size(), t.size().length + 1);
        long[] stride = new long[size.length];
        size[size.length - 1] = 2;
        for (int d = 0; d < t.stride().length; d++) {
            stride[d] = Math.multiplyExact(t.stride()[d], 2);
        }
        stride[size.length - 1] = 1;
        return new TensorRef(t.storage(), ElementType.FLOAT32, Math.multiplyExact(t.offset(), 2), size, stride);
    }

    private TensorRef tensor(List<Object> args, ElementType dtype) {
        if (!(args.get(0) instanceof StorageRef storage)) {
            throw fail("rebuilds a tensor from " + describe(args.get(0)) + " instead of a storage");
        }
        ElementType type = dtype != null ? dtype : storage.type();
        if (!storage.untyped() && type != storage.type()) {
            throw fail("views the " + storage.type() + " storage " + storage.key() + " as " + type);
        }
        long offset = nonNegative(args.get(1), "a tensor's storage offset");
        List<Object> sizes = tuple(args.get(2), "a tensor's size");
        List<Object> strides = tuple(args.get(3), "a tensor's stride");
        if (sizes.size() != strides.size()) {
            throw fail("describes a tensor with " + sizes.size() + " sizes but " + strides.size() + " strides");
        }
        int[] size = new int[sizes.size()];
        long[] stride = new long[sizes.size()];
        for (int d = 0; d < size.length; d++) {
            long s = nonNegative(sizes.get(d), "a tensor dimension");
            if (s > Integer.MAX_VALUE) {
                throw fail("describes a tensor dimension of " + s + " elements, which is too large");
            }
            size[d] = (int) s;
            stride[d] = nonNegative(strides.get(d), "a tensor stride");
        }
        return new TensorRef(storage, type, offset, size, stride);
    }

    // ---- stack, memo and argument helpers ---------------------------------------------------------

    private void push(Object value) {
        hold(value);
        stack.add(value);
    }

    private Object pop() {
        if (stack.isEmpty()) {
            throw fail("pops from an empty stack: the pickle is corrupt");
        }
        held--;
        return stack.remove(stack.size() - 1);
    }

    /** Counts one more value on the stack or in a container. */
    private Object hold(Object value) {
        if (++held > MAX_ITEMS) {
            throw fail("holds more than " + MAX_ITEMS + " values; a state_dict holds far fewer, so the file is"
                    + " refused");
        }
        return value;
    }

    private List<Object> holdAll(List<Object> values) {
        held += values.size();
        if (held > MAX_ITEMS) {
            throw fail("holds more than " + MAX_ITEMS + " values; a state_dict holds far fewer, so the file is"
                    + " refused");
        }
        return values;
    }

    /**
     * A dict key or set item: a scalar or a flat tuple of scalars. Anything else would be hashed by
     * walking it, which a hostile pickle turns into endless recursion (a container holding itself) or
     * exponential time (tuples nested over shared memo entries); a state_dict's keys are strings.
     */
    private Object key(Object key, String where) {
        if (isScalar(key)) {
            return hold(key);
        }
        if (key instanceof List<?> t && !(key instanceof ArrayList)) {
            boolean flat = true;
            for (Object o : t) {
                flat &= isScalar(o);
            }
            if (flat) {
                return hold(key);
            }
        }
        throw fail(where + " uses " + describe(key) + " as a dict key or set item; only str, int, float,"
                + " bool, None and flat tuples of them are accepted (a state_dict's keys are strings)");
    }

    private List<Object> keys(List<Object> values, String where) {
        for (Object v : values) {
            key(v, where);
        }
        return values;
    }

    private static boolean isScalar(Object value) {
        return value == null || value instanceof String || value instanceof Long || value instanceof BigInteger
                || value instanceof Double || value instanceof Boolean;
    }

    private void memoPut(long index) {
        if (memo.size() >= MAX_MEMO && !memo.containsKey(index)) {
            throw fail("stores more than " + MAX_MEMO + " memo entries; a state_dict needs a few thousand, so"
                    + " the file is refused");
        }
        memo.put(index, peek());
    }

    private Object peek() {
        if (stack.isEmpty()) {
            throw fail("reads from an empty stack: the pickle is corrupt");
        }
        return stack.get(stack.size() - 1);
    }

    private List<Object> popN(int n) {
        if (stack.size() < n) {
            throw fail("needs " + n + " values on the stack but has " + stack.size() + ": the pickle is corrupt");
        }
        held -= n;
        List<Object> top = new ArrayList<>(stack.subList(stack.size() - n, stack.size()));
        stack.subList(stack.size() - n, stack.size()).clear();
        return top;
    }

    private List<Object> popMark() {
        if (marks.isEmpty()) {
            throw fail("closes a MARK that was never opened: the pickle is corrupt");
        }
        List<Object> top = stack;
        stack = marks.pop();
        held -= top.size();
        return top;
    }

    private Object memoGet(long index) {
        if (!memo.containsKey(index)) {
            throw fail("refers to memo entry " + index + ", which was never stored: the pickle is corrupt");
        }
        return memo.get(index);
    }

    /** A tuple of {@code values}; refused when tuples nest deeper than {@link #MAX_DEPTH}. */
    private List<Object> tuple(Collection<Object> values) {
        int depth = 1;
        for (Object v : values) {
            Integer inner = tupleDepth.get(v);
            if (inner != null && inner + 1 > depth) {
                depth = inner + 1;
            }
        }
        if (depth > MAX_DEPTH) {
            throw fail("nests tuples more than " + MAX_DEPTH + " deep; a state_dict is a few levels deep, so the"
                    + " file is refused");
        }
        List<Object> tuple = Collections.unmodifiableList(Arrays.asList(values.toArray()));
        if (!values.isEmpty()) {
            tupleDepth.put(tuple, depth);
        }
        return tuple;
    }

    @SuppressWarnings("unchecked")
    private List<Object> tuple(Object value, String what) {
        if (value instanceof List<?> l) {
            return (List<Object>) l;
        }
        throw fail(what + " should be a tuple but is " + describe(value));
    }

    @SuppressWarnings("unchecked")
    private List<Object> list(Object value, String opcode) {
        if (value instanceof ArrayList<?> l) {
            return (List<Object>) l;
        }
        throw fail(opcode + " appends to " + describe(value) + " instead of a list");
    }

    @SuppressWarnings("unchecked")
    private Map<Object, Object> map(Object value, String opcode) {
        if (value instanceof LinkedHashMap<?, ?> m) {
            return (Map<Object, Object>) m;
        }
        throw fail(opcode + " stores into " + describe(value) + " instead of a dict");
    }

    @SuppressWarnings("unchecked")
    private Set<Object> set(Object value) {
        if (value instanceof LinkedHashSet<?> s) {
            return (Set<Object>) s;
        }
        throw fail("ADDITEMS adds to " + describe(value) + " instead of a set");
    }

    private void putPairs(Map<Object, Object> dict, List<Object> pairs) {
        if (pairs.size() % 2 != 0) {
            throw fail("stores " + pairs.size() + " values into a dict, which needs key-value pairs");
        }
        for (int i = 0; i < pairs.size(); i += 2) {
            dict.put(key(pairs.get(i), "a dict"), hold(pairs.get(i + 1)));
        }
    }

    private void arity(Function f, List<Object> args, int min, int max) {
        if (args.size() < min || args.size() > max) {
            String expected = min == max ? String.valueOf(min) : min + " or " + max;
            throw fail(f.qualifiedName() + " is called with " + args.size() + " arguments instead of " + expected);
        }
    }

    private long nonNegative(Object value, String what) {
        if (value instanceof Long l && l >= 0) {
            return l;
        }
        throw fail(what + " should be a non-negative int but is " + describe(value)
                + (value instanceof Long ? " " + value : ""));
    }

    private static String text(Object value) {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof byte[] b) {
            return new String(b, StandardCharsets.US_ASCII);
        }
        return null;
    }

    private static boolean isLatin1(Object encoding) {
        return encoding instanceof String e && (e.equalsIgnoreCase("latin1") || e.equalsIgnoreCase("latin-1"));
    }

    /** At most 100 characters of a name read from the file, so a hostile one cannot flood the message. */
    private static String shorten(String text) {
        return text.length() <= 100 ? text : text.substring(0, 100) + "...";
    }

    /** A Python-flavoured name of a value for error messages, never its (possibly huge) content. */
    static String describe(Object value) {
        if (value == null) {
            return "None";
        }
        if (value instanceof Global g) {
            return g.qualifiedName();
        }
        if (value instanceof String s) {
            return s.length() <= 40 ? "'" + s + "'" : "a str";
        }
        if (value instanceof Long || value instanceof BigInteger) {
            return "an int";
        }
        if (value instanceof Double) {
            return "a float";
        }
        if (value instanceof Boolean) {
            return "a bool";
        }
        if (value instanceof byte[]) {
            return "bytes";
        }
        if (value instanceof TensorRef) {
            return "a tensor";
        }
        if (value instanceof StorageRef) {
            return "a storage";
        }
        if (value instanceof OrderedDictValue) {
            return "an OrderedDict";
        }
        if (value instanceof Map) {
            return "a dict";
        }
        if (value instanceof ArrayList) {
            return "a list";
        }
        if (value instanceof List<?> l) {
            return "a tuple of " + l.size();
        }
        if (value instanceof Set) {
            return "a set";
        }
        return value.getClass().getSimpleName();
    }

    // ---- reading the byte stream --------------------------------------------------------------------

    private void need(int n) {
        if (n < 0 || in.length - pos < n) {
            throw fail("ends in the middle of its " + PickleOpcodes.name(in[opcodeStart] & 0xff)
                    + " opcode: the pickle is truncated");
        }
    }

    private int u8() {
        need(1);
        return in[pos++] & 0xff;
    }

    private int u16() {
        need(2);
        int v = (in[pos] & 0xff) | (in[pos + 1] & 0xff) << 8;
        pos += 2;
        return v;
    }

    private int s32() {
        need(4);
        int v = (in[pos] & 0xff) | (in[pos + 1] & 0xff) << 8 | (in[pos + 2] & 0xff) << 16 | in[pos + 3] << 24;
        pos += 4;
        return v;
    }

    private long u32() {
        return s32() & 0xffff_ffffL;
    }

    private long s64() {
        long low = u32();
        long high = u32();
        return high << 32 | low;
    }

    /** A length read from the stream, which must fit in what is left of it. */
    private int length(long n) {
        if (n < 0 || n > in.length - pos) {
            throw fail("declares a " + PickleOpcodes.name(in[opcodeStart] & 0xff) + " of " + n
                    + " bytes but only " + (in.length - pos) + " remain: the pickle is truncated or corrupt");
        }
        return (int) n;
    }

    private byte[] bytes(int n) {
        need(n);
        byte[] b = Arrays.copyOfRange(in, pos, pos + n);
        pos += n;
        return b;
    }

    private String utf8(int n) {
        need(n);
        try {
            CharBuffer chars = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(in, pos, n));
            pos += n;
            return chars.toString();
        } catch (CharacterCodingException e) {
            throw fail("holds a string that is not valid UTF-8");
        }
    }

    private String line() {
        int start = pos;
        while (pos < in.length && in[pos] != '\n') {
            pos++;
        }
        if (pos >= in.length) {
            throw fail("ends in the middle of its GLOBAL opcode: the pickle is truncated");
        }
        String s = new String(in, start, pos - start, StandardCharsets.UTF_8);
        pos++;
        return s;
    }

    private Object littleEndianSigned(int n) {
        need(n);
        if (n == 0) {
            return 0L;
        }
        byte[] bigEndian = new byte[n];
        for (int i = 0; i < n; i++) {
            bigEndian[i] = in[pos + n - 1 - i];
        }
        pos += n;
        BigInteger value = new BigInteger(bigEndian);
        return value.bitLength() < 64 ? (Object) value.longValue() : value;
    }

    private static String opcodeName(int op) {
        String name = PickleOpcodes.name(op);
        String hex = "(0x" + Integer.toHexString(op) + ")";
        return name.equals("unknown") ? "an unknown pickle opcode " + hex : "the pickle opcode " + name + " " + hex;
    }

    private CheckpointException fail(String problem) {
        return new CheckpointException(file, entry + " (byte " + opcodeStart + ") " + problem);
    }
}
