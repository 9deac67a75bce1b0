package io.samstream.gpu.checkpoint;

/**
 * A storage named by a checkpoint's pickle: the persistent id
 * {@code ('storage', <storage type>, key, location, numel)} that torch.save writes for each storage.
 * Its bytes live in the zip record {@code <prefix>/data/<key>}.
 *
 * @param key      the record name under {@code data/}
 * @param type     the storage's element type; {@code UINT8} for an untyped (byte) storage
 * @param untyped  whether it is a {@code torch.UntypedStorage}, whose numel counts bytes
 * @param location the device it was saved from ("cpu", "cuda:0"); informational only
 * @param numel    the number of elements of {@code type} in the storage
 */
record StorageRef(String key, ElementType type, boolean untyped, String location, long numel) {}
