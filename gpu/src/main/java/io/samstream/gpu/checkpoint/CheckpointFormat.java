package io.samstream.gpu.checkpoint;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The checkpoint formats samstream reads, told apart by their first bytes, never by file name. */
enum CheckpointFormat {
    TORCH_ZIP,
    SAFETENSORS;

    /** The format of {@code file}, or a {@link CheckpointException} saying why it is none we read. */
    static CheckpointFormat detect(Path file) {
        if (Files.isDirectory(file)) {
            throw new CheckpointException(file, "is a directory, not a checkpoint file" + checkpointsIn(file));
        }
        if (!Files.exists(file)) {
            throw new CheckpointException(file, "no such file");
        }
        byte[] head;
        try (InputStream in = Files.newInputStream(file)) {
            head = in.readNBytes(16);
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot be read: " + e.getMessage(), e);
        }
        if (head.length == 0) {
            throw new CheckpointException(file, "is an empty file (0 bytes), not a checkpoint");
        }
        if (startsWith(head, 'P', 'K', 3, 4)) {
            return TORCH_ZIP;
        }
        if (looksLikeSafetensors(head)) {
            return SAFETENSORS;
        }
        if ((head[0] & 0xff) == PickleOpcodes.PROTO && head.length > 1 && head[1] >= 2 && head[1] <= 5) {
            // Never suggest a plain torch.load: on an untrusted file that runs whatever the pickle names.
            throw new CheckpointException(file, "uses PyTorch's legacy serialization format (a bare pickle, from"
                    + " torch older than 1.6 or _use_new_zipfile_serialization=False), which samstream does not"
                    + " read; in an environment you trust, load it with torch.load(path, map_location='cpu',"
                    + " weights_only=True) and re-save it with torch.save(state_dict, new_path,"
                    + " _use_new_zipfile_serialization=True), or as safetensors (safetensors.torch.save_file)");
        }
        throw new CheckpointException(file, "is not a checkpoint: neither a PyTorch zip archive nor a"
                + " safetensors file");
    }

    /** An 8-byte little-endian header length the format allows, then the header's opening brace. */
    private static boolean looksLikeSafetensors(byte[] head) {
        if (head.length < 9 || head[8] != '{') {
            return false;
        }
        long length = 0;
        for (int i = 7; i >= 0; i--) {
            length = length << 8 | (head[i] & 0xff);
        }
        return length >= 2 && length <= SafetensorsReader.MAX_HEADER_BYTES;
    }

    private static boolean startsWith(byte[] head, int... magic) {
        if (head.length < magic.length) {
            return false;
        }
        for (int i = 0; i < magic.length; i++) {
            if (head[i] != (byte) magic[i]) {
                return false;
            }
        }
        return true;
    }

    /** A hint naming the checkpoint files in a directory the user gave instead of one of them. */
    private static String checkpointsIn(Path dir) {
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".safetensors") || n.endsWith(".pth") || n.endsWith(".pt")
                            || n.endsWith(".bin"))
                    .sorted()
                    .limit(5)
                    .forEach(found::add);
        } catch (IOException e) {
            return "";
        }
        return found.isEmpty() ? "" : "; it holds " + String.join(", ", found) + " - give one of those";
    }
}
