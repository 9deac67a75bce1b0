package io.samstream.gpu.checkpoint;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Meta's released checkpoints carry the first hex digits of their SHA-256 in their names
 * ({@code sam_vit_b_01ec64.pth}, {@code sam_vit_l_0b3195.pth}, {@code sam_vit_h_4b8939.pth}). A file named
 * that way is hashed and must match, so a corrupt or substituted download is refused by name.
 */
final class OfficialCheckpoints {
    private static final Logger log = LoggerFactory.getLogger(OfficialCheckpoints.class);
    private static final Pattern NAME = Pattern.compile("sam_vit_[bhl]_([0-9a-fA-F]{6,64})\\.pth");
    private static final int BUFFER_BYTES = 1 << 20;

    private OfficialCheckpoints() {}

    /** The digest prefix {@code file}'s name promises, or null when it is not named like Meta's files. */
    static String promisedDigestPrefix(Path file) {
        Path name = file.getFileName();
        Matcher m = NAME.matcher(name == null ? "" : name.toString());
        return m.matches() ? m.group(1).toLowerCase(Locale.ROOT) : null;
    }

    /** Hashes {@code file} (streamed, never held whole) when its name promises a digest, and compares. */
    static void verify(Path file) {
        String promised = promisedDigestPrefix(file);
        if (promised == null) {
            return;
        }
        long start = System.nanoTime();
        String actual = sha256(file);
        if (!actual.startsWith(promised)) {
            throw new CheckpointException(file, "is named like Meta's official checkpoint whose SHA-256 starts with "
                    + promised + ", but its SHA-256 is " + actual + "; the download is corrupt or the file is not"
                    + " that checkpoint (download it again, or rename a different file)");
        }
        log.debug("{}: SHA-256 {} matches its name ({} ms)", file, actual, (System.nanoTime() - start) / 1_000_000);
    }

    private static String sha256(Path file) {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        byte[] buffer = new byte[BUFFER_BYTES];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
            }
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot be read: " + e.getMessage(), e);
        }
        return HexFormat.of().formatHex(digest.digest());
    }
}
