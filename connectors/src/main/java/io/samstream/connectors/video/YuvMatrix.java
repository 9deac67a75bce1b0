package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_BT2020_CL;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_BT2020_NCL;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_BT709;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_UNSPECIFIED;

import org.bytedeco.ffmpeg.avutil.AVFrame;

/** The YUV to RGB matrix of a decoded frame, by the luma weights of red and blue. */
public enum YuvMatrix {
    BT601(0.299f, 0.114f), BT709(0.2126f, 0.0722f), BT2020(0.2627f, 0.0593f);

    public final float kr;
    public final float kb;

    YuvMatrix(float kr, float kb) {
        this.kr = kr;
        this.kb = kb;
    }

    /** The frame's tagged matrix; untagged: BT.709 from 720 lines up, BT.601 below (as {@link RgbConverter}). */
    static YuvMatrix of(AVFrame frame) {
        int cs = frame.colorspace();
        return cs == AVCOL_SPC_BT709 ? BT709
                : cs == AVCOL_SPC_BT2020_NCL || cs == AVCOL_SPC_BT2020_CL ? BT2020
                : cs == AVCOL_SPC_UNSPECIFIED ? (frame.height() >= 720 ? BT709 : BT601) : BT601;
    }
}
