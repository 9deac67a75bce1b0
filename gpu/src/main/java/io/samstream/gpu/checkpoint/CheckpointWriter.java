package io.samstream.gpu.checkpoint;

import io.samstream.gpu.tensor.Tensor;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Writes a {@link StateDict} as a safetensors file (fp32, Meta's key names), which {@link CheckpointLoader}
 * reads back (it tells formats apart by content, so the file name may end in .pth or .safetensors). Used by
 * {@code samstream prune}. samstream has no writer of PyTorch's zip/pickle format in its main code;
 * safetensors is the format PyTorch users load with {@code safetensors.torch.load_file}.
 *
 * <p>Layout: 8-byte little-endian header length, a JSON header ({@code __metadata__} first, padded with
 * spaces to a multiple of 8), then the tensors' little-endian bytes in key order. The file is written next
 * to the target and moved into place, so a failed write never leaves a truncated checkpoint.
 */
public final class CheckpointWriter {
    private CheckpointWriter() {}

    public static void writeSafetensors(StateDict weights, Path file, String note) {
        StringBuilder json = new StringBuilder("{\"__metadata__\":{\"format\":\"pt\"");
        if (note != null && !note.isEmpty()) {
            json.append(",\"samstream\":\"").append(escape(note)).append('"');
        }
        json.append('}');
        long offset = 0;
        for (String key : weights.keys()) {
            Tensor t = weights.get(key);
            StringBuilder shape = new StringBuilder();
            for (int d : t.shape()) {
                shape.append(shape.length() == 0 ? "" : ",").append(d);
            }
            long bytes = 4L * t.size();
            json.append(",\"").append(escape(key)).append("\":{\"dtype\":\"F32\",\"shape\":[").append(shape)
                    .append("],\"data_offsets\":[").append(offset).append(',').append(offset + bytes).append("]}");
            offset += bytes;
        }
        json.append('}');
        while (json.length() % 8 != 0) {
            json.append(' ');
        }
        byte[] header = json.toString().getBytes(StandardCharsets.UTF_8);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 20)) {
                out.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(header.length).array());
                out.write(header);
                ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
                for (String key : weights.keys()) {
                    for (float v : weights.get(key).data()) {
                        if (!buf.hasRemaining()) {
                            out.write(buf.array(), 0, buf.position());
                            buf.clear();
                        }
                        buf.putFloat(v);
                    }
                }
                out.write(buf.array(), 0, buf.position());
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the original error is the one to report
            }
            throw new UncheckedIOException("writing checkpoint " + file + ": " + e.getMessage(), e);
        }
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
