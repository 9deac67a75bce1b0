package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avutil.AV_HWDEVICE_TYPE_CUDA;
import static org.bytedeco.ffmpeg.global.avutil.av_buffer_ref;
import static org.bytedeco.ffmpeg.global.avutil.av_buffer_unref;
import static org.bytedeco.ffmpeg.global.avutil.av_hwdevice_ctx_create;
import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_ID_H264;
import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_ID_HEVC;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_alloc_context3;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_decoder;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_decoder_by_name;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_free_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_get_name;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_open2;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_parameters_to_context;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_free;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_set;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.bytedeco.ffmpeg.avcodec.AVCodec;
import org.bytedeco.ffmpeg.avcodec.AVCodecContext;
import org.bytedeco.ffmpeg.avformat.AVStream;
import org.bytedeco.ffmpeg.avutil.AVBufferRef;
import org.bytedeco.ffmpeg.avutil.AVDictionary;

/**
 * An opened FFmpeg video decoder for one stream, chosen by the {@link DecoderPreference}.
 *
 * <p>NVDEC goes through FFmpeg's cuvid decoders. With GPU frames on, the decoder gets a CUDA device
 * context on the GPU's primary context (the engine's kernels use the same one), so frames stay in GPU
 * memory as NV12 (P010 for 10-bit; {@link DevicePicture}); otherwise they come back to host memory and are
 * converted to RGB like any other. Only the opening is tried: a stream that NVDEC accepts at open but
 * rejects later (an odd profile) fails like any decode error rather than falling back mid-stream.
 *
 * @param context  the open codec context; freed by {@link #close()}
 * @param name     the FFmpeg decoder's name ("h264", "h264_cuvid", ...)
 * @param hardware true for NVDEC
 * @param why      a short reason for the choice, for the log line
 */
record VideoDecoder(AVCodecContext context, String name, boolean hardware, String why) implements AutoCloseable {
    /** Its presence says an NVIDIA driver is loaded; cheaper and surer than asking CUDA. */
    static final Path NVIDIA_CONTROL_DEVICE = Path.of("/dev/nvidiactl");
    static final BooleanSupplier NVIDIA_GPU_PRESENT = () -> Files.exists(NVIDIA_CONTROL_DEVICE);

    /** libavcodec's FF_THREAD_SLICE (not exported by the presets). */
    private static final int FF_THREAD_SLICE = 2;

    /**
     * Opens a decoder for the stream.
     *
     * @param options    decoder options ("gpu" for cuvid, "threads", ...); unused ones are ignored
     * @param lowLatency true for live sources: slice threading only, since frame threading holds
     *                   back one frame per thread
     * @param gpuFrames  NVDEC's frames stay in GPU memory
     */
    static VideoDecoder open(String streamId, AVStream stream, DecoderPreference preference, BooleanSupplier gpuPresent,
            Map<String, String> options, boolean lowLatency, boolean gpuFrames) throws IOException {
        int codecId = stream.codecpar().codec_id();
        String codecName = avcodec_get_name(codecId).getString();
        String nvdecName = codecId == AV_CODEC_ID_H264 ? "h264_cuvid" : codecId == AV_CODEC_ID_HEVC ? "hevc_cuvid" : null;

        switch (preference) {
            case CPU:
                return openCpu(streamId, stream, codecName, options, lowLatency, "cpu requested");
            case NVDEC: {
                if (nvdecName == null) {
                    throw new IOException(streamId + ": decoder nvdec requested, but NVDEC is used for H.264 and HEVC"
                            + " only and this stream is " + codecName);
                }
                try {
                    return openNamed(streamId, stream, nvdecName, options, lowLatency, gpuFrames, "nvdec requested");
                } catch (IOException e) {
                    String hint = gpuPresent.getAsBoolean() ? "" : "; no NVIDIA GPU here (" + NVIDIA_CONTROL_DEVICE + " absent)";
                    throw new IOException(streamId + ": decoder nvdec requested, but " + nvdecName + " cannot be used: "
                            + e.getMessage() + hint, e);
                }
            }
            case AUTO:
            default: {
                if (nvdecName == null) {
                    return openCpu(streamId, stream, codecName, options, lowLatency, "no NVDEC path for " + codecName);
                }
                if (!gpuPresent.getAsBoolean()) {
                    return openCpu(streamId, stream, codecName, options, lowLatency,
                            "no NVIDIA GPU (" + NVIDIA_CONTROL_DEVICE + " absent)");
                }
                try {
                    return openNamed(streamId, stream, nvdecName, options, lowLatency, gpuFrames, "NVIDIA GPU present");
                } catch (IOException e) {
                    return openCpu(streamId, stream, codecName, options, lowLatency,
                            "NVDEC (" + nvdecName + ") could not be opened: " + e.getMessage());
                }
            }
        }
    }

