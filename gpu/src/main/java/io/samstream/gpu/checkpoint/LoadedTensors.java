package io.samstream.gpu.checkpoint;

import io.samstream.gpu.tensor.Tensor;
import java.util.Map;

/**
 * What a format reader produced, before key renaming: the tensors (already fp32) under the names the
 * file used, and facts worth logging.
 *
 * @param format       a short description of the file format
 * @param tensors      name to tensor, in file order
 * @param sourceTypes  how many tensors had each stored element type
 * @param storagesRead distinct data blocks read (a storage shared by several tensors counts once)
 */
record LoadedTensors(String format, Map<String, Tensor> tensors, Map<ElementType, Integer> sourceTypes,
                     int storagesRead) {}
