package io.samstream.testkit.connectors;

import io.samstream.connectors.video.TestPatternSource.PatternObject;
import io.samstream.connectors.video.VideoFrame;

/** Ground truth of a rendered {@link io.samstream.connectors.video.TestPatternSource} frame, for mask assertions. */
public final class PatternTruth {
    private PatternTruth() {}

    /**
     * A shape's visible pixels, row-major: its colour inside its box (occlusion accounted for: a shape in
     * front paints over it). Exact because no background pixel has a palette colour (each has a channel of
     * 200 or more; the background stays below 180) and no two shapes share one.
     */
    public static boolean[] visible(byte[] rgb, int width, int height, PatternObject o) {
        boolean[] mask = new boolean[width * height];
        for (int y = Math.max(0, o.box()[1]); y <= Math.min(height - 1, o.box()[3]); y++) {
            for (int x = Math.max(0, o.box()[0]); x <= Math.min(width - 1, o.box()[2]); x++) {
                int at = 3 * (y * width + x);
                int c = (rgb[at] & 0xff) << 16 | (rgb[at + 1] & 0xff) << 8 | (rgb[at + 2] & 0xff);
                mask[y * width + x] = c == o.rgb();
            }
        }
        return mask;
    }

    /** {@link #visible(byte[], int, int, PatternObject)} in a frame the pattern source made. */
    public static boolean[] visible(VideoFrame frame, PatternObject o) {
        return visible(frame.rgb(), frame.width(), frame.height(), o);
    }
}
