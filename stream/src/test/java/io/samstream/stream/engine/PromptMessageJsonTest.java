package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link PromptMessage#toJson}: the topic's form, which {@link PromptMessage#parse} reads back to the same message. */
class PromptMessageJsonTest {

    @Test
    void writesWhatParseReadsBack() throws PromptRejected {
        List<String> wire = List.of(
                "{\"stream\":\"cam-1\",\"op\":\"add\",\"object\":3,\"points\":[[10,20,1],[5.5,6,0]],\"box\":[1,2,30.25,40],\"frame\":12}",
                "{\"stream\":\"s\",\"op\":\"update\",\"object\":0,\"box\":[0,0,1,1]}",
                "{\"stream\":\"s\",\"op\":\"remove\",\"object\":1000002}",
                "{\"stream\":\"s\",\"op\":\"reset\",\"frame\":0}");
        for (String json : wire) {
            PromptMessage m = PromptMessage.parse(null, json);
            assertEquals(json, m.toJson(), "written field for field as the topic carries it");
            PromptMessage back = PromptMessage.parse(m.stream(), m.toJson());
            assertEquals(m.stream(), back.stream());
            assertEquals(m.op(), back.op());
            assertEquals(m.object(), back.object());
            assertEquals(m.frame(), back.frame());
            if (m.prompt() == null) {
                assertNull(back.prompt());
            } else {
                assertArrayEquals(m.prompt().points(), back.prompt().points());
                assertArrayEquals(m.prompt().box(), back.prompt().box());
            }
        }
    }

    /** A point given as [x, y] is written with its label, 1. */
    @Test
    void aPointWithoutLabelIsWrittenWithIt() throws PromptRejected {
        PromptMessage m = PromptMessage.parse(null, "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[7,8]],"
                + "\"ignored\":true}");
        assertEquals("{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[7,8,1]]}", m.toJson());
    }
}