    private static VideoDecoder openCpu(String streamId, AVStream stream, String codecName, Map<String, String> options,
            boolean lowLatency, String why) throws IOException {
        AVCodec codec = avcodec_find_decoder(stream.codecpar().codec_id());
        if (codec == null) {
            throw new IOException(streamId + ": this FFmpeg build has no decoder for " + codecName);
        }
        return open(streamId, stream, codec, options, lowLatency, false, false, why);
    }

    /** An NVDEC decoder by name; with {@code gpuFrames}, on a CUDA device context (frames in GPU memory). */
    private static VideoDecoder openNamed(String streamId, AVStream stream, String decoderName,
            Map<String, String> options, boolean lowLatency, boolean gpuFrames, String why) throws IOException {
        AVCodec codec = avcodec_find_decoder_by_name(decoderName);
        if (codec == null) {
            throw new IOException("this FFmpeg build has no " + decoderName + " decoder");
        }
        return open(streamId, stream, codec, options, lowLatency, true, gpuFrames, why);
    }

    private static VideoDecoder open(String streamId, AVStream stream, AVCodec codec, Map<String, String> options,
            boolean lowLatency, boolean hardware, boolean gpuFrames, String why) throws IOException {
        String name = codec.name().getString();
        AVCodecContext context = avcodec_alloc_context3(codec);
        if (context == null) {
            throw new IOException(streamId + ": out of memory allocating the " + name + " decoder");
        }
        AVDictionary dictionary = new AVDictionary(null);
        try {
            FfmpegLog.clearErrors();
            int result = avcodec_parameters_to_context(context, stream.codecpar());
            if (result < 0) {
                throw new IOException(streamId + ": " + name + " rejects the stream parameters: " + Ffmpeg.describe(result));
            }
            context.pkt_timebase(stream.time_base());
            context.thread_count(0); // one per core
            if (lowLatency) {
                context.thread_type(FF_THREAD_SLICE);
            }
            for (Map.Entry<String, String> option : options.entrySet()) {
                av_dict_set(dictionary, option.getKey(), option.getValue(), 0);
            }
            if (gpuFrames) {
                attachCudaDevice(streamId, context, options.getOrDefault("gpu", "0"));
            }
            FfmpegLog.clearErrors();
            result = avcodec_open2(context, codec, dictionary);
            if (result < 0) {
                throw new IOException(hardware ? Ffmpeg.describe(result)
                        : streamId + ": decoder " + name + " cannot be opened: " + Ffmpeg.describe(result));
            }
            VideoDecoder decoder = new VideoDecoder(context, name, hardware, why);
            context = null;
            return decoder;
        } finally {
            av_dict_free(dictionary);
            if (context != null) {
                avcodec_free_context(context);
            }
        }
    }

    /** FFmpeg's AV_CUDA_USE_PRIMARY_CONTEXT: the device's primary context, shared with the engine's kernels. */
    private static final int CUDA_USE_PRIMARY_CONTEXT = 1;

    /** A CUDA device context on GPU {@code gpu}'s primary context, for the decoder to put its frames in. */
    private static void attachCudaDevice(String streamId, AVCodecContext context, String gpu) throws IOException {
        AVBufferRef device = new AVBufferRef();
        FfmpegLog.clearErrors();
        int r = av_hwdevice_ctx_create(device, AV_HWDEVICE_TYPE_CUDA, gpu, null, CUDA_USE_PRIMARY_CONTEXT);
        if (r < 0) {
            throw new IOException(streamId + ": no CUDA device context on GPU " + gpu + " for NVDEC's frames: "
                    + Ffmpeg.describe(r));
        }
        context.hw_device_ctx(av_buffer_ref(device));
        av_buffer_unref(device);
    }

    @Override
    public void close() {
        avcodec_free_context(context);
    }
}
