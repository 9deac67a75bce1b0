package io.samstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Credentials in stream locations are masked; everything else is left as it is. */
class CredentialsTest {
    @Test
    void userInformationIsMasked() {
        assertEquals("rtsp://***@10.0.0.5:554/stream1", Credentials.mask("rtsp://admin:s3cretPW@10.0.0.5:554/stream1"));
        assertEquals("rtsp://***@cam/s", Credentials.mask("rtsp://admin@cam/s"), "a user name alone may be a token");
        // A raw @ or / in the password: everything up to the last @ before the query goes.
        assertEquals("rtsp://***@cam/s", Credentials.mask("rtsp://admin:p@ss/w@cam/s"));
        assertEquals("https://***@host/live.m3u8?x=1", Credentials.mask("https://tok@host/live.m3u8?x=1"));
        assertEquals("srt://***@host:9000", Credentials.mask("srt://u:p@host:9000"));
    }

    @Test
    void secretQueryParametersAreMasked() {
        assertEquals("https://cdn/x.m3u8?token=***&quality=hd", Credentials.mask("https://cdn/x.m3u8?token=abc&quality=hd"));
        assertEquals("https://s3/v.mp4?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Expires=60",
                Credentials.mask("https://s3/v.mp4?X-Amz-Credential=AKIA/1&X-Amz-Signature=ff00&X-Amz-Expires=60"));
        assertEquals("rtsp://cam/s?user=bob&password=***#t", Credentials.mask("rtsp://cam/s?user=bob&password=pw#t"));
        assertEquals("http://***@cam/s?api_key=***", Credentials.mask("http://a:b@cam/s?api_key=k"));
    }

    @Test
    void locationsWithoutCredentialsAreUnchanged() {
        for (String l : new String[] {"/data/a:b@c.mp4", "clip.mp4", "/dev/video0", "testpattern:320x240@12?seed=0&live=true",
                "rtsp://10.0.0.5/live", "http://host/path?frames=3", "udp://239.0.0.1:1234"}) {
            assertEquals(l, Credentials.mask(l));
            assertFalse(Credentials.hasCredentials(l), l);
        }
        assertTrue(Credentials.hasCredentials("rtsp://a:b@c/d"));
        assertEquals(null, Credentials.mask(null));
    }
}
