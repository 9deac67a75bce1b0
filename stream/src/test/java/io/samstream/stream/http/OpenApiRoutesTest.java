package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.util.Iterator;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The hand-written OpenAPI document describes exactly the server's routes, with their access. */
class OpenApiRoutesTest {
    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options");

    private static JsonNode document() throws Exception {
        try (InputStream in = OpenApiRoutesTest.class.getClassLoader().getResourceAsStream("samstream/openapi.json")) {
            assertNotNull(in, "samstream/openapi.json is in the jar");
            return new ObjectMapper().readTree(in);
        }
    }

    @Test
    void everyRouteIsDocumentedAndNothingElse() throws Exception {
        JsonNode doc = document();
        assertTrue(doc.get("openapi").asText().startsWith("3."));
        Set<String> documented = new TreeSet<>();
        for (Iterator<String> paths = doc.get("paths").fieldNames(); paths.hasNext(); ) {
            String path = paths.next();
            for (Iterator<String> keys = doc.get("paths").get(path).fieldNames(); keys.hasNext(); ) {
                String key = keys.next();
                if (METHODS.contains(key)) {
                    documented.add(key.toUpperCase(Locale.ROOT) + " " + path);
                }
            }
        }
        Set<String> routed = new TreeSet<>();
        Routes.ALL.forEach(r -> routed.add(r.method() + " " + r.template()));
        assertEquals(routed, documented);
    }

    @Test
    void theDocumentSaysWhoMayCallEachRoute() throws Exception {
        JsonNode doc = document();
        assertEquals("bearer", doc.get("components").get("securitySchemes").get("bearer").get("scheme").asText());
        for (Routes.Route r : Routes.ALL) {
            JsonNode path = doc.get("paths").get(r.template());
            JsonNode op = path.get(r.method().toLowerCase(Locale.ROOT));
            boolean open = op.has("security") && op.get("security").isEmpty();
            assertEquals(r.access() == Routes.Access.PUBLIC, open, r + ": public routes, and only they, need no token");
            boolean query = path.toString().contains("#/components/parameters/AccessToken");
            assertEquals(r.access() == Routes.Access.TOKEN_OR_QUERY, query, r + ": the access_token parameter");
            if (r.access() != Routes.Access.PUBLIC) {
                assertTrue(op.get("responses").has("401"), r + " documents 401");
            }
        }
    }
}
