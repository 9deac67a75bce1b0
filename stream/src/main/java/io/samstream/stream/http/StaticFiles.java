package io.samstream.stream.http;

import akka.http.javadsl.model.ContentType;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.headers.RawHeader;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The console's files and Swagger UI's, from the classpath only (they are in the jar): a name is one plain file name
 * ({@link #NAME}: no folder, no "..", no encoded separator), looked up under a fixed resource folder, so no request can
 * reach any other file. The console is {@code samstream/console/} in the jar; Swagger UI's files come from the
 * {@code org.webjars:swagger-ui} jar, and its page from ours ({@code samstream/api-docs.html}: the engine's own
 * OpenAPI document, the console's token when it has one). Files are read once and kept.
 */
final class StaticFiles {
    /** A file name the server serves: letters, digits, dot, dash, underscore; one dot-extension at the end. */
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}\\.(html|js|css|png|svg|ico|map|json)");
    static final String CONSOLE = "samstream/console/";
    static final String API_DOCS_PAGE = "samstream/api-docs.html";
    /** What a page may load: this server's own files, its previews (blob: images), its WebSocket. */
    static final String CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline';"
            + " img-src 'self' blob: data:; connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none';"
            + " frame-ancestors 'none'; form-action 'self'";
    private static final Map<String, ContentType> TYPES = Map.of(
            "html", ContentTypes.TEXT_HTML_UTF8,
            "js", ContentTypes.parse("text/javascript; charset=UTF-8"),
            "css", ContentTypes.parse("text/css; charset=UTF-8"),
            "png", ContentTypes.parse("image/png"),
            "svg", ContentTypes.parse("image/svg+xml"),
            "ico", ContentTypes.parse("image/x-icon"),
            "map", ContentTypes.APPLICATION_JSON,
            "json", ContentTypes.APPLICATION_JSON);

    private final String swaggerFolder;
    private final Map<String, byte[]> cache = new ConcurrentHashMap<>();

    StaticFiles() {
        this.swaggerFolder = "META-INF/resources/webjars/swagger-ui/" + swaggerVersion() + "/";
    }

    /** The console's file {@code name} ("" is index.html), or 404. */
    HttpResponse console(String name) {
        return serve(CONSOLE, name.isEmpty() ? "index.html" : name);
    }

    /** Swagger UI: its page ("") or one of its files. */
    HttpResponse apiDocs(String name) {
        if (name.isEmpty() || name.equals("index.html")) {
            return serve("", API_DOCS_PAGE);
        }
        return serve(swaggerFolder, name);
    }

    private HttpResponse serve(String folder, String name) {
        if (!folder.isEmpty() && !NAME.matcher(name).matches()) {
            return Json.error(404, "no such file", "path");
        }
        String resource = folder + name;
        Optional<byte[]> bytes = Optional.ofNullable(cache.get(resource)).or(() -> read(resource));
        bytes.ifPresent(b -> cache.putIfAbsent(resource, b)); // files that exist only: a miss is not remembered
        if (bytes.isEmpty()) {
            return Json.error(404, "no such file: " + name, "path");
        }
        String ext = resource.substring(resource.lastIndexOf('.') + 1);
        HttpResponse r = HttpResponse.create().withEntity(HttpEntities.create(TYPES.get(ext), bytes.get()))
                .addHeader(RawHeader.create("Cache-Control", "no-cache"));
        return ext.equals("html") ? r.addHeader(RawHeader.create("Content-Security-Policy", CONTENT_SECURITY_POLICY)) : r;
    }

    private static Optional<byte[]> read(String resource) {
        try (InputStream in = StaticFiles.class.getClassLoader().getResourceAsStream(resource)) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + resource + " from the jar", e);
        }
    }

    /** The swagger-ui webjar's version (its files live under a folder named by it). */
    static String swaggerVersion() {
        try (InputStream in = StaticFiles.class.getClassLoader()
                .getResourceAsStream("META-INF/maven/org.webjars/swagger-ui/pom.properties")) {
            if (in == null) {
                throw new IllegalStateException("the swagger-ui webjar is not on the classpath");
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
