package io.samstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The README and docs/ stay navigable: every relative link (and #anchor, as GitHub makes them from headings) of
 * README.md and docs/*.md points at something, every docs page is linked from the README, and the README stays a
 * front page.
 */
class DocsLinksTest {
    private static final int README_MAX_LINES = 250;

    @Test
    void theReadmeIsAFrontPage() {
        long lines = RepoDocs.read(RepoDocs.readme()).lines().count();
        assertTrue(lines <= README_MAX_LINES, "README.md has " + lines + " lines, more than " + README_MAX_LINES
                + ": move the detail into docs/ and link it");
    }

    @Test
    void everyRelativeLinkAndAnchorResolves() {
        Path root = RepoDocs.root();
        List<String> dead = new ArrayList<>();
        int checked = 0;
        for (Path page : RepoDocs.allPages()) {
            for (MarkdownLinks.Link link : MarkdownLinks.links(RepoDocs.read(page))) {
                if (MarkdownLinks.isExternal(link.target())) {
                    continue;
                }
                checked++;
                String problem = problem(root, page, link.target());
                if (problem != null) {
                    dead.add(root.relativize(page) + ":" + link.line() + ": " + link.target() + ": " + problem);
                }
            }
        }
        assertTrue(dead.isEmpty(), dead.size() + " dead links:\n" + String.join("\n", dead));
        assertTrue(checked >= 50, "only " + checked + " relative links found: is the link extraction broken?");
    }

    @Test
    void everyDocsPageIsLinkedFromTheReadme() {
        Path readme = RepoDocs.readme();
        Set<Path> linked = new HashSet<>();
        for (MarkdownLinks.Link link : MarkdownLinks.links(RepoDocs.read(readme))) {
            if (!MarkdownLinks.isExternal(link.target()) && !MarkdownLinks.path(link.target()).isEmpty()) {
                linked.add(readme.getParent().resolve(MarkdownLinks.path(link.target())).normalize());
            }
        }
        List<String> unlinked = RepoDocs.docPages().stream().filter(p -> !linked.contains(p.normalize()))
                .map(p -> RepoDocs.root().relativize(p).toString()).toList();
        assertTrue(unlinked.isEmpty(), "docs pages the README does not link (a reader would not find them): "
                + unlinked);
    }

    /** Why a relative target of {@code page} points nowhere, or null when it resolves. */
    static String problem(Path root, Path page, String target) {
        String path = MarkdownLinks.path(target);
        Path file = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
        if (!file.startsWith(root)) {
            return "points outside the repository";
        }
        if (!Files.exists(file)) {
            return "no such file or folder";
        }
        String anchor = MarkdownLinks.anchor(target);
        if (!anchor.isEmpty() && file.getFileName().toString().endsWith(".md")) {
            Set<String> anchors = MarkdownLinks.anchors(RepoDocs.read(file));
            if (!anchors.contains(anchor)) {
                return "no heading makes #" + anchor + " in " + root.relativize(file) + " (it has " + anchors + ")";
            }
        }
        return null;
    }

    // The checker itself, on pages made here.

    @Test
    void slugsAreGitHubs() {
        assertEquals("samstream-segment", MarkdownLinks.slug("`samstream segment`"));
        assertEquals("memory-mode-sam-21", MarkdownLinks.slug("Memory mode (SAM 2.1)"));
        assertEquals("24-sparsity-encoder", MarkdownLinks.slug("2:4 sparsity (encoder)"));
        assertEquals("after-a-crash-or-kill--9", MarkdownLinks.slug("After a crash or `kill -9`"));
        assertEquals("samstreamtracking", MarkdownLinks.slug("samstream.tracking"));
        assertEquals("see-the-docs", MarkdownLinks.slug("See [the docs](docs/x.md)"));
        assertEquals("snake_case-stays", MarkdownLinks.slug("snake_case stays"));
    }

    @Test
    void repeatedHeadingsGetNumberedAnchorsAndCodeBlocksHaveNone() {
        String page = "# Title\n## Usage\ntext\n```\n# not a heading\n```\n## Usage\n### Usage ###\n";
        assertEquals(Set.of("title", "usage", "usage-1", "usage-2"), MarkdownLinks.anchors(page));
    }

    @Test
    void linksInCodeAreNotLinks() {
        String page = "See [a](a.md) and `[b](b.md)` and\n```\n[c](c.md)\n```\n[`d`](d.md#x \"title\") <img src=\"e.png\">\n"
                + "[f\nwrapped](f.md)\n[ref]: g.md\n";
        List<MarkdownLinks.Link> links = MarkdownLinks.links(page);
        assertEquals(List.of("a.md", "d.md#x", "e.png", "f.md", "g.md"),
                links.stream().map(MarkdownLinks.Link::target).toList());
        assertEquals(List.of(1, 5, 5, 7, 8), links.stream().map(MarkdownLinks.Link::line).toList());
    }

    @Test
    void deadTargetsAndAnchorsAreNamed(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.md"), "# A\n## Part one\n");
        Path page = dir.resolve("b.md");
        Files.writeString(page, "x");
        assertEquals(null, problem(dir, page, "a.md#part-one"));
        assertEquals(null, problem(dir, page, "a.md"));
        assertEquals("no such file or folder", problem(dir, page, "c.md"));
        assertTrue(problem(dir, page, "a.md#part-two").startsWith("no heading makes #part-two in a.md"));
        assertEquals("points outside the repository", problem(dir, page, "../elsewhere.md"));
        assertFalse(MarkdownLinks.isExternal("docs/x.md"));
        assertTrue(MarkdownLinks.isExternal("https://github.com/facebookresearch/segment-anything#model-checkpoints"));
        assertEquals("a b.md", MarkdownLinks.path("a%20b.md#x"));
    }
}
