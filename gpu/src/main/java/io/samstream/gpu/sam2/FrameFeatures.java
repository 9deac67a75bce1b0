package io.samstream.gpu.sam2;

/**
 * One frame's image features, channels-last: {@code top} [S/16 x S/16, hidden] (the map the memory attention
 * conditions), its sine position encoding {@code topPos}, and the decoder's high-resolution maps after
 * {@code conv_s0} / {@code conv_s1}: {@code s0} [S/4 x S/4, hidden/8] and {@code s1} [S/8 x S/8, hidden/4].
 */
public record FrameFeatures(float[] top, float[] topPos, float[] s0, float[] s1, int side) {}
