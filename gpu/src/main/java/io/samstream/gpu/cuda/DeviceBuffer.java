package io.samstream.gpu.cuda;

import jcuda.driver.CUdeviceptr;

/**
 * A range of device memory: a slice of a {@link DeviceMemoryPool}. It owns nothing; the pool does.
 *
 * @param base        the pool's allocation
 * @param baseAddress its device address (read once when the pool was allocated: JCuda keeps it private, and
 *                    the TMA tensor maps need the number, possibly while a CUDA graph is being captured); -1 if
 *                    unknown
 * @param offset      byte offset of this range in it
 * @param bytes       length
 * @param label       what it holds, for error messages
 */
public record DeviceBuffer(CUdeviceptr base, long baseAddress, long offset, long bytes, String label) {

    /** The device address of byte 0, as a number. */
    public long address() {
        if (baseAddress < 0) {
            throw new IllegalStateException("the device address of " + this + " is unknown (the driver did not give"
                    + " the pool's address when it was allocated)");
        }
        return baseAddress + offset;
    }

    /** The device address of byte 0 (a fresh pointer object: JCuda arguments are built from it). */
    public CUdeviceptr pointer() {
        return base.withByteOffset(offset);
    }

    /** The device address of byte {@code at}. */
    public CUdeviceptr pointer(long at) {
        if (at < 0 || at > bytes) {
            throw new IndexOutOfBoundsException("offset " + at + " outside " + this);
        }
        return base.withByteOffset(offset + at);
    }

    /** A sub-range of this buffer. */
    public DeviceBuffer slice(long at, long length, String what) {
        if (at < 0 || length < 0 || at + length > bytes) {
            throw new IndexOutOfBoundsException("slice [" + at + ", " + (at + length) + ") outside " + this);
        }
        return new DeviceBuffer(base, baseAddress, offset + at, length, what);
    }

    /** Number of bf16 elements that fit. */
    public long bf16Capacity() {
        return bytes / 2;
    }

    @Override
    public String toString() {
        return "DeviceBuffer[" + label + ", " + Cuda.bytes(bytes) + "]";
    }
}
