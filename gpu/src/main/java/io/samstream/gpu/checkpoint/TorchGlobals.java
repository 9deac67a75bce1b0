package io.samstream.gpu.checkpoint;

import java.util.HashMap;
import java.util.Map;

/**
 * The only Python globals a checkpoint's pickle may name: the functions and types torch.save emits
 * for a state_dict. Each resolves to an inert marker; nothing is ever looked up or called by name, so
 * a pickle naming anything else ({@code posix.system}, {@code builtins.eval}, ...) is refused at the
 * opcode that names it.
 */
final class TorchGlobals {
    private TorchGlobals() {}

    /** A global the unpickler knows. */
    interface Global {
        String qualifiedName();
    }

    /** Callables the unpickler emulates for REDUCE / NEWOBJ. */
    enum Function implements Global {
        ORDERED_DICT("collections.OrderedDict"),
        TORCH_SIZE("torch.Size"),
        REBUILD_TENSOR("torch._utils._rebuild_tensor"),
        REBUILD_TENSOR_V2("torch._utils._rebuild_tensor_v2"),
        REBUILD_TENSOR_V3("torch._utils._rebuild_tensor_v3"),
        REBUILD_PARAMETER("torch._utils._rebuild_parameter"),
        REBUILD_PARAMETER_WITH_STATE("torch._utils._rebuild_parameter_with_state"),
        REBUILD_FROM_TYPE_V2("torch._tensor._rebuild_from_type_v2"),
        CODECS_ENCODE("_codecs.encode");

        private final String qualifiedName;

        Function(String qualifiedName) {
            this.qualifiedName = qualifiedName;
        }

        @Override
        public String qualifiedName() {
            return qualifiedName;
        }

        boolean rebuildsTensor() {
            return this == REBUILD_TENSOR || this == REBUILD_TENSOR_V2 || this == REBUILD_TENSOR_V3
                    || this == REBUILD_PARAMETER || this == REBUILD_PARAMETER_WITH_STATE;
        }
    }

    /** {@code torch.Tensor} or {@code torch.nn.Parameter} as the type argument of _rebuild_from_type_v2. */
    record TensorClass(String qualifiedName) implements Global {}

    /** A storage class such as {@code torch.FloatStorage}; untyped storages count bytes. */
    record StorageType(String qualifiedName, ElementType type, boolean untyped) implements Global {}

    /** A dtype object such as {@code torch.float16}, which newer rebuild functions take as an argument. */
    record DType(String qualifiedName, ElementType type) implements Global {}

    private static final Map<String, Global> ALLOWED = new HashMap<>();

    static {
        for (Function f : Function.values()) {
            allow(f);
        }
        allow(new TensorClass("torch.Tensor"));
        allow(new TensorClass("torch._tensor.Tensor"));
        allow(new TensorClass("torch.nn.parameter.Parameter"));
        storage("Double", ElementType.FLOAT64);
        storage("Float", ElementType.FLOAT32);
        storage("Half", ElementType.FLOAT16);
        storage("BFloat16", ElementType.BFLOAT16);
        storage("Long", ElementType.INT64);
        storage("Int", ElementType.INT32);
        storage("Short", ElementType.INT16);
        storage("Char", ElementType.INT8);
        storage("Byte", ElementType.UINT8);
        storage("Bool", ElementType.BOOL);
        storage("ComplexFloat", ElementType.COMPLEX64);
        allow(new StorageType("torch.UntypedStorage", ElementType.UINT8, true));
        allow(new StorageType("torch.storage.UntypedStorage", ElementType.UINT8, true));
        for (ElementType t : ElementType.values()) {
            allow(new DType("torch." + t, t));
        }
    }

    private static void storage(String prefix, ElementType type) {
        allow(new StorageType("torch." + prefix + "Storage", type, false));
    }

    private static void allow(Global g) {
        ALLOWED.put(g.qualifiedName(), g);
    }

    /** The marker for {@code module.name}, or null when the global is not allowed. */
    static Global resolve(String module, String name) {
        return ALLOWED.get(module + "." + name);
    }
}
