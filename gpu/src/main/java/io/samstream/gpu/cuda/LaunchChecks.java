package io.samstream.gpu.cuda;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * The checks every launcher makes before it queues anything, so that a wrong call fails in Java with the operation
 * and the numbers named, never as a garbled result or an illegal address later; and the pointer argument of a buffer.
 */
public final class LaunchChecks {
    private LaunchChecks() {}

    public static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    public static void requireBf16(DeviceBuffer b, long elements, String op, String name) {
        if (b == null) {
            throw new IllegalArgumentException(op + ": " + name + " is required");
        }
        if (b.bf16Capacity() < elements) {
            throw new IllegalArgumentException(op + ": " + name + " needs " + elements + " bf16 values, " + b + " holds "
                    + b.bf16Capacity());
        }
        if (b.offset() % 16 != 0) {
            throw new IllegalArgumentException(op + ": " + name + " must be 16-byte aligned (" + b + " at offset "
                    + b.offset() + ")");
        }
    }

    public static void requireBytes(DeviceBuffer b, long bytes, String op, String name) {
        if (b == null) {
            throw new IllegalArgumentException(op + ": " + name + " is required");
        }
        if (b.bytes() < bytes) {
            throw new IllegalArgumentException(op + ": " + name + " needs " + bytes + " B, " + b + " holds " + b.bytes());
        }
        if (b.offset() % 16 != 0) {
            throw new IllegalArgumentException(op + ": " + name + " must be 16-byte aligned (" + b + " at offset "
                    + b.offset() + ")");
        }
    }

    public static Pointer ptr(DeviceBuffer b) {
        return Pointer.to(b == null ? new CUdeviceptr() : b.pointer());
    }
}
