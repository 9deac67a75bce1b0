package io.samstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Credentials in URLs masked wherever they stand in a text; masking before cutting; escaping. */
class SafeTextTest {
    @Test
    void passwordsUserTokensAndSecretParametersAreMasked() {
        // finding 7 of issue #31
        assertEquals("rtsp://admin:***@10.0.0.5:554/live", SafeText.maskCredentials("rtsp://admin:s3cretPW@10.0.0.5:554/live"));
        assertEquals("rtsp://admin:***@cam/s", SafeText.maskCredentials("rtsp://admin:p@ss@cam/s"));
        assertEquals("https://***@git.example/x.m3u8", SafeText.maskCredentials("https://ghp_TOKEN@git.example/x.m3u8"));
        assertEquals("https://cdn/x.m3u8?token=***&quality=hd&X-Amz-Signature=***",
                SafeText.maskCredentials("https://cdn/x.m3u8?token=abc123&quality=hd&X-Amz-Signature=f00d"));
        assertEquals("srt://h:9000?passphrase=***&latency=20", SafeText.maskCredentials("srt://h:9000?passphrase=hunter22&latency=20"));
        assertEquals("rtmp://h/app?api_key=***", SafeText.maskCredentials("rtmp://h/app?api_key=k1"));
        // inside other text (an FFmpeg message, an exception) and several at once
        assertEquals("cam-1: cannot open rtsp://u:***@a/1 and http://***@b/2: 401",
                SafeText.maskCredentials("cam-1: cannot open rtsp://u:pw1@a/1 and http://tok@b/2: 401"));
        // nothing to mask
        assertEquals("/data/a:b@c.mp4", SafeText.maskCredentials("/data/a:b@c.mp4"));
        assertEquals("testpattern:64x48@10?frames=5&seed=3", SafeText.maskCredentials("testpattern:64x48@10?frames=5&seed=3"));
        assertEquals("user@example.com wrote", SafeText.maskCredentials("user@example.com wrote"));
    }

    @Test
    void maskingComesBeforeCuttingSoNoSecretsStartIsLeft() {
        String url = "rtsp://admin:" + "S".repeat(300) + "@cam/live";
        String safe = SafeText.of(url, 20);
        assertFalse(safe.contains("SSS"), safe);
        assertTrue(safe.startsWith("rtsp://admin:***@cam") && safe.endsWith("(25 chars)"), safe);
    }

    @Test
    void controlCharactersAreEscapedAndLongTextCut() {
        assertEquals("a\\nb\\r\\u0007", SafeText.of("a\nb\r\u0007"));
        assertEquals("null", SafeText.of(null));
        String s = SafeText.of("k".repeat(10_000));
        assertTrue(s.endsWith("... (10000 chars)") && s.length() < SafeText.MAX_CHARS + 30, s);
        assertEquals("rtsp://u:***@h\\n", OneLine.of("rtsp://u:pw@h\n"));
    }
}
